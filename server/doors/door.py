"""The SSH door (`tonk-server --ssh-port`): `ssh -p PORT NAME@HOST` and the table app runs on
the player's terminal (tonk.server.doors.door_session). This module is the door itself: its host
key, its limits, and who may come in under which name: public keys only, and the first key that
opens a session under a name claims it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import asyncssh
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import SeatKind

from ..store import ports
from ..store import store as st
from ..store.reading import AuditError
from ..tables.table import CLOSED, FINISHED
from .door_names import claimed_on_disk, fold
from .door_session import DoorSession
from .door_template import SessionTemplate

if TYPE_CHECKING:
    from ..app import TonkServer

log = logging.getLogger("tonk.server")

#: Seconds between the door's checks for idle sessions.
IDLE_CHECK = 5.0
#: Seconds between the door's looks at the database for names released while it runs.
RELEASE_CHECK = 5.0
#: What a player whose ssh offered no key is told.
NO_KEY = (
    "tonk: this server lets players in by their SSH key, and your ssh has none: make one with "
    "ssh-keygen -t ed25519 (press Enter at each question), then ssh again"
)
#: Why a forwarded connection is refused.
NO_FORWARDING = "tonk: this server forwards nothing"
#: Why a connection not logged in yet is closed to make room for one from another address.
CROWDED = "tonk: too many connections from your address are logging in; try again"
#: Seconds a connection logs in undisturbed (an ssh on a network takes a fraction of one):
#: after that, it may be closed to make room for a newcomer.
LOGIN_GRACE = 2.0
#: Seconds a connection whose session is over may stay before the door closes it.
AFTER_THE_SESSION = 2.0


def default_host_key_path(db_path: Path) -> Path:
    """The host key lives beside the database: same server, same fingerprint."""
    return db_path.with_name(f"{db_path.stem}_ssh_host_ed25519_key")


def door_logs_path(db_path: Path) -> Path:
    """Where door sessions keep their players' table logs: beside the database, a folder only
    the server's own user may read (a log holds what one seat saw: its hands)."""
    return db_path.with_name(f"{db_path.stem}_door_logs")


def load_host_key(path: Path) -> asyncssh.SSHKey:
    """The door's host key: read it, or make an ed25519 key there if there is no file yet.
    Raises ValueError with a reason when the file is there but not a usable key."""
    try:
        return asyncssh.read_private_key(str(path))
    except FileNotFoundError:
        pass
    except (OSError, asyncssh.KeyImportError) as exc:
        raise ValueError(f"cannot read the SSH host key {path}: {exc}") from None
    key = asyncssh.generate_private_key("ssh-ed25519", comment="tonk-server")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".ssh-host-key-")
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(key.export_private_key())
        # A link, not a rename: two servers starting at once keep the first key made.
        os.link(tmp, path)
    except FileExistsError:
        return asyncssh.read_private_key(str(path))
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    log.info("made the SSH host key %s", path)
    return key


@dataclass(slots=True)
class DoorConfig:
    host: str = "0.0.0.0"
    port: int = 0
    host_key: Path | None = None  # default: beside the database
    authorized_keys: Path | None = None  # only these keys, when given


class DoorServing:
    """What every door does for its sessions (door_host.Door): the server's open tables by
    number, its writes, whose failure is logged, and the template its sessions are forked
    from (the server's, shared by its doors, or the door's own)."""

    server: TonkServer
    template: SessionTemplate
    _own_template = False

    def take_template(self, template: SessionTemplate | None) -> None:
        self.template = template if template is not None else SessionTemplate()
        self._own_template = template is None

    async def start_template(self) -> None:
        if self._own_template:
            await self.template.start()

    async def close_template(self) -> None:
        if self._own_template:
            await self.template.close()

    @property
    def logs(self) -> Path:
        """Where the sessions' apps keep their players' table logs (`door_logs_path`)."""
        return door_logs_path(self.server.config.db_path)

    def write(self, ops: list[st.Op]) -> None:
        written = self.server.store.write(ops)
        written.add_done_callback(_log_failure)

    def open_table(self, table_id: int) -> Any:
        """The table whose seat a door player may take back (a finished one too while its
        rematch offer waits for its players)."""
        table = self.server.tables.get(table_id)
        return table if table is not None and table.returnable() else None


class SSHDoor(DoorServing):
    """The door: `await start()`, `port`, `fingerprint`, `await close()`."""

    def __init__(
        self,
        server: TonkServer,
        config: DoorConfig,
        session_class: type[DoorSession] | None = None,
        template: SessionTemplate | None = None,
    ) -> None:
        self.server = server
        self.config = config
        self.take_template(template)
        # How a session runs its app (the retired ssh_door.py measured another way with this:
        # docs/benchmarks-journal.md, "SSH door").
        self.session_class = session_class or DoorSession
        self.limits = server.config.limits
        path = config.host_key or default_host_key_path(server.config.db_path)
        self.host_key = load_host_key(path)
        self.fingerprint = self.host_key.get_fingerprint("sha256")
        self.authorized: asyncssh.SSHAuthorizedKeys | None = None
        self._authorized_as_read: tuple[int, int] | None = None  # its mtime and size
        if config.authorized_keys is not None:
            try:
                self._read_authorized(config.authorized_keys)
            except (OSError, ValueError) as exc:
                raise ValueError(
                    f"cannot read the authorized keys {config.authorized_keys}: {exc}"
                ) from None
        self.connections: set[DoorConnection] = set()
        self._acceptor: asyncssh.SSHAcceptor | None = None
        self._idle_task: asyncio.Task[None] | None = None
        self._names_task: asyncio.Task[None] | None = None
        self.port = 0

    async def start(self) -> None:
        """Listen; with port 0, on the port this database's door listened on last (every
        guest's `ssh -p PORT` from their shell history works again), or a free one."""
        store = self.server.store
        await self.start_template()
        acceptor, kept = await ports.listen_kept(
            store, ports.SSH_PORT, self.config.port, self._listen, "the SSH door"
        )
        self._acceptor = acceptor
        self.port = acceptor.get_port()
        if self.port != kept:
            await ports.keep(store, {ports.SSH_PORT: str(self.port)})
        self._idle_task = asyncio.create_task(self._close_idle(), name="ssh-idle")
        self._names_task = asyncio.create_task(self._follow_releases(), name="door-releases")

    async def _listen(self, port: int) -> asyncssh.SSHAcceptor:
        return await asyncssh.create_server(
            lambda: DoorConnection(self),
            self.config.host,
            port,
            server_host_keys=[self.host_key],
            server_version="tonk",
            login_timeout=self.limits.ssh_auth_timeout,
            keepalive_interval=30,
            keepalive_count_max=3,
            agent_forwarding=False,
            x11_forwarding=False,
            allow_scp=False,
            sftp_factory=None,
            encoding=None,
            line_editor=False,
            password_auth=False,
            kbdint_auth=True,  # never lets anyone in: see kbdint_auth_supported
            host_based_auth=False,
            gss_host=None,
        )

    def _read_authorized(self, path: Path) -> None:
        stat = path.stat()
        self.authorized = asyncssh.read_authorized_keys(str(path))
        self._authorized_as_read = (stat.st_mtime_ns, stat.st_size)

    def authorized_keys(self) -> asyncssh.SSHAuthorizedKeys | None:
        """The keys admitted (None: every key), read again when the file has changed, so
        that a host adds a friend's key without a restart. A file that cannot be read any
        more leaves the keys read last in force."""
        path = self.config.authorized_keys
        if path is None:
            return None
        try:
            stat = path.stat()
            if (stat.st_mtime_ns, stat.st_size) != self._authorized_as_read:
                self._read_authorized(path)
                log.info("ssh door: read the authorized keys %s again", path)
        except (OSError, ValueError) as exc:
            log.warning("ssh door: cannot read the authorized keys %s: %s", path, exc)
        return self.authorized

    @property
    def address(self) -> str:
        return f"{self.config.host}:{self.port}"

    # -- places: players logged in, and connections logging in ---------------------------------

    def players(self, address: str | None = None) -> int:
        """Connections logged in whose session is not over (from `address`, if given): each
        holds one of `ssh_sessions` (and of `ssh_per_address`)."""
        return sum(
            1 for c in self.connections if c.holds_a_place() and address in (None, c.address)
        )

    def make_room(self, newcomer: DoorConnection) -> bool:
        """A new connection logs in, if there is room among those not logged in yet. When
        `ssh_unauthenticated` are, one that has been at it for over LOGIN_GRACE seconds is
        closed to make room: the oldest from the address with the most of them, if that
        address has more than the newcomer's. False: no room."""
        waiting = sorted((c for c in self.connections if c.logging_in), key=lambda c: c.arrived)
        if len(waiting) < self.limits.ssh_unauthenticated:
            return True
        by_address: dict[str, int] = {}
        for door_conn in waiting:
            by_address[door_conn.address] = by_address.get(door_conn.address, 0) + 1
        ours = by_address.get(newcomer.address, 0)
        late = [c for c in waiting if newcomer.arrived - c.arrived > LOGIN_GRACE]
        late = [c for c in late if by_address[c.address] > ours]
        if not late:
            return False
        most = max(by_address[c.address] for c in late)
        oldest = next(c for c in late if by_address[c.address] == most)
        oldest.close(CROWDED.removeprefix("tonk: "))
        return True

    async def close(self) -> None:
        """No new connections; every session's app ends; every connection is closed."""
        for task in (self._idle_task, self._names_task):
            if task is not None:
                task.cancel()
        if self._acceptor is not None:
            self._acceptor.close()
        for door_conn in list(self.connections):
            door_conn.close("the server is shutting down")
        sessions = [c.session.task for c in self.connections if c.session and c.session.task]
        if sessions:
            await asyncio.wait(sessions, timeout=5)
        if self._acceptor is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(2):
                    await self._acceptor.wait_closed()
        await self.close_template()

    async def _close_idle(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(min(IDLE_CHECK, self.limits.ssh_idle_timeout / 4))
            now = loop.time()
            for door_conn in list(self.connections):
                session = door_conn.session
                if session is not None and now - session.last_input > self.limits.ssh_idle_timeout:
                    idle = self.limits.ssh_idle_timeout
                    said = f"{idle / 60:g} minutes" if idle >= 120 else f"{idle:g} seconds"
                    session.end(f"tonk: no key pressed for {said}: goodbye", 0)

    async def _follow_releases(self) -> None:
        await follow_releases(self.server, "ssh door")

    # -- who is who ---------------------------------------------------------------------------

    def in_use_over_tcp(self, name: str) -> bool:
        return in_use_over_tcp(self.server, name)


async def follow_releases(server: TonkServer, door: str) -> None:
    """A name released with `tonk-server names release` while the server runs is let go of
    here too, within RELEASE_CHECK seconds (each door that runs follows them: the second finds
    nothing more to let go of)."""
    names = server.door_names
    path = server.config.db_path
    while True:
        await asyncio.sleep(RELEASE_CHECK)
        if not len(names):
            continue
        known = names.saved_claims()
        try:
            on_disk = await asyncio.to_thread(claimed_on_disk, path)
        except AuditError as exc:
            log.warning("%s: cannot read the claimed names: %s", door, exc)
            continue
        for claim in names.refresh(known, on_disk):
            held = "a web browser" if claim.by_browser else f"key {claim.fingerprint}"
            log.info("%s: %s is free again (released from %s)", door, claim.name, held)


def in_use_over_tcp(server: TonkServer, name: str) -> bool:
    """Is `name` someone's who came in over TCP: connected, or holding a seat?"""
    folded = fold(name)
    for conn in server.connections:
        if conn.name is not None and fold(conn.name) == folded and conn.door_name is None:
            return True
    for table in server.tables.values():
        if table.state in (FINISHED, CLOSED):
            continue
        for seat in table.seats:
            if seat.kind == SeatKind.HUMAN and seat.name and fold(seat.name) == folded:
                return True
    return False


def _log_failure(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("a door's write failed: %s", future.exception())


def public_key_text(key: asyncssh.SSHKey) -> str:
    """`ssh-ed25519 AAAA...`: the key as an authorized_keys line, without its comment."""
    return " ".join(key.export_public_key("openssh").decode().split()[:2])


class DoorConnection(asyncssh.SSHServer):
    """One SSH connection: its limits, its authentication, its one session."""

    def __init__(self, door: SSHDoor) -> None:
        self.door = door
        self.conn: asyncssh.SSHServerConnection | None = None
        self.address = ""
        self.arrived = 0.0
        self.logging_in = False  # connected, not logged in yet: one of ssh_unauthenticated
        self.logged_in = False  # let in, until its session is over or it is gone
        self.no_session_timer: asyncio.TimerHandle | None = None
        self.refusals = 0
        self.username = ""
        self.refused_name: str | None = None  # why no key can come in under this name
        self.said: set[str] = set()  # banner lines sent already
        self.key: asyncssh.SSHKey | None = None
        self.name: str | None = None  # the name this connection plays as, once let in
        self.session: DoorSession | None = None
        self.claiming = False  # a session was asked for: its name is being claimed
        self.let_in = asyncio.Event()  # auth_completed is done (self.name set if let in)

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self.conn = conn
        peer = conn.get_extra_info("peername")
        self.address = str(peer[0]) if peer else ""
        self.arrived = asyncio.get_running_loop().time()
        if not self.door.make_room(self):
            # Not a word: the client has not even said which protocol it speaks.
            asyncio.get_running_loop().call_soon(conn.abort)
            return
        self.door.connections.add(self)
        self.logging_in = True

    def holds_a_place(self) -> bool:
        """Is this one of the players (`ssh_sessions`, `ssh_per_address`)?"""
        return self.logged_in and not (self.session is not None and self.session.ended)

    def connection_lost(self, exc: Exception | None) -> None:
        self.door.connections.discard(self)
        self.logging_in = self.logged_in = False
        if self.no_session_timer is not None:
            self.no_session_timer.cancel()
            self.no_session_timer = None
        if self.session is not None:
            self.session.end(None, None)

    def session_over(self) -> None:
        """The session's app has stopped and its player been told: the place is free at
        once (its ssh may be starting again), and the connection is closed soon, if the
        client does not close it first."""
        self.logged_in = False
        if self.conn is not None:
            asyncio.get_running_loop().call_later(AFTER_THE_SESSION, self.conn.close)

    def close(self, reason: str) -> None:
        self.logging_in = False
        if self.session is not None:
            self.session.end(f"tonk: {reason}", 1)
        elif self.conn is not None:
            self.conn.disconnect(asyncssh.DISC_BY_APPLICATION, f"tonk: {reason}")

    def ssh_command(self, name: str = "NAME", *, tty: bool = False) -> str:
        """`ssh -p PORT NAME@HOST` as this guest would type it: the door's port, and the
        address their ssh reached it at (its host name is never sent; `name` may stay a
        placeholder for a name of their choosing)."""
        sock = self.conn.get_extra_info("sockname") if self.conn is not None else None
        host = str(sock[0]) if sock else self.door.config.host
        return f"ssh{' -t' if tty else ''} -p {self.door.port} {name}@{host}"

    def _say(self, line: str) -> None:
        """One line to the SSH client while it authenticates (OpenSSH prints it)."""
        if self.conn is None or line in self.said:
            return
        self.said.add(line)
        with contextlib.suppress(OSError):
            self.conn.send_auth_banner(line + "\r\n")

    def _no_place(self) -> str | None:
        """Why there is no place for one more player (None: there is one)."""
        limits = self.door.limits
        if self.door.players() >= limits.ssh_sessions:
            return "tonk: the server has as many SSH sessions as it allows; try again later"
        if self.door.players(self.address) >= limits.ssh_per_address:
            return "tonk: too many SSH sessions from your address"
        return None

    def begin_auth(self, username: str) -> bool:
        assert self.conn is not None
        full = self._no_place()
        if full is not None:
            self.logging_in = False
            self.conn.disconnect(asyncssh.DISC_TOO_MANY_CONNECTIONS, full)
            return True
        self.username = username.strip()
        limit = self.door.limits.max_name
        if not self.username or not p.is_printable_text(self.username) or len(username) > limit:
            self.refused_name = (
                f"tonk: {username[:40]!r} cannot be a name here: a name is printable text of "
                f"1 to {limit} characters ({self.ssh_command()})"
            )
        return True

    def public_key_auth_supported(self) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return False

    def kbdint_auth_supported(self) -> bool:
        # Offered to a client that has offered no key yet, for one thing only: an ssh with no
        # key at all comes to it next and is told how to make one (OpenSSH prints the line).
        # Its answer is always no.
        return self.key is None and not self.refusals and not self.said

    def get_kbdint_challenge(self, username: str, lang: str, submethods: str) -> bool:
        self._say(NO_KEY)
        return False

    def validate_kbdint_response(self, username: str, responses: Any) -> bool:
        return False

    def validate_public_key(self, username: str, key: asyncssh.SSHKey) -> bool:
        if self._admits(key):
            self.key = key
            return True
        self.refusals += 1
        if self.refusals >= self.door.limits.ssh_auth_attempts and self.conn is not None:
            self.conn.disconnect(
                asyncssh.DISC_NO_MORE_AUTH_METHODS_AVAILABLE,
                f"tonk: too many keys refused ({self.refusals})",
            )
        return False

    def _admits(self, key: asyncssh.SSHKey) -> bool:
        if self.refused_name is not None:
            self._say(self.refused_name)
            return False
        authorized = self.door.authorized_keys()
        if authorized is not None:
            peer = self.conn.get_extra_info("peername") if self.conn else None
            host = str(peer[0]) if peer else ""
            if authorized.validate(key, host, host) is None:
                self._say("tonk: this server admits only the keys its host has listed")
                return False
        claim = self.door.server.door_names.owner(self.username)
        if claim is None:
            if self.door.in_use_over_tcp(self.username):
                self._say(
                    f"tonk: {self.username} is in use here by a player without a key: "
                    f"choose another name ({self.ssh_command()})"
                )
                return False
            held = self._names_held(key)
            if held is not None:
                self._say(held)
                return False
            return True
        if claim.public_key == public_key_text(key):
            return True
        holder = "a player who comes in from a web browser" if claim.by_browser else "another key"
        self._say(
            f"tonk: the name {claim.name} belongs to {holder} on this server: "
            f"use your own name ({self.ssh_command()})"
        )
        return False

    def _names_held(self, key: asyncssh.SSHKey) -> str | None:
        """Why `key` may claim no more names (None: it may claim one more)."""
        names = self.door.server.door_names.of_key(public_key_text(key))
        limit = self.door.limits.ssh_names_per_key
        if len(names) < limit:
            return None
        return (
            f"tonk: your key has {'the name' if limit == 1 else f'{len(names)} names'} here "
            f"already ({', '.join(names)}): come in as "
            f"{'it' if limit == 1 else 'one of them'} ({self.ssh_command(names[0])})"
        )

    async def auth_completed(self) -> None:
        self.logging_in = False
        try:
            self._let_in()
        finally:
            self.let_in.set()
        # A connection that opens no session (`ssh -N`) would hold its place for ever.
        if self.name is not None:
            self.no_session_timer = asyncio.get_running_loop().call_later(
                self.door.limits.ssh_login_timeout, self._without_a_session
            )

    def _without_a_session(self) -> None:
        self.no_session_timer = None
        if self.session is None and self.conn is not None:
            self.conn.disconnect(
                asyncssh.DISC_BY_APPLICATION,
                "tonk: this server opens the table and nothing else, and no table was asked "
                f"for: {self.ssh_command(self.name or 'NAME', tty=True)} "
                "(without -N)",
            )

    def _let_in(self) -> None:
        """Logged in: one of the players, if there is still a place (others may have been
        let in since this one began)."""
        assert self.key is not None
        full = self._no_place()
        if full is not None:
            self.close(full.removeprefix("tonk: "))
            return
        claim = self.door.server.door_names.owner(self.username)
        self.name = claim.name if claim is not None else self.username
        self.logged_in = True
        log.info("ssh door: %s in from %s", self.name, self.address)

    async def _claim(self) -> bool:
        """The name is this key's from now on, if it was nobody's: a name is claimed by the
        key that opens a session under it. False: the connection is closed, with the reason."""
        assert self.key is not None
        key = self.key
        names = self.door.server.door_names
        claim = names.owner(self.username)
        if claim is None:
            if self.door.in_use_over_tcp(self.username):
                self.close(f"{self.username} is in use here by a player without a key")
                return False
            held = self._names_held(key)
            if held is not None:  # claimed by another connection of this key meanwhile
                self.close(held.removeprefix("tonk: "))
                return False
            claim = st.SavedName(
                self.username, public_key_text(key), key.get_fingerprint("sha256"), time.time()
            )
            try:
                await self.door.server.store.write([names.claim(claim)])
            except ValueError:  # another connection claimed it first
                claim = names.owner(self.username)
            except st.StoreError as exc:
                names.unclaim(claim.name)
                log.error("ssh door: the name %s could not be saved: %s", claim.name, exc)
                self.close("the server could not keep your name; try again later")
                return False
            else:
                names.saved(claim.name)
                log.info("ssh door: %s claimed by key %s", claim.name, claim.fingerprint)
        if claim is None or claim.public_key != public_key_text(key):
            self.close(f"the name {self.username} belongs to another key on this server")
            return False
        self.name = claim.name
        return True

    async def session_requested(self) -> DoorSession | bool:
        # asyncssh may ask for the session before auth_completed has run.
        await self.let_in.wait()
        if self.name is None or self.session is not None or self.claiming:
            return False
        self.claiming = True
        if not await self._claim() or not self.logged_in:
            return False
        if self.no_session_timer is not None:
            self.no_session_timer.cancel()
            self.no_session_timer = None
        self.session = self.door.session_class(self, self.name)
        self.session.when_over = self.session_over
        return self.session

    # Forwarding of any kind is refused (these are asyncssh's defaults, said here on purpose,
    # with a reason that OpenSSH shows: `open failed: administratively prohibited: ...`).
    def connection_requested(self, dest_host: str, dest_port: int, *args: Any) -> bool:
        raise asyncssh.ChannelOpenError(asyncssh.OPEN_ADMINISTRATIVELY_PROHIBITED, NO_FORWARDING)

    def server_requested(self, listen_host: str, listen_port: int) -> bool:
        return False

    def unix_connection_requested(self, dest_path: str) -> bool:
        raise asyncssh.ChannelOpenError(asyncssh.OPEN_ADMINISTRATIVELY_PROHIBITED, NO_FORWARDING)

    def unix_server_requested(self, listen_path: str) -> bool:
        return False

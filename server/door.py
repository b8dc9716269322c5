"""The SSH door (`tonk-server --ssh-port`): `ssh -p PORT NAME@HOST` and the table app runs on
the player's terminal, in this process, beside the game server it talks to.

Only public keys are accepted; the first key that comes under a name claims it. A session gets
a terminal app and nothing else: no shell, no forwarding, no subsystems.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shlex
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import asyncssh
from tonk.shared import protocol as p

from . import store as st
from .door_names import fold
from .door_terminal import DoorApp, DoorSeats, TerminalInfo, door_config
from .table import CLOSED, FINISHED

if TYPE_CHECKING:
    from .app import TonkServer

log = logging.getLogger("tonk.server")

#: Bytes of screen output waiting for a slow SSH client before its session is closed.
MAX_BEHIND = 4 * 1024 * 1024
#: Seconds between the door's checks for idle sessions.
IDLE_CHECK = 5.0
#: The door's commands (`ssh -t -p PORT NAME@HOST COMMAND`).
COMMANDS = "practice [BOTS]"


def default_host_key_path(db_path: Path) -> Path:
    """The host key lives beside the database: same server, same fingerprint."""
    return db_path.with_name(f"{db_path.stem}_ssh_host_ed25519_key")


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


def parse_command(command: str | None) -> tuple[int | None, str | None]:
    """(practice bots, None) for a command the door knows, or (None, a refusal)."""
    if command is None or not command.strip():
        return None, None
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    if words and words[0] == "practice" and len(words) <= 2:
        if len(words) == 1:
            return 2, None
        if words[1].isdigit() and 1 <= int(words[1]) <= 4:
            return int(words[1]), None
        return None, "tonk: practice takes 1 to 4 bots, e.g. `practice 3`"
    return None, (
        f"tonk: this server runs the tonk table, not commands: {command.strip()[:60]!r} is not "
        f"one it knows (ssh with no command for the lobby, or {COMMANDS})"
    )


@dataclass(slots=True)
class DoorConfig:
    host: str = "0.0.0.0"
    port: int = 0
    host_key: Path | None = None  # default: beside the database
    authorized_keys: Path | None = None  # only these keys, when given


class SSHDoor:
    """The door: `await start()`, `port`, `fingerprint`, `await close()`."""

    def __init__(self, server: TonkServer, config: DoorConfig) -> None:
        self.server = server
        self.config = config
        self.limits = server.config.limits
        path = config.host_key or default_host_key_path(server.config.db_path)
        self.host_key = load_host_key(path)
        self.fingerprint = self.host_key.get_fingerprint("sha256")
        self.authorized: asyncssh.SSHAuthorizedKeys | None = None
        if config.authorized_keys is not None:
            try:
                self.authorized = asyncssh.read_authorized_keys(str(config.authorized_keys))
            except (OSError, ValueError) as exc:
                raise ValueError(
                    f"cannot read the authorized keys {config.authorized_keys}: {exc}"
                ) from None
        self.connections: set[DoorConnection] = set()
        self.per_address: dict[str, int] = {}
        self._acceptor: asyncssh.SSHAcceptor | None = None
        self._idle_task: asyncio.Task[None] | None = None
        self.port = 0

    async def start(self) -> None:
        self._acceptor = await asyncssh.create_server(
            lambda: DoorConnection(self),
            self.config.host,
            self.config.port,
            server_host_keys=[self.host_key],
            server_version="tonk",
            login_timeout=self.limits.ssh_login_timeout,
            keepalive_interval=30,
            keepalive_count_max=3,
            agent_forwarding=False,
            x11_forwarding=False,
            allow_scp=False,
            sftp_factory=None,
            encoding=None,
            line_editor=False,
            password_auth=False,
            kbdint_auth=False,
            host_based_auth=False,
            gss_host=None,
        )
        self.port = self._acceptor.get_port()
        self._idle_task = asyncio.create_task(self._close_idle(), name="ssh-idle")

    @property
    def address(self) -> str:
        return f"{self.config.host}:{self.port}"

    async def close(self) -> None:
        """No new connections; every session's app ends; every connection is closed."""
        if self._idle_task is not None:
            self._idle_task.cancel()
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

    async def _close_idle(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(min(IDLE_CHECK, self.limits.ssh_idle_timeout / 4))
            now = loop.time()
            for door_conn in list(self.connections):
                session = door_conn.session
                if session is not None and now - session.last_input > self.limits.ssh_idle_timeout:
                    minutes = self.limits.ssh_idle_timeout / 60
                    session.end(f"tonk: no key pressed for {minutes:g} minutes: goodbye", 0)

    # -- who is who ---------------------------------------------------------------------------

    def in_use_over_tcp(self, name: str) -> bool:
        """Is `name` someone's who came in over TCP: connected, or holding a seat?"""
        folded = fold(name)
        for conn in self.server.connections:
            if conn.name is not None and fold(conn.name) == folded and conn.door_name is None:
                return True
        for table in self.server.tables.values():
            if table.state in (FINISHED, CLOSED):
                continue
            for seat in table.seats:
                if seat.kind == "human" and seat.name and fold(seat.name) == folded:
                    return True
        return False

    def write(self, ops: list[st.Op]) -> None:
        written = self.server.store.write(ops)
        written.add_done_callback(_log_failure)

    def open_table(self, table_id: int) -> Any:
        table = self.server.tables.get(table_id)
        return table if table is not None and table.state not in (FINISHED, CLOSED) else None


def _log_failure(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("ssh door: a write failed: %s", future.exception())


def public_key_text(key: asyncssh.SSHKey) -> str:
    """`ssh-ed25519 AAAA...`: the key as an authorized_keys line, without its comment."""
    return " ".join(key.export_public_key("openssh").decode().split()[:2])


class DoorConnection(asyncssh.SSHServer):
    """One SSH connection: its limits, its authentication, its one session."""

    def __init__(self, door: SSHDoor) -> None:
        self.door = door
        self.conn: asyncssh.SSHServerConnection | None = None
        self.address = ""
        self.counted = False
        self.refusals = 0
        self.username = ""
        self.refused_name: str | None = None  # why no key can come in under this name
        self.said: set[str] = set()  # banner lines sent already
        self.key: asyncssh.SSHKey | None = None
        self.name: str | None = None  # the name this connection plays as, once let in
        self.session: DoorSession | None = None
        self.let_in = asyncio.Event()  # auth_completed is done (self.name set if let in)

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self.conn = conn
        peer = conn.get_extra_info("peername")
        self.address = str(peer[0]) if peer else ""
        self.door.connections.add(self)
        self.door.per_address[self.address] = self.door.per_address.get(self.address, 0) + 1
        self.counted = True

    def connection_lost(self, exc: Exception | None) -> None:
        self.door.connections.discard(self)
        if self.counted:
            self.counted = False
            left = self.door.per_address.get(self.address, 1) - 1
            if left > 0:
                self.door.per_address[self.address] = left
            else:
                self.door.per_address.pop(self.address, None)
        if self.session is not None:
            self.session.end(None, None)

    def close(self, reason: str) -> None:
        if self.session is not None:
            self.session.end(f"tonk: {reason}", 1)
        elif self.conn is not None:
            self.conn.disconnect(asyncssh.DISC_BY_APPLICATION, f"tonk: {reason}")

    def _say(self, line: str) -> None:
        """One line to the SSH client while it authenticates (OpenSSH prints it)."""
        if self.conn is None or line in self.said:
            return
        self.said.add(line)
        with contextlib.suppress(OSError):
            self.conn.send_auth_banner(line + "\r\n")

    def begin_auth(self, username: str) -> bool:
        assert self.conn is not None
        limits = self.door.limits
        if len(self.door.connections) > limits.ssh_sessions:
            self.conn.disconnect(
                asyncssh.DISC_TOO_MANY_CONNECTIONS,
                "tonk: the server has as many SSH sessions as it allows; try again later",
            )
            return True
        if self.door.per_address.get(self.address, 0) > limits.ssh_per_address:
            self.conn.disconnect(
                asyncssh.DISC_TOO_MANY_CONNECTIONS,
                "tonk: too many SSH sessions from your address",
            )
            return True
        self.username = username.strip()
        limit = limits.max_name
        if not self.username or not p.is_printable_text(self.username) or len(username) > limit:
            self.refused_name = (
                f"tonk: {username[:40]!r} cannot be a name here: a name is printable text of "
                f"1 to {limit} characters (ssh -p PORT NAME@HOST)"
            )
        return True

    def public_key_auth_supported(self) -> bool:
        return True

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
        if self.door.authorized is not None:
            peer = self.conn.get_extra_info("peername") if self.conn else None
            host = str(peer[0]) if peer else ""
            if self.door.authorized.validate(key, host, host) is None:
                self._say("tonk: this server admits only the keys its host has listed")
                return False
        claim = self.door.server.door_names.owner(self.username)
        if claim is None:
            if self.door.in_use_over_tcp(self.username):
                self._say(
                    f"tonk: {self.username} is in use here by a player without a key: "
                    "choose another name (ssh -p PORT NAME@HOST)"
                )
                return False
            return True
        if claim.public_key == public_key_text(key):
            return True
        self._say(
            f"tonk: the name {claim.name} belongs to another key on this server: "
            "use your own name (ssh -p PORT NAME@HOST)"
        )
        return False

    async def auth_completed(self) -> None:
        try:
            await self._let_in()
        finally:
            self.let_in.set()

    async def _let_in(self) -> None:
        assert self.conn is not None and self.key is not None
        key = self.key
        names = self.door.server.door_names
        claim = names.owner(self.username)
        if claim is None:
            if self.door.in_use_over_tcp(self.username):
                self.close(f"{self.username} is in use here by a player without a key")
                return
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
                return
            else:
                log.info("ssh door: %s claimed by key %s", claim.name, claim.fingerprint)
        if claim is None or claim.public_key != public_key_text(key):
            self.close(f"the name {self.username} belongs to another key on this server")
            return
        self.name = claim.name
        log.info("ssh door: %s in from %s", claim.name, self.address)

    async def session_requested(self) -> DoorSession | bool:
        # asyncssh may ask for the session before auth_completed has kept a new claim.
        await self.let_in.wait()
        if self.name is None or self.session is not None:
            return False
        self.session = DoorSession(self, self.name)
        return self.session

    # Forwarding of any kind is refused (these are asyncssh's defaults, said here on purpose).
    def connection_requested(self, dest_host: str, dest_port: int, *args: Any) -> bool:
        return False

    def server_requested(self, listen_host: str, listen_port: int) -> bool:
        return False

    def unix_connection_requested(self, dest_path: str) -> bool:
        return False

    def unix_server_requested(self, listen_path: str) -> bool:
        return False


class DoorSession(asyncssh.SSHServerSession[bytes]):
    """One player's table app on the session channel."""

    def __init__(self, door_conn: DoorConnection, name: str) -> None:
        self.door_conn = door_conn
        self.door = door_conn.door
        self.name = name
        self.chan: asyncssh.SSHServerChannel[bytes] | None = None
        self.terminal: TerminalInfo | None = None
        self.command: str | None = None
        self.app: DoorApp | None = None
        self.task: asyncio.Task[None] | None = None
        self.decoder: Any = None
        self.charset = "utf-8"
        self.ended = False
        self.gone = False  # the SSH client is gone
        self.links: list[asyncio.StreamWriter] = []  # the app's links to the game server
        self.app_done = False
        self.last_input = asyncio.get_running_loop().time()

    def connection_made(self, chan: asyncssh.SSHServerChannel[bytes]) -> None:
        self.chan = chan

    def pty_requested(self, term_type: str, term_size: Any, term_modes: Any) -> bool:
        width, height = term_size[0], term_size[1]
        self.terminal = TerminalInfo(term_type or "xterm", width or 80, height or 24, {})
        return True

    def shell_requested(self) -> bool:
        return True

    def exec_requested(self, command: str) -> bool:
        self.command = command
        return True

    def subsystem_requested(self, subsystem: str) -> bool:
        log.info("ssh door: %s asked for subsystem %r: refused", self.name, subsystem[:40])
        return False

    def break_received(self, msec: int) -> bool:
        return False

    def session_started(self) -> None:
        assert self.chan is not None
        bots, refusal = parse_command(self.command)
        if refusal is not None:
            self._say_and_exit(refusal, 1)
            return
        if self.terminal is None:
            self._say_and_exit(
                "tonk: the table needs a terminal: connect with ssh -t (or without a command)",
                1,
            )
            return
        environ = dict(self.chan.get_environment())
        self.terminal = TerminalInfo(
            self.terminal.term, self.terminal.width, self.terminal.height, environ
        )
        self.charset = self.terminal.charset
        self.decoder = _decoder(self.charset)
        conn = self.door_conn.conn
        sock = conn.get_extra_info("sockname") if conn is not None else None
        label = f"{sock[0]}:{sock[1]}" if sock else self.door.address
        server = self.door.server
        address = self.door_conn.address

        async def opener() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
            reader, writer = await server.open_door_link(self.name, address)
            self.links = [w for w in self.links if not w.is_closing()] + [writer]
            return reader, writer

        tokens = DoorSeats(server.door_names, self.door.open_table, self.door.write, self.name)
        config = door_config(self.name, label, self.terminal, tokens, opener, bots)
        self.app = DoorApp(config, self, self.terminal)
        self.task = asyncio.create_task(self._run(), name=f"ssh-{self.name}")

    async def _run(self) -> None:
        app = self.app
        terminal = self.terminal
        assert app is not None and terminal is not None
        loop = asyncio.get_running_loop()
        factory = loop.get_task_factory()
        status = 0
        try:
            running = asyncio.ensure_future(
                app.run_async(size=(terminal.width, terminal.height), mouse=True)
            )
            # Textual makes the loop's tasks eager where Python has them (3.12+); the game
            # server's tasks are written for the ordinary kind.
            await asyncio.sleep(0)
            loop.set_task_factory(factory)
            await running
            status = app.return_code or 0
        except Exception:
            log.exception("ssh door: %s's table app failed", self.name)
            status = 1
            app.said.write("tonk: the table app failed; the server's log says why\n")
        finally:
            # The link to the game server ends with the app, whatever state its worker is in.
            app.workers.cancel_all()
            for writer in self.links:
                writer.close()
            self.app_done = True
            said = app.said.getvalue().strip()
            if said.count("\n") > 2:  # a traceback: for the host, not the player
                log.error("ssh door: %s's table app stopped:\n%s", self.name, said)
                said = "tonk: the table app failed; the server's log says why"
            self.end(said or None, None if self.gone else status)

    # -- the channel --------------------------------------------------------------------------

    def write_screen(self, text: str) -> None:
        chan = self.chan
        if self.ended or self.gone or chan is None:
            return
        if chan.get_write_buffer_size() > MAX_BEHIND:
            log.info("ssh door: %s's terminal fell too far behind", self.name)
            self.end(None, 1)
            return
        try:
            chan.write(text.encode(self.charset, "replace"))
        except (OSError, asyncssh.Error):
            self.end(None, None)

    def data_received(self, data: bytes, datatype: int | None) -> None:
        self.last_input = asyncio.get_running_loop().time()
        app = self.app
        if app is None or app.door_driver is None or self.decoder is None:
            return
        app.door_driver.feed(self.decoder(data))

    def terminal_size_changed(self, width: int, height: int, pixwidth: int, pixheight: int) -> None:
        app = self.app
        if app is not None and app.door_driver is not None and width and height:
            app.door_driver.resize(width, height)

    def eof_received(self) -> bool:
        self.end(None, None)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.end(None, None)
        conn = self.door_conn.conn
        if conn is not None:
            conn.close()  # one session per connection: the connection is done too

    def _say_and_exit(self, line: str, status: int) -> None:
        assert self.chan is not None
        with contextlib.suppress(OSError, asyncssh.Error):
            self.chan.write_stderr((line + "\r\n").encode("utf-8", "replace"))
            self.chan.exit(status)
        self.ended = True
        self.app_done = True

    def end(self, line: str | None, status: int | None) -> None:
        """End the session: the app stops (its link to the game server closes, and the seat
        is kept as for any lost connection), `line` is said, and the channel is closed.
        `status` None: the SSH client is gone, nothing more is written."""
        if self.ended:
            return
        if status is None:
            self.gone = True
        app = self.app
        if app is not None and not self.app_done:
            if line:
                app.said.write(line)
            app.exit(return_code=status or 0)  # _run ends the channel once the app is down
            return
        self.ended = True
        chan = self.chan
        if chan is None:
            return
        with contextlib.suppress(OSError, asyncssh.Error):
            if self.gone:
                chan.close()
                return
            if line:
                text = "\r\n".join(line.splitlines()) + "\r\n"
                chan.write(text.encode(self.charset, "replace"))
            chan.exit(status or 0)


def _decoder(charset: str) -> Any:
    import codecs

    return codecs.getincrementaldecoder(charset)("replace").decode

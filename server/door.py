"""The SSH door (`tonk-server --ssh-port`): `ssh -p PORT NAME@HOST` and the table app runs on
the player's terminal: tonk-client's App in a child process on a pseudo-terminal that the door
feeds, talking to this server over a socket pair.

Only public keys are accepted; the first key that comes under a name claims it. A session gets
a terminal app and nothing else: no shell, no forwarding, no subsystems.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import fcntl
import json
import logging
import os
import pty
import shlex
import signal
import struct
import sys
import tempfile
import termios
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import asyncssh
from tonk.shared import protocol as p

from . import store as st
from .door_names import fold
from .table import CLOSED, FINISHED

if TYPE_CHECKING:
    from .app import TonkServer

log = logging.getLogger("tonk.server")

#: Bytes of keys a session's app has not read before more are dropped.
MAX_PENDING_KEYS = 64 * 1024
#: Seconds a session's app gets to stop when asked before it is killed.
KILL_AFTER = 5.0
#: Seats a player's session is handed (the newest first).
MAX_SEATS = 100
#: What Textual sets on a terminal, undone (for an app stopped before it could do it).
RESET_TERMINAL = (
    b"\x1b[?1000l\x1b[?1003l\x1b[?1015l\x1b[?1006l\x1b[?1004l\x1b[?2004l\x1b[?7h"
    b"\x1b[<u\x1b[?1049l\x1b[?25h"
)
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


@dataclass(frozen=True, slots=True)
class TerminalInfo:
    """What the SSH client said about its terminal: `TERM`, its size, and its environment
    as sent (OpenSSH sends LANG and LC_* where its config says SendEnv)."""

    term: str
    width: int
    height: int
    environ: Mapping[str, str]

    @property
    def charset(self) -> str:
        """The terminal's character set: LC_ALL, LC_CTYPE or LANG's codeset (UTF-8 when
        none is said, which is what nearly every terminal is)."""
        for name in ("LC_ALL", "LC_CTYPE", "LANG"):
            value = self.environ.get(name, "")
            if value:
                if value in ("C", "POSIX"):
                    return "ascii"
                _, _, codeset = value.partition(".")
                codeset = codeset.partition("@")[0]
                if not codeset:
                    return "utf-8"
                try:
                    return codecs.lookup(codeset).name
                except LookupError:
                    return "ascii"
        return "utf-8"

    @property
    def utf8(self) -> bool:
        return self.charset == "utf-8"

    @property
    def colour(self) -> bool:
        return "NO_COLOR" not in self.environ and self.term not in ("dumb", "unknown")

    def child_environ(self) -> dict[str, str]:
        """The session app's environment: the terminal's TERM and what the client said of
        its colours; a UTF-8 locale (the app's output is UTF-8: a terminal with another
        character set gets cards in ASCII, and lines drawn as the terminal can)."""
        environ = {
            "TERM": self.term,
            "LANG": "C.UTF-8",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", "/"),
            "PYTHONIOENCODING": "utf-8",
        }
        for name in ("COLORTERM", "NO_COLOR"):
            if name in self.environ:
                environ[name] = self.environ[name]
        if not self.colour:
            environ["NO_COLOR"] = "1"
        return environ


@dataclass(slots=True)
class DoorConfig:
    host: str = "0.0.0.0"
    port: int = 0
    host_key: Path | None = None  # default: beside the database
    authorized_keys: Path | None = None  # only these keys, when given


class SSHDoor:
    """The door: `await start()`, `port`, `fingerprint`, `await close()`."""

    def __init__(
        self,
        server: TonkServer,
        config: DoorConfig,
        session_class: type[DoorSession] | None = None,
    ) -> None:
        self.server = server
        self.config = config
        # How a session runs its app (bench/ssh_door.py measures another way with this).
        self.session_class = session_class or DoorSession
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
                    idle = self.limits.ssh_idle_timeout
                    said = f"{idle / 60:g} minutes" if idle >= 120 else f"{idle:g} seconds"
                    session.end(f"tonk: no key pressed for {said}: goodbye", 0)

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
        self.session = self.door.session_class(self, self.name)
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
    """One player's session: tonk-client's App in a child process (tonk.server.door_child) on
    a pseudo-terminal; the door copies the channel to the pty and back."""

    def __init__(self, door_conn: DoorConnection, name: str) -> None:
        self.door_conn = door_conn
        self.door = door_conn.door
        self.name = name
        self.chan: asyncssh.SSHServerChannel[bytes] | None = None
        self.terminal: TerminalInfo | None = None
        self.command: str | None = None
        self.task: asyncio.Task[None] | None = None
        self.child: asyncio.subprocess.Process | None = None
        self.master = -1  # the pty's master side, while the child runs
        self.pending = bytearray()  # keys the child has not taken yet
        self.paused = False  # the SSH client is behind: stop reading the pty
        self.ended = False
        self.gone = False  # the SSH client is gone
        self.stopping = False  # the door ends the session (idle, shutdown)
        self.farewell: str | None = None
        self.last_input = asyncio.get_running_loop().time()
        # The app speaks UTF-8; a terminal with another character set gets what it can show.
        self.to_terminal: Any = None
        self.from_terminal: Any = None

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
        if not self.terminal.utf8:
            charset = self.terminal.charset
            utf8_in = codecs.getincrementaldecoder("utf-8")("replace").decode
            theirs_in = codecs.getincrementaldecoder(charset)("replace").decode
            self.to_terminal = lambda data: utf8_in(data).encode(charset, "replace")
            self.from_terminal = lambda data: theirs_in(data).encode("utf-8")
        self.start(bots)

    def start(self, bots: int | None) -> None:
        """Run the table app for this session (`bots`: straight to a practice table)."""
        self.task = asyncio.create_task(self._run(bots), name=f"ssh-{self.name}")

    async def _run(self, bots: int | None) -> None:
        try:
            status = await self._run_child(bots)
        except Exception:
            log.exception("ssh door: %s's table could not be opened", self.name)
            self._finish("tonk: the table could not be opened; the server's log says why", 1)
            return
        self._finish(self.farewell, status)

    def _held_seats(self) -> list[dict[str, Any]]:
        """The seats this player holds at open tables, each with a new token."""
        held = []
        names = self.door.server.door_names
        for saved in names.seats(self.name)[:MAX_SEATS]:
            table = self.door.open_table(saved.table_id)
            token = table.door_token(self.name) if table is not None else None
            if token is None:
                op = names.forget_seat(self.name, saved.table_id)
                if op is not None:
                    self.door.write([op])
                continue
            held.append({"table": saved.table_id, "token": token, "left": saved.left})
        return held

    async def _run_child(self, bots: int | None) -> int:
        terminal = self.terminal
        assert terminal is not None
        server = self.door.server
        _, writer = await server.open_door_link(self.name, self.door_conn.address)
        link = os.dup(writer.get_extra_info("socket").fileno())
        writer.transport.abort()  # our descriptor only: the child's copy keeps the link
        seats_in, seats_out = os.pipe()
        master, slave = pty.openpty()
        try:
            os.write(seats_out, json.dumps(self._held_seats()).encode())
            os.close(seats_out)
            seats_out = -1
            _set_size(master, terminal.width, terminal.height)
            os.set_blocking(master, False)
            argv = [
                sys.executable,
                "-m",
                "tonk.server.door_child",
                "--link",
                str(link),
                "--seats",
                str(seats_in),
                "--name",
                self.name,
                "--server",
                self._label(),
            ]
            if bots:
                argv += ["--bots", str(bots)]
            if not terminal.utf8:
                argv.append("--ascii")
            self.child = await asyncio.create_subprocess_exec(
                *argv,
                stdin=slave,
                stdout=slave,
                stderr=slave,
                pass_fds=(link, seats_in),
                # A process group of its own (no signal from the server's terminal reaches
                # it) but the server's session: Linux shares CPU between sessions first
                # (autogroups), so a session each would let 20 players' screens take 20/21
                # of the CPU from the games, and the app's lower priority would count for
                # nothing.
                process_group=0,
                env=terminal.child_environ(),
            )
        except BaseException:
            os.close(master)
            raise
        finally:
            for fd in (slave, link, seats_in, seats_out):
                if fd >= 0:
                    os.close(fd)
        self.master = master
        loop = asyncio.get_running_loop()
        if not self.paused:
            loop.add_reader(master, self._from_child)
        if self.stopping or self.gone:
            self._stop_child()
        try:
            status = await self.child.wait()
        finally:
            self._from_child(final=True)
            self._close_master()
        return status

    def _label(self) -> str:
        conn = self.door_conn.conn
        sock = conn.get_extra_info("sockname") if conn is not None else None
        return str(sock[0]) if sock else self.door.config.host

    # -- copying between the channel and the pty ---------------------------------------------

    def _from_child(self, final: bool = False) -> None:
        while self.master >= 0:
            try:
                data = os.read(self.master, 65536)
            except BlockingIOError:
                return
            except OSError:  # EIO: the child and everything it started are gone
                data = b""
            if not data:
                if self.master >= 0:
                    asyncio.get_running_loop().remove_reader(self.master)
                return
            chan = self.chan
            if chan is not None and not self.gone:
                if self.to_terminal is not None:
                    data = self.to_terminal(data)
                with contextlib.suppress(OSError, asyncssh.Error):
                    chan.write(data)
            if not final:
                return

    def pause_writing(self) -> None:
        # The SSH client is behind: leave the output in the pty, whose writer then waits.
        self.paused = True
        if self.master >= 0:
            asyncio.get_running_loop().remove_reader(self.master)

    def resume_writing(self) -> None:
        self.paused = False
        if self.master >= 0:
            asyncio.get_running_loop().add_reader(self.master, self._from_child)

    def data_received(self, data: bytes, datatype: int | None) -> None:
        self.last_input = asyncio.get_running_loop().time()
        if self.master < 0:
            return
        if self.from_terminal is not None:
            data = self.from_terminal(data)
        if len(self.pending) + len(data) > MAX_PENDING_KEYS:
            return  # the app is not reading its keys: these are dropped, as a stuck tty would
        self.pending += data
        self._to_child()

    def _to_child(self) -> None:
        loop = asyncio.get_running_loop()
        if self.master < 0:
            self.pending.clear()
            return
        try:
            written = os.write(self.master, self.pending)
        except BlockingIOError:
            written = 0
        except OSError:
            self.pending.clear()
            written = 0
        del self.pending[:written]
        if self.pending:
            loop.add_writer(self.master, self._to_child)
        else:
            loop.remove_writer(self.master)

    def terminal_size_changed(self, width: int, height: int, pixwidth: int, pixheight: int) -> None:
        if self.master >= 0 and width and height:
            _set_size(self.master, width, height)
            child = self.child
            if child is not None and child.returncode is None:
                # Not the app's controlling terminal: the kernel does not tell it, we do.
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.pid, signal.SIGWINCH)

    def _close_master(self) -> None:
        if self.master >= 0:
            loop = asyncio.get_running_loop()
            loop.remove_reader(self.master)
            loop.remove_writer(self.master)
            os.close(self.master)
            self.master = -1

    # -- the end ------------------------------------------------------------------------------

    def eof_received(self) -> bool:
        self.end(None, None)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.end(None, None)
        conn = self.door_conn.conn
        if conn is not None:
            conn.close()  # one session per connection: the connection is done too

    def end(self, line: str | None, status: int | None) -> None:
        """End the session from the door's side: `line` is said once the app is stopped.
        `status` None: the SSH client is gone, nothing more is written."""
        if self.ended:
            return
        if status is None:
            self.gone = True
        else:
            self.stopping = True
            self.farewell = line
        if self.task is not None and not self.task.done():
            self._stop_child()  # _run finishes the channel once the child is gone
            return
        self._finish(line, status)

    def _stop_child(self) -> None:
        child = self.child
        if child is None or child.returncode is not None:
            return  # not started yet: _run_child stops it as soon as it is
        with contextlib.suppress(ProcessLookupError):
            child.terminate()

        def kill() -> None:
            if child.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    child.kill()

        asyncio.get_running_loop().call_later(KILL_AFTER, kill)

    def _finish(self, line: str | None, status: int | None) -> None:
        if self.ended:
            return
        self.ended = True
        self._close_master()
        chan = self.chan
        if chan is None:
            return
        with contextlib.suppress(OSError, asyncssh.Error):
            if self.gone or status is None:
                chan.close()
                return
            if self.stopping:
                chan.write(RESET_TERMINAL)  # the app was stopped before it could do this
            if line:
                text = "\r\n".join(line.splitlines()) + "\r\n"
                chan.write(
                    text.encode(self.terminal.charset if self.terminal else "utf-8", "replace")
                )
            chan.exit(status if status >= 0 else 1)

    def _say_and_exit(self, line: str, status: int) -> None:
        assert self.chan is not None
        self.ended = True
        with contextlib.suppress(OSError, asyncssh.Error):
            self.chan.write_stderr((line + "\r\n").encode("utf-8", "replace"))
            self.chan.exit(status)


def _set_size(master: int, width: int, height: int) -> None:
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", height, width, 0, 0))

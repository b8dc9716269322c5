"""One SSH door session: the table app, tonk-client's App, in a child process
(tonk.client.door.door_child) on a pseudo-terminal; the session copies the channel to the pty and
back, and tells the app the terminal's type, size and character set as the SSH client said
them. Nothing else runs: no shell, and no command but `practice` and `join`."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import fcntl
import json
import logging
import os
import pty
import signal
import socket
import struct
import termios
from collections.abc import Callable
from typing import Any

import asyncssh
from tonk.shared.game.words import plural

from .door_host import DoorLink
from .door_request import DoorCommand, TerminalInfo, bell_choice, parse_command, practice_table_name
from .door_template import SessionProcess

log = logging.getLogger("tonk.server")

#: Bytes of keys a session's app has not read before more are dropped.
MAX_PENDING_KEYS = 64 * 1024
#: How much lower a session's app runs than the server (nice(1)): its screens wait for the games.
APP_NICENESS = 10
#: Seconds a session's app gets to stop when asked before it is killed.
KILL_AFTER = 5.0
#: Seats a player's session is handed (the newest first).
MAX_SEATS = 100
#: What Textual sets on a terminal, undone (for an app stopped before it could do it).
RESET_TERMINAL = (
    b"\x1b[?1000l\x1b[?1003l\x1b[?1015l\x1b[?1006l\x1b[?1004l\x1b[?2004l\x1b[?7h"
    b"\x1b[<u\x1b[?1049l\x1b[?25h"
)
#: Bytes of a session app's error output kept for the log (the last ones).
MAX_ERROR_TEXT = 64 * 1024
#: What a player is told when their session's app stops on an error (the log has the rest).
CRASH_LINE = (
    "tonk: the table stopped on an error (the host will find it in the server's log); "
    "ssh in again to carry on: any seat you hold is kept"
)


class InputBudget:
    """What a session may send its app: a bucket of `burst` bytes refilled at `rate` a second
    (a player's keys, a mouse, a paste fit; a flood does not, and is not the app's to
    queue)."""

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate = rate
        self.burst = burst
        self.left = burst
        self.refilled = now

    def take(self, size: int, now: float) -> bool:
        """Take `size` bytes; False: past the budget."""
        if now > self.refilled:
            self.left = min(self.burst, self.left + (now - self.refilled) * self.rate)
            self.refilled = now
        self.left -= size
        return self.left >= 0

    def too_much(self) -> str:
        """The line a session past its budget is closed with."""
        return (
            f"tonk: more came from your terminal than a player sends (over {self.rate:g} bytes "
            f"a second, or {self.burst:g} at once): goodbye"
        )


class DoorSession(asyncssh.SSHServerSession[bytes]):
    """One player's session: tonk-client's App in a child process (tonk.client.door.door_child) on
    a pseudo-terminal; the door copies the channel to the pty and back."""

    def __init__(self, door_conn: DoorLink, name: str) -> None:
        self.door_conn = door_conn
        self.door = door_conn.door
        self.name = name
        self.chan: asyncssh.SSHServerChannel[bytes] | None = None
        self.terminal: TerminalInfo | None = None
        self.command: str | None = None
        self.bell = True  # the terminal bell rings (the command's `nobell`: never)
        self.task: asyncio.Task[None] | None = None
        self.child: SessionProcess | None = None
        self.master = -1  # the pty's master side, while the child runs
        self.errors = -1  # the read side of the child's error pipe, while it runs
        self.relinks: socket.socket | None = None  # where the child asks for a new link
        self.relinking = False
        self.starting = False  # holds one of door_starting's turns
        self.relink_task: asyncio.Task[None] | None = None
        self.error_text = bytearray()  # what the child wrote there (the last bytes)
        self.pending = bytearray()  # keys the child has not taken yet
        self.paused = False  # the SSH client is behind: stop reading the pty
        self.ended = False
        self.gone = False  # the SSH client is gone
        self.stopping = False  # the door ends the session (idle, shutdown)
        self.farewell: str | None = None
        self.when_over: Callable[[], None] | None = None  # told once the session is over
        now = asyncio.get_running_loop().time()
        self.began = now
        self.last_input = now
        limits = self.door.limits
        self.budget = InputBudget(limits.door_input_rate, limits.door_input_burst, now)
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
        self.command, self.bell = bell_choice(self.command)
        command, refusal = parse_command(self.command)
        if refusal is not None:
            self._say_and_exit(refusal, 1)
            return
        if self.terminal is None:
            again = self.door_conn.ssh_command(self.name, tty=True)
            self._say_and_exit(
                f"tonk: the table needs a terminal: connect with {again} (or without a command)",
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
        self.start(command)

    def start(self, command: DoorCommand) -> None:
        """Run the table app for this session (straight to a practice table, or to the table
        named, as the guest's command says)."""
        self.task = asyncio.create_task(self._run(command), name=f"ssh-{self.name}")

    async def _run(self, command: DoorCommand) -> None:
        try:
            await self._turn_to_start()
            if self.gone or self.stopping:
                status = 1
            else:
                status = await self._run_child(command)
        except Exception:
            log.exception("%s: %s's table could not be opened", self.door_label, self.name)
            self._finish("tonk: the table could not be opened; the server's log says why", 1)
            return
        finally:
            self._started()
        self._finish(self.farewell, status)

    async def _turn_to_start(self) -> None:
        """Wait for a turn to start the app (`door_starting` start at once), saying so."""
        starts = self.door.server.app_starts
        ahead = starts.ahead()
        if ahead and self.chan is not None:
            tables = "table is" if ahead == 1 else "tables are"
            with contextlib.suppress(OSError, asyncssh.Error):
                self.chan.write(
                    f"tonk: {ahead} {tables} opening before yours; it opens in turn\r\n".encode()
                )
        await starts.turn()
        self.starting = True

    def _started(self) -> None:
        """The app has drawn (or is gone): the next session's turn to start one."""
        if self.starting:
            self.starting = False
            self.door.server.app_starts.done()

    def _held_seats(self) -> list[dict[str, Any]]:
        """The seats this player holds at open tables, each with a new token."""
        held = []
        names = self.door.server.door_names
        for saved in names.seats(self.name)[:MAX_SEATS]:
            table = self.door.open_table(saved.table_id)
            token = table.seats.door_token(self.name) if table is not None else None
            if token is None:
                op = names.forget_seat(self.name, saved.table_id)
                if op is not None:
                    self.door.write([op])
                continue
            held.append({"table": saved.table_id, "token": token, "left": saved.left})
        return held

    def _practice_to_take_back(
        self, seats: list[dict[str, Any]], bots: int
    ) -> dict[str, Any] | None:
        """The player's own practice table with as many bots, still open, where they hold a
        seat (dropped, or left on purpose), if there is one."""
        name = practice_table_name(self.name)
        for seat in seats:
            table = self.door.open_table(seat["table"])
            if table is not None and table.name == name and len(table.seats) == bots + 1:
                return seat
        return None

    async def _run_child(self, command: DoorCommand) -> int:
        bots = command.bots
        terminal = self.terminal
        assert terminal is not None
        await self.door.template.settled()
        link = await self._new_link()
        relinks, child_relinks = socket.socketpair()
        relink = child_relinks.detach()
        seats_in, seats_out = os.pipe()
        errors_in, errors_out = os.pipe()
        master, slave = self.open_terminal(terminal)
        try:
            seats = self._held_seats()
            if bots:
                back = self._practice_to_take_back(seats, bots)
                if back is not None:  # `practice` again: back to it, not a new table
                    seats.remove(back)
                    seats.insert(0, {**back, "left": False})
                    bots = None
            os.write(seats_out, json.dumps(seats).encode())
            os.close(seats_out)
            seats_out = -1
            os.set_blocking(master, False)
            args = [
                "--link",
                str(link),
                "--seats",
                str(seats_in),
                "--errors",
                str(errors_out),
                "--relink",
                str(relink),
                "--name",
                self.name,
                "--server",
                self._label(),
                "--port",
                str(self.door.port),
                "--logs",
                str(self.door.logs),
            ]
            if bots:
                args += ["--bots", str(bots), "--table-name", practice_table_name(self.name)]
            if command.table is not None:
                args += ["--join", command.table]
            if not terminal.utf8:
                args.append("--ascii")
            args += self.child_args()
            self.child = await self.spawn(args, slave, (link, seats_in, errors_out, relink))
            lower_priority(self.child.pid)
        except BaseException:
            os.close(master)
            os.close(errors_in)
            relinks.close()
            raise
        finally:
            for fd in (slave, link, seats_in, seats_out, errors_out, relink):
                if fd >= 0:
                    os.close(fd)
        self.master = master
        self.errors = errors_in
        os.set_blocking(errors_in, False)
        loop = asyncio.get_running_loop()
        loop.add_reader(errors_in, self._errors_from_child)
        self.relinks = relinks
        relinks.setblocking(False)
        loop.add_reader(relinks.fileno(), self._relink_asked)
        if not self.paused:
            loop.add_reader(master, self._from_child)
        if self.stopping or self.gone:
            self._stop_child()
        try:
            status = await self.child.wait()
        finally:
            self._from_child(final=True)
            self._close_master()
            self._errors_from_child(final=True)
            self._close_relinks()
        self._log_errors(status)
        return status

    async def spawn(
        self, args: list[str], terminal: int, pass_fds: tuple[int, ...]
    ) -> SessionProcess:
        """The session's app (tonk.client.door.door_child with `args`) on `terminal`, with
        `pass_fds`: forked from the door sessions' template (server/doors/door_template.py)."""
        return await self.door.template.spawn(args, terminal, pass_fds, self.child_environ())

    #: Does this session play (False: it only watches, and holds no seat through the door)?
    player = True
    #: What its player is told when the app stops on an error.
    crash_line = CRASH_LINE
    #: The door, in the log.
    door_label = "ssh door"
    #: Bytes of keys the app has not read (past its terminal's own buffer) before more are
    #: dropped.
    max_pending_keys = MAX_PENDING_KEYS

    @property
    def link_label(self) -> str:
        """Where its link comes from, in the log: `ssh door`, `web door`, `web door's
        television page`."""
        return self.door_label if self.player else f"{self.door_label}'s television page"

    async def _new_link(self) -> int:
        """A new link to the server for this player: a descriptor of our own to hand on."""
        _, writer = await self.door.server.open_door_link(
            self.name, self.door_conn.address, self.link_label, player=self.player
        )
        link = os.dup(writer.get_extra_info("socket").fileno())
        writer.transport.abort()  # our descriptor only: the dup keeps the link
        return link

    def _relink_asked(self) -> None:
        """The app lost its link (the server closed it: too many messages, say) and asks
        for another, as tonk-client would connect again."""
        relinks = self.relinks
        if relinks is None:
            return
        try:
            asked = relinks.recv(64)
        except BlockingIOError:
            return
        except OSError:
            asked = b""
        if not asked:  # the child is gone
            self._close_relinks()
        elif not self.relinking and not self.stopping and not self.gone:
            self.relinking = True
            self.relink_task = asyncio.create_task(self._relink(), name=f"ssh-{self.name}-relink")

    async def _relink(self) -> None:
        try:
            link = await self._new_link()
        except Exception as exc:  # the app asks again (tonk-client's delays between tries)
            log.warning("%s: no new link for %s: %s", self.door_label, self.name, exc)
            self.relinking = False
            return
        try:
            if self.relinks is not None:
                with contextlib.suppress(OSError):
                    socket.send_fds(self.relinks, [b"L"], [link])
                    log.info(
                        "%s: %s's table has a new link to the server", self.door_label, self.name
                    )
        finally:
            os.close(link)
            self.relinking = False

    def _close_relinks(self) -> None:
        if self.relinks is not None:
            asyncio.get_running_loop().remove_reader(self.relinks.fileno())
            self.relinks.close()
            self.relinks = None

    def _errors_from_child(self, final: bool = False) -> None:
        while self.errors >= 0:
            try:
                data = os.read(self.errors, 65536)
            except BlockingIOError:
                data = None
            except OSError:
                data = b""
            if data:
                self.error_text += data
                del self.error_text[:-MAX_ERROR_TEXT]
                if final:
                    continue
                return
            if data is None and not final:
                return
            # The child (and everything it started) is gone, or it is and we read the rest.
            asyncio.get_running_loop().remove_reader(self.errors)
            os.close(self.errors)
            self.errors = -1

    def _log_errors(self, status: int) -> None:
        """What the app wrote to its error pipe goes to the log, with who and how it ended."""
        text = self.error_text.decode("utf-8", "replace").rstrip()
        if self.crashed(status):
            log.error(
                "%s: %s's table app stopped on an error (exit status %d)%s",
                self.door_label,
                self.name,
                status,
                ":\n" + text if text else "",
            )
        elif text:
            log.warning("%s: %s's table app said:\n%s", self.door_label, self.name, text)

    def crashed(self, status: int | None) -> bool:
        """Did the app stop on an error (not asked to by the door, nor left by its player)?"""
        if status is None or self.stopping or self.gone:
            return False
        return status == os.EX_SOFTWARE or status < 0

    def open_terminal(self, terminal: TerminalInfo) -> tuple[int, int]:
        """The app's terminal: (our side, its side); a pseudo-terminal of the SSH client's
        size."""
        master, slave = pty.openpty()
        _set_size(master, terminal.width, terminal.height)
        return master, slave

    def child_args(self) -> list[str]:
        """More of the app's command line: the bell turned off (the command's `nobell`), and
        another door's own."""
        return [] if self.bell else ["--no-bell"]

    def child_environ(self) -> dict[str, str]:
        """The environment the session's app runs in."""
        assert self.terminal is not None
        return self.terminal.child_environ()

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
            self._started()
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
        if self.ended or self.stopping:
            return
        if self.within_budget(len(data)):
            self.keys_received(data)

    def within_budget(self, size: int) -> bool:
        """Take `size` bytes from the input budget; past it, the session is closed (False)."""
        if self.ended or self.stopping:
            return False
        if self.budget.take(size, asyncio.get_running_loop().time()):
            return True
        self.pending.clear()
        log.warning(
            "%s: %s sent more than a terminal does: session closed", self.door_label, self.name
        )
        self.end(self.budget.too_much(), 1)
        return False

    def keys_received(self, data: bytes) -> None:
        """Keys for the app (counted against the budget already): the idle clock restarts."""
        self.last_input = asyncio.get_running_loop().time()
        if self.master < 0:
            return
        if self.from_terminal is not None:
            data = self.from_terminal(data)
        if len(self.pending) + len(data) > self.max_pending_keys:
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
                    child.send_signal(signal.SIGWINCH)

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

    def _over(self) -> None:
        self.ended = True
        if self.when_over is not None:
            self.when_over()

    def _finish(self, line: str | None, status: int | None) -> None:
        if self.ended:
            return
        self._over()
        minutes = round((asyncio.get_running_loop().time() - self.began) / 60)
        how = "quit" if status is not None and not self.stopping else "closed by the door"
        log.info(
            "%s: %s out after %s (%s)",
            self.link_label,
            self.name,
            plural(minutes, "minute") if minutes else "less than a minute",
            "the terminal went" if self.gone or status is None else how,
        )
        self._close_master()
        chan = self.chan
        if chan is None:
            return
        with contextlib.suppress(OSError, asyncssh.Error):
            if self.gone or status is None:
                chan.close()
                return
            if self.crashed(status):
                line, status = self.crash_line, 1
            if self.stopping or line == self.crash_line:
                chan.write(RESET_TERMINAL)  # the app was stopped before it could do this
            if line:
                text = "\r\n".join(line.splitlines()) + "\r\n"
                chan.write(
                    text.encode(self.terminal.charset if self.terminal else "utf-8", "replace")
                )
            chan.exit(status if status >= 0 else 1)

    def _say_and_exit(self, line: str, status: int) -> None:
        assert self.chan is not None
        self._over()
        with contextlib.suppress(OSError, asyncssh.Error):
            self.chan.write_stderr((line + "\r\n").encode("utf-8", "replace"))
            self.chan.exit(status)


def lower_priority(pid: int) -> None:
    """A session's app at APP_NICENESS below the server from its start (its imports too: 50
    guests logging in at once are a minute of CPU, which the games must not wait behind)."""
    with contextlib.suppress(OSError):
        server = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, pid, min(server + APP_NICENESS, 19))


def _set_size(master: int, width: int, height: int) -> None:
    fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", height, width, 0, 0))

"""The door sessions' template: one process that has imported the table app once and is
forked for each door session (the SSH door's and the web door's), so that a session pays only
for its own state. The server starts it as a fresh interpreter (tonk.server.doors.door_template), so
none of the server's threads are in it, and it has none of its own when it forks; it is asked
for each session over a local socket, as `multiprocessing`'s forkserver is.

    python -m tonk.client.door.door_template --control FD

A request is one message on the control socket: JSON {"args": [...], "env": {...}, "fds":
[N, ...]} (door_child's command line, its environment, and the numbers its descriptors take),
with the descriptors: the session's status socket, its terminal, then one for each of "fds".
The session says `P` and its pid on the status socket first, with a pidfd of itself, and `X`
with its exit status just before it exits; the template says `X` again once it has reaped it
(with the signal, for a session killed), or `E` and why it could not fork. The end of the
status socket is the session's end (its last holder gone). A template that is gone leaves its
sessions running: each watches the server itself and stops with it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import fcntl
import gc
import importlib
import json
import os
import select
import selectors
import signal
import socket
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Sequence
from typing import NoReturn

import textual.constants
from tonk.client.app import ClientConfig
from tonk.client.door import door_child
from tonk.client.parsed_css import share_parsed_css

#: The names `ps -o comm` and `top` show for the template and for a session forked from it
#: (the command line is the template's in both).
TEMPLATE_NAME, SESSION_NAME = b"tonk-template", b"tonk-session"
#: prctl(2)'s option that names the process.
PR_SET_NAME = 15
#: The longest request read (JSON: the command line and the environment).
MAX_REQUEST = 64 * 1024
#: The most descriptors a request carries.
MAX_FDS = 16
#: Seconds a session has to end once its server is gone, before it is killed.
ORPHAN_GRACE = 10.0


class Request:
    """One session asked for: door_child's arguments, its environment, and its descriptors
    (the status socket, the terminal, then those the arguments name, at `targets`)."""

    def __init__(self, data: bytes, fds: list[int]) -> None:
        body = json.loads(data)
        self.args = [str(a) for a in body["args"]]
        self.env = {str(k): str(v) for k, v in body["env"].items()}
        self.targets = [int(n) for n in body["fds"]]
        if len(fds) != len(self.targets) + 2:
            raise ValueError(f"{len(fds)} descriptors for {len(self.targets)} numbers")
        self.status, self.terminal, *self.passed = fds


class Template:
    """The template's loop: a request forks a session; SIGCHLD reaps one and says its end."""

    def __init__(self, control: socket.socket, server: int) -> None:
        self.control = control
        self.server = server  # a pidfd of the server: each session watches it
        self.sessions: dict[int, socket.socket] = {}  # pid: its status socket
        self.wakeup, self.wakeup_in = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(self.wakeup_in)
        signal.signal(signal.SIGCHLD, lambda signum, frame: None)

    def serve(self) -> int:
        selector = selectors.DefaultSelector()
        selector.register(self.control, selectors.EVENT_READ)
        selector.register(self.wakeup, selectors.EVENT_READ)
        try:
            self.control.sendall(b"R")  # ready
        except OSError:
            return 0  # the server closed before
        while True:
            for key, _ in selector.select():
                if key.fileobj is self.control:
                    if not self.take_request():
                        return 0  # the server is closing (or gone)
                else:
                    with contextlib.suppress(BlockingIOError):
                        os.read(self.wakeup, 4096)
                    self.reap()

    def take_request(self) -> bool:
        try:
            data, fds, flags, _ = socket.recv_fds(self.control, MAX_REQUEST, MAX_FDS)
        except OSError:
            return False
        if not data:
            for fd in fds:
                os.close(fd)
            return False
        try:
            if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
                raise ValueError("a request too long")
            request = Request(data, fds)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            print(f"tonk-server: door sessions' template: {exc}", file=sys.stderr)
            for fd in fds:
                os.close(fd)
            return True
        status = socket.socket(fileno=request.status)
        try:
            pid = self.fork(request)
        except OSError as exc:
            with contextlib.suppress(OSError):
                status.send(b"E" + str(exc).encode(), socket.MSG_DONTWAIT)
            status.close()
        else:
            self.sessions[pid] = status
        finally:
            for fd in (request.terminal, *request.passed):
                os.close(fd)
        return True

    def fork(self, request: Request) -> int:
        if threading.active_count() != 1 or len(os.listdir("/proc/self/task")) != 1:
            raise OSError("the template has threads: it forks no session")
        pid = os.fork()
        if pid == 0:
            run_session(request, self.server)
        return pid

    def reap(self) -> None:
        while True:
            try:
                pid, wait_status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            status = self.sessions.pop(pid, None)
            if status is not None:
                code = os.waitstatus_to_exitcode(wait_status)
                with contextlib.suppress(OSError):
                    status.send(b"X%d" % code, socket.MSG_DONTWAIT)
                status.close()


def call_me(name: bytes) -> None:
    """This process's name, as `ps -o comm` shows it (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NAME, name, 0, 0, 0)


def place(fds: Sequence[int], targets: Sequence[int]) -> None:
    """Each of `fds` moved to the number in `targets`, inheritable (as subprocess's `pass_fds`
    leaves them), whatever numbers they and the others have now."""
    floor = max([*fds, *targets, 2]) + 1
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, floor) for fd in fds]
    for fd in fds:
        os.close(fd)
    for fd, target in zip(high, targets, strict=True):
        os.dup2(fd, target)
        os.close(fd)


def keep_only(fds: Sequence[int]) -> None:
    """Every descriptor but `fds` closed: nothing of the template's (its control socket, the
    other sessions' status sockets) is left in a session."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def standard_streams() -> None:
    """sys.stdin, stdout and stderr on descriptors 0, 1 and 2 (the session's terminal), as a
    fresh interpreter makes them (UTF-8: the session's PYTHONIOENCODING)."""
    interactive = os.isatty(1)
    streams = (
        open(0, encoding="utf-8", closefd=False),  # noqa: SIM115
        open(1, "w", encoding="utf-8", buffering=1 if interactive else -1, closefd=False),  # noqa: SIM115
        open(2, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False),  # noqa: SIM115
    )
    sys.stdin, sys.stdout, sys.stderr = streams
    # (Textual draws on these: the streams the interpreter started with, final to mypy.)
    for name, stream in zip(("__stdin__", "__stdout__", "__stderr__"), streams, strict=True):
        setattr(sys, name, stream)


def watch_the_server(server: int, grace: float = ORPHAN_GRACE) -> None:
    """SIGTERM to this session when the server is gone, as a session started by the server
    has its parent's death signal (a forked session's parent is the template, which may go
    before the server); SIGKILL `grace` seconds later if it is still there (the web driver
    takes SIGTERM as a request to the app's event loop, which a busy or stuck app may not
    get to: a session never outlives its server by more than that)."""

    def watch() -> None:
        # poll(), not select(): a server with a thousand files open hands on descriptors
        # numbered above select()'s 1,024, and the watch would end at once, on an error.
        watcher = select.poll()
        watcher.register(server, select.POLLIN)
        while not watcher.poll():
            pass
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(grace)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="tonk-server-watch", daemon=True).start()


def run_session(request: Request, server: int) -> NoReturn:
    """The forked session: its descriptors, process group, signals and environment as a
    session started by the server has them, then door_child's main."""
    code = door_child.CRASHED
    status: socket.socket | None = None
    try:
        # The signals as the interpreter set them (SIGPIPE ignored, SIGINT to Python), but
        # the template's own SIGCHLD.
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setpgid(0, 0)
        call_me(SESSION_NAME)
        mine = [request.status, server, request.terminal, *request.passed]
        floor = max([*mine, *request.targets, 2]) + 1
        status_fd, server, terminal, *passed = (
            fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, floor) for fd in mine
        )
        keep_only([status_fd, server, terminal, *passed])
        status = socket.socket(fileno=status_fd)
        for target in (0, 1, 2):
            os.dup2(terminal, target)
        os.close(terminal)
        place(passed, request.targets)
        pidfd = os.pidfd_open(os.getpid())
        socket.send_fds(status, [b"P%d" % os.getpid()], [pidfd])
        os.close(pidfd)
        os.environ.clear()
        os.environ.update(request.env)
        importlib.reload(textual.constants)  # TEXTUAL_DRIVER and the colours, the session's
        standard_streams()
        sys.argv = ["tonk-door-session", *request.args]
        # A warning the template's own run gave is given again by a session that meets it
        # (the registries of warnings given once are stale from here).
        warnings._filters_mutated()  # type: ignore[attr-defined]
        # (The template's objects stay frozen: no collection here writes to their pages.)
        code = door_child.main(request.args, stop_with_the_server=lambda: watch_the_server(server))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        with contextlib.suppress(Exception):
            traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        if status is not None:
            with contextlib.suppress(OSError):
                status.send(b"X%d" % code)
        os._exit(code)


def warm() -> None:
    """The table app run once, headless, to its first screen (a server it cannot reach):
    what every session imports on its way, and the code its start runs (which the
    interpreter rewrites as it runs it), done here once for all of them."""
    for name in WARM_MODULES:
        importlib.import_module(name)

    async def refused() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        raise ConnectionRefusedError("(the template's own run)")

    async def run() -> None:
        config = ClientConfig(name="template", host="template")
        config.guest = True
        config.opener = refused
        config.tokens = door_child.HeldSeats([])
        app = door_child.DoorApp(config)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause(WARM_SECONDS)

    asyncio.run(run())


#: Seconds the template's own run of the app lasts.
WARM_SECONDS = 0.5
#: Modules a session imports after its start.
WARM_MODULES = (
    "rich._emoji_codes",
    "textual.layouts.factory",
    "textual.layouts.horizontal",
    "textual.layouts.stream",
    "textual.drivers.linux_driver",
    "textual.drivers.web_driver",
    "tonk.client.driver",
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tonk-door-template")
    parser.add_argument("--control", type=int, required=True)
    args = parser.parse_args(argv)
    door_child.stop_with_the_server()  # the server's end is the template's
    call_me(TEMPLATE_NAME)
    share_parsed_css()  # (the app's start does too): the CSS its run parses, kept for sessions
    server = os.pidfd_open(os.getppid())
    control = socket.socket(fileno=args.control)
    warm()
    # The imported objects are shared with every session until written to: the collector's
    # passes over them would write to each one, so it leaves them alone from here.
    gc.collect()
    gc.freeze()
    return Template(control, server).serve()


if __name__ == "__main__":
    sys.exit(main())

"""Door sessions' processes, forked from a template: one process (tonk.client.door.door_template)
that has imported the table app once is asked over a local socket for each session's process,
so that a session pays only for its own state. Where the template is gone (or this system has
no pidfds), a session's app starts as a program of its own (`python -m tonk.client.door.door_child`)
while another template starts. Either way a session is a process of its own: a crash ends that
session, its screens are drawn off the server's event loop, at a lower priority than the games.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Sequence
from typing import Protocol

from .door_request import app_environ

log = logging.getLogger("tonk.server")

#: Seconds a session's process gets to say it has started, before the template is taken for
#: stuck (and replaced).
ANSWER_WAIT = 20.0
#: Seconds a session waits for a template that is starting (a session that waits longer
#: asks it anyway: its request waits in the socket).
READY_WAIT = 30.0
#: Seconds between two starts of the template, at the least (a template that dies at once is
#: not started again and again: sessions start on their own meanwhile).
RESTART_PAUSE = 10.0
#: Seconds the template gets to stop when the server closes, before it is killed.
STOP_WAIT = 5.0
#: The exit status of a session whose end nobody saw (its template was gone, and it said
#: nothing): counted as a crash.
LOST = -1


class SessionProcess(Protocol):
    """A door session's process, as the session sees it (asyncio's Process is one)."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...

    def send_signal(self, sig: int) -> None: ...

    def terminate(self) -> None: ...

    def kill(self) -> None: ...


class TemplateFailed(Exception):
    """The template could not start this session (the reason says why)."""


def forking_works() -> bool:
    """Can sessions be forked from a template here (Linux's pidfds, to signal a process that
    is not the server's child without ever signalling another that took its pid)?"""
    if not hasattr(os, "pidfd_open") or not hasattr(signal, "pidfd_send_signal"):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True


class ForkedSession:
    """A session's process forked by the template: its pid, a pidfd to signal it by, and its
    end read from its status socket (the last `X` said there; the socket's end is the
    process's, once the template has reaped it)."""

    def __init__(self, pid: int, pidfd: int, status: socket.socket) -> None:
        self.pid = pid
        self.pidfd = pidfd
        self.status = status
        self.returncode: int | None = None
        self._said: int | None = None
        loop = asyncio.get_running_loop()
        self._ended: asyncio.Future[int] = loop.create_future()
        loop.add_reader(status.fileno(), self._read)

    def _read(self) -> None:
        try:
            data = self.status.recv(64)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data[:1] == b"X":
            with contextlib.suppress(ValueError):
                self._said = int(data[1:])
            return
        if data:
            return
        asyncio.get_running_loop().remove_reader(self.status.fileno())
        self.status.close()
        os.close(self.pidfd)
        self.returncode = self._said if self._said is not None else LOST
        self._ended.set_result(self.returncode)

    async def wait(self) -> int:
        return await asyncio.shield(self._ended)

    def send_signal(self, sig: int) -> None:
        if self.returncode is not None:
            raise ProcessLookupError(self.pid)
        signal.pidfd_send_signal(self.pidfd, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


async def start_alone(
    args: Sequence[str], terminal: int, pass_fds: Sequence[int], env: dict[str, str]
) -> asyncio.subprocess.Process:
    """A session's app as a program of its own (a fresh interpreter)."""
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tonk.client.door.door_child",
        *args,
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        pass_fds=tuple(pass_fds),
        # A process group of its own (no signal from the server's terminal reaches it) but
        # the server's session: Linux shares CPU between sessions first (autogroups), so a
        # session each would let 20 players' screens take 20/21 of the CPU from the games,
        # and the app's lower priority would count for nothing.
        process_group=0,
        env=env,
    )


class SessionTemplate:
    """The template process, and the sessions asked of it: `await start()`, `await
    spawn(...)` for each session, `await close()`. `environ`: more of the template's
    environment (the tests load code into it so)."""

    def __init__(self, environ: dict[str, str] | None = None) -> None:
        self.environ = environ or {}
        self.process: asyncio.subprocess.Process | None = None
        self.control: socket.socket | None = None  # while the template runs
        self.ready = False  # it has imported the app and takes requests
        self._ready = asyncio.Event()
        self.closing = False
        self.forking = forking_works()
        self._started_at: float | None = None
        self._follow: asyncio.Task[None] | None = None
        self._restart: asyncio.TimerHandle | None = None
        self._starting: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start the template (it says when it is ready; requests wait for it till then)."""
        if not self.forking or self.closing or self.control is not None:
            return
        loop = asyncio.get_running_loop()
        self._started_at = loop.time()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "tonk.client.door.door_template",
                "--control",
                str(theirs.fileno()),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),),
                process_group=0,  # as a session's app: see start_alone
                env={**app_environ(), **self.environ},
            )
        except OSError as exc:
            ours.close()
            log.warning("door sessions' template could not start: %s", exc)
            return
        finally:
            theirs.close()
        ours.setblocking(False)
        self.process, self.control = process, ours
        self._follow = asyncio.create_task(
            self._follow_template(process, ours), name="door-template"
        )

    async def _follow_template(
        self, process: asyncio.subprocess.Process, control: socket.socket
    ) -> None:
        loop = asyncio.get_running_loop()
        with contextlib.suppress(OSError):
            while data := await loop.sock_recv(control, 16):
                if data == b"R":
                    self.ready = True
                    self._ready.set()
                    log.info("door sessions' template is ready (pid %d)", process.pid)
        code = await process.wait()
        if self.control is control:
            self._lost(f"ended (exit status {code})")

    def _lost(self, why: str) -> None:
        """The template is gone (or taken for stuck): another one starts, at once or after
        RESTART_PAUSE since the last start; sessions start on their own till it is ready."""
        process, control = self.process, self.control
        self.process, self.control, self.ready = None, None, False
        self._ready.clear()
        if control is not None:
            control.close()
        if process is not None and process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()
        if self.closing:
            return
        loop = asyncio.get_running_loop()
        since = loop.time() - (self._started_at or 0.0)
        delay = max(0.0, RESTART_PAUSE - since)
        log.warning(
            "door sessions' template %s %s; another starts%s",
            f"(pid {process.pid})" if process is not None else "",
            why,
            f" in {delay:.0f} s" if delay >= 1 else "",
        )
        if self._restart is None:
            self._restart = loop.call_later(delay, self._start_again)

    def _start_again(self) -> None:
        self._restart = None
        if not self.closing:
            self._starting = asyncio.create_task(self.start(), name="door-template-start")

    async def settled(self) -> None:
        """A template that is starting is waited for (READY_WAIT at most): a session's link
        to the server, opened next, must not wait out the server's handshake time while the
        template imports the app."""
        if self.control is not None and not self.ready:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(READY_WAIT):
                    await self._ready.wait()

    async def spawn(
        self, args: Sequence[str], terminal: int, pass_fds: Sequence[int], env: dict[str, str]
    ) -> SessionProcess:
        """A session's app: door_child's `args`, on `terminal` (its standard input, output and
        error), with `pass_fds` at the same numbers, in `env`. Forked from the template where
        it runs; otherwise a program of its own."""
        control = self.control
        if control is not None:
            try:
                return await self._fork(control, args, terminal, pass_fds, env)
            except TemplateFailed as exc:
                log.warning(
                    "door sessions' template: %s; this session's app starts on its own", exc
                )
        return await start_alone(args, terminal, pass_fds, env)

    async def _fork(
        self,
        control: socket.socket,
        args: Sequence[str],
        terminal: int,
        pass_fds: Sequence[int],
        env: dict[str, str],
    ) -> ForkedSession:
        request = json.dumps({"args": list(args), "env": env, "fds": list(pass_fds)}).encode()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            try:
                socket.send_fds(control, [request], [theirs.fileno(), terminal, *pass_fds])
            except OSError as exc:  # (BlockingIOError: hundreds of requests waiting)
                raise TemplateFailed(f"could not be asked ({exc})") from None
            finally:
                theirs.close()
            ours.setblocking(False)
            try:
                async with asyncio.timeout(ANSWER_WAIT):
                    answer, fds = await _receive_fds(ours)
            except TimeoutError:
                # It may yet fork this session: it is killed first, and the session fails.
                if control is self.control:
                    self._lost(f"did not answer in {ANSWER_WAIT:g} s")
                raise RuntimeError("the door sessions' template did not answer") from None
            if answer[:1] == b"P" and len(fds) == 1:
                return ForkedSession(int(answer[1:]), fds[0], ours)
            for fd in fds:
                os.close(fd)
            if not answer:  # gone before the session said anything: no session runs
                raise TemplateFailed("is gone")
            raise TemplateFailed(answer[1:].decode("utf-8", "replace") or "answered nothing")
        except BaseException:
            ours.close()
            raise

    async def close(self) -> None:
        """The template stops (sessions forked from it are the doors' to stop)."""
        self.closing = True
        if self._restart is not None:
            self._restart.cancel()
            self._restart = None
        process, control, ready = self.process, self.control, self.ready
        self.process, self.control, self.ready = None, None, False
        self._ready.clear()
        if control is not None:
            control.close()  # its end of the socket ends: it exits
        if process is not None and not ready:
            # Still importing the app (a second or more), so no session was forked from it:
            # nothing to finish, and it would read its socket's end only once imported.
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
        if process is not None:
            try:
                async with asyncio.timeout(STOP_WAIT):
                    await process.wait()
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                await process.wait()
        if self._follow is not None:
            self._follow.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._follow


async def _receive_fds(sock: socket.socket) -> tuple[bytes, list[int]]:
    """One message and its descriptors from a non-blocking socket (nothing: it is closed)."""
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(sock, 64, 4)
        except BlockingIOError:
            await _readable(sock)
        except OSError:
            return b"", []
        else:
            return data, fds


async def _readable(sock: socket.socket) -> None:
    loop = asyncio.get_running_loop()
    readable: asyncio.Future[None] = loop.create_future()

    def ready() -> None:
        if not readable.done():
            readable.set_result(None)

    loop.add_reader(sock.fileno(), ready)
    try:
        await readable
    finally:
        loop.remove_reader(sock.fileno())

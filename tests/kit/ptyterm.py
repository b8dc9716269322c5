"""A real terminal for end-to-end tests, with nothing installed on the system: the program runs
on a pseudo-terminal (ptyprocess) and what it writes is read through a terminal emulator in
Python (pyte), so a test sees the screen a player would see and types as a player would."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import ptyprocess  # type: ignore[import-untyped]
import pyte
from termkit import tonk_server

__all__ = ["KEYS", "Term", "tonk_server"]

# tmux's names for the keys the tests press, as a terminal sends them.
KEYS = {
    "Enter": "\r",
    "Escape": "\x1b",
    "Tab": "\t",
    "BSpace": "\x7f",
    "Space": " ",
    "Up": "\x1b[A",
    "Down": "\x1b[B",
    "Right": "\x1b[C",
    "Left": "\x1b[D",
    "Home": "\x1b[H",
    "End": "\x1b[F",
    "PageUp": "\x1b[5~",
    "PageDown": "\x1b[6~",
    "C-c": "\x03",
}


# Where a program on a test terminal keeps its state, data, configuration and cache, below
# the terminal's own home.
XDG_FOLDERS = {
    "XDG_STATE_HOME": ".local/state",
    "XDG_DATA_HOME": ".local/share",
    "XDG_CONFIG_HOME": ".config",
    "XDG_CACHE_HOME": ".cache",
}


class Term:
    """One program on a pseudo-terminal of width x height. A thread reads everything the
    program writes (so it never blocks on a full terminal) into the emulator and into
    `raw()`; `screen()` is what the emulator shows."""

    def __init__(self, width: int = 80, height: int = 24) -> None:
        self.width, self.height = width, height
        self._screen = pyte.Screen(width, height)
        self._stream = pyte.ByteStream(self._screen)
        self._lock = threading.Lock()
        self._raw = bytearray()
        self._process: ptyprocess.PtyProcess | None = None
        self._reader: threading.Thread | None = None
        # The program's home and XDG folders, unless the test names its own: nothing a test
        # runs writes into the tester's real home (a client's name lock, its seat tokens).
        self.home = Path(tempfile.mkdtemp(prefix="tonk-term-"))

    def start(self, argv: list[str], env: dict[str, str]) -> None:
        """Run argv with env on top of a minimal environment: PATH kept, HOME and the XDG
        folders in this terminal's own temporary folder."""
        base = {key: os.environ[key] for key in ("PATH",) if key in os.environ}
        base["HOME"] = str(self.home)
        for name, folder in XDG_FOLDERS.items():
            base[name] = str(self.home / folder)
        base.setdefault("TERM", "xterm-256color")
        self._process = ptyprocess.PtyProcess.spawn(
            argv, env={**base, **env}, dimensions=(self.height, self.width)
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._process is not None
        while True:
            try:
                data = self._process.read(65536)
            except EOFError:
                return
            except OSError:
                return
            except ValueError:
                return  # (close() closed the terminal's file while this read it)
            with self._lock:
                self._raw += data
                self._stream.feed(data)

    @property
    def process(self) -> ptyprocess.PtyProcess:
        if self._process is None:
            raise AssertionError("the terminal has no program: start() it first")
        return self._process

    def write(self, data: str) -> None:
        """`data` in one write to the terminal, as a paste or a burst over SSH arrives."""
        payload = data.encode()
        written = os.write(self.process.fd, payload)
        if written != len(payload):
            raise AssertionError(f"only {written} of {len(payload)} bytes were written at once")

    def keys(self, *keys: str) -> None:
        """Each key (a tmux name such as `Enter` or `Left`, or literal text) in a write of
        its own, a moment apart, as a person types."""
        for key in keys:
            self.write(KEYS.get(key, key))
            time.sleep(0.03)

    def screen(self) -> str:
        with self._lock:
            return "\n".join(line.rstrip() for line in self._screen.display)

    def raw(self) -> bytes:
        """Every byte the program has written to the terminal so far."""
        with self._lock:
            return bytes(self._raw)

    async def wait_for(self, text: str, limit: float = 30.0) -> str:
        """The screen once it shows `text`; fail with the screen if it never does. The
        limit only stops a hung test: nothing is asserted about how long it took."""
        return await self.wait_until(lambda screen: text in screen, f"{text!r}", limit)

    async def wait_for_all(self, *texts: str, limit: float = 30.0) -> str:
        """The screen once it shows every one of `texts` (a screen is drawn in more than one
        write, so what shows with the first may come a moment later)."""
        return await self.wait_until(
            lambda screen: all(text in screen for text in texts), repr(texts), limit
        )

    async def wait_gone(self, text: str, limit: float = 30.0) -> str:
        """The screen once it no longer shows `text`."""
        return await self.wait_until(lambda screen: text not in screen, f"no {text!r}", limit)

    async def wait_until(self, check: object, what: str, limit: float = 30.0) -> str:
        assert callable(check)
        loop = asyncio.get_running_loop()
        give_up = loop.time() + limit
        while True:
            screen = self.screen()
            if check(screen):
                return screen
            if not self.process.isalive() and self._reader is not None:
                self._reader.join(2)
                screen = self.screen()
                if check(screen):
                    return screen
                raise AssertionError(
                    f"the program exited ({self.process.exitstatus}) before the screen "
                    f"showed {what}; it shows:\n{screen}"
                )
            if loop.time() > give_up:
                raise AssertionError(f"the screen never showed {what}; it shows:\n{screen}")
            await asyncio.sleep(0.05)

    def resize(self, width: int, height: int) -> None:
        """Resize the terminal, as a player dragging the window does (SIGWINCH)."""
        self.width, self.height = width, height
        with self._lock:
            self._screen.resize(height, width)
        self.process.setwinsize(height, width)

    def forget_the_screen(self) -> None:
        """Blank the emulator's screen, the program not told: what a terminal that reflows
        its lines on a resize (xterm.js, most desktop terminals) shows is no longer what the
        program drew there, and only what it draws again is right. Here nothing is left, so
        the screen shows just what the program draws from now on."""
        with self._lock:
            self._screen.erase_in_display(2)

    async def wait_exit(self, limit: float = 30.0) -> int:
        """The program's exit status once it has exited (a signal's number negated)."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + limit
        while self.process.isalive():
            if loop.time() > give_up:
                raise AssertionError(f"the program never exited; it shows:\n{self.screen()}")
            await asyncio.sleep(0.05)
        if self._reader is not None:
            self._reader.join(5)
        status = self.process.exitstatus
        if status is None:
            return -int(self.process.signalstatus or 0)
        return int(status)

    def close(self) -> None:
        if self._process is None:
            shutil.rmtree(self.home, ignore_errors=True)
            return
        with contextlib.suppress(Exception):
            if self._process.isalive():
                self._process.terminate(force=True)
        with contextlib.suppress(Exception):
            self._process.close(force=True)
        if self._reader is not None:
            self._reader.join(5)
        shutil.rmtree(self.home, ignore_errors=True)

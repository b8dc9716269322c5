"""The client's terminal driver: Textual's own, asking the terminal for clicks and the wheel
only, not for every move of the mouse, and reading the terminal's size in turn after a resize.

A terminal keeps reporting the mouse until told to stop, and a link that drops (a killed `ssh`,
a closed laptop) never tells it: with Textual's any-motion mode on, the player's own shell then
prints a string of control characters at every move of the mouse. With clicks alone, a dropped
link leaves a terminal that prints something only when it is clicked, and every click the table
answers (the key bar, a card) still works."""

from __future__ import annotations

import asyncio
import signal
from types import FrameType

from textual import events
from textual.drivers.linux_driver import LinuxDriver
from textual.geometry import Size

#: The terminal's mouse modes Textual may turn on: X11 clicks (1000), clicks with drags (1002),
#: any motion (1003), UTF-8 (1005) and urxvt (1015) coordinates, SGR coordinates (1006), SGR in
#: pixels (1016).
MOUSE_MODES = (1000, 1002, 1003, 1005, 1006, 1015, 1016)

#: What this client turns on: clicks and the wheel, in SGR coordinates.
CLICK_MODES = (1000, 1006)


class ClicksOnlyDriver(LinuxDriver):
    """Textual's driver on a POSIX terminal, with mouse reporting for clicks only, and the
    terminal's size read by the event loop once a SIGWINCH has come, not in the signal's
    handler.

    Textual reads the size in the handler and posts it from there. A second SIGWINCH that
    comes while the first's handler runs (a window dragged out and back, the SSH door
    passing on two sizes at once) runs its handler inside the first: the newer size was
    posted first and the older last, and Textual, taking the last of the sizes queued,
    laid the table out at a size the terminal no longer had (2 runs in 8 of
    tests/e2e/tcp/test_client_terminal.py's resize and back)."""

    def start_application_mode(self) -> None:
        super().start_application_mode()  # type: ignore[no-untyped-call]  # (untyped in Textual)
        if signal.getsignal(signal.SIGWINCH) in (signal.SIG_DFL, signal.SIG_IGN, None):
            return  # (Textual did not start: a terminal it may not write to)
        loop = asyncio.get_running_loop()

        def on_terminal_resize(signum: int, frame: FrameType | None) -> None:
            if not self._in_band_window_resize:
                loop.call_soon_threadsafe(self._tell_size)

        signal.signal(signal.SIGWINCH, on_terminal_resize)

    def _tell_size(self) -> None:
        """The app told the terminal's size as it is now (each read in the loop's order)."""
        width, height = self._get_terminal_size()
        size = Size(width, height)
        self._app.post_message(events.Resize(size, size))

    def _enable_mouse_support(self) -> None:
        if not self._mouse:
            return
        self.write("".join(f"\x1b[?{mode}h" for mode in CLICK_MODES))
        self.flush()

    def _disable_mouse_support(self) -> None:
        if not self._mouse:
            return
        self.write("".join(f"\x1b[?{mode}l" for mode in MOUSE_MODES))
        self.flush()

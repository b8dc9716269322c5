"""The client's terminal driver: Textual's own, asking the terminal for clicks and the wheel
only, not for every move of the mouse.

A terminal keeps reporting the mouse until told to stop, and a link that drops (a killed `ssh`,
a closed laptop) never tells it: with Textual's any-motion mode on, the player's own shell then
prints a string of control characters at every move of the mouse. With clicks alone, a dropped
link leaves a terminal that prints something only when it is clicked, and every click the table
answers (the key bar, a card) still works."""

from __future__ import annotations

from textual.drivers.linux_driver import LinuxDriver

#: The terminal's mouse modes Textual may turn on: X11 clicks (1000), clicks with drags (1002),
#: any motion (1003), UTF-8 (1005) and urxvt (1015) coordinates, SGR coordinates (1006), SGR in
#: pixels (1016).
MOUSE_MODES = (1000, 1002, 1003, 1005, 1006, 1015, 1016)

#: What this client turns on: clicks and the wheel, in SGR coordinates.
CLICK_MODES = (1000, 1006)


class ClicksOnlyDriver(LinuxDriver):
    """Textual's driver on a POSIX terminal, with mouse reporting for clicks only."""

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

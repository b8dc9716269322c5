"""Textual's web driver as a door session's app runs it: it also takes `repaint` from the door
(a television page joined the table's picture, or a page fell behind and its frames were shed:
the whole screen is drawn again, for every page showing it)."""

from __future__ import annotations

from textual.drivers.web_driver import WebDriver
from textual.message import Message


class Repaint(Message):
    """The door asks for the whole screen, drawn again."""


class DoorWebDriver(WebDriver):
    def on_meta(self, packet_type: str, payload: dict[str, object]) -> None:
        if packet_type == "repaint":
            self._app.post_message(Repaint())
            return
        super().on_meta(packet_type, payload)

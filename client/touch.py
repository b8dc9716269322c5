"""Whether the player plays by taps on a touch screen (the web door's page on a phone or a
tablet): then the words say "tap" and name buttons, where a terminal's name keys."""

from __future__ import annotations

from typing import Any

from textual.app import App


def by_touch(app: App[Any]) -> bool:
    """Played by taps on a touch screen (the web door's page on a phone or a tablet)."""
    return bool(getattr(app, "touch", False))

"""A screen's keys (its bindings shown): in a terminal on the key bar (one row, or two where
one is too narrow); on a touch screen, as buttons named by what they do. A tap or a click on
one presses its key."""

from __future__ import annotations

from typing import Any

from textual import on
from textual.app import App
from textual.screen import Screen
from textual.widget import Widget

from ..touch import by_touch
from .keybar import KeyBar, KeyEntry
from .touchkeys import TouchKeyBar


class _FromBindings(KeyBar):
    """The key bar's entries read from its screen's bindings shown (one a action, in their
    order; those not open now greyed), kept as they change."""

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self._fill()

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, _screen: Screen[Any]) -> None:
        self._fill()

    def _fill(self) -> None:
        entries: list[KeyEntry] = []
        actions: set[str] = set()
        for key, (_, binding, enabled, _) in self.screen.active_bindings.items():
            if not binding.show or binding.action in actions:
                continue
            actions.add(binding.action)
            shown = self.app.get_key_display(binding)
            # (The first keys are kept longest where the rows are too few.)
            entries.append(KeyEntry(key, shown, binding.description, enabled, -len(entries)))
        if tuple(entries) != self.entries:
            self.entries = tuple(entries)

    @on(KeyBar.Pressed)
    def _pressed(self, event: KeyBar.Pressed) -> None:
        event.stop()
        self.app.simulate_key(event.key)


class ScreenKeyBar(_FromBindings):
    """A screen's keys on the key bar's rows, as the table's are: rows of text repainted as
    far as they changed, where Textual's footer made a widget a key again at each change of
    the bindings (a lobby's every update)."""


class ScreenButtons(_FromBindings, TouchKeyBar):
    """A screen's keys as buttons three rows tall (a touch screen's)."""


def screen_keys(app: App[Any]) -> Widget:
    """The foot of a screen with keys: on a touch screen its buttons; in a terminal the key
    bar."""
    return ScreenButtons(id="keys") if by_touch(app) else ScreenKeyBar(id="keys")

"""Keys one at a time: each key (and a paste, as the keys it holds) is handled to its end, and
after a move until the server has answered it, before the next is let in; and a key that means
nothing where it is pressed says so.

Textual handles a key in two steps: it forwards the key to the focused widget (or the screen),
and runs the key's bindings only when the key has bubbled back up to the App. Keys that arrive
in one read (typed fast, pasted, bunched by SSH) were all forwarded before the first one's
binding had run, so the second went where focus was before the first (into the table, not the
chat line the first opened), and a key a screen answers itself (a greyed-out one, explained)
overtook the bindings of the keys before it: "123s" spread nothing, the s answered before 1, 2
and 3 selected.

Textual has no hook for that (its issue #6605): `KeyedApp.on_event` holds the keys and lets them
into Textual's own dispatch one at a time. What else a key needs is declared where it belongs: a
screen says how its keys are handled (`KEYS = ScreenKeys(...)`), and a message that answers a
move is a `MoveAnswer`.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from functools import partial
from typing import Any, ClassVar
from weakref import WeakKeyDictionary

from textual import events, on
from textual.app import App
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input

#: Seconds a key waits at most for the one before it to be handled (a safety net: it takes a
#: few milliseconds), and for the server's answer to a move (one round trip).
KEY_WAIT = 3.0
MOVE_WAIT = 3.0
#: A paste outside a text field is typed key by key, as far as this many characters.
MAX_PASTE_KEYS = 200
#: Keys that wait their turn at most (a paste's fit): one more is dropped, and the player
#: told once, until the keys have caught up. Keys that come faster than they are handled
#: would otherwise wait without end: a door session's app, sent keys within its budget
#: faster than it draws, had thousands waiting after a minute, and more each second.
MAX_WAITING_KEYS = 256


#: Keys that type no character, as a notice names them, when they mean nothing where they are
#: pressed.
NAMED_KEYS = {
    "enter": "Enter",
    "tab": "Tab",
    "shift+tab": "Shift+Tab",
    "up": "Up",
    "down": "Down",
    "left": "Left",
    "right": "Right",
    "home": "Home",
    "end": "End",
    "pageup": "PageUp",
    "pagedown": "PageDown",
    "insert": "Insert",
    "delete": "Delete",
    "backspace": "Backspace",
}

#: The keys whose names a list of bindings cannot hold (it is split at commas and stripped).
_UNLISTABLE = {" ": "space", ",": "comma"}


def key_name(char: str) -> str:
    """The name of the key that types `char`, as Textual names it in bindings and key events
    ("?" is `question_mark`): read from Textual's own bindings, so the two cannot differ."""
    named = _UNLISTABLE.get(char)
    if named is not None:
        return named
    return next(iter(Binding.make_bindings([Binding(char, "")]))).key


@dataclass(frozen=True)
class ScreenKeys:
    """How a screen's keys are handled, declared on the screen as `KEYS` (a screen that
    declares none: `ScreenKeys()`)."""

    #: What to press instead, said when a key means nothing on the screen.
    hint: str = "? shows the keys"
    #: A window that only shows something: a key it does not use closes it and goes on to the
    #: screen under it.
    passes_through: bool = False
    #: A window that comes up over what a move ended (a hand's end, the session's): a key
    #: typed before it came up was meant for what it now says is over, and is not used (over
    #: a window that passes keys through, unless it is one of the window's own).
    ends_earlier_keys: bool = False
    #: Its widgets take keys of their own (a form): no "not a key here" on it.
    form: bool = False


def screen_keys(screen: Screen[Any]) -> ScreenKeys:
    """What `screen` declares of its keys."""
    declared = getattr(screen, "KEYS", None)
    return declared if isinstance(declared, ScreenKeys) else ScreenKeys()


#: How far the table had got (the hand, and the events of it seen) when a move was sent.
Progress = tuple[int, int]


class MoveAnswer(Message):
    """A message that answers the move the keys wait on (or says that no answer will come):
    the keys after the move go on. Every message of the server's that may answer a move is
    one of these."""

    def answers(self, sent: Progress) -> bool:
        """Whether this answers a move sent when the table had got as far as `sent`."""
        return True


@dataclass
class KeyDone(Message):
    """Posted after a key to where it went, and then twice more (`stage` 2 and 3): when it is
    back at the App, the key (number `serial`) and what it posted are handled."""

    serial: int
    stage: int = 1


class KeyedApp(App[None]):
    """An App whose keys are handled one at a time, in the order they arrived."""

    #: Said of a key typed before a window that `ends_earlier_keys` came up.
    LATE_KEY: ClassVar[str] = "{key} was typed before this window came up: not used."
    #: Said once when keys come faster than they are handled, and some are dropped.
    KEYS_DROPPED: ClassVar[str] = "Keys came faster than they could be handled: some were not used."

    def __init__(self) -> None:
        super().__init__()
        self._keys: deque[tuple[int, events.Key]] = deque()  # (arrival number, key)
        self.keys_arrived = 0
        self.keys_dropped = 0
        self._told_dropped = False  # the player was told, and the keys have not caught up
        self._key_serial = 0
        self._key_busy = False
        self._key_target: Widget | None = None
        self._key_timer: Timer | None = None
        self._move_sent: Progress | None = None  # how far the table was when sent
        self._move_timer: Timer | None = None
        # How many keys had arrived when each screen was first shown.
        self._keys_before: WeakKeyDictionary[Screen[Any], int] = WeakKeyDictionary()

    def on_mount(self) -> None:
        """Each screen noted as it is first shown. (Textual runs every class's `on_mount`: a
        subclass's own does not replace this one.)"""
        self.screen_change_signal.subscribe(self, self._screen_shown, immediate=True)

    def _screen_shown(self, screen: Screen[Any]) -> None:
        self._keys_before.setdefault(screen, self.keys_arrived)

    def key_route(self) -> Widget:
        """Where a key's marker goes last: the screen that posts what the keys ask for."""
        return self.screen

    # -- keys in, one at a time ------------------------------------------------------------

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded:
            self._queue_key(event)
            await self._next_key()
            return
        if isinstance(event, events.Paste) and not event.is_forwarded and self._paste_as_keys():
            self._paste_keys(event.text)
            await self._next_key()
            return
        await super().on_event(event)

    def _paste_as_keys(self) -> bool:
        """A paste is typed key by key, except into a text field with nothing before it."""
        waiting = self._key_busy or self._move_sent is not None or bool(self._keys)
        text_field = isinstance(self.focused, Input) or screen_keys(self.screen).form
        return waiting or not text_field

    def _paste_keys(self, text: str) -> None:
        if len(text) > MAX_PASTE_KEYS:
            self.notify(
                f"Only the first {MAX_PASTE_KEYS} of the {len(text)} characters pasted were "
                "used as keys.",
                severity="warning",
            )
        for char in text[:MAX_PASTE_KEYS]:
            if char in "\r\n":
                self._queue_key(events.Key("enter", "\r"))
            elif char == "\t":
                self._queue_key(events.Key("tab", "\t"))
            elif char.isprintable():
                self._queue_key(events.Key(key_name(char), char))

    def _queue_key(self, key: events.Key) -> None:
        if len(self._keys) >= MAX_WAITING_KEYS:
            self.keys_dropped += 1
            if not self._told_dropped:
                self._told_dropped = True
                self.notify(self.KEYS_DROPPED, severity="warning")
            return
        self.keys_arrived += 1
        self._keys.append((self.keys_arrived, key))

    async def _next_key(self) -> None:
        if not self._keys:
            self._told_dropped = False
        if self._key_busy or self._move_sent is not None or not self._keys:
            return
        arrival, key = self._keys.popleft()
        top = self.screen
        declared = screen_keys(top)
        late = declared.ends_earlier_keys and arrival <= self._keys_before.get(top, 0)
        own = key.key in top.active_bindings
        if late and not (declared.passes_through and own):
            # Held behind the move that brought the window up: it was meant for what the
            # window now says is over, not for the window.
            self.notify(self.LATE_KEY.format(key=key.character or key.key))
            await self._next_key()
            return
        if declared.passes_through and not own:
            top.dismiss(None)  # out of the way: the key is for the screen under it
        self._key_target = self.focused or self.screen
        self._key_serial += 1
        self._key_busy = True
        self._key_timer = self.set_timer(KEY_WAIT, partial(self._key_handled, self._key_serial))
        await super().on_event(key)
        self._key_target.post_message(KeyDone(self._key_serial))

    def on_key_done(self, message: KeyDone) -> None:
        """A key's marker back at the App. It goes the key's way twice more: after the
        key's bindings (which ran when the key came back) from where the key went, so what
        they posted there (the chat line's text sent, say) is handled first; then through
        `key_route()`, so a move asked for there reaches the App (and holds the keys after
        it, see `move_sent`) before the next key is let in."""
        if message.serial != self._key_serial or not self._key_busy:
            return  # late: the key was given up on
        if message.stage < 3:
            target = self._key_target if message.stage == 1 else self.key_route()
            if target is None or not (target.is_attached and target.is_running):
                target = self.screen
            target.post_message(KeyDone(message.serial, message.stage + 1))
            return
        self.call_later(self._key_handled, message.serial)

    async def _key_handled(self, serial: int) -> None:
        if serial != self._key_serial or not self._key_busy:
            return  # that key was done with already
        if self._key_timer is not None:
            self._key_timer.stop()
            self._key_timer = None
        self._key_busy = False
        await self._next_key()

    # -- a move and its answer ---------------------------------------------------------------

    def move_sent(self, progress: Progress) -> None:
        """A move went to the server when the table had got as far as `progress`: the keys
        after it wait until a `MoveAnswer` answers it (or MOVE_WAIT seconds)."""
        self._move_sent = progress
        if self._move_timer is not None:
            self._move_timer.stop()
        self._move_timer = self.set_timer(MOVE_WAIT, self._move_answered)

    @on(MoveAnswer)
    def _answer_came(self, message: MoveAnswer) -> None:
        if self._move_sent is not None and message.answers(self._move_sent):
            self._move_answered()

    def _move_answered(self) -> None:
        """The server answered the move the keys were waiting on (or never will)."""
        if self._move_timer is not None:
            self._move_timer.stop()
            self._move_timer = None
        if self._move_sent is not None:
            self._move_sent = None
            self.call_later(self._next_key)

    # -- a key that means nothing here -------------------------------------------------------

    def on_key(self, event: events.Key) -> None:
        """A key back at the App, just before its bindings run: a printable key (or one of
        the named keys people press: enter, tab, the arrows...) that means nothing here says
        so (and what to press), never silently nothing."""
        screen = self.screen
        declared = screen_keys(screen)
        if (
            not (event.is_printable or event.key in NAMED_KEYS)
            or event.key in screen.active_bindings
            or declared.form
            or isinstance(self.focused, Input)
        ):
            return
        hint = declared.hint
        if event.key in NAMED_KEYS:
            self.notify(f"{NAMED_KEYS[event.key]} is not a key here: {hint}.")
            return
        char = event.character if event.character and not event.character.isspace() else event.key
        if char != char.lower() and char.lower() in screen.active_bindings:
            hint = f"is caps lock on? The keys are lower case ({char.lower()}, not {char})"
        self.notify(f"{char} is not a key here: {hint}.")

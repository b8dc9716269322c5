"""The table screen's keys, declared once: the screen's bindings, its key bar, the help screen's
list, which keys are moves (legal now or not, as the core says), and what a key shown only when
it applies says when it does not, are all read from `TABLE_KEYS`."""

from __future__ import annotations

from textual.binding import Binding
from tonk.shared.records import record


@record
class TableKey:
    """One key of the table screen (or a group that the help lists as one line)."""

    #: (key, action) pairs bound: most keys are one; `1-6` is six.
    bindings: tuple[tuple[str, str], ...]
    #: As the help and the key bar write the key.
    shown: str
    #: What the help says it does.
    help: str
    #: Its name on the key bar (and in the binding).
    label: str = ""
    #: Where it stands on the key bar (1 first), and how much it is kept when the bar is
    #: short of room (higher: kept longer); 0: not on the bar.
    bar: int = 0
    keep: int = 0
    #: A move of the hand: the field of `LegalActions` that says whether it is open now
    #: (a greyed-out move key is explained, not ignored).
    legal: str = ""
    #: Shown only when it applies: what pressing it says when it does not.
    hidden: str = ""

    @property
    def key(self) -> str:
        return self.bindings[0][0]

    @property
    def action(self) -> str:
        return self.bindings[0][1]


TABLE_KEYS: tuple[TableKey, ...] = (
    TableKey(
        (("left", "cursor(-1)"), ("right", "cursor(1)")),
        "left right",
        "move the cursor in your hand",
    ),
    TableKey(
        (("home", "cursor_to_end(-1)"), ("end", "cursor_to_end(1)")),
        "home end",
        "the cursor to the first or the last card of your hand",
    ),
    TableKey(
        (("tab", "cursor(1)"), ("shift+tab", "cursor(-1)")),
        "tab shift+tab",
        "the cursor to the next or the previous card, as right and left",
    ),
    TableKey((("space", "toggle_card"),), "space", "select or unselect the card under the cursor"),
    TableKey(
        (("up", "raise_card(True)"), ("down", "raise_card(False)")),
        "up down",
        "select (raise) or unselect (lower) the card under the cursor",
    ),
    TableKey(
        (("escape", "unselect_all"),), "escape", "unselect every selected card (or cancel the chat)"
    ),
    TableKey(
        tuple((str(n), f"select({n})") for n in range(1, 7)),
        "1-6",
        "select or unselect card N",
    ),
    TableKey((("d", "draw"),), "d", "draw from the stock", "Draw", 1, 9, legal="draw_stock"),
    TableKey(
        (("p", "pickup"),), "p", "pick up the top discard", "Pick up", 2, 9, legal="take_discard"
    ),
    TableKey((("s", "spread"),), "s", "spread the selected cards", "Spread", 3, 9, "spreads"),
    TableKey(
        (("h", "hit"),),
        "h",
        "hit the selected card (none selected: the one under the cursor) onto a spread",
        "Hit",
        4,
        9,
        legal="hits",
    ),
    TableKey(
        (("x", "discard"),),
        "x",
        "discard the card under the cursor",
        "Discard",
        5,
        9,
        legal="discards",
    ),
    TableKey(
        (("k", "drop"),),
        "k",
        "drop (knock): end the hand with your count, before drawing (asks first)",
        "Drop",
        6,
        9,
        legal="drop",
    ),
    TableKey((("o", "order"),), "o", "show your hand by suit, by rank, or as dealt", "Sort", 9, 3),
    TableKey(
        (("b", "back"),),
        "b",
        "back: play your own turns again after being away (while away, any key does it)",
        "Back",
        7,
        8,
        hidden="You are not away: your turns are yours to play.",
    ),
    TableKey(
        (("f", "play_for_now"),),
        "f",
        "play for now: have the seat of a player who lost the connection played for at once,"
        " not after the wait (the table's creator decides; with no creator here, the players"
        " vote and a majority decides)",
        "Don't wait",
        7,
        5,
        hidden="Nobody at the table has lost the connection.",
    ),
    TableKey(
        (("a", "seat_to_bot"),),
        "a",
        "give an absent player's seat to a bot (the table's creator; with several absent, it"
        " asks whose; their balance stays under their name, and back, they may watch or take"
        " their seat back)",
        "To a bot",
        7,
        2,
        hidden="Only the table's creator gives a seat to a bot, and only an absent player's.",
    ),
    TableKey(
        (("t", "take_bot_seat"),),
        "t",
        "take a bot's seat (watching; your own, if it was given to a bot): at once between"
        " hands, else as the hand ends; you play from your own balance here, 0 if you are new"
        " (the bot's stays the bot's)",
        "Take seat",
        7,
        6,
        hidden="You take a bot's seat while watching a table where a bot plays.",
    ),
    TableKey((("c", "chat"),), "c", "chat with the table", "Chat", 10, 4),
    TableKey(
        (("e", "hint"),),
        "e",
        "a hint: the expert's view of the move you have to make now, at a table where every"
        " other seat is a bot (at a table with other people, the coach looks only at hands"
        " that are over: l, then c in a hand's replay)",
        hidden="The coach gives a hint on your turn at a table where every other seat is a bot;"
        " with other people, look back at a hand once it is over (l, then c).",
    ),
    TableKey(
        (("pageup", "log_page(-1)"), ("pagedown", "log_page(1)")),
        "pgup pgdn",
        "scroll the log and chat back and forward (the log's border says how far)",
    ),
    TableKey(
        (("l", "history"),),
        "l",
        "look back: every hand of the session, and any one replayed step by step as you saw it",
        "History",
        13,
        2,
    ),
    TableKey(
        (("g", "start"),),
        "g",
        "start the game (the table's creator)",
        "Start",
        8,
        8,
        hidden="Only the table's creator starts the game, before the table is full.",
    ),
    TableKey((("question_mark", "help"),), "?", "this help", "Help", 11, 6),
    TableKey((("q", "leave"),), "q", "leave the table (asks first during a hand)", "Leave", 12, 7),
)


def bindings() -> list[Binding]:
    """The table screen's bindings: those on the key bar under their names; the others
    (the cursor and the selection) not shown."""
    return [
        Binding(key, action, entry.label if entry.bar else "", show=bool(entry.bar))
        for entry in TABLE_KEYS
        for key, action in entry.bindings
    ]


#: The key bar's keys, in its order.
BAR_KEYS: tuple[TableKey, ...] = tuple(
    sorted((entry for entry in TABLE_KEYS if entry.bar), key=lambda entry: entry.bar)
)

#: Game keys, by key: the field of `LegalActions` that opens each.
MOVE_KEYS: dict[str, TableKey] = {entry.key: entry for entry in TABLE_KEYS if entry.legal}

#: Keys shown only when they apply, by key.
HIDDEN_KEYS: dict[str, TableKey] = {entry.key: entry for entry in TABLE_KEYS if entry.hidden}

#: The help's list of keys: (as written, what it does).
KEYS_HELP: tuple[tuple[str, str], ...] = tuple((entry.shown, entry.help) for entry in TABLE_KEYS)

#: The help's list on a touch screen (the web door's page on a phone): what a tap does, the
#: key bar's buttons by name.
TAPS_HELP: tuple[tuple[str, str], ...] = (
    (
        "a card",
        "tap it to raise (select) it, the cursor on it; tap it again to lower it; the raised"
        " card is the one Discard throws",
    ),
    *((entry.label, entry.help) for entry in BAR_KEYS),
    (
        "the log",
        "tap its top half to scroll it back, its bottom half to scroll it forward (its"
        " border says how far)",
    ),
)

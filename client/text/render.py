"""How the table looks as text: cards, hands, spreads, log lines, settlements and sparklines.

Pure functions from the core's values to Rich `Text`; no widget, no rule. What a card or an
event *means* comes from the core; this module only says how to draw it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rich.cells import cell_len
from rich.text import Text
from tonk.shared.game.actions import Event
from tonk.shared.game.cards import Card, Suit
from tonk.shared.game.settlement import Ending, Settlement
from tonk.shared.game.spreads import Spread
from tonk.shared.game.words import amount_text
from tonk.shared.records import record

#: Two colours (red and the terminal's own) or four, one per suit.
TWO_COLOURS = {Suit.SPADES: "", Suit.HEARTS: "red", Suit.DIAMONDS: "red", Suit.CLUBS: ""}
FOUR_COLOURS = {
    Suit.SPADES: "",
    Suit.HEARTS: "red",
    Suit.DIAMONDS: "dodger_blue1",
    Suit.CLUBS: "green3",
}

#: A card's frame: its corners, edges, and where two cards side by side meet (top, bottom).
BOX = {"tl": "╭", "tr": "╮", "bl": "╰", "br": "╯", "h": "─", "v": "│", "tj": "┬", "bj": "┴"}
ASCII_BOX = {"tl": "+", "tr": "+", "bl": "+", "br": "+", "h": "-", "v": "|", "tj": "+", "bj": "+"}
#: What stands between the parts of a line (the moves of a turn; the table, its rules...).
DOT = " · "
SPARK = "▁▂▃▄▅▆▇█"
ASCII_SPARK = "_.-=^"


@record
class CardStyle:
    """How cards are drawn: suit symbols or letters, two or four colours, or no colour."""

    ascii: bool = False
    four_colour: bool = False
    colour: bool = True

    def suit_style(self, suit: Suit) -> str:
        if not self.colour:
            return ""
        return (FOUR_COLOURS if self.four_colour else TWO_COLOURS)[suit]

    @property
    def box(self) -> dict[str, str]:
        return ASCII_BOX if self.ascii else BOX


def card_label(card: Card, style: CardStyle) -> str:
    """`10♠`, or `10S` with --ascii."""
    return card.pretty(style.ascii)


def card_text(card: Card, style: CardStyle, extra: str = "") -> Text:
    """One card as coloured text; `extra` adds a style (bold, underline, ...)."""
    colour = style.suit_style(card.suit)
    return Text(card_label(card, style), style=" ".join(s for s in (colour, extra) if s))


def cards_text(cards: Sequence[Card], style: CardStyle) -> Text:
    """Cards separated by spaces."""
    out = Text()
    for i, card in enumerate(cards):
        if i:
            out.append(" ")
        out.append_text(card_text(card, style))
    return out


CARD_WIDTH = 5  # "│10♠│"
BIG_CARD_WIDTH = 7  # "│10♠  │", on a large terminal


#: How a hand can be ordered on screen (the `o` key cycles through them), with its name.
HAND_ORDERS = (("suit", "by suit"), ("rank", "by rank"), ("dealt", "as dealt"))


def sort_hand(cards: Sequence[Card], order: str) -> tuple[Card, ...]:
    """The hand as shown: by suit (spades, hearts, diamonds, clubs; ace low), by rank, or in
    the order the cards came (only the display: the core keeps its own order)."""
    if order == "suit":
        return tuple(sorted(cards, key=lambda c: (c.suit, c.rank)))
    if order == "rank":
        return tuple(sorted(cards, key=lambda c: (c.rank, c.suit)))
    return tuple(cards)


def hand_lines(
    cards: Sequence[Card],
    style: CardStyle,
    cursor: int | None,
    selected: frozenset[int],
    gap: int = 1,
    fresh: int | None = None,
    big: bool = False,
) -> list[Text]:
    """Your hand as boxed cards on five lines (`big`: seven, each card larger): selected cards
    raised by one line, the cursor's card in reverse video, and each card's number (1-6) under
    it with `^` marking the cursor and `*` the card just drawn or picked up (`fresh`)."""
    box = style.box
    width = BIG_CARD_WIDTH if big else CARD_WIDTH
    inner = width - 2
    lines = [Text() for _ in range(7 if big else 5)]
    for i, card in enumerate(cards):
        if i:
            for line in lines:
                line.append(" " * gap)
        raised = i in selected
        under_cursor = i == cursor
        frame = "reverse" if under_cursor else ""
        label = card_label(card, style)
        face_style = " ".join(s for s in (style.suit_style(card.suit), "bold", frame) if s)

        def face(text: str, frame: str = frame, face_style: str = face_style) -> Text:
            line = Text(box["v"], style=frame)
            line.append(text, style=face_style)
            return line.append(box["v"], style=frame)

        top = Text(box["tl"] + box["h"] * inner + box["tr"], style=frame)
        bottom = Text(box["bl"] + box["h"] * inner + box["br"], style=frame)
        if big:
            faces = [
                face(label.ljust(inner)),
                face(label[-1].center(inner)),
                face(label.rjust(inner)),
            ]
        else:
            faces = [face(label.rjust(inner))]
        card_rows = [top, *faces, bottom]
        blank = Text(" " * width)
        column = [*card_rows, blank] if raised else [blank, *card_rows]
        for line, part in zip(lines, column, strict=False):
            line.append_text(part)
        number = str(i + 1)
        mark = "*" if i == fresh else " "
        if under_cursor:
            lines[-1].append(f"^{number}^", style="bold")
            lines[-1].append(f"{mark}".ljust(width - 3), style="bold")
        else:
            lines[-1].append(f" {number}", style="dim")
            lines[-1].append(f"{mark}".ljust(width - 2), style="bold")
    return lines


def spread_line(
    number: int,
    spread: Spread,
    names: Sequence[str],
    style: CardStyle,
    compact: bool = False,
) -> Text:
    """`2 Croaker's run: 8♠ 9♠ 10♠ J♠  +8♠ Elmo`: a spread by owner, hit cards underlined and
    listed with who hit them. `compact`, for a table short of room: `2 Croaker 8♠ 9♠ 10♠ J♠
    +8♠ Elmo` (its cards say run or book; give it short names: see `short_names`)."""
    out = Text()
    out.append(f"{number} ", style="bold")
    owner = _name(names, spread.owner)
    if compact:
        out.append(f"{owner}: ")
    else:
        out.append(f"{'Your' if owner == 'You' else owner + chr(39) + 's'} {spread.kind.value}: ")
    for i, card in enumerate(spread.cards):
        if i:
            out.append(" ")
        hitter = spread.hit_by(card)
        out.append_text(card_text(card, style, "underline" if hitter is not None else ""))
    for card, seat in spread.hits:
        out.append(" +" if compact else "  +", style="dim")
        out.append_text(card_text(card, style))
        out.append(f" {_name(names, seat)}", style="dim")
    return out


def short_names(names: Sequence[str]) -> list[str]:
    """Each seat's name by its first word (`Ada` for `Ada (bot)`), where no other seat's name
    begins with the same word; the whole name where one does."""
    firsts = [name.split()[0] if name.split() else name for name in names]
    return [
        first if firsts.count(first) == 1 else name
        for first, name in zip(firsts, names, strict=True)
    ]


def sparkline(
    values: Sequence[int],
    width: int,
    ascii_only: bool = False,
    scale: tuple[int, int] | None = None,
) -> str:
    """A balance over the hands played, newest on the right, in at most `width` cells;
    `scale` (low, high) puts several players' lines on one scale."""
    points = list(values)[-width:]
    if not points:
        return ""
    levels = ASCII_SPARK if ascii_only else SPARK
    low, high = scale if scale is not None else (min(points), max(points))
    if high == low:
        return levels[len(levels) // 2] * len(points)
    span = high - low
    return "".join(levels[round((v - low) * (len(levels) - 1) / span)] for v in points)


def signed(amount: int) -> str:
    return f"+{amount}" if amount > 0 else str(amount)


def _name(names: Sequence[str], seat: int | None) -> str:
    if seat is None:
        return "?"
    return names[seat] if 0 <= seat < len(names) else f"seat {seat + 1}"


def _after(name: str) -> str:
    """A name after a sentence's first word: "You" is "you" there ("Ada pays you")."""
    return "you" if name == "You" else name


def _who(names: Sequence[str], seats: Sequence[int]) -> str:
    """The players in `seats`, at a sentence's start ("Ada and you")."""
    return _and(
        [_name(names, s) if i == 0 else _after(_name(names, s)) for i, s in enumerate(seats)]
    )


def _and(parts: Sequence[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


#: The moves a player makes in a turn, logged together on one line ("drew 8♥, discarded 2♣").
MOVES = frozenset({"draw_stock", "take_discard", "spread", "hit", "discard", "drop"})

#: Who owns a spread, and its kind, by the spread's id (None for one not on the table).
SpreadOwner = Callable[[int], tuple[int, str] | None]

#: Events whose news the hand's ending line gives (a drop, going out): not logged apart.
ENDED_BY = frozenset({"drop", "tonk_out", "out_on_discard", "stock_out", "hand_end"})


def move_phrase(
    event: Event,
    names: Sequence[str],
    me: int | None,
    style: CardStyle,
    spread_owner: SpreadOwner = lambda _: None,
) -> Text | None:
    """A move as a phrase without its subject (`drew 8♥`, `hit 8♠ on Ada's run`), or None
    for events that are not a player's move."""
    cards = cards_text(event.cards, style)
    kind = event.kind
    if kind == "drop":
        return Text(f"dropped with {event.count}", style="bold")
    if kind == "draw_stock":
        return Text("drew ").append_text(cards) if event.cards else Text("drew")
    if kind == "take_discard":
        return Text("took ").append_text(cards)
    if kind == "spread":
        return Text("spread ").append_text(cards)
    if kind == "hit":
        line = Text("hit ").append_text(cards)
        owner = spread_owner(event.spread) if event.spread is not None else None
        if owner is None:
            return line.append(f" on spread {event.spread}")
        seat, spread_kind = owner
        if seat == event.seat:
            return line.append(f" on {'your' if seat == me else 'their'} own {spread_kind}")
        owner_name = "your" if seat == me else f"{_name(names, seat)}'s"
        return line.append(f" on {owner_name} {spread_kind}")
    if kind == "discard":
        return Text("discarded ").append_text(cards)
    return None


def event_line(
    event: Event,
    names: Sequence[str],
    me: int | None,
    style: CardStyle,
    spread_owner: SpreadOwner = lambda _: None,
) -> Text | None:
    """A log line for one event as this seat saw it, or None for events the log leaves out
    (the turn passing, other seats' face-down deals). `names` has "You" in your own seat."""
    who = _name(names, event.seat)
    kind = event.kind
    if kind == "deal":
        if event.seat != me or not event.cards:
            return None
        return Text("Your hand: ").append_text(cards_text(event.cards, style))
    if kind == "up_card":
        return Text("Up card: ").append_text(cards_text(event.cards, style))
    if kind == "deal_tonk":
        line = Text(f"{who} tonked on the deal with {event.count}: ")
        return line.append_text(cards_text(event.cards, style))
    phrase = move_phrase(event, names, me, style, spread_owner)
    if phrase is not None:
        return Text(f"{who} ").append_text(phrase)
    if kind == "tonk_out":
        return Text(f"{who} tonked out!", style="bold")
    if kind == "out_on_discard":
        return Text(f"{who} went out on the discard", style="bold")
    if kind == "stock_out":
        return Text(f"{who} wanted to draw: the stock is empty", style="bold")
    if kind == "hand_end":
        return Text("The hand is over.", style="bold")
    return None


def ending_line(settlement: Settlement, names: Sequence[str]) -> str:
    """Who won and how, in a sentence."""
    winners = _who(names, settlement.winners)
    dropper = _name(names, settlement.dropper)
    counts = settlement.counts
    ending = settlement.ending
    if ending is Ending.DEAL_TONK:
        return f"{winners} tonked on the deal."
    if ending is Ending.VOID:
        more = (
            f" The next hand is played for {settlement.next_multiplier}x stakes."
            if settlement.next_multiplier > 1
            else ""
        )
        return "Several tonks on the deal: the hand is thrown in." + more
    if ending is Ending.TONK_OUT:
        return f"{winners} tonked out."
    if ending is Ending.OUT_ON_DISCARD:
        return f"{winners} went out on a discard."
    if ending is Ending.DROP_WON:
        assert settlement.dropper is not None
        return f"{dropper} dropped with {counts[settlement.dropper]} and won."
    if ending is Ending.DROP_CAUGHT:
        assert settlement.dropper is not None
        was = "were" if dropper == "You" else "was"
        return (
            f"{dropper} dropped with {counts[settlement.dropper]} and {was} caught by "
            f"{_and([f'{_after(_name(names, s))} with {c}' for c, s in settlement.catchers])}."
        )
    lowest = min(c for c in counts if c is not None)
    return f"The stock ran out: {winners} lowest with {lowest}."


def payment_lines(settlement: Settlement, names: Sequence[str], unit: str) -> list[str]:
    """`Goblin pays Croaker 2 chips`, one a line; or a line saying nobody pays."""
    if not settlement.payments:
        return ["Nobody pays."]
    lines = []
    for payment in settlement.payments:
        payer = _name(names, payment.payer)
        pays = "pay" if payer == "You" else "pays"
        lines.append(
            f"{payer} {pays} {_after(_name(names, payment.payee))} "
            f"{amount_text(payment.amount, unit)}"
        )
    return lines


def fit_name(name: str, column: int, ascii_only: bool = False) -> str:
    """`name` in `column` cells: padded, or cut with an ellipsis that says it was cut."""
    if len(name) <= column:
        return name.ljust(column)
    return name[: column - 1] + ("." if ascii_only else "…")


def broken_at_dots(line: Text, width: int) -> list[Text]:
    """`line` as rows of `width` cells, broken between its parts (after a ` ·`) rather than
    inside one (`k drop` on one row, `at 36` on the next); a part wider than a row is left
    to wrap at its spaces. Each row keeps the line's styles; with no width known, one row."""
    plain = line.plain
    cuts: list[int] = []
    row_start = part_start = 0
    parts = plain.split(DOT)
    for number, part in enumerate(parts):
        part_end = part_start + len(part)
        # (A row that is not the last ends in the dot after its last part.)
        end = part_end + (len(DOT.rstrip()) if number < len(parts) - 1 else 0)
        if part_start > row_start and cell_len(plain[row_start:end]) > width > 0:
            cuts.append(part_start)
            row_start = part_start
        part_start = part_end + len(DOT)
    rows = list(line.divide(cuts))
    for row in rows[:-1]:
        row.rstrip()
    return rows

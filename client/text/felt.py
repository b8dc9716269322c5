"""The table's centre drawn with cards: the stock as a card back with its count, the discard
pile face up (its last cards fanned with who threw each), and each spread as cards under its
owner's name, a hit card marked with who hit it.

Pure functions from the core's values to rows of Rich `Text`, at one of a few card sizes; the
widget (widgets/table.py) picks the largest size whose rows fit its room, or the text lines of
render.py where no size does.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from rich.text import Text
from tonk.shared.game.cards import Card
from tonk.shared.game.spreads import Spread
from tonk.shared.records import record

from .render import CardStyle, card_label, short_names


@record
class CardSize:
    """How large a card is drawn on the table: `rows` high with its frame, `inner` cells wide
    inside it (cards side by side share their edges: one card more is `inner` + 1 cells)."""

    name: str
    rows: int
    inner: int

    @property
    def step(self) -> int:
        return self.inner + 1


#: From the smallest (a card like the hand's at 80x24) to the largest (for 200x60 and up).
SMALL = CardSize("small", 3, 3)
MEDIUM = CardSize("medium", 5, 5)
LARGE = CardSize("large", 7, 7)
HUGE = CardSize("huge", 9, 9)
#: The sizes tried, largest first.
SIZES = (HUGE, LARGE, MEDIUM, SMALL)

#: What a face-down card shows inside its frame.
BACK = "▒"
ASCII_BACK = "#"

#: A card to draw: the card (None: face down) and a style added to its face (a hit card's).
Drawn = tuple[Card | None, str]


def faces(label: str, size: CardSize) -> list[str]:
    """A card's face inside its frame, one string a row: its label (`10♠`) at the top left,
    the suit in the middle and the label again at the bottom right; a small card's label
    alone, at the right (as the hand's)."""
    inner, height = size.inner, size.rows - 2
    if height == 1:
        return [label.rjust(inner)]
    rows = [" " * inner for _ in range(height)]
    rows[0] = label.ljust(inner)
    rows[height // 2] = label[-1].center(inner)
    rows[-1] = label.rjust(inner)
    return rows


def card_row(cards: Sequence[Drawn], style: CardStyle, size: CardSize) -> list[Text]:
    """Cards side by side, sharing their edges (`╭───┬───╮`), as `size.rows` rows; a card
    face down (None) filled with its back."""
    box = style.box
    lines = [Text() for _ in range(size.rows)]
    if not cards:
        return lines
    edge = box["h"] * size.inner
    lines[0].append(box["tl"] + box["tj"].join([edge] * len(cards)) + box["tr"])
    lines[-1].append(box["bl"] + box["bj"].join([edge] * len(cards)) + box["br"])
    for row in lines[1:-1]:
        row.append(box["v"])
    for card, extra in cards:
        if card is None:
            back = ASCII_BACK if style.ascii else BACK
            for row in lines[1:-1]:
                row.append(back * size.inner, style="blue")
                row.append(box["v"])
            continue
        label = card_label(card, style)
        face_style = " ".join(s for s in (style.suit_style(card.suit), "bold") if s)
        for row, text in zip(lines[1:-1], faces(label, size), strict=True):
            # `extra` (a hit card's underline) on the label alone, not the space about it.
            start = text.find(label)
            if extra and start >= 0:
                row.append(text[:start], style=face_style)
                row.append(label, style=f"{face_style} {extra}")
                row.append(text[start + len(label) :], style=face_style)
            else:
                row.append(text, style=face_style)
            row.append(box["v"])
    return lines


def marks_row(marks: Sequence[tuple[int, str]], step: int) -> Text:
    """Words under cards of a row (`card_row`): each mark (the card's place from 0, its word)
    starts under its card, inside its left edge, and is cut short of the next mark (a hit's
    `+`s left out first: `+Bix +Cleo` under two cards side by side is `Bix Cleo`)."""
    out = Text()
    ordered = sorted(marks)
    rooms = [(later - place) * step - 1 for (place, _), (later, _) in pairwise(ordered)]
    if any(len(word) > room for (_, word), room in zip(ordered, rooms, strict=False)):
        ordered = [(place, word.removeprefix("+")) for place, word in ordered]
    for i, (place, word) in enumerate(ordered):
        start = place * step + 1
        room = rooms[i] if i < len(rooms) else len(word)
        out.append(" " * (start - out.cell_len))
        out.append(word[: max(room, 0)], style="dim")
    return out


def spread_title(number: int, spread: Spread, names: Sequence[str]) -> str:
    """`2 Ada's run`, `1 Your book`: the number `h` chooses it by, its owner and its kind."""
    owner = names[spread.owner] if 0 <= spread.owner < len(names) else "?"
    whose = "Your" if owner == "You" else f"{owner}'s"
    return f"{number} {whose} {spread.kind.value}"


def spread_block(
    number: int, spread: Spread, names: Sequence[str], style: CardStyle, size: CardSize
) -> list[Text]:
    """A spread as cards under its number, owner and kind; each card hit onto it underlined,
    with who hit it under it (a row only where it was hit)."""
    short = short_names(names)
    title = Text(spread_title(number, spread, short), style="bold")
    drawn = [
        (card, "underline" if spread.hit_by(card) is not None else "") for card in spread.cards
    ]
    rows = [title, *card_row(drawn, style, size)]
    marks = [
        (spread.cards.index(card), "+" + (short[seat] if 0 <= seat < len(short) else "?"))
        for card, seat in spread.hits
        if card in spread.cards
    ]
    if marks:
        rows.append(marks_row(marks, size.step))
    return rows


def flow(blocks: Sequence[list[Text]], width: int, gap: int = 2) -> list[Text] | None:
    """Blocks of rows laid side by side, left to right, a new band of them where the next
    does not fit `width`; None where a block alone is wider than `width`."""
    bands: list[list[list[Text]]] = []
    used = 0
    for block in blocks:
        wide = max((row.cell_len for row in block), default=0)
        if wide > width:
            return None
        if bands and used + gap + wide <= width:
            bands[-1].append(block)
            used += gap + wide
        else:
            bands.append([block])
            used = wide
    lines: list[Text] = []
    for band in bands:
        height = max(len(block) for block in band)
        for y in range(height):
            line = Text()
            for i, block in enumerate(band):
                if i:
                    line.append(" " * gap)
                part = block[y] if y < len(block) else Text()
                line.append_text(part)
                if i + 1 < len(band):
                    line.append(" " * (max(row.cell_len for row in block) - part.cell_len))
            lines.append(line)
    return lines


def spreads_as_cards(
    spreads: Sequence[Spread],
    names: Sequence[str],
    style: CardStyle,
    size: CardSize,
    width: int,
    order: Sequence[int] = (),
) -> list[Text] | None:
    """Every spread as cards, each under its title, grouped by owner (in `order`, the seats
    as the table goes round from yours; where not given, in the view's order) and numbered
    as the view lists them; None where one is wider than `width`."""
    rank = {seat: i for i, seat in enumerate(order)}
    numbered = sorted(
        enumerate(spreads, start=1), key=lambda item: (rank.get(item[1].owner, 99), item[0])
    )
    blocks = [spread_block(n, spread, names, style, size) for n, spread in numbered]
    return flow(blocks, width)


@record
class Pile:
    """The stock and the discard pile as the seat sees them: the stock's count, the top
    discard and the pile's size, and the pile's last cards with who threw each (a short
    name; None: the up card), oldest first, where the hand's events say them (empty where
    they do not); and the fewest of those to fan (`pile_block` draws none where fewer fit)."""

    stock: int
    top: Card | None
    size: int
    last: tuple[tuple[Card, str | None], ...] = ()
    least: int = 1


#: The words under the up card in the fanned pile (`up` where the next card is close).
UP_CARD = "up card"


def pile_block(pile: Pile, style: CardStyle, size: CardSize, width: int) -> list[Text] | None:
    """The stock as a card back and the discard pile face up, with their words at the right
    (`Stock: 29`, `Discard: Q♠`, `4 in the pile`), or on lines under them where `width` is
    short of room beside them; the pile's last cards fanned, the top at the right, each with
    who threw it under it, as many as fit `width`. None where even the two cards and their
    words, or fewer than `pile.least` of its last cards, do not fit."""
    words = [f"Stock: {pile.stock}"]
    if pile.top is None:
        words.append("Discard: none")
    else:
        words.append(f"Discard: {card_label(pile.top, style)}")
        words.append(f"{pile.size} in the pile")
    known = pile.top is not None and bool(pile.last)  # who threw each is known
    shown = list(pile.last) if known else [] if pile.top is None else [(pile.top, None)]
    least = pile.least if known else 1
    beside = max(len(word) for word in words) + 2
    for room, under in ((width - beside, False), (width, True)):
        if under and beside - 2 > width:
            return None
        fits = max(0, (room - size.step - 4) // size.step)  # (the stock, gaps, edges)
        fanned = shown[len(shown) - min(fits, len(shown)) :]
        if pile.top is None or len(fanned) >= least:
            break
    else:
        return None
    stock = card_row([(None, "")], style, size)
    discard = card_row([(card, "") for card, _ in fanned], style, size)
    if pile.top is None:
        discard = [Text(" " * (size.step + 1)) for _ in range(size.rows)]
    top = (size.rows - len(words)) // 2
    rows = []
    for y in range(size.rows):
        row = Text().append_text(stock[y]).append("  ").append_text(discard[y])
        if not under and 0 <= y - top < len(words):
            row.append("  " + words[y - top])
        rows.append(row)
    if known:

        def who(place: int, name: str | None) -> str:
            if name is None:  # the up card: so named where the room before the next allows
                last = place == len(fanned) - 1
                return UP_CARD if last or size.step - 1 >= len(UP_CARD) else "up"
            return name

        marks = [(i, who(i, name)) for i, (_, name) in enumerate(fanned)]
        rows.append(Text(" " * (size.step + 3)).append_text(marks_row(marks, size.step)))
    if under:
        rows += [Text(line) for line in packed(words, width)]
    return rows


def packed(words: Sequence[str], width: int, gap: int = 3) -> list[str]:
    """`words` on as few lines of `width` cells as hold them, `gap` apart, in order."""
    lines: list[str] = []
    for word in words:
        if lines and len(lines[-1]) + gap + len(word) <= width:
            lines[-1] += " " * gap + word
        else:
            lines.append(word)
    return lines

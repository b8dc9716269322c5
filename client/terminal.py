"""What the client writes to its terminal, whatever a widget draws: no colour at all under
NO_COLOR, and only ASCII under --ascii (Textual's own line filters, applied to every line)."""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from textual.color import Color
from textual.filter import LineFilter

#: Characters a widget may draw, in ASCII: suits as the letters cards use (`10♠` is `10S`),
#: lines and corners as ASCII boxes, blocks (scrollbars, sparklines) as `#`.
ASCII = str.maketrans(
    {
        "♠": "S",
        "♥": "H",
        "♦": "D",
        "♣": "C",
        "·": ".",
        "…": ".",
        "▶": ">",
        "◀": "<",
        "▼": "v",
        "▲": "^",
        "─": "-",
        "━": "-",
        "┄": "-",
        "│": "|",
        "┃": "|",
        "╭": "+",
        "╮": "+",
        "╰": "+",
        "╯": "+",
        "┌": "+",
        "┐": "+",
        "└": "+",
        "┘": "+",
        "▁": "_",
        "▔": "-",
        "‘": "'",
        "’": "'",
        "“": '"',
        "”": '"',
        "–": "-",
        "—": "-",
        **dict.fromkeys("▂▃▄▅▆▇█▀▌▐▊▋▍▎▏▉░▒▓", "#"),
    }
)


def ascii_text(text: str) -> str:
    """`text` in ASCII, each cell kept: the characters above translated, any other character
    that is not ASCII shown as `?` (as many as the cells it takes)."""
    if text.isascii():
        return text
    text = text.translate(ASCII)
    if text.isascii():
        return text
    return "".join(ch if ch.isascii() else "?" * max(1, cell_len(ch)) for ch in text)


class AsciiOnly(LineFilter):
    """--ascii: every character written is ASCII."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        return [
            segment if control or text.isascii() else Segment(ascii_text(text), style, control)
            for segment in segments
            for text, style, control in (segment,)
        ]


class NoColour(LineFilter):
    """NO_COLOR: no colour codes at all (Textual's own NO_COLOR filter turns colours grey, or
    to the terminal's default colours, and still writes codes for them); bold, dim, reverse and
    underline stay, so the table still shows the cursor and what is greyed out."""

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        return [
            Segment(text, None if style is None else style.without_color, control)
            for text, style, control in segments
        ]

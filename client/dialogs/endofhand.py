"""The end of a hand: how it ended, who paid whom, and the balances after it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Static
from tonk.shared.game.settlement import Settlement
from tonk.shared.game.spreads import Spread
from tonk.shared.wire import messages as m

from ..keys import ScreenKeys
from ..messages import Request
from ..text.render import (
    CardStyle,
    cards_text,
    ending_line,
    payment_lines,
    signed,
    sort_hand,
    spread_line,
)
from ..touch import by_touch
from ..widgets import PORTRAIT, TooSmall


class EndOfHandModal(ModalScreen[None]):
    """Every revealed hand and its count, who won how, and who paid whom."""

    KEYS: ClassVar[ScreenKeys] = ScreenKeys(passes_through=True, ends_earlier_keys=True)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,escape,space", "close", "Continue"),
        Binding("l", "history", "History"),
    ]

    def __init__(
        self,
        hand_number: int,
        settlement: Settlement,
        names: Sequence[str],
        unit: str,
        style: CardStyle,
        balances: Sequence[int | None] = (),
        table: int | None = None,
        seat: int | None = None,
        spreads: Sequence[Spread] = (),
        deck_line: str = "",
        deck_ok: bool = True,
    ) -> None:
        super().__init__()
        self.table = table  # the table's id, for `l` (its history)
        self.seat = seat  # ours (None: watching), marked "(you)"
        self.spreads = tuple(spreads)  # on the table as the hand ended
        self.hand_number = hand_number
        self.settlement = settlement
        self.names = list(names)
        self.unit = unit
        self.card_style = style
        self.balances = list(balances)
        self.narrow = False  # drawn for a narrow terminal (see compose)
        # The check of the hand's deal (PROTOCOL.md, "A deal anyone can check"): one line.
        self.deck_line = deck_line
        self.deck_ok = deck_ok

    def _grid(self, headings: Sequence[str]) -> Table:
        """The table of hands, or (narrow) one row of it: every row's columns as wide as the
        others', the players' taking the room the numbers leave."""
        if not self.narrow:
            table = Table.grid(padding=(0, 2))
            for heading in headings:
                right = heading in ("Count", "This hand", "Balance")
                table.add_column(justify="right" if right else "left", no_wrap=True)
            return table
        table = Table.grid(padding=(0, 1), expand=True)
        table.add_column(no_wrap=True, ratio=1)
        for heading in headings[1:]:
            table.add_column(justify="right", no_wrap=True, width=len(heading))
        return table

    def on_resize(self) -> None:
        """Turned from narrow to wide or back (a phone turned): the table of hands again."""
        if self.narrow != (self.app.size.width < PORTRAIT):
            self.refresh(recompose=True)

    def compose(self) -> ComposeResult:
        s = self.settlement
        # Narrow (an upright table): each player's hand and result under their name, so that
        # the table fits 40 columns.
        self.narrow = self.app.size.width < PORTRAIT
        headings: tuple[str, ...] = ("Player", "Hand", "Count", "", "This hand", "Balance")
        if self.narrow:
            headings = ("Player", "Count", "This hand", "Balance")
        table = self._grid(headings)
        table.add_row(*(Text(heading, style="bold") for heading in headings))
        pieces: list[RenderableType] = [table]  # (narrow: a grid and a line a player)
        net = s.net(len(self.names))
        caught_by = {seat for _, seat in s.catchers}
        for seat, name in enumerate(self.names):
            revealed = s.revealed[seat] if seat < len(s.revealed) else None
            counted = s.counts[seat] if seat < len(s.counts) else None
            won = seat in s.winners
            result = "dropped" if seat == s.dropper else ""
            if won:
                result = f"{result}, won" if result else "won"
            elif seat in caught_by and s.dropper is not None:
                # (Named: "caught" alone reads as the dropper's lot.)
                result = f"caught {self.names[s.dropper]}"
            balance = self.balances[seat] if seat < len(self.balances) else None
            player = Text(name, style="bold" if won else "")
            if seat == self.seat:
                player.append(" (you)", style="dim")
            shown = sort_hand(revealed, "suit") if revealed else ()
            cards = cards_text(shown, self.card_style) if shown else Text("-", style="dim")
            outcome = Text(result, style="bold green" if won else "")
            this_hand = Text(
                signed(net[seat]) if seat < len(net) else "",
                style="green" if net[seat] > 0 else "red" if net[seat] < 0 else "",
            )
            counted_text = "-" if counted is None else str(counted)
            balance_text = "" if balance is None else signed(balance)
            if self.narrow:
                row = self._grid(headings)
                row.add_row(player, counted_text, this_hand, balance_text)
                under = Text("  ").append_text(cards)
                if result:
                    under.append("  ").append_text(outcome)
                pieces += [row, under]
            else:
                table.add_row(player, cards, counted_text, outcome, this_hand, balance_text)
        payments = "\n".join(payment_lines(s, self.names, self.unit))
        yield TooSmall()
        with Vertical(id="dialog", classes="dialog end-of-hand"):
            yield Label(f"Hand {self.hand_number} is over", classes="title")
            yield Static(Text(ending_line(s, self.names), style="bold"), id="ending")
            yield Static(Group(*pieces), id="revealed")
            if self.spreads:
                laid = Text("Spreads: ", style="bold")
                for number, spread in enumerate(self.spreads, 1):
                    if number > 1:
                        laid.append("\n         ")
                    laid.append_text(spread_line(number, spread, self.names, self.card_style))
                yield Static(laid, id="laid")
            yield Static(Text(payments), id="payments")
            if self.deck_line:
                style = "dim" if self.deck_ok else "bold red"
                yield Static(Text(self.deck_line, style=style), id="deck-check")
            keys = "enter: back to the table (closes by itself at the next deal)  l: history"
            if by_touch(self.app):
                keys = "Tap: back to the table (closes by itself at the next deal)"
            yield Label(keys, id="end-of-hand-hint", classes="hint")

    def last_of_session(self) -> None:
        """This was the session's last hand: closing the window shows the final standings."""
        said = "The session is over. enter: the final standings  l: history"
        if by_touch(self.app):
            said = "The session is over. Tap: the final standings"
        self.query_one("#end-of-hand-hint", Label).update(said)

    def on_click(self, event: events.Click) -> None:
        """A tap anywhere continues, as enter does."""
        self.action_close()

    def action_close(self) -> None:
        self.dismiss(None)

    def action_history(self) -> None:
        """The session's hands, over this window (the App shows them when they come)."""
        if self.table is not None:
            self.post_message(Request(m.History(self.table)))

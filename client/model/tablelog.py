"""The table's log as the client keeps it: numbered lines (what happened, chat, notices), the
newest few hundred, with a turn's moves amended onto one line as they come."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Callable, Sequence

from rich.text import Text
from tonk.shared.game.actions import Event
from tonk.shared.game.cards import Card, parse_card
from tonk.shared.game.settlement import Ending
from tonk.shared.game.view import SeatView

from ..text.render import (
    ENDED_BY,
    MOVES,
    CardStyle,
    SpreadOwner,
    card_text,
    ending_line,
    event_line,
    move_phrase,
)
from .state import LogLine

LOG_KEEP = 300


class TableLog:
    """The lines of one table's log, oldest first."""

    def __init__(self, style: CardStyle) -> None:
        self.style = style
        self.lines: list[LogLine] = []
        self._numbers = itertools.count()
        # The log line of the turn being played (seat, line number, text): the turn's moves
        # are one line, amended as each comes ("drew 8♥, discarded 2♣").
        self.turn_line: tuple[int, int, Text] | None = None
        # Each seat's last turn of this hand, as its log line says it (what a spectator's
        # panel lists: every move in it is public).
        self.last_turns: dict[int, Text] = {}
        # The same turns without their subject ("drew 8♥, discarded 2♣"), for beside a name,
        # and who made each, as the log named them (a seat can change hands during a hand).
        self.last_moves: dict[int, Text] = {}
        self.last_by: dict[int, str] = {}
        # The discard pile of this hand as its events built it, oldest first: each card and
        # who threw it (None: the up card). Every move on it is public.
        self.pile: list[tuple[Card, str | None]] = []
        self.pile_followed = True  # the pile was followed from the hand's deal

    def restore(self, lines: Sequence[LogLine]) -> None:
        """Begin with the lines kept from before (a client started again at its seat): the
        hand they end in is not followed from its deal here (its pile is not known)."""
        self.clear()
        for line in lines[-LOG_KEEP:]:
            self.add(line.text, line.chat)
        self.pile_followed = False

    def clear(self) -> None:
        self.lines.clear()
        self.turn_line = None
        self.last_turns.clear()
        self.last_moves.clear()
        self.last_by.clear()
        self.pile.clear()
        self.pile_followed = True

    def add(self, text: Text, chat: bool = False) -> int:
        """Add a line; returns its number."""
        number = next(self._numbers)
        self.lines.append(LogLine(number, text, chat))
        if len(self.lines) > LOG_KEEP:
            del self.lines[: len(self.lines) - LOG_KEEP]
        return number

    def amend(self, number: int, text: Text) -> int:
        """Replace the text of log line `number` (one of the newest), keeping its place; a
        line no longer among the newest is added again instead. Returns the line's number."""
        for at in range(len(self.lines) - 1, max(-1, len(self.lines) - 9), -1):
            line = self.lines[at]
            if line.number == number:
                self.lines[at] = LogLine(number, text, line.chat)
                return number
        return self.add(text)

    def cut(self, rounds: Sequence[Sequence[str | None]], dealer: int, names: list[str]) -> None:
        """The cut for the first deal: each round's cards, and who deals."""
        line = Text("Cut for the deal:")
        for number, round_ in enumerate(rounds):
            if number:
                line.append("; a tie, so they cut again:")
            for seat, card in enumerate(round_):
                if card is None:
                    continue
                line.append(f" {names[seat] if seat < len(names) else seat} ")
                with contextlib.suppress(ValueError):
                    line.append_text(card_text(parse_card(card), self.style))
        who = names[dealer] if dealer < len(names) else str(dealer)
        line.append(f". {who} {'deal' if who == 'You' else 'deals'} first.")
        self.add(line)

    def event(
        self,
        view: SeatView,
        hand: int,
        event: Event,
        names: list[str],
        played_for: Callable[[int | None], bool],
        spread_owner: SpreadOwner,
    ) -> None:
        """Log one event of the hand: a turn's moves on one line, said as made for the
        player when the server made them (`played_for` the event's seat); what the hand's
        ending line says (a drop, going out) is not said twice."""
        kind = event.kind
        self._follow_pile(event, names)
        if kind == "deal" and event.seat == 0:
            self.last_turns.clear()
            self.last_moves.clear()
            self.last_by.clear()
            dealer = names[view.dealer]
            verb = "deal" if dealer == "You" else "deals"
            self.add(Text(f"Hand {hand}: {dealer} {verb}.", style="bold"))
        if kind == "turn":
            self.turn_line = None
            return
        if kind == "hand_end":
            self.turn_line = None
            settlement = view.settlement
            # A tonk on the deal was logged with its cards already.
            if settlement is not None and settlement.ending is not Ending.DEAL_TONK:
                self.add(Text(ending_line(settlement, names), style="bold"))
            return
        for_them = kind in MOVES and played_for(event.seat)
        if kind in ENDED_BY and not for_them:
            return
        phrase = move_phrase(event, names, view.seat, self.style, spread_owner)
        if phrase is None or event.seat is None:
            line = event_line(event, names, view.seat, self.style, spread_owner)
            if line is not None:
                self.add(line)
            return
        open_line = self.turn_line
        who = names[event.seat] if event.seat < len(names) else f"seat {event.seat + 1}"
        moves = phrase.copy()
        if for_them:
            moves.stylize("italic")
        if open_line is not None and open_line[0] == event.seat:
            _, number, text = open_line
            text = text.copy().append(", ").append_text(phrase)
            number = self.amend(number, text)
            moves = self.last_moves.get(event.seat, Text()).copy().append(", ").append_text(moves)
        else:
            if for_them:
                moves = Text("played for: ", style="italic").append_text(moves)
            if for_them:
                text = Text(f"Played for {'you' if who == 'You' else who}: ", style="italic")
            else:
                text = Text(f"{who} ")
            text.append_text(phrase)
            number = self.add(text)
        self.turn_line = (event.seat, number, text)
        self.last_turns[event.seat] = text
        self.last_moves[event.seat] = moves
        self.last_by[event.seat] = who

    def moves_beside(self, names: Sequence[str]) -> dict[int, Text]:
        """Each seat's last turn of the hand, for beside its holder (`names`: the log's names
        now): its moves alone where that holder made them; else the turn as the log says it,
        with who made it ("Cy drew, discarded A♣" beside the bot given Cy's seat since, "Bix
        drew, ..." beside Cy back in his own)."""
        return {
            seat: moves
            if seat < len(names) and self.last_by.get(seat) == names[seat]
            else self.last_turns[seat]
            for seat, moves in self.last_moves.items()
        }

    def _follow_pile(self, event: Event, names: list[str]) -> None:
        """The discard pile as `event` leaves it, each discard with who threw it as `names`
        say now (not who holds that seat later: a seat given to a bot mid-hand)."""
        kind = event.kind
        if kind == "deal" and event.seat == 0:
            self.pile.clear()
            self.pile_followed = True
        elif kind == "up_card" and event.cards:
            self.pile.append((event.cards[0], None))
        elif kind == "discard" and event.cards:
            seat = event.seat
            who = names[seat] if seat is not None and 0 <= seat < len(names) else "?"
            self.pile.append((event.cards[0], who))
        elif kind == "take_discard" and self.pile:
            self.pile.pop()


def chat_line(name: str, seat: int | None, text: str) -> Text:
    """A chat line in the log. A player's name is unique among the seats, but somebody
    watching may have any name, a player's too: a spectator's line is marked as one, so that
    nobody watching can pass for a player (`<Bob> hi` is Bob in his seat; `[Bob, watching] hi`
    is somebody watching who goes by Bob)."""
    line = Text()
    if seat is None:
        line.append(f"[{name}, watching] ", style="italic magenta")
    else:
        line.append(f"<{name}> ", style="bold cyan")
    line.append(text)
    return line

"""What the client knows, as values: the lobby's tables, and one table's state as its seat sees
it. The connection builds these from the server's messages; screens only render them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rich.text import Text
from tonk.shared.game.cards import Card
from tonk.shared.game.rules import HouseRules
from tonk.shared.game.view import SeatView
from tonk.shared.records import record
from tonk.shared.wire import messages as m


@record
class TableInfo:
    """One line of the lobby."""

    table_id: str
    name: str
    rules: str
    stake: int
    unit: str
    seats_taken: int
    seats: int
    state: m.TableState
    spectators: int
    players: tuple[str, ...] = ()  # the people seated, by seat (not the bots)
    mine: bool = False  # we hold a seat there (enter takes it back)
    bots: int = 0  # the seats bots play
    bot_seats: tuple[int, ...] = ()  # which seats those are
    held_for: tuple[tuple[int, str], ...] = ()  # bots' seats given them: (seat, whose it was)
    changes: tuple[str, ...] = ()  # the options changed from the preset, as typed (hit_lock=1)
    turn_timer: float | None = None  # seconds a turn (None: no timer)
    hands: int | None = None  # the session ends after this many hands (None: not so)
    minutes: float | None = None  # or after this many minutes

    @property
    def playing(self) -> bool:
        return self.state is m.TableState.PLAYING

    @property
    def free(self) -> bool:
        """A seat can be taken: the game has not started and a seat is empty."""
        return self.state is m.TableState.WAITING and self.seats_taken < self.seats

    @property
    def number(self) -> int:
        """The table's id as the server numbers it."""
        return int(self.table_id)


@record
class PlayerInfo:
    """A seat at the table as everyone sees it."""

    seat: int
    name: str
    connected: bool = True
    away: bool = False
    bot: bool = False
    #: A player who lost the connection: when (the client's monotonic clock) the table plays
    #: for the seat (before the start: gives it up); and who has voted to play for it now.
    played_for_at: float | None = None
    votes: tuple[str, ...] = ()
    #: A bot's seat given it during the session: the player whose seat it was.
    holds_for: str | None = None


@record
class LogLine:
    """One line of the table's log: something that happened, a chat line, or a notice."""

    number: int
    text: Text
    chat: bool = False


@dataclass(frozen=True, slots=True)
class TableState:
    """A table as this connection sees it: who sits where, the hand's view for this seat (None
    before the first deal), the ledger, and the log. `seat` is None for a spectator."""

    table_id: str
    name: str
    rules: HouseRules
    stake: int
    unit: str
    seat: int | None
    players: tuple[PlayerInfo, ...]
    view: SeatView | None = None
    hand_number: int = 0
    balances: Mapping[str, int] = field(default_factory=dict)
    series: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    last_net: Mapping[str, int] = field(default_factory=dict)
    log: tuple[LogLine, ...] = ()
    creator: bool = False
    playing: bool = False
    turn_deadline: float | None = None  # on the event loop's clock, when a turn timer runs
    session_over: bool = False
    paused: str = ""  # why the server has paused play (it cannot save the game), or ""
    seats: int = 0  # how many seats the table has (taken or not)
    turn_timer: float | None = None  # the table's turn timer, seconds (None: none)
    hands: int | None = None  # the session ends after this many hands (None: not so)
    #: Each seat's last turn of the hand in play, as the log says it, by seat.
    last_turns: tuple[tuple[int, Text], ...] = ()
    #: The same turns without their subject ("drew 8♥, discarded 2♣"), by seat.
    last_moves: Mapping[int, Text] = field(default_factory=dict)
    #: The discard pile, oldest first, as far as this hand's events say: each card and who
    #: threw it, by the name the log gave them then (None: the up card).
    pile: tuple[tuple[Card, str | None], ...] = ()
    #: The name this connection plays under.
    me: str = ""
    #: Watching: the bot's seat asked for during the hand in play, taken as it ends.
    awaiting_seat: int | None = None

    def names(self, me_as_you: bool = True) -> list[str]:
        """Each seat's name, with "You" in this connection's own seat."""
        out = [p.name for p in self.players]
        if me_as_you and self.seat is not None and self.seat < len(out):
            out[self.seat] = "You"
        return out

    @property
    def hand_in_play(self) -> bool:
        return self.view is not None and self.view.settlement is None

    @property
    def progress(self) -> tuple[int, int]:
        """How far the table has got: the hand, and the events of it seen."""
        return self.hand_number, self.view.event_count if self.view is not None else 0

    def player(self, seat: int) -> PlayerInfo | None:
        return self.players[seat] if 0 <= seat < len(self.players) else None

    def bot_to_take(self) -> PlayerInfo | None:
        """The bot's seat `t` takes: the one given a bot from us, if there is one (our own
        place in the order of play), else the first bot's that holds nobody's seat, else the
        first bot's."""
        bots = [p for p in self.players if p.bot]
        own = [p for p in bots if self.me and p.holds_for == self.me]
        free = [p for p in bots if p.holds_for is None]
        return next(iter(own + free + bots), None)


def ledger_rows(state: TableState) -> list[tuple[str, int, tuple[int, ...], int]]:
    """(name, balance, balance over the hands seen, last hand's net) for each player at the
    table, in seat order; players who left but are in the ledger come after."""
    names = [p.name for p in state.players]
    order = list(dict.fromkeys([*names, *state.balances]))
    return [
        (
            name,
            state.balances.get(name, 0),
            state.series.get(name, (state.balances.get(name, 0),)),
            state.last_net.get(name, 0),
        )
        for name in order
    ]

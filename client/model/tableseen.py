"""One table as the client accumulates it from the server's messages (the table map, the
hand's view, the ledger seen), and the frozen `TableState` the screens draw from it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rich.text import Text
from tonk.shared.game.cards import Card
from tonk.shared.game.rules import HouseRules
from tonk.shared.game.view import SeatView
from tonk.shared.wire import messages as m

from .balances import Balances
from .dealwatch import DealWatch
from .state import LogLine, PlayerInfo, TableState


@dataclass
class TableSeen:
    """The table as the model accumulates it; `state()` freezes it for the screens."""

    table_id: int
    seat: int | None
    info: m.TableSummary | None = None  # the last table map (None: none yet)
    rules: HouseRules = field(default_factory=HouseRules)  # info's rules, read once
    view: SeatView | None = None
    hand: int = 0
    deadline: float | None = None
    ledger: Balances = field(default_factory=Balances)
    session_over: bool = False
    last_hand: tuple[str, ...] = ()  # the last hand settled: its ending and payments, in words
    # The hand whose events are in the log, and how many of its events: an event is logged
    # once, however often it arrives (a resync sends the whole hand again).
    logged_hand: int = 0
    logged_events: int = 0
    # When (the model's clock) the last table map came: its countdowns count from then.
    info_at: float = 0.0
    # The events of a hand that were moves the server made for our seat while we were away
    # (told by `away_summary`): (hand, event indexes).
    played_for: tuple[int, frozenset[int]] = (0, frozenset())
    # Each hand's deal as we were shown it, checked once its secret is revealed.
    deals: DealWatch = field(default_factory=DealWatch)
    # Watching: the bot's seat we asked for during a hand, ours as it ends (None: none).
    awaiting_seat: int | None = None

    def away(self, seat: int) -> bool:
        """Whether a seat is shown away (played for) in the last table map."""
        return self.status(seat) is m.SeatStatus.AWAY

    def status(self, seat: int, info: m.TableSummary | None = None) -> m.SeatStatus | None:
        """A seat's status in the table map `info` (default: the last), None if not in it."""
        info = self.info if info is None else info
        players = info.players if info is not None else ()
        return players[seat].status if 0 <= seat < len(players) else None

    def back_on_my_turn(self, old: m.TableSummary, new: m.TableSummary) -> bool:
        """Our seat was away in `old` and is not in `new`, and it is our turn."""
        seat = self.seat
        view = self.view
        if seat is None or view is None or not view.my_turn:
            return False
        return (
            self.status(seat, old) is m.SeatStatus.AWAY
            and self.status(seat, new) is not m.SeatStatus.AWAY
        )

    def names(self) -> list[str]:
        """Each seat's name, "You" in ours."""
        players = self.info.players if self.info is not None else ()
        names = [player.name or f"seat {player.seat + 1}" for player in players]
        if self.view is not None and len(names) < self.view.players:
            names += [f"seat {i + 1}" for i in range(len(names), self.view.players)]
        if self.seat is not None and self.seat < len(names):
            names[self.seat] = "You"
        return names

    def spread_owner(self, spread_id: int) -> tuple[int, str] | None:
        """Who owns a spread on the table, and its kind."""
        if self.view is None:
            return None
        for spread in self.view.spreads:
            if spread.id == spread_id:
                return spread.owner, spread.kind.value
        return None

    def state(
        self,
        log: tuple[LogLine, ...],
        last_turns: tuple[tuple[int, Text], ...] = (),
        last_moves: Mapping[int, Text] | None = None,
        pile: tuple[tuple[Card, str | None], ...] = (),
        me: str = "",
    ) -> TableState:
        """The table as the screens see it now, with the log's lines (and each seat's last
        turn, as the log says it)."""
        info = self.info
        every = info.players if info is not None else ()
        players = tuple(
            PlayerInfo(
                seat=player.seat,
                name=player.name or f"seat {i + 1}",
                connected=player.status is not m.SeatStatus.DISCONNECTED,
                away=player.status is m.SeatStatus.AWAY,
                bot=player.kind is m.SeatKind.BOT,
                played_for_at=(
                    None if player.played_for_in is None else self.info_at + player.played_for_in
                ),
                votes=tuple(every[n].name or "" for n in player.votes if 0 <= n < len(every)),
                holds_for=player.holds_for,
            )
            for i, player in enumerate(every)
            if player.kind is not m.SeatKind.EMPTY
        )
        seat = self.seat
        return TableState(
            table_id=str(self.table_id),
            name=info.name if info is not None else "",
            rules=self.rules,
            stake=info.stake if info is not None else 1,
            unit=info.unit if info is not None else "",
            seat=seat,
            players=players,
            view=self.view,
            hand_number=self.hand,
            balances=dict(self.ledger.balances),
            series={name: tuple(values) for name, values in self.ledger.series.items()},
            last_net=dict(self.ledger.last_net),
            log=log,
            creator=info is not None and info.creator is not None and info.creator == seat,
            playing=info is not None and info.state is m.TableState.PLAYING,
            turn_deadline=self.deadline,
            session_over=self.session_over,
            paused=(info.paused or "") if info is not None else "",
            seats=info.seats if info is not None else len(players),
            turn_timer=info.turn_timer if info is not None else None,
            hands=info.hands if info is not None else None,
            last_turns=last_turns,
            last_moves=last_moves or {},
            pile=pile,
            me=me,
            awaiting_seat=self.awaiting_seat if seat is None else None,
        )

"""One table as the client accumulates it from the server's messages (the table map, the
hand's view, the ledger seen), and the frozen `TableState` the screens draw from it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tonk.shared.rules import HouseRules
from tonk.shared.view import SeatView

from .balances import Balances
from .state import LogLine, PlayerInfo, TableState


@dataclass
class TableSeen:
    """The table as the model accumulates it; `state()` freezes it for the screens."""

    table_id: int
    seat: int | None
    info: Mapping[str, Any] = field(default_factory=dict)
    rules: HouseRules = field(default_factory=HouseRules)  # info's rules, read once
    view: SeatView | None = None
    hand: int = 0
    events: int = 0
    deadline: float | None = None
    ledger: Balances = field(default_factory=Balances)
    session_over: bool = False
    # The hand whose events are in the log, and how many of its events: an event is logged
    # once, however often it arrives (a resync sends the whole hand again).
    logged_hand: int = 0
    logged_events: int = 0
    resyncing: bool = False  # asked for the whole hand again; later parts are ignored till then

    def back_on_my_turn(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        """Our seat was away in `old` and is not in `new`, and it is our turn."""
        seat = self.seat
        view = self.view
        if seat is None or view is None or not view.my_turn:
            return False

        def status(info: Mapping[str, Any]) -> object:
            players = info.get("players", [])
            return players[seat].get("status") if seat < len(players) else None

        return status(old) == "away" and status(new) != "away"

    def names(self) -> list[str]:
        """Each seat's name, "You" in ours."""
        names = [
            str(player.get("name") or f"seat {player.get('seat', i) + 1}")
            for i, player in enumerate(self.info.get("players", []))
        ]
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

    def state(self, log: tuple[LogLine, ...]) -> TableState:
        """The table as the screens see it now, with the log's lines."""
        info = self.info
        players = tuple(
            PlayerInfo(
                seat=int(player.get("seat", i)),
                name=str(player.get("name") or f"seat {i + 1}"),
                connected=player.get("status") != "disconnected",
                away=player.get("status") == "away",
                bot=player.get("kind") == "bot",
            )
            for i, player in enumerate(info.get("players", []))
            if player.get("kind") != "empty"
        )
        seat = self.seat
        return TableState(
            table_id=str(self.table_id),
            name=str(info.get("name", "")),
            rules=self.rules,
            stake=int(info.get("stake", 1)),
            unit=str(info.get("unit", "")),
            seat=seat,
            players=players,
            view=self.view,
            hand_number=self.hand,
            balances=dict(self.ledger.balances),
            series={name: tuple(values) for name, values in self.ledger.series.items()},
            last_net=dict(self.ledger.last_net),
            log=log,
            creator=info.get("creator") is not None and info.get("creator") == seat,
            playing=info.get("state") == "playing",
            turn_deadline=self.deadline,
            session_over=self.session_over,
            paused=str(info.get("paused") or ""),
            seats=int(info.get("seats", len(players))),
        )

"""The server's list of tables as far as one client knows it: read from the pages of `tables`
(the client asks for the next page as each comes) and the changes in `lobby`."""

from __future__ import annotations

from collections.abc import Iterable

from tonk.shared.game.rules import OPTIONS
from tonk.shared.records import replaced
from tonk.shared.wire import messages as m

from .state import TableInfo


class LobbyList:
    """The tables by id; `page()` and `changes()` read the server's messages."""

    def __init__(self) -> None:
        self._tables: dict[int, TableInfo] = {}
        self._asked_after: set[int] = set()  # pages of the list asked for and not yet come

    def clear(self) -> None:
        self._tables.clear()
        self._asked_after.clear()

    def page(self, message: m.Tables) -> int | None:
        """A page of the list: every table with an id above `after`, up to its last one (to
        the end when there are no `more`); what we knew of that stretch is replaced. Returns
        where the next page starts when it is to be asked for (the server paces pages, so a
        long list comes in a few steps), else None."""
        after = message.after
        self._asked_after.discard(after)
        page = [table_info(t) for t in message.tables]
        last = page[-1].number if page and message.more else None
        for number in list(self._tables):
            if number > after and (last is None or number <= last):
                del self._tables[number]
        for info in page:
            self._tables[info.number] = info
        if last is not None and last not in self._asked_after:
            self._asked_after.add(last)
            return last
        return None

    @property
    def whole(self) -> bool:
        """Every page asked for has come."""
        return not self._asked_after

    def changes(self, message: m.LobbyChanges) -> None:
        """The tables changed since the last `lobby` message."""
        for data in message.tables:
            info = table_info(data)
            self._tables[info.number] = info
        for number in message.removed:
            self._tables.pop(number, None)

    def tables(self, held: Iterable[int]) -> tuple[TableInfo, ...]:
        """The tables in id order, those in `held` (where we hold a seat) marked."""
        mine = set(held)
        return tuple(
            replaced(info, mine=info.number in mine) for _, info in sorted(self._tables.items())
        )


def folded_name(name: str) -> str:
    """A table's name as a player types it: any case, any run of spaces as one."""
    return " ".join(name.split()).casefold()


def named(tables: Iterable[TableInfo], name: str) -> TableInfo | None:
    """The open table a player means by `name` (any case): among several, one named exactly
    so, then one where they hold a seat, then one with a seat free, then the oldest."""
    wanted = folded_name(name)
    found = [
        info
        for info in tables
        if folded_name(info.name) == wanted
        and info.state in (m.TableState.WAITING, m.TableState.PLAYING)
    ]
    if not found:
        return None
    return min(
        found,
        key=lambda info: (info.name != name, not info.mine, not info.free, info.number),
    )


def table_info(data: m.TableSummary) -> TableInfo:
    """A lobby line from the server's table map."""
    seated = [(p.name, p.kind) for p in data.players if p.name and p.kind is not m.SeatKind.EMPTY]
    players = tuple(name for name, kind in seated if kind is not m.SeatKind.BOT)
    preset = data.rules.get("preset")
    return TableInfo(
        table_id=str(data.id),
        name=data.name,
        rules=data.rules_name or (preset if isinstance(preset, str) else ""),
        stake=data.stake,
        unit=data.unit,
        seats_taken=data.taken,
        seats=data.seats,
        state=data.state,
        spectators=data.spectators,
        players=players,
        bots=len(seated) - len(players),
        bot_seats=tuple(p.seat for p in data.players if p.kind is m.SeatKind.BOT),
        held_for=tuple(
            (p.seat, p.holds_for)
            for p in data.players
            if p.kind is m.SeatKind.BOT and p.holds_for is not None
        ),
        changes=tuple(typed(name, value) for name, value in data.changes.items()),
        turn_timer=data.turn_timer,
        hands=data.hands,
        minutes=data.minutes,
    )


def typed(name: str, value: object) -> str:
    """An option as it is typed in the create form's options (`hit_lock=1`, `no_rediscard=true`,
    `deal_tonk_low=off`); one this client does not know, as the server wrote its value."""
    option = OPTIONS.get(name)
    return f"{name}={option.typed(value) if option is not None else value}"

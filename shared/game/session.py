"""A session at one table: who may sit and for what stake, when it starts, who deals (the cut,
then the deal passing left), the stake multiplier a hand leaves the next, the ledger, and when
it ends (after N hands or T minutes, or abandoned by its players).

Pure: time comes in as an argument, randomness as a seeded `random.Random`. The server's table
and the simulator both drive a session through this module; neither decides these rules itself.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum

from ..terms import (
    BAD_TABLE,
    BAD_VALUE,
    NAME_TAKEN,
    NO_SUCH_SEAT,
    NOT_CREATOR,
    NOT_ENOUGH_PLAYERS,
    SEAT_TAKEN,
    TABLE_FULL,
    SeatKind,
    SeatStatus,
)
from .hand import Cut, Hand, cut_for_deal
from .ledger import Ledger, Payments
from .rules import HouseRules, StakeMode
from .settlement import Settlement
from .waiting import Vote, votes_needed

#: The fewest players a session is played with.
MIN_PLAYERS = 2
#: A bot is named with the first of these not taken at its table, and " (bot)".
BOT_NAMES = ("Ada", "Bix", "Cleo", "Dot", "Eli", "Fay", "Gus")


class SessionError(ValueError):
    """A request the session's rules refuse; nothing was changed. `code` is the protocol's
    error code for it, `detail` the request's field at fault (if one is)."""

    def __init__(self, code: str, message: str, detail: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.detail = detail


# -- seats and stakes ----------------------------------------------------------------------------


@dataclass(slots=True)
class SeatRecord:
    """A seat as the session knows it: who sits in it (a person, a bot, or nobody), a bot's
    strategy, the seat's stake, and whether its player is away (played for until back)."""

    name: str | None = None
    kind: SeatKind = SeatKind.EMPTY
    strategy: str | None = None
    stake: int = 1
    away: bool = False

    @property
    def taken(self) -> bool:
        return self.kind != SeatKind.EMPTY


def seat_status(seat: SeatRecord, connected: bool) -> SeatStatus:
    """What the table shows of a seat: empty, a bot, or its player away, connected or not."""
    if seat.kind != SeatKind.HUMAN:
        return SeatStatus.BOT if seat.kind == SeatKind.BOT else SeatStatus.EMPTY
    if seat.away:
        return SeatStatus.AWAY
    return SeatStatus.CONNECTED if connected else SeatStatus.DISCONNECTED


def check_players(rules: HouseRules, players: int) -> None:
    """A table of `players` seats under `rules`, or SessionError."""
    if not MIN_PLAYERS <= players <= rules.players:
        raise SessionError(
            BAD_TABLE, f"these rules seat {MIN_PLAYERS} to {rules.players} players", "seats"
        )


def check_fixed_dealer(dealer: int | None, players: int) -> None:
    """A dealer fixed in advance (for tests and demonstrations) is one of the seats."""
    if dealer is not None and not 0 <= dealer < players:
        raise SessionError(BAD_TABLE, f"there is no seat {dealer} to deal", "dealer")


def pick_seat(taken: Sequence[bool], wanted: int | None) -> int:
    """The seat a newcomer gets: `wanted`, or the first free one. `taken[n]`: seat n is taken."""
    if wanted is None:
        for number, busy in enumerate(taken):
            if not busy:
                return number
        raise SessionError(TABLE_FULL, "every seat at this table is taken")
    if not 0 <= wanted < len(taken):
        raise SessionError(NO_SUCH_SEAT, f"this table has seats 0 to {len(taken) - 1}")
    if taken[wanted]:
        raise SessionError(SEAT_TAKEN, f"seat {wanted} is taken")
    return wanted


def check_name_free(names: Sequence[str | None], name: str) -> None:
    """Nobody at a table shares a name: each is told apart in the ledger by it."""
    if name in names:
        raise SessionError(NAME_TAKEN, f"someone at this table is called {name}")


def bot_name(names: Sequence[str | None]) -> str:
    """The name a new bot at a table gets: the first of BOT_NAMES not taken there, neither by
    a bot nor by a player (a player called Ada does not sit beside "Ada (bot)"; upper or lower
    case alike)."""
    taken = {name.casefold() for name in names if name}
    return next(
        f"{n} (bot)"
        for n in BOT_NAMES
        if f"{n} (bot)".casefold() not in taken and n.casefold() not in taken
    )


def next_creator(leaving: int, here: Sequence[bool]) -> int | None:
    """When the creator of a waiting table gives up seat `leaving`, the first other player
    still here (`here[n]`: a person is in seat n, connected) becomes its creator; None if
    nobody is."""
    return next((n for n, present in enumerate(here) if n != leaving and present), None)


def seat_stake(rules: HouseRules, table_stake: int, unit: str, stake: int | None) -> int:
    """A new seat's stake: its own under stake_mode seat (the table's if none is given); at a
    table where every seat plays for the table's stake, none may be given."""
    if stake is None:
        return table_stake
    if rules.stake_mode is StakeMode.SEAT:
        return stake
    raise SessionError(
        BAD_VALUE,
        f"every seat at this table plays for its stake of {table_stake} {unit}; a seat has a "
        "stake of its own only under stake_mode seat",
        "stake",
    )


def creators_stake(rules: HouseRules, stake: int | None) -> int | None:
    """The stake the creator of a table sits down with: the table's stake is the creator's
    own under stake_mode seat; where every seat plays for the table's stake, none of its own
    (the table's)."""
    return stake if rules.stake_mode is StakeMode.SEAT else None


def seat_stakes(rules: HouseRules, players: int, stakes: Sequence[int]) -> tuple[int, ...]:
    """One stake per seat from one stake, or from one per seat under `stake_mode = seat`.
    Raises ValueError with a reason."""
    if any(type(s) is not int or s < 1 for s in stakes):
        raise ValueError("a stake is a whole number, 1 or more")
    if len(stakes) not in (1, players):
        raise ValueError(f"give one stake, or one for each of the {players} seats")
    if len(set(stakes)) > 1 and rules.stake_mode is not StakeMode.SEAT:
        raise ValueError(
            f"one stake for the table under stake_mode = table ({rules.name}); seat stakes "
            "need stake_mode = seat"
        )
    if len(stakes) == 1:
        return (stakes[0],) * players
    return tuple(stakes)


def hand_stakes(rules: HouseRules, table_stake: int, stakes: Sequence[int]) -> tuple[int, ...]:
    """The stakes a hand is dealt with: the table's one, or each seat's under stake_mode seat."""
    if rules.stake_mode is StakeMode.TABLE:
        return (table_stake,)
    return tuple(stakes)


# -- starting ------------------------------------------------------------------------------------


def check_can_start(taken: int) -> None:
    """A session is started with at least two players, or SessionError."""
    if taken < MIN_PLAYERS:
        raise SessionError(NOT_ENOUGH_PLAYERS, f"a session needs at least {MIN_PLAYERS} players")


def starts_itself(taken: int, seats: int) -> bool:
    """A full table starts its session without waiting to be told."""
    return taken == seats and taken >= MIN_PLAYERS


def renumbered(taken: Sequence[bool], creator: int | None) -> tuple[tuple[int, ...], int | None]:
    """As a session starts, its empty seats go and the others are numbered again in order
    (`taken[n]`: seat n is taken): the old numbers of the seats kept, in their new order, and
    the creator's new number (None if the creator has no seat kept)."""
    kept = tuple(number for number, busy in enumerate(taken) if busy)
    return kept, (kept.index(creator) if creator in kept else None)


# -- absent players ------------------------------------------------------------------------------


class Absence(Enum):
    """What becomes of a seat whose player lost the link and did not come back in time."""

    FREED = "freed"  # before the session starts: the seat is given up
    AWAY = "away"  # during the session: played for until its player is back


def past_grace(disconnected_at: float, grace: float, now: float, started: bool) -> Absence | None:
    """A player who lost the link at `disconnected_at` and is not back `grace` seconds later
    gives up a waiting table's seat, or is marked away once the session has `started`; None
    while the grace period runs."""
    if now < disconnected_at + grace:
        return None
    return Absence.AWAY if started else Absence.FREED


def returns_to_bot(seat: SeatRecord, connected: bool, taken_from_bot: bool) -> bool:
    """Whether the seat of a person who took it from a bot during the session
    (`taken_from_bot`) goes back to that bot now: as soon as it would be played for them
    (they left, lost the link, or let a turn run out and are away). Its taker is not waited
    for, as a player who sat down for the session is: the table was playing without them."""
    return seat.kind == SeatKind.HUMAN and taken_from_bot and (seat.away or not connected)


def play_for_now(
    asker: int,
    absent: int,
    statuses: Sequence[SeatStatus],
    here: Sequence[bool],
    names: Sequence[str],
    creator: int | None,
    votes: frozenset[int],
) -> Vote:
    """Seat `asker` asks that seat `absent`, whose player lost the connection, be played for
    now rather than after the grace period. The table's creator decides alone while connected
    in a seat; with no creator here, each connected player has a vote and a majority decides.
    SessionError if the seat is not waiting for its player or the asker may not ask."""
    if not 0 <= absent < len(statuses):
        raise SessionError(NO_SUCH_SEAT, f"this table has seats 0 to {len(statuses) - 1}")
    status = statuses[absent]
    name = names[absent]
    if status is SeatStatus.AWAY:
        raise SessionError(BAD_VALUE, f"{name}'s seat is played for already", "seat")
    if status is not SeatStatus.DISCONNECTED:
        what = {
            SeatStatus.CONNECTED: f"{name} is here",
            SeatStatus.BOT: f"seat {absent} is a bot's",
        }.get(status, f"seat {absent} is empty")
        raise SessionError(
            BAD_VALUE, f"{what}: only a seat whose player lost the connection", "seat"
        )
    creator_here = creator is not None and 0 <= creator < len(here) and here[creator]
    if creator_here:
        if asker != creator:
            assert creator is not None
            raise SessionError(
                NOT_CREATOR,
                f"only the table's creator, {names[creator]}, may have a seat played for now",
            )
        return Vote(True, frozenset({asker}), 1)
    if asker in votes:
        raise SessionError(BAD_VALUE, f"you have voted to play for {name} already", "seat")
    needed = votes_needed(here, absent)
    counted = frozenset(n for n in votes | {asker} if 0 <= n < len(here) and here[n])
    return Vote(len(counted) >= needed, counted, needed)


_INF = float("inf")


def played_for_at(
    seat: SeatRecord,
    connected: bool,
    disconnected_at: float | None,
    *,
    last_change: float,
    turn_started: float,
    bot_pause: float,
    turn_timer: float | None,
    grace: float,
    idle_turn: float | None = None,
) -> float:
    """When the seat to act is played for if it does not act itself: a bot, a player away or
    one never connected since a restart, the bot pause after the last change; a player here,
    when the turn timer runs out, or at a table without one, when the turn has been left
    `idle_turn` seconds (the server's limit; None or 0: never); a player who lost the link,
    when that or the grace period runs out, whichever comes first. The table's own turn
    timer is never shortened nor lengthened by `idle_turn`."""
    if seat.kind == SeatKind.BOT or seat.away or (not connected and disconnected_at is None):
        return last_change + bot_pause
    due = _INF
    if turn_timer:
        due = turn_started + turn_timer
    elif idle_turn:
        due = turn_started + idle_turn
    if not connected and disconnected_at is not None:
        due = min(due, disconnected_at + grace)
    return due


# -- who deals -----------------------------------------------------------------------------------


def first_dealer(
    players: int, rng: random.Random, fixed: int | None = None
) -> tuple[int, Cut | None]:
    """The first hand's dealer: a fixed one if it is a seat, else by the cut (returned too)."""
    if fixed is not None and fixed < players:
        return fixed, None
    cut = cut_for_deal(players, rng)
    return cut.dealer, cut


def next_dealer(dealer: int, players: int) -> int:
    """The deal passes to the left after each hand."""
    return (dealer + 1) % players


def dealer_of(first: int, hand: int, players: int) -> int:
    """Who deals hand number `hand` (the first is 0) of a session whose first dealer is
    `first`: the deal having passed left after each hand before it."""
    return (first + hand) % players


# -- ending --------------------------------------------------------------------------------------


def session_over(
    played: int,
    started: float | None,
    now: float,
    hands: int | None = None,
    minutes: float | None = None,
) -> str | None:
    """Why a session ends once `played` hands have been settled (`hands`: the limit in hands;
    `minutes`: the limit in time from `started`, wall-clock seconds like `now`), else None."""
    if hands is not None and played >= hands:
        return "hands"
    if minutes is not None and started is not None and now - started >= minutes * 60:
        return "minutes"
    return None


def without_last_action(hand: Hand) -> Hand:
    """The hand as it was before its last action: what a table goes back to when that action
    could not be saved."""
    record = hand.record()
    return replace(record, actions=record.actions[:-1]).replay()


# -- a session -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Deal:
    """The next hand to deal: its number (from 1), its dealer, and the cut if there was one."""

    number: int
    dealer: int
    cut: Cut | None


@dataclass(frozen=True, slots=True)
class Settled:
    """A hand's settlement in the session's terms, worked out before it is saved and applied:
    who paid whom by name, the balances after it, the hands played, and why the session ends
    with it (None if it goes on)."""

    settlement: Settlement
    names: tuple[str, ...]
    payments: Payments
    balances: dict[str, int]
    played: int
    next_multiplier: int
    over: str | None


@dataclass(slots=True)
class Session:
    """One table's session: its limits, who dealt last, the multiplier for the next hand, the
    ledger, and since when none of its players has been here. Work out a change (`next_deal`,
    `settle`), save it, then apply it (`dealt`, `settled`): a change that cannot be saved is
    simply not applied."""

    rules: HouseRules
    stake: int = 1
    hands: int | None = None
    minutes: float | None = None
    fixed_dealer: int | None = None
    ledger: Ledger = field(default_factory=Ledger)
    started: float | None = None  # wall-clock seconds
    hands_played: int = 0
    hand_number: int = 0
    dealer: int | None = None
    multiplier: int = 1
    # Since when (any clock, the caller's) no player of the session has been here.
    deserted_since: float | None = None
    # Since when (the same clock) nobody has sat at the table waiting for its session.
    unseated_since: float | None = None

    def start(self, names: Sequence[str], now: float) -> None:
        """The session starts at `now` (wall-clock seconds) with these players."""
        self.started = now
        for name in names:
            self.ledger.join(name)

    def hand_stakes(self, stakes: Sequence[int]) -> tuple[int, ...]:
        return hand_stakes(self.rules, self.stake, stakes)

    def next_deal(
        self,
        players: int,
        cut_rng: Callable[[], random.Random],
        cutter: Callable[[int], Cut] | None = None,
    ) -> Deal:
        """The next hand: the first dealt by a fixed dealer or the cut (by `cutter`, given the
        players, if given: a deal anyone can check; else from the generator `cut_rng` gives,
        asked for only for the first hand), every later one by the seat to the left of the last
        dealer."""
        if self.dealer is not None:
            return Deal(self.hand_number + 1, next_dealer(self.dealer, players), None)
        fixed = self.fixed_dealer
        if cutter is not None and (fixed is None or fixed >= players):
            cut = cutter(players)
            return Deal(self.hand_number + 1, cut.dealer, cut)
        dealer, cut_made = first_dealer(players, cut_rng(), fixed)
        return Deal(self.hand_number + 1, dealer, cut_made)

    def dealt(self, deal: Deal) -> None:
        self.hand_number = deal.number
        self.dealer = deal.dealer

    def settle(self, settlement: Settlement, names: Sequence[str], now: float) -> Settled:
        """What the hand's settlement does to the session, at `now` (wall-clock seconds)."""
        payments = self.ledger.payments(settlement, names)
        played = self.hands_played + 1
        over = session_over(played, self.started, now, self.hands, self.minutes)
        return Settled(
            settlement,
            tuple(names),
            payments,
            self.ledger.balances_after(payments, names),
            played,
            settlement.next_multiplier,
            over,
        )

    def settled(self, settled: Settled, keep: int = 0) -> None:
        """Apply a settlement: into the ledger (keeping its newest `keep` hands, all if 0),
        one more hand played, and the multiplier it leaves for the next."""
        self.ledger.record(settled.settlement, settled.names)
        self.ledger.keep_newest(keep)
        self.hands_played = settled.played
        self.multiplier = settled.next_multiplier

    def players_seen(self, here: bool, now: float) -> None:
        """Whether any of the session's players is here at `now`: a session its players have
        all left is abandoned after a while (`abandoned_at`)."""
        if here:
            self.deserted_since = None
        elif self.deserted_since is None:
            self.deserted_since = now

    def abandoned_at(self, after: float) -> float | None:
        """When the session ends for want of players, `after` seconds since the last left;
        None while one is here."""
        if self.deserted_since is None:
            return None
        return self.deserted_since + after

    def seated_seen(self, people: bool, now: float) -> None:
        """Whether a person (not a bot) sits at the table waiting for its session, at `now`:
        a table nobody sits down at closes after a while (`unseated_closes_at`)."""
        if people:
            self.unseated_since = None
        elif self.unseated_since is None:
            self.unseated_since = now

    def unseated_closes_at(self, grace: float) -> float | None:
        """When a waiting table nobody sat down at is closed, `grace` seconds after it was
        first seen so; None while a person sits at it."""
        if self.unseated_since is None:
            return None
        return self.unseated_since + grace

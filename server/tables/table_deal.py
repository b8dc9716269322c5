"""A table's round of values before each deal (PROTOCOL.md, "A deal anyone can check"): the
server's secret drawn and committed to, the players' values taken until the deal (or a short
wait), and the seal the hand is dealt from, revealed when the hand is over. The shuffle and the
check are the core's (tonk.shared.game.fairdeal); the secret is drawn here, from the system."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field

from tonk.shared.game.fairdeal import SECRET_BYTES, Seal, SealError, commitment_of, read_hex
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import DealCommit, DealReveal

from ..errors import RequestError


@dataclass(slots=True)
class ValueRound:
    """The values asked for the deal of hand `hand`: the secret (hex), the values given by
    seat, the seats waited for, and when (loop time) the deal goes on without the rest. A
    round for a test deck (`dev`) has no secret and takes no values."""

    hand: int
    secret: str | None
    waited: frozenset[int]
    closes: float
    values: dict[int, str] = field(default_factory=dict)

    @property
    def dev(self) -> bool:
        return self.secret is None

    def commit(self, table: int, now: float) -> DealCommit:
        """The round's `deal_commit`, saying how long it waits from `now`."""
        commitment = None if self.secret is None else commitment_of(bytes.fromhex(self.secret))
        wait = 0.0 if self.dev else round(max(0.0, self.closes - now), 3)
        return DealCommit(table, self.hand, commitment, wait, self.dev)

    def complete(self) -> bool:
        return self.waited <= self.values.keys()


def open_round(hand: int, waited: frozenset[int], now: float, wait: float, dev: bool) -> ValueRound:
    """A round for hand `hand`, its secret drawn from the system (none for a test deck),
    waiting for the seats `waited` until `wait` seconds from `now`."""
    if dev:
        return ValueRound(hand, None, frozenset(), now)
    return ValueRound(hand, secrets.token_bytes(SECRET_BYTES).hex(), waited, now + wait)


def take_value(round_: ValueRound | None, dealt: int, seat: int, hand: int, value: str) -> None:
    """Seat `seat`'s value for hand `hand` into the round (`dealt`: the hand last dealt), in
    place of one it gave before (a client that took its seat back cannot know whether its
    first value came; the seat's latest before the deal counts, and is as sound: nobody knows
    the secret yet); RequestError if it cannot be taken, and nothing changes."""
    if round_ is None or round_.hand != hand or round_.dev:
        if hand <= dealt:
            why = f"hand {hand} was dealt before your value came: it was not used"
        elif round_ is not None and round_.dev:
            why = f"hand {hand} is dealt from a test deck: it takes no values"
        else:
            why = f"no deal of hand {hand} is waiting for values"
        raise RequestError(p.NO_HAND, why, "hand")
    try:
        read_hex(value)
    except SealError as exc:
        raise RequestError(p.BAD_VALUE, f"value: {exc}", "value") from None
    round_.values[seat] = value


def seal_of(round_: ValueRound, table: int) -> Seal:
    """The seal the hand is dealt from: the round's secret and every value it took."""
    assert round_.secret is not None
    return Seal(table, round_.hand, round_.secret, tuple(sorted(round_.values.items())))


def reveal_of(seal: Seal) -> DealReveal:
    return DealReveal(seal.table, seal.hand, seal.secret, seal.values)

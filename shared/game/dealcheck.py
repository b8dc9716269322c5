"""A deal anyone can check, played through the hand engine (PROTOCOL.md, "A deal anyone can
check"): the cut drawn from a deal's seed, and the check a client makes of a hand once its
secret is revealed. The hashing and the shuffle are `fairdeal`'s."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from . import actions as a
from .actions import Action, Event, IllegalAction
from .cards import Card
from .fairdeal import (
    KeyedStream,
    SealError,
    commitment_of,
    deal_seed,
    deck_of,
    keyed_shuffle,
    read_hex,
)
from .hand import Cut, Hand, cut_from
from .rules import HouseRules
from .settlement import Settlement


def cut_of(seed: bytes, players: int) -> Cut:
    """The cut for the first dealer: each round a fresh deck shuffled from the stream labelled
    `cut` (one stream for every round), its first cards to the seats cutting, lowest seat first."""
    stream = KeyedStream(seed, "cut")
    return cut_from(players, lambda: keyed_shuffle(stream))


# -- a client's side: the check once the secret is revealed ----------------------------------


def actions_of(events: Sequence[Event]) -> list[Action]:
    """The moves a hand's events tell of, as every seat sees them (a draw from the stock, its
    card hidden, is still a draw; running the stock out is a draw from an empty stock)."""
    out: list[Action] = []
    for event in events:
        seat = event.seat
        if seat is None:
            continue
        kind = event.kind
        if kind == "drop":
            out.append(a.Drop(seat))
        elif kind in ("draw_stock", "stock_out"):
            out.append(a.DrawStock(seat))
        elif kind == "take_discard":
            out.append(a.TakeDiscard(seat))
        elif kind == "spread":
            out.append(a.LaySpread(seat, event.cards))
        elif kind == "hit" and event.cards and event.spread is not None:
            out.append(a.Hit(seat, event.cards[0], event.spread))
        elif kind == "discard" and event.cards:
            out.append(a.Discard(seat, event.cards[0]))
    return out


@dataclass(frozen=True, slots=True)
class Shown:
    """What a client was shown of one hand, to check its deal by: the table and hand, the
    commitment sent before the deal, the hand's rules and seats as its view gave them, the
    seat it saw from (None: watching), every event of the hand as sent to it, the settlement,
    and the cut if one was sent for it (its rounds as card texts, and the dealer)."""

    table: int
    hand: int
    commitment: str
    rules: HouseRules
    players: int
    dealer: int
    stakes: tuple[int, ...]
    multiplier: int
    seat: int | None
    events: tuple[Event, ...]
    settlement: Settlement | None = None
    cut: tuple[tuple[tuple[str | None, ...], ...], int] | None = None


def check_deal(
    shown: Shown, secret: str, values: Mapping[int, str], own: str | None = None
) -> str | None:
    """Check a hand's deal once its secret is revealed, from what was shown (None: it holds;
    else what is wrong, in words): the secret is the one committed to; `own`, the value this
    client sent and was not told came too late, is among the values used; the deck drawn from
    the secret and the values, played with the moves the events tell of, gives every event
    this client was sent, and the settlement; the cut drawn from them is the cut shown."""
    try:
        key = read_hex(secret, "secret")
        for value in values.values():
            read_hex(value)
    except SealError as exc:
        return f"the reveal cannot be read: {exc}"
    if commitment_of(key) != shown.commitment:
        return "the secret revealed is not the one committed to before the deal"
    if own is not None and shown.seat is not None and values.get(shown.seat) != own:
        return "your value was not used, though it came before the deal"
    seed = deal_seed(key, shown.table, shown.hand, values)
    if shown.cut is not None:
        rounds, dealer = shown.cut
        cut = cut_of(seed, shown.players)
        drawn = tuple(tuple(None if c is None else str(c) for c in r) for r in cut.rounds)
        if drawn != rounds or cut.dealer != dealer:
            return "the cut shown is not the one drawn from the secret and the values"
    return _replay_problem(shown, deck_of(seed))


def _replay_problem(shown: Shown, deck: tuple[Card, ...]) -> str | None:
    try:
        hand = Hand(
            shown.rules,
            shown.players,
            shown.dealer,
            shown.stakes,
            deck=deck,
            multiplier=shown.multiplier,
        )
        for action in actions_of(shown.events):
            hand.apply(action)
    except (IllegalAction, ValueError) as exc:
        return f"the moves shown cannot be played from the deck drawn: {exc}"
    drawn = hand.events_for(shown.seat)
    for index, (seen, made) in enumerate(zip(shown.events, drawn, strict=False)):
        if seen != made:
            return f"event {index + 1} of the hand is not what the deck drawn deals"
    if len(drawn) != len(shown.events):
        return "the hand shown is not as long as the one the deck drawn plays"
    if shown.settlement is not None and hand.settlement != shown.settlement:
        return "the hands shown at the end are not the ones the deck drawn deals"
    return None

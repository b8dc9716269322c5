"""What one seat (or a spectator) may see of a hand, and the legal actions derived from it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from .actions import (
    Action,
    DrawStock,
    Drop,
    Hit,
    LaySpread,
    TakeDiscard,
    writable_subclass,
)
from .actions import Discard as DiscardAction
from .cards import Card, format_cards, parse_card, parse_cards
from .rules import HouseRules
from .settlement import Settlement
from .spreads import Spread, SpreadKind, can_hit, find_spreads, spread_kind


class Phase(Enum):
    START = "start"  # the seat to act may drop, draw from the stock or take the top discard
    PLAY = "play"  # it has drawn: it may spread, hit, and must discard
    ENDED = "ended"


# The phases under plain module names, for the checks made several times an action. In CPython
# 3.11 every read of a member off an Enum class (`Phase.START`) goes through the slow lookup
# hook EnumType's __getattr__ installs: that way the checks cost 8% of an easy hand.
_START, _PLAY, _ENDED = Phase.START, Phase.PLAY, Phase.ENDED


@dataclass(frozen=True, slots=True)
class SeatView:
    """Exactly what `seat` may see; `seat` is None for a spectator, who sees no hand.

    Nothing here is hidden information: the stock and the discards under the top card are
    only counted, other hands only counted until the settlement reveals them.
    """

    seat: int | None
    rules: HouseRules
    players: int
    dealer: int
    turn: int
    phase: Phase
    hand: tuple[Card, ...]
    card_counts: tuple[int, ...]
    spreads: tuple[Spread, ...]
    discard_top: Card | None
    discard_size: int
    stock_size: int
    hit_locks: tuple[int, ...]
    stakes: tuple[int, ...]
    multiplier: int
    taken_discard: Card | None
    settlement: Settlement | None
    event_count: int

    @property
    def my_turn(self) -> bool:
        return self.seat is not None and self.seat == self.turn and self.phase is not _ENDED

    def legal(self) -> LegalActions:
        """The actions this seat may take now (none for a spectator or out of turn)."""
        if self.seat is None or self.seat != self.turn or self.phase is _ENDED:
            return NO_ACTIONS  # (my_turn spelt out: a bot asks on every action)
        return legal_actions(
            self.rules,
            self.phase,
            self.hand,
            self.spreads,
            self.discard_top,
            self.hit_locks[self.turn],
            self.taken_discard,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "rules": self.rules.to_wire(),
            "players": self.players,
            "dealer": self.dealer,
            "turn": self.turn,
            "phase": self.phase.value,
            "hand": format_cards(self.hand),
            "card_counts": list(self.card_counts),
            "spreads": [spread_to_dict(s) for s in self.spreads],
            "discard_top": None if self.discard_top is None else str(self.discard_top),
            "discard_size": self.discard_size,
            "stock_size": self.stock_size,
            "hit_locks": list(self.hit_locks),
            "stakes": list(self.stakes),
            "multiplier": self.multiplier,
            "taken_discard": None if self.taken_discard is None else str(self.taken_discard),
            "settlement": None if self.settlement is None else self.settlement.to_dict(),
            "event_count": self.event_count,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], rules: HouseRules | None = None) -> SeatView:
        """Read a view back; `rules`, when the caller has read this view's rules already (they
        are the same in every view of a table), saves reading them again."""
        return cls(
            seat=data["seat"],
            rules=HouseRules.from_dict(data["rules"]) if rules is None else rules,
            players=data["players"],
            dealer=data["dealer"],
            turn=data["turn"],
            phase=Phase(data["phase"]),
            hand=parse_cards(data["hand"]),
            card_counts=tuple(data["card_counts"]),
            spreads=tuple(spread_from_dict(s) for s in data["spreads"]),
            discard_top=None if data["discard_top"] is None else parse_card(data["discard_top"]),
            discard_size=data["discard_size"],
            stock_size=data["stock_size"],
            hit_locks=tuple(data["hit_locks"]),
            stakes=tuple(data["stakes"]),
            multiplier=data["multiplier"],
            taken_discard=None
            if data["taken_discard"] is None
            else parse_card(data["taken_discard"]),
            settlement=None
            if data["settlement"] is None
            else Settlement.from_dict(data["settlement"]),
            event_count=data["event_count"],
        )


def spread_to_dict(spread: Spread) -> dict[str, Any]:
    return {
        "id": spread.id,
        "owner": spread.owner,
        "kind": spread.kind.value,
        "cards": format_cards(spread.cards),
        "hits": [[str(card), seat] for card, seat in spread.hits],
    }


def spread_from_dict(data: dict[str, Any]) -> Spread:
    return Spread(
        id=data["id"],
        owner=data["owner"],
        kind=SpreadKind(data["kind"]),
        cards=parse_cards(data["cards"]),
        hits=tuple((parse_card(card), seat) for card, seat in data["hits"]),
    )


@dataclass(frozen=True, slots=True)
class LegalActions:
    """Every action open to the seat to act: the client greys out keys with it, bots choose
    from it, and the hand accepts exactly these."""

    drop: bool = False
    draw_stock: bool = False
    take_discard: bool = False
    spreads: tuple[tuple[Card, ...], ...] = ()
    hits: tuple[tuple[Card, int], ...] = ()
    discards: tuple[Card, ...] = ()

    def kinds(self) -> frozenset[str]:
        """The kinds of action open now: `drop`, `draw_stock`, `take_discard`, `spread`, ..."""
        found = set()
        for kind, open_ in (
            ("drop", self.drop),
            ("draw_stock", self.draw_stock),
            ("take_discard", self.take_discard),
            ("spread", self.spreads),
            ("hit", self.hits),
            ("discard", self.discards),
        ):
            if open_:
                found.add(kind)
        return frozenset(found)

    def actions(self, seat: int) -> list[Action]:
        """Every legal action as a value."""
        out: list[Action] = []
        if self.drop:
            out.append(Drop(seat))
        if self.draw_stock:
            out.append(DrawStock(seat))
        if self.take_discard:
            out.append(TakeDiscard(seat))
        out.extend(LaySpread(seat, cards) for cards in self.spreads)
        out.extend(Hit(seat, card, spread) for card, spread in self.hits)
        out.extend(DiscardAction(seat, card) for card in self.discards)
        return out


NO_ACTIONS = LegalActions()
_WritableLegalActions = writable_subclass(LegalActions)
# The four possible answers at the start of a turn, built once (LegalActions is a frozen value).
_START_ACTIONS = {
    (drop, take): LegalActions(drop=drop, draw_stock=True, take_discard=take)
    for drop in (False, True)
    for take in (False, True)
}


def usable(card: Card, hand: Sequence[Card], spreads: Sequence[Spread], rules: HouseRules) -> bool:
    """Whether `card` (held in `hand`) can still go into a new spread or onto one on the table
    this turn: at once, or after other spreads and hits open a way (the 7c goes onto 3c 4c 5c
    once the 6c has been hit there)."""
    if any(can_hit(spread, card, rules) for spread in spreads):
        return True
    found = find_spreads(hand, rules)
    if any(card in cards for cards in found):
        return True
    # No direct use yet: lay or extend a run of the card's suit (nothing else can open a way
    # for it) and look again. Every such move shortens the hand, so this ends.
    suit = card.suit
    for cards in found:
        if cards[0].rank != cards[1].rank and cards[0].suit is suit:  # a run of that suit
            rest = [c for c in hand if c not in cards]
            if usable(card, rest, [*spreads, Spread(-1, 0, SpreadKind.RUN, cards)], rules):
                return True
    for other in hand:
        if other == card or other.suit is not suit:
            continue
        for i, spread in enumerate(spreads):
            if spread.kind is SpreadKind.RUN and can_hit(spread, other, rules):
                after = list(spreads)
                after[i] = spread.with_hit(other, 0, rules.ace_high_runs)
                if usable(card, [c for c in hand if c != other], after, rules):
                    return True
    return False


def can_finish_turn(
    hand: Sequence[Card], spreads: Sequence[Spread], taken: Card | None, rules: HouseRules
) -> bool:
    """Whether a seat in the PLAY phase holding `hand` can still end its turn legally, given the
    card it took from the pile (`discard_must_use`, `no_rediscard`). Moves that would strand a
    seat with no way to finish are refused."""
    if not hand or taken is None or taken not in hand:
        return True
    if rules.discard_must_use:
        return usable(taken, hand, spreads, rules)
    if rules.no_rediscard and len(hand) == 1:
        return any(can_hit(spread, taken, rules) for spread in spreads)
    return True


def move_leaves_turn_finishable(
    rules: HouseRules,
    hand: Sequence[Card],
    spreads: Sequence[Spread],
    taken: Card | None,
    cards: tuple[Card, ...],
    onto: int | None = None,
) -> bool:
    """Whether the seat can still finish its turn after laying `cards` as a new spread, or
    hitting the one card in `cards` onto spread `onto`."""
    rest = [c for c in hand if c not in cards]
    after: list[Spread] = []
    for spread in spreads:
        after.append(
            spread.with_hit(cards[0], 0, rules.ace_high_runs) if spread.id == onto else spread
        )
    if onto is None:
        kind = spread_kind(cards, rules)
        assert kind is not None
        after.append(Spread(-1, 0, kind, cards))
    return can_finish_turn(rest, after, taken, rules)


def legal_actions(
    rules: HouseRules,
    phase: Phase,
    hand: tuple[Card, ...],
    spreads: tuple[Spread, ...],
    discard_top: Card | None,
    hit_lock: int,
    taken: Card | None,
) -> LegalActions:
    if phase is _START:
        take = discard_top is not None
        if take and rules.discard_must_use:
            assert discard_top is not None
            take = usable(discard_top, (*hand, discard_top), spreads, rules)
        return _START_ACTIONS[hit_lock == 0, take]
    if phase is not _PLAY:
        return NO_ACTIONS
    restricted = (
        # (the rules first: looking through the hand compares cards, a Python call each)
        taken is not None and (rules.discard_must_use or rules.no_rediscard) and taken in hand
    )
    new_spreads = find_spreads(hand, rules)
    hits: list[tuple[Card, int]] = []
    if spreads:
        # A card can hit a run only of its suit and a book only of its rank: most pairs are
        # turned away before can_hit is called.
        for card in hand:
            suit, rank = card.suit, card.rank
            for spread in spreads:
                first = spread.cards[0]
                if (first.suit is suit or first.rank == rank) and can_hit(spread, card, rules):
                    hits.append((card, spread.id))
    if restricted:
        new_spreads = [
            cards
            for cards in new_spreads
            if move_leaves_turn_finishable(rules, hand, spreads, taken, cards)
        ]
        hits = [
            (card, spread_id)
            for card, spread_id in hits
            if move_leaves_turn_finishable(rules, hand, spreads, taken, (card,), spread_id)
        ]
    if taken is not None and rules.discard_must_use and taken in hand:
        discards: tuple[Card, ...] = ()
    elif taken is not None and rules.no_rediscard:
        discards = tuple(c for c in hand if c != taken)
    else:
        discards = hand
    # Built the quick way (see writable_subclass): asked for after every draw.
    legal: Any = _WritableLegalActions()
    legal.drop = legal.draw_stock = legal.take_discard = False
    legal.spreads = tuple(new_spreads)
    legal.hits = tuple(hits)
    legal.discards = discards
    legal.__class__ = LegalActions
    frozen: LegalActions = legal  # (no typing.cast: a call, on every action)
    return frozen

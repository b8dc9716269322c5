"""The rules of a turn: what the seat to act may do, and why not.

Each rule is written once, as a check that refuses an action with a reason a player can read.
The hand refuses actions with these checks (`check`); the legal actions are the moves that
pass them (`legal_actions`: bots choose from them, the client greys its keys with them); and a
client asks them why a greyed key is refused (`view.why_not`), without asking the server.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Protocol

from ..records import record
from .actions import Action, Discard, DrawStock, Drop, Hit, IllegalAction, LaySpread, TakeDiscard
from .cards import Card, format_cards
from .rules import HouseRules
from .spreads import Spread, SpreadKind, can_hit, find_spreads, spread_kind


class Phase(Enum):
    START = "start"  # the seat to act may drop, draw from the stock or take the top discard
    PLAY = "play"  # it has drawn: it may spread, hit, and must discard
    ENDED = "ended"


# The phases under plain module names, for the checks made several times an action. In CPython
# 3.11 every read of a member off an Enum class (`Phase.START`) goes through the slow lookup
# hook EnumType's __getattr__ installs (ten times a plain name's cost).
_START, _PLAY, _ENDED = Phase.START, Phase.PLAY, Phase.ENDED


@record
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
        out.extend(Discard(seat, card) for card in self.discards)
        return out


NO_ACTIONS = LegalActions()
# The four possible answers at the start of a turn, built once (LegalActions is a frozen value).
_START_ACTIONS = {
    (drop, take): LegalActions(drop=drop, draw_stock=True, take_discard=take)
    for drop in (False, True)
    for take in (False, True)
}


# -- the checks: `check` raises the refusal, the others return it (or None) -------------------

_OPENING = (DrawStock, Drop, TakeDiscard)


class TurnState(Protocol):
    """What the checks read of a hand in play: the `Hand` itself, or the acting seat's
    `SeatView` (the checks read only what that seat may see)."""

    @property
    def rules(self) -> HouseRules: ...
    @property
    def players(self) -> int: ...
    @property
    def turn(self) -> int: ...
    @property
    def phase(self) -> Phase: ...
    @property
    def spreads(self) -> Sequence[Spread]: ...
    @property
    def discard_top(self) -> Card | None: ...
    @property
    def hit_locks(self) -> Sequence[int]: ...
    @property
    def taken_discard(self) -> Card | None: ...


def check(state: TurnState, hand: Sequence[Card], action: Action) -> int | SpreadKind:
    """Raise IllegalAction, with the reason, if `action` may not be taken now: whose turn it
    is, the phase of the turn, then the rules of that kind of move. `hand` is the cards of
    the seat to act.

    Otherwise return what the checks found, so that the hand need not work it out again:
    where in `hand` the card of a discard or a hit is, the kind of a spread laid, or -1 for
    a drop or a draw."""
    # (The moves of most turns, a draw and a discard, are checked here; the rarer ones in
    # functions of their own: a call costs less than the larger frame of one function.)
    phase = state.phase
    if phase is _ENDED:
        raise IllegalAction("the hand is over", "hand_over")
    seat = action.seat
    if not 0 <= seat < state.players:
        raise IllegalAction(f"there is no seat {seat}", "bad_seat")
    if seat != state.turn:
        raise IllegalAction("it is not your turn", "not_your_turn")
    if isinstance(action, _OPENING):  # a drop or a draw: the moves that open a turn
        if phase is not _START:
            raise IllegalAction(
                "you have drawn this turn already: spread, hit or discard", "wrong_phase"
            )
        if isinstance(action, DrawStock):
            return -1  # even from an empty stock: that ends the hand
        _raise(
            refuse_drop(state.hit_locks[seat])
            if isinstance(action, Drop)
            else refuse_take_discard(state.rules, hand, state.spreads, state.discard_top)
        )
        return -1
    if phase is not _PLAY:
        raise IllegalAction(
            "draw from the stock or take the top discard first (or drop)", "wrong_phase"
        )
    if isinstance(action, Discard):
        card = action.card
        at = _index(hand, card)
        if at < 0:
            raise IllegalAction(f"you do not hold {card.pretty()}", "not_in_hand")
        if state.taken_discard is not None:  # (most turns: spare the call)
            _raise(refuse_discarding_with_taken(state.rules, hand, state.taken_discard, card))
        return at
    if isinstance(action, LaySpread):
        return _check_spread(state, hand, action)
    if isinstance(action, Hit):
        return _check_hit(state, hand, action)
    raise TypeError(f"not an action: {action!r}")


def _index(hand: Sequence[Card], card: Card) -> int:
    """Where `card` is in `hand`, or -1."""
    try:
        return hand.index(card)
    except ValueError:
        return -1


def _raise(refused: IllegalAction | None) -> None:
    if refused is not None:
        raise refused


def _check_spread(state: TurnState, hand: Sequence[Card], action: LaySpread) -> SpreadKind:
    rules = state.rules
    cards = action.cards
    if len(set(cards)) != len(cards):
        raise IllegalAction("a card appears twice in that spread", "not_a_spread")
    missing = [c for c in cards if c not in hand]
    if missing:
        raise IllegalAction(f"you do not hold {format_cards(missing, False)}", "not_in_hand")
    kind = spread_kind(cards, rules)
    if kind is None:
        raise IllegalAction(
            f"{format_cards(cards, False)} is not a spread: a book is 3 or 4 of a rank, "
            "a run 3 or more in a row in one suit"
            + (" (aces low or high, never K-A-2)" if rules.ace_high_runs else " (aces low)"),
            "not_a_spread",
        )
    taken = state.taken_discard
    if taken is not None:  # (most turns: spare the call)
        _raise(refuse_stranding(rules, hand, state.spreads, taken, cards, None))
    return kind


def _check_hit(state: TurnState, hand: Sequence[Card], action: Hit) -> int:
    rules = state.rules
    card, spread_id = action.card, action.spread
    at = _index(hand, card)
    if at < 0:
        raise IllegalAction(f"you do not hold {card.pretty()}", "not_in_hand")
    spreads = state.spreads
    for spread in spreads:
        if spread.id == spread_id:
            break
    else:
        raise IllegalAction(f"there is no spread {spread_id} on the table", "no_such_spread")
    if not can_hit(spread, card, rules):
        why = (
            "a book of three may not be hit under these rules"
            if spread.kind is SpreadKind.BOOK and not rules.hit_books
            else "it does not extend that spread"
        )
        raise IllegalAction(
            f"{card.pretty()} cannot be hit onto {{owner}} {spread.described}: {why}",
            "cannot_hit",
            owner=spread.owner,
        )
    taken = state.taken_discard
    if taken is not None:  # (most turns: spare the call)
        _raise(refuse_stranding(rules, hand, spreads, taken, (card,), spread_id))
    return at


def refuse_drop(hit_lock: int) -> IllegalAction | None:
    if hit_lock:
        return IllegalAction(
            "your spread was hit: you may not drop this turn (hit and hold)", "hit_locked"
        )
    return None


def refuse_take_discard(
    rules: HouseRules, hand: Sequence[Card], spreads: Sequence[Spread], top: Card | None
) -> IllegalAction | None:
    if top is None:
        return IllegalAction("the discard pile is empty", "empty_pile")
    if rules.discard_must_use and not usable(top, (*hand, top), spreads, rules):
        return IllegalAction(
            f"you may take {top.pretty()} only if you can spread or hit it this turn", "must_use"
        )
    return None


def _taken_card_rules_apply(rules: HouseRules, hand: Sequence[Card], taken: Card | None) -> bool:
    """Whether the rules about a card taken from the pile (`discard_must_use`, `no_rediscard`)
    restrict this turn: one of them is on and the taken card is still held."""
    # (the rules first: looking through the hand compares cards, a Python call each)
    return taken is not None and (rules.discard_must_use or rules.no_rediscard) and taken in hand


def refuse_stranding(
    rules: HouseRules,
    hand: Sequence[Card],
    spreads: Sequence[Spread],
    taken: Card | None,
    cards: tuple[Card, ...],
    onto: int | None,
) -> IllegalAction | None:
    """A spread (`onto` None) or a hit that would leave the seat no legal way to end its turn
    with the card it took from the pile."""
    if not _taken_card_rules_apply(rules, hand, taken) or taken in cards:
        return None
    assert taken is not None
    if move_leaves_turn_finishable(rules, hand, spreads, taken, cards, onto):
        return None
    return IllegalAction(
        f"that would leave you no way to finish your turn with {taken.pretty()}", "must_use"
    )


def refuse_discarding_with_taken(
    rules: HouseRules, hand: Sequence[Card], taken: Card | None, card: Card
) -> IllegalAction | None:
    """`discard_must_use`: no discard while the taken card is held; `no_rediscard`: not the
    taken card itself."""
    if not _taken_card_rules_apply(rules, hand, taken):
        return None
    assert taken is not None
    if rules.discard_must_use:
        return IllegalAction(
            f"you took {taken.pretty()} from the pile: spread it or hit with it first", "must_use"
        )
    if rules.no_rediscard and card == taken:
        return IllegalAction(
            f"you took {taken.pretty()} from the pile this turn: discard another card",
            "no_rediscard",
        )
    return None


# -- the legal actions: the moves that pass the checks ----------------------------------------


def legal_actions(
    rules: HouseRules,
    phase: Phase,
    hand: tuple[Card, ...],
    spreads: tuple[Spread, ...],
    discard_top: Card | None,
    hit_lock: int,
    taken: Card | None,
) -> LegalActions:
    """Every action the seat to act may take. The moves there are (the spreads in the hand,
    the hits that extend a spread, each card to discard) are kept when the checks above pass
    them."""
    if phase is _START:
        drop = refuse_drop(hit_lock) is None
        take = refuse_take_discard(rules, hand, spreads, discard_top) is None
        return _START_ACTIONS[drop, take]
    if phase is not _PLAY:
        return NO_ACTIONS
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
    discards = hand
    # The checks of a card taken from the pile are the only ones a move there is can fail;
    # when they do not apply, every move passes (asked after every draw: skip them then).
    if taken is not None and _taken_card_rules_apply(rules, hand, taken):
        new_spreads = [
            cards
            for cards in new_spreads
            if refuse_stranding(rules, hand, spreads, taken, cards, None) is None
        ]
        hits = [
            (card, spread_id)
            for card, spread_id in hits
            if refuse_stranding(rules, hand, spreads, taken, (card,), spread_id) is None
        ]
        discards = tuple(
            card for card in hand if refuse_discarding_with_taken(rules, hand, taken, card) is None
        )
    return LegalActions(spreads=tuple(new_spreads), hits=tuple(hits), discards=tuple(discards))


# -- looking ahead: can the seat still finish its turn? ---------------------------------------


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

"""The coach: the expert's view of one decision of a seat's, from what that seat had seen at that
moment and nothing more (its events and its view), with how much better the expert's choice
did than the one played over sampled deals of the cards the seat could not see, and how sure
that is (a 95% interval). The answer is an `Advice` (advice.py)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..game.actions import Action, DrawStock, Drop, Event, LaySpread, TakeDiscard
from ..game.hand import HandRecord
from ..game.view import Phase, SeatView
from ..stats import Mean
from ..wire.advice import Advice, Weighed
from .expert import ExpertBot

#: Deals of the unseen cards the coach plays every choice out on, for one decision (the expert
#: at a table samples fewer: it has a turn to play, the coach a question to answer well).
DEALS = 400


class NotADecision(ValueError):
    """The view is not one where its seat has a choice to make."""


def advise(
    events: Sequence[Event],
    view: SeatView,
    played: Action | None,
    rng: random.Random,
    deals: int = DEALS,
) -> Advice:
    """The expert's view of the decision `view` puts to its seat, `events` being every event that
    seat was told in the hand so far (as `Hand.events_for` gives them) and `played` the action
    it took (None: not yet). Only these are read: the answer cannot depend on a card the seat
    could not see."""
    if not view.my_turn:
        raise NotADecision("it is not this seat's turn to choose")
    expert = ExpertBot(rng)
    expert.observe(events)
    best = expert.choose(view)
    if played is not None and _same_move(played, best):
        played = best  # (the same spread, its cards given in another order: one choice)
    options = [best]
    if played is not None and played != best:
        options.append(played)
    if view.phase is Phase.START:  # every way to begin a turn is weighed beside the two
        legal = view.legal()
        seat = view.turn
        for action, allowed in (
            (Drop(seat), legal.drop),
            (DrawStock(seat), legal.draw_stock),
            (TakeDiscard(seat), legal.take_discard),
        ):
            if allowed and action not in options:
                options.append(action)
    means = [Mean() for _ in options]
    outcomes = list(expert.outcomes(view, options, deals))
    for nets in outcomes:
        for mean, net in zip(means, nets, strict=True):
            mean.add(net)
    # The choice recommended is the one these deals rate best (the expert's own, unless
    # another did better on them): never one its own figures put below another.
    top = max(range(len(options)), key=lambda i: (means[i].mean or 0.0, -i))
    best = options[top]
    gain = Mean()
    if played is not None:
        mine = options.index(played)
        for nets in outcomes:
            gain.add(nets[top] - nets[mine])
    interval = gain.ci95() or (0.0, 0.0)
    return Advice(
        best,
        played,
        gain.mean or 0.0,
        interval[0],
        interval[1],
        means[top].n,
        tuple(  # the one recommended first, then the rest as weighed (`played` next)
            Weighed(options[i], means[i].mean or 0.0)
            for i in sorted(range(len(options)), key=lambda i: i != top)
        ),
        view.stakes[view.turn] * view.multiplier,
    )


def _same_move(one: Action, other: Action) -> bool:
    """Whether two actions are one move: equal, or the same cards spread in any order."""
    if isinstance(one, LaySpread) and isinstance(other, LaySpread):
        return one.seat == other.seat and sorted(one.cards) == sorted(other.cards)
    return one == other


def advise_record(record: HandRecord, seat: int, at: int | None, rng: random.Random) -> Advice:
    """The expert's view of `seat`'s decision before action `at` of a recorded hand (None: after
    every action recorded, the decision to make now in a hand in play), with the action it
    took there. The hand is played again up to that point, and only what `seat` was told of
    it goes to `advise`; NotADecision if it was not that seat's choice."""
    actions = record.actions
    if at is None:
        at = len(actions)
    if not 0 <= at <= len(actions):
        raise NotADecision(f"the hand has no step {at}")
    played = actions[at] if at < len(actions) else None
    if played is not None and played.seat != seat:
        raise NotADecision(f"step {at} was not your decision")
    hand = record.deal()
    for action in actions[:at]:
        hand.apply(action)
    return advise(hand.events_for(seat, 0), hand.view(seat), played, rng)

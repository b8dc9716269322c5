"""The coach's answer in words, for the hand replay and the practice table's hint (no Textual
here): what the expert would have done, by how much that did better on average, and how sure
the coach is."""

from __future__ import annotations

from tonk.shared.game.actions import Action, Discard, DrawStock, Drop, Hit, LaySpread, TakeDiscard
from tonk.shared.wire.advice import Advice

from .render import CardStyle, card_label


def action_words(action: Action, style: CardStyle) -> str:
    """`draw from the stock`, `discard Q♥`, `spread 3♠ 4♠ 5♠`."""
    if isinstance(action, Drop):
        return "drop"
    if isinstance(action, DrawStock):
        return "draw from the stock"
    if isinstance(action, TakeDiscard):
        return "pick up the discard"
    if isinstance(action, LaySpread):
        return "spread " + " ".join(card_label(card, style) for card in action.cards)
    if isinstance(action, Hit):
        return f"hit {card_label(action.card, style)} onto a spread"
    assert isinstance(action, Discard)
    return f"discard {card_label(action.card, style)}"


def _stakes(amount: float, stake: int) -> str:
    value = amount / stake if stake else amount
    return f"{value:+.2f}"


def advice_text(advice: Advice, style: CardStyle) -> str:
    """The answer as a sentence or two: "Here the expert would have dropped: about +0.41 stake
    a hand better on average (95%: +0.12 to +0.70), sure." """
    if advice.deals == 0:
        return (
            "The coach cannot tell: your seat had not seen enough of this hand (it came in "
            "during it) to deal the cards it could not see."
        )
    best = action_words(advice.best, style)
    others = "; ".join(
        f"{action_words(w.action, style)} {_stakes(w.mean, advice.stake)}" for w in advice.weighed
    )
    weighed = f" On average a hand, in stakes: {others}."
    if advice.played is None:
        return f"The expert would {best}.{weighed}"
    if advice.agrees:
        return f"The expert would have done the same: {best}.{weighed}"
    gain = _stakes(advice.gain, advice.stake)
    low, high = _stakes(advice.low, advice.stake), _stakes(advice.high, advice.stake)
    if advice.sure and advice.gain > 0:
        sure = "sure"
    elif advice.sure:
        sure = "sure, and yours did better on these deals"
    else:
        sure = "not sure: either could be better"
    return (
        f"Here the expert would have chosen to {best}: about {gain} stake a hand on average "
        f"against what you did (95%: {low} to {high}), {sure}.{weighed}"
    )

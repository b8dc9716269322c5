"""The store writes its records as the same compact JSON text as json.dumps does."""

from __future__ import annotations

import json
import random

from hypothesis import given
from hypothesis import strategies as hs
from tonk.server import store as st
from tonk.shared.actions import action_to_dict
from tonk.shared.bots import make_bot
from tonk.shared.hand import Hand
from tonk.shared.rules import PRESETS


def compact(data: object) -> str:
    return json.dumps(data, separators=(",", ":"))


def test_the_records_of_a_played_hand_are_written_as_json_dumps_writes_them():
    rules = PRESETS["speno"]
    hand = Hand(rules, 4, 1, (1, 2, 3, 4), rng=random.Random(9))
    bots = [make_bot("easy", random.Random(seat)) for seat in range(4)]
    while not hand.ended:
        action = bots[hand.turn].choose(hand.view(hand.turn))
        start = len(hand.events)
        hand.apply(action)
        for seat, bot in enumerate(bots):
            bot.observe(hand.events_for(seat, start))
        assert st.dumps(action_to_dict(action)) == compact(action_to_dict(action))
    assert hand.settlement is not None
    for record in (hand.record().to_dict(), hand.settlement.to_dict(), ["Ada", "Bix (bot)"]):
        assert st.dumps(record) == compact(record)
        assert json.loads(st.dumps(record)) == record


json_values = hs.recursive(
    hs.none() | hs.booleans() | hs.integers() | hs.floats() | hs.text(),
    lambda inner: hs.lists(inner, max_size=4) | hs.dictionaries(hs.text(), inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_any_plain_value_is_written_as_json_dumps_writes_it(value):
    assert st.dumps(value) == compact(value)

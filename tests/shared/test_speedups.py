"""The quick constructors (shared/_speedups.py) take exactly their class's fields and make the
very values the class does."""

from __future__ import annotations

import dataclasses
import inspect
import random
from collections.abc import Callable
from typing import Any

import pytest
from tonk.shared._speedups import new_event, new_seat_view
from tonk.shared.bots.bots import make_bot
from tonk.shared.game.actions import Event
from tonk.shared.game.hand import Hand
from tonk.shared.game.rules import PRESETS
from tonk.shared.game.view import SeatView
from tonk.shared.records import record_defaults, record_fields


def fields_of(cls: type[Any]) -> list[tuple[str, object]]:
    """The class's fields, each with its default (`inspect.Parameter.empty` without one)."""
    if dataclasses.is_dataclass(cls):
        return [
            (
                each.name,
                inspect.Parameter.empty if each.default is dataclasses.MISSING else each.default,
            )
            for each in dataclasses.fields(cls)
        ]
    defaults = record_defaults(cls)
    return [(name, defaults.get(name, inspect.Parameter.empty)) for name in record_fields(cls)]


@pytest.mark.parametrize(("made_by", "cls"), [(new_seat_view, SeatView), (new_event, Event)])
def test_a_quick_constructor_takes_its_classs_fields_in_order_with_their_defaults(
    made_by: Callable[..., object], cls: type[Any]
) -> None:
    parameters = inspect.signature(made_by).parameters.values()
    assert [(each.name, each.default) for each in parameters] == fields_of(cls)
    assert inspect.signature(made_by).return_annotation == cls.__name__


def test_views_and_events_made_the_quick_way_are_the_values_their_classes_make() -> None:
    rng = random.Random(23)
    checked = 0
    for number in range(20):
        players = 2 + number % 3
        hand = Hand(PRESETS["classic"], players, number % players, (1,) * players, rng=rng)
        bots = [make_bot("easy", random.Random(rng.getrandbits(32))) for _ in range(players)]
        while not hand.ended:
            for seat in [None, *range(players)]:
                view = hand.view(seat)
                fields = {name: getattr(view, name) for name, _ in fields_of(SeatView)}
                assert type(view) is SeatView and view == SeatView(**fields)
                assert hash(view.hand) == hash(SeatView(**fields).hand)
            start = len(hand.events)
            hand.apply(bots[hand.turn].choose(hand.view(hand.turn)))
            for event in hand.events[start:]:
                fields = {name: getattr(event, name) for name, _ in fields_of(Event)}
                assert type(event) is Event and event == Event(**fields)
                assert hash(event) == hash(Event(**fields))
                checked += 1
    assert checked > 200
    with pytest.raises(dataclasses.FrozenInstanceError):
        new_event("drop", 0).seat = 1  # type: ignore[misc]


def test_the_phases_under_module_names_are_the_phases_themselves() -> None:
    """The one trick of names outside the fence (see `_speedups`): each module name is the very
    member it stands for, so `phase is _START` reads as `phase is Phase.START`."""
    from tonk.shared.game import hand, legality, view

    for module in (legality, hand):
        assert tuple(legality.Phase) == (module._START, module._PLAY, module._ENDED)
        assert module._START is legality.Phase.START and module._ENDED is legality.Phase.ENDED
    assert view._ENDED is legality.Phase.ENDED

"""What one seat may see: its own hand, the others' card counts, the spreads with owners and
hitters, the top discard only, the stock's size; at the end, only the hands the rules reveal.
Events hide another seat's private cards. Views round-trip through plain data."""

from __future__ import annotations

import json
import random
import re
from dataclasses import FrozenInstanceError, fields
from typing import Any

import pytest
from rulekit import card, cards, deal, play, random_action, rules_of
from tonk.shared.game.actions import Discard, DrawStock, Drop, Event, Hit, LaySpread, TakeDiscard
from tonk.shared.game.cards import Card, parse_card
from tonk.shared.game.hand import Hand
from tonk.shared.game.view import LegalActions, Phase, SeatView
from tonk.shared.records import record_fields

CARD_TOKEN = re.compile(r"\b(?:10|[2-9AJQKT])[shdc]\b")


def example_two_after_elmos_hit() -> Hand:
    """The second worked example, up to Elmo's discard: spreads by two owners, one card hit."""
    hand = deal(
        "pagat",
        ["Qc 10s 9s 6h 5h", "Jc 10c 4s 4c As", "8s 7h 5d 2d Ad"],
        up="Qd",
        stock="Js 10h 9h",
    )
    play(
        hand,
        [
            DrawStock(0),
            LaySpread(0, cards("Js 10s 9s")),
            Discard(0, card("Qc")),
            TakeDiscard(1),
            LaySpread(1, cards("Qc Jc 10c")),
            Discard(1, card("4s")),
            DrawStock(2),
            Hit(2, card("8s"), 1),
            Discard(2, card("10h")),
        ],
    )
    return hand


def cards_in(data: Any) -> set[Card]:
    """Every card named anywhere in a view's plain data."""
    return {parse_card(t) for t in CARD_TOKEN.findall(json.dumps(data))}


def visible_to(view: SeatView) -> set[Card]:
    seen = set(view.hand)
    for spread in view.spreads:
        seen |= set(spread.cards)
    for extra in (view.discard_top, view.taken_discard):
        if extra is not None:
            seen.add(extra)
    if view.settlement is not None:
        for hand in view.settlement.revealed:
            seen |= set(hand or ())
    return seen


def test_a_seat_sees_its_own_hand_and_only_counts_of_the_others() -> None:
    hand = example_two_after_elmos_hit()
    view = hand.view(1)
    assert set(view.hand) == set(cards("4c As"))
    assert view.card_counts == (2, 2, 4)
    assert view.discard_top == card("10h")
    assert view.discard_size == 3  # Qd 4s 10h: counted; only the top is shown
    assert view.stock_size == 52 - 16 - 2
    assert view.turn == 0 and view.dealer == 2 and view.phase is Phase.START
    assert not view.my_turn
    assert hand.view(0).my_turn


def test_a_seat_view_names_no_card_it_may_not_see() -> None:
    hand = example_two_after_elmos_hit()
    for seat in (0, 1, 2, None):
        view = hand.view(seat)
        named = cards_in(view.to_dict())
        assert named == visible_to(view)
        others = {c for s, h in enumerate(hand.hands) if s != seat for c in h}
        assert not named & others
        assert not named & set(hand.stock)
        assert not named & set(hand.discards[:-1]), "only the top discard is seen"


def test_spreads_show_their_owners_and_who_hit_what() -> None:
    view = example_two_after_elmos_hit().view(None)
    run, book = view.spreads
    assert (run.owner, run.cards, run.hits) == (0, cards("8s 9s 10s Js"), ((card("8s"), 2),))
    assert (book.owner, book.cards, book.hits) == (1, cards("10c Jc Qc"), ())


def test_a_spectator_sees_no_hand_and_has_no_actions() -> None:
    hand = example_two_after_elmos_hit()
    view = hand.view(None)
    assert view.seat is None
    assert view.hand == ()
    assert view.card_counts == (2, 2, 4)
    assert not view.my_turn
    assert view.legal().kinds() == frozenset()


def test_a_seat_view_offers_exactly_the_hands_legal_actions() -> None:
    hand = example_two_after_elmos_hit()
    for seat in range(3):
        assert hand.view(seat).legal() == hand.legal_actions(seat)
    hand.apply(DrawStock(0))
    assert hand.view(0).legal() == hand.legal_actions(0)
    assert hand.view(0).legal().discards


def test_a_seat_sees_the_hit_locks() -> None:
    hand = deal(
        rules_of("pagat", hit_lock=2),
        ["5c 6c 7c Ks Qd", "8c 2h 3d 9s Jh", "Js Jd 4s 4h 10d"],
        up="2c",
        stock="Qh Kd",
    )
    play(hand, [DrawStock(0), LaySpread(0, cards("5c 6c 7c")), Discard(0, card("Qh"))])
    play(hand, [DrawStock(1), Hit(1, card("8c"), 1)])
    for seat in (0, 1, 2, None):
        assert hand.view(seat).hit_locks == (2, 0, 0)


# -- at the end -----------------------------------------------------------------------------


def test_after_a_drop_every_hand_is_revealed_to_everyone() -> None:
    hand = example_two_after_elmos_hit()
    play(hand, [DrawStock(0), Discard(0, card("9h")), Drop(1)])
    for seat in (0, 1, 2, None):
        view = hand.view(seat)
        assert view.phase is Phase.ENDED
        assert view.settlement is not None
        revealed = view.settlement.revealed
        assert [set(h or ()) for h in revealed] == [set(h) for h in hand.hands]


def test_a_tonk_out_reveals_nobodys_hand() -> None:
    hand = deal(
        "classic",
        ["5c 6c 7c Ks Kd", "8c 2h 3d 9s Jh", "Js Jd 4s 4h 10d"],
        up="2c",
        stock="Kh",
    )
    play(hand, [DrawStock(0), LaySpread(0, cards("5c 6c 7c")), LaySpread(0, cards("Ks Kd Kh"))])
    for seat in (1, 2, None):
        view = hand.view(seat)
        assert view.settlement is not None
        assert view.settlement.revealed == (None, None, None)
        named = cards_in(view.to_dict())
        others = {c for s, h in enumerate(hand.hands) if s != seat for c in h}
        assert not named & others


def test_out_on_a_discard_reveals_nobodys_hand() -> None:
    hand = deal(
        "classic",
        ["5c 6c 7c 8c Qd", "Kc 2h 3d 9s Jh", "Js Jd 4s 4h 10d"],
        up="2c",
        stock="9c",
    )
    play(hand, [DrawStock(0), LaySpread(0, cards("5c 6c 7c 8c 9c")), Discard(0, card("Qd"))])
    view = hand.view(2)
    assert view.settlement is not None
    assert view.settlement.revealed == (None, None, None)
    assert not cards_in(view.to_dict()) & set(hand.hands[1])


def test_a_deal_tonk_reveals_only_the_tonk_hands() -> None:
    hand = deal(
        "classic",
        ["Kc Qc Jc 10c 9c", "Ah 2h 3h 4h 6d", "Ks Qs Js 10s 2s"],  # 49 tonks; 16; 42
        up="7s",
    )
    for seat in (1, 2, None):
        view = hand.view(seat)
        assert view.settlement is not None
        assert view.settlement.revealed[0] == cards("Kc Qc Jc 10c 9c")
        assert view.settlement.revealed[1:] == (None, None)
        named = cards_in(view.to_dict())
        assert set(cards("Kc Qc Jc 10c 9c")) <= named
        hidden = {c for s in (1, 2) if s != seat for c in hand.hands[s]}
        assert not named & hidden


# -- events ---------------------------------------------------------------------------------


def test_events_for_a_seat_hide_the_cards_others_were_dealt_and_drew() -> None:
    hand = example_two_after_elmos_hit()
    for seat in (0, 1, 2, None):
        for event in hand.events_for(seat):
            if event.kind in ("deal", "draw_stock"):
                assert event.private
                if event.seat == seat:
                    assert event.cards
                else:
                    assert event.cards == ()
    goblin = hand.events_for(1)
    assert [e.cards for e in goblin if e.kind == "deal" and e.seat == 1] == [
        cards("Jc 10c 4s 4c As")
    ]
    assert [e.cards for e in goblin if e.kind == "draw_stock"] == [(), ()]
    croaker = hand.events_for(0)
    assert [e.cards for e in croaker if e.kind == "draw_stock"] == [cards("Js"), ()]


def test_public_events_show_their_cards_to_everyone() -> None:
    hand = example_two_after_elmos_hit()
    spectator = hand.events_for(None)
    kinds = [e.kind for e in spectator]
    assert kinds[:4] == ["deal", "deal", "deal", "up_card"]
    assert [e.cards for e in spectator if e.kind == "take_discard"] == [cards("Qc")]
    assert [e.cards for e in spectator if e.kind == "hit"] == [cards("8s")]
    assert [e.cards for e in spectator if e.kind == "discard"] == [
        cards("Qc"),
        cards("4s"),
        cards("10h"),
    ]
    public = set(cards("Qd Qc 4s 10h Js 10s 9s 10c Jc 8s"))  # shown on the table at some time
    assert cards_in([e.to_dict() for e in spectator]) == public


def test_events_for_starts_where_asked() -> None:
    hand = example_two_after_elmos_hit()
    start = len(hand.events)
    events = hand.apply(DrawStock(0))
    assert hand.events_for(0, start) == events
    assert hand.events_for(1, start)[0].cards == ()
    assert hand.view(0).event_count == len(hand.events)


# -- plain data -----------------------------------------------------------------------------


@pytest.mark.parametrize("seat", [0, 1, 2, None])
def test_a_view_round_trips_through_plain_data(seat: int | None) -> None:
    hand = example_two_after_elmos_hit()
    view = hand.view(seat)
    again = SeatView.from_dict(json.loads(json.dumps(view.to_dict())))
    assert again == view
    play(hand, [DrawStock(0), Discard(0, card("9h")), Drop(1)])
    ended = hand.view(seat)
    assert SeatView.from_dict(json.loads(json.dumps(ended.to_dict()))) == ended


def test_a_view_mid_turn_round_trips_with_the_taken_discard() -> None:
    hand = example_two_after_elmos_hit()
    hand.apply(TakeDiscard(0))
    view = hand.view(0)
    assert view.taken_discard == card("10h")
    assert view.phase is Phase.PLAY
    assert SeatView.from_dict(json.loads(json.dumps(view.to_dict()))) == view


def test_a_view_is_a_frozen_seat_view_with_every_field_set() -> None:
    # Hand.view builds it the quick way (shared/_speedups.py): field by field, then made a
    # SeatView.
    hand = example_two_after_elmos_hit()
    for seat in (0, 1, 2, None):
        view = hand.view(seat)
        assert type(view) is SeatView
        assert SeatView(**{f.name: getattr(view, f.name) for f in fields(SeatView)}) == view
        with pytest.raises(FrozenInstanceError):
            view.turn = 1  # type: ignore[misc]


def test_events_and_their_hidden_copies_are_frozen_events_with_every_field_set() -> None:
    # The hand builds events the quick way too.
    hand = example_two_after_elmos_hit()
    hand.apply(DrawStock(0))
    for seat in (0, 1, None):
        for event in hand.events_for(seat):
            assert type(event) is Event
            assert Event(**{name: getattr(event, name) for name in record_fields(Event)}) == event
            with pytest.raises(FrozenInstanceError):
                event.kind = "drop"  # type: ignore[misc]
    assert hand.events[-1].for_seat(1) == Event("draw_stock", 0, (), None, True, None)


def test_legal_actions_after_a_draw_are_frozen_with_every_field_set() -> None:
    hand = example_two_after_elmos_hit()
    hand.apply(DrawStock(0))
    legal = hand.view(0).legal()
    assert type(legal) is LegalActions
    assert (
        LegalActions(**{name: getattr(legal, name) for name in record_fields(LegalActions)})
        == legal
    )
    assert legal.discards and not legal.draw_stock
    with pytest.raises(FrozenInstanceError):
        legal.drop = True  # type: ignore[misc]


def test_a_view_counts_every_seats_cards_as_the_hands_hold_them_after_every_kind_of_move() -> None:
    # Hand keeps the counts as the hands change, rather than counting them for each view.
    rng = random.Random(12)
    kinds: set[str] = set()
    for number in range(150):
        hand = Hand(rules_of("classic"), 3, number % 3, (1,), rng=rng)
        while not hand.ended:
            for seat in (0, 1, 2, None):
                assert hand.view(seat).card_counts == tuple(len(h) for h in hand.hands)
            view = hand.view(hand.turn)
            middle = Hand.position(view, hand.hands, hand.stock, hand.discards)
            assert middle.view(hand.turn).card_counts == view.card_counts
            action = random_action(hand, rng)
            kinds.add(type(action).__name__)
            hand.apply(action)
        assert hand.view(None).card_counts == tuple(len(h) for h in hand.hands)
    assert kinds >= {"DrawStock", "TakeDiscard", "LaySpread", "Hit", "Discard"}

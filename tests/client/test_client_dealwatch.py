"""The client's watch of a table's deals (client/model/dealwatch.py), fed the messages a server
sends for one hand: the value it gives, and what it says once the secret is revealed."""

from __future__ import annotations

import random

from tonk.client.model.dealwatch import CHECKED, DealWatch
from tonk.shared.bots.bots import make_bot
from tonk.shared.game.fairdeal import Seal, commitment_of, deck_of
from tonk.shared.game.hand import Hand
from tonk.shared.game.rules import HouseRules
from tonk.shared.sim.play import play_hand
from tonk.shared.wire import messages as m

SECRET = bytes(range(32))
TABLE, HAND = 3, 5


def dealt(values: dict[int, str], swap: bool = False) -> tuple[Seal, Hand]:
    seal = Seal(TABLE, HAND, SECRET.hex(), tuple(sorted(values.items())))
    deck = list(deck_of(seal.seed()))
    if swap:
        deck[0], deck[1] = deck[1], deck[0]
    hand = Hand(HouseRules(), 2, 1, (1,), deck=deck)
    play_hand(hand, [make_bot("easy", random.Random(seat)) for seat in range(2)])
    return seal, hand


def watched(watch: DealWatch, hand: Hand, seat: int) -> None:
    """The whole hand as the server sends it to `seat` (in one update, as after a resume)."""
    watch.update(m.Update(TABLE, HAND, 0, tuple(hand.events_for(seat)), hand.view(seat), None))


def test_a_value_goes_back_for_a_commitment_once_and_the_deal_checks() -> None:
    watch = DealWatch(lambda n: b"\x07" * n)
    commit = m.DealCommit(TABLE, HAND, commitment_of(SECRET), 1.5, False)
    value = watch.committed(commit, seated=True)
    assert value == "07" * 32
    assert watch.committed(commit, seated=True) is None  # sent again (a resume): once only
    watch.sent(HAND, 41)
    seal, hand = dealt({0: value})
    watched(watch, hand, 0)
    checked = watch.revealed(m.DealReveal(TABLE, HAND, seal.secret, seal.values), TABLE)
    assert (checked.ok, checked.line) == (True, CHECKED)


def test_no_value_for_a_test_deck_a_dealt_hand_or_a_spectator() -> None:
    watch = DealWatch(lambda n: b"\x01" * n)
    assert watch.committed(m.DealCommit(TABLE, 1, None, 0.0, True), seated=True) is None
    assert watch.committed(m.DealCommit(TABLE, 2, "ab" * 32, 0.0, False), seated=True) is None
    assert watch.committed(m.DealCommit(TABLE, 3, "ab" * 32, 1.5, False), seated=False) is None


def test_a_value_left_out_is_loud_unless_the_server_said_it_came_late() -> None:
    commit = m.DealCommit(TABLE, HAND, commitment_of(SECRET), 1.5, False)
    seal, hand = dealt({})  # the server dealt without our value
    reveal = m.DealReveal(TABLE, HAND, seal.secret, seal.values)
    quiet = DealWatch(lambda n: b"\x02" * n)
    quiet.committed(commit, seated=True)
    quiet.sent(HAND, 8)
    watched(quiet, hand, 0)
    assert quiet.refused(8) is True  # no_hand answering the value: it came after the deal
    checked = quiet.revealed(reveal, TABLE)
    assert checked.ok and checked.line == f"{CHECKED} (your value came too late to count)"
    loud = DealWatch(lambda n: b"\x02" * n)
    loud.committed(commit, seated=True)
    loud.sent(HAND, 8)
    watched(loud, hand, 0)
    checked = loud.revealed(reveal, TABLE)
    assert not checked.ok
    assert checked.line == f"Hand {HAND}: the deck did NOT check: your value was not used, " + (
        "though it came before the deal"
    )


def test_a_deck_changed_after_the_commitment_names_the_hand() -> None:
    watch = DealWatch()
    watch.committed(m.DealCommit(TABLE, HAND, commitment_of(SECRET), 1.5, False), seated=False)
    seal, hand = dealt({1: "33" * 32}, swap=True)
    watched(watch, hand, None)  # (a spectator sees no hand, and still catches it)
    checked = watch.revealed(m.DealReveal(TABLE, HAND, seal.secret, seal.values), TABLE)
    assert not checked.ok and checked.line.startswith(f"Hand {HAND}: the deck did NOT check")

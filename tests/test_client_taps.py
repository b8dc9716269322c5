"""The client by taps alone (clicks, as a touch screen sends them through the web door's
terminal): a card, the key bar, the spread chooser and the end of a hand, against a real
server on loopback, dealt from a stacked deck."""

from __future__ import annotations

from pathlib import Path

import pytest
from clientkit import at_my_turn, hand_text, joined_app, screen_shown, table_request, wait_for
from netclient import start_server
from textual.pilot import Pilot
from tonk.client.dialogs import DropModal, EndOfHandModal, HitChooser
from tonk.client.dialogs.confirm import TapHint
from tonk.client.screens import TableScreen
from tonk.client.text.render import CARD_WIDTH
from tonk.client.widgets import HandView, KeyBar
from tonk.shared.game.cards import format_cards, parse_card


async def tap_card(pilot: Pilot[None], hand: HandView, index: int) -> None:
    """A tap on the middle of card `index` (from 0) of the hand."""
    gap = 2 if hand.size.width >= len(hand.cards) * 7 + 2 else 1
    await pilot.click(HandView, offset=(index * (CARD_WIDTH + gap) + 2, 2))


async def tap_key(pilot: Pilot[None], bar: KeyBar, key: str) -> None:
    """A tap on `key` in the key bar, where it is drawn."""
    row, start = next((y, s) for y, s, _, k in bar._spans if k == key)
    await pilot.click(KeyBar, offset=(start, row))


@pytest.mark.slow
async def test_a_hand_played_by_taps(tmp_path: Path) -> None:
    async with start_server(tmp_path, next_hand_delay=600.0) as server:
        app = joined_app(server.port, tmp_path / "state", table=table_request())
        async with at_my_turn(app) as pilot:
            screen = app.table_screen
            hand = screen.query_one(HandView)
            bar = screen.query_one(KeyBar)
            await tap_key(pilot, bar, "d")
            await wait_for(pilot, lambda: "8s" in hand_text(app), "the 8s drawn")
            # A tap on a card puts the cursor on it and selects it; a second tap unselects.
            spades = [i for i, card in enumerate(hand.cards) if card.suit.value == "s"]
            run = [hand.cards[i] for i in spades if hand.cards[i] != parse_card("8s")]
            for card in run:
                await tap_card(pilot, hand, hand.cards.index(card))
                assert hand.card_under_cursor == card
            await tap_card(pilot, hand, hand.cards.index(parse_card("9h")))
            await tap_card(pilot, hand, hand.cards.index(parse_card("9h")))
            assert format_cards(hand.selected_cards()) == "5s 6s 7s"
            await tap_key(pilot, bar, "s")
            await wait_for(pilot, lambda: "5s" not in hand_text(app), "the run spread")
            # The spread chooser by a tap on the spread's line.
            await tap_card(pilot, hand, hand.cards.index(parse_card("8s")))
            await tap_key(pilot, bar, "h")
            await screen_shown(pilot, HitChooser, "the spread chooser")
            await pilot.pause(0.2)  # (laid out)
            await pilot.click("#choices", offset=(4, 0))
            await wait_for(pilot, lambda: "8s" not in hand_text(app), "the 8s hit onto the run")
            # Discard; on the next turn drop, and answer the question by a tap.
            await tap_card(pilot, hand, hand.cards.index(parse_card("9h")))
            await tap_key(pilot, bar, "x")
            await wait_for(pilot, lambda: hand_text(app) == "9d", "the 9h discarded")
            await wait_for(pilot, lambda: screen.check_action("drop", ()) is True, "the turn")
            await tap_key(pilot, bar, "k")
            await screen_shown(pilot, DropModal, "the question")
            await pilot.pause(0.2)  # (laid out)
            await pilot.click(TapHint, offset=(2, 0))  # "k or enter: drop"
            await screen_shown(pilot, EndOfHandModal, "the hand's end")
            # A tap anywhere on the end of the hand goes back to the table.
            await pilot.click(offset=(2, 2))
            await screen_shown(pilot, TableScreen, "the table again")

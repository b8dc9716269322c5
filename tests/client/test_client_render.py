"""How the client draws cards, hands, log lines and settlements, and reads its command line:
plain functions, no terminal."""

from __future__ import annotations

import argparse

import pytest
from tonk.client.cli import build_parser, config_from_args
from tonk.client.recent import parse_address
from tonk.client.text.render import (
    CardStyle,
    card_text,
    ending_line,
    event_line,
    hand_lines,
    payment_lines,
    sparkline,
    spread_line,
)
from tonk.shared.game.actions import Event
from tonk.shared.game.cards import Suit, parse_card, parse_cards
from tonk.shared.game.settlement import Ending, Payment, Settlement
from tonk.shared.game.spreads import Spread, SpreadKind

NAMES = ["You", "Goblin", "Elmo"]


def test_ascii_cards_have_no_suit_symbols_or_box_lines() -> None:
    style = CardStyle(ascii=True)
    lines = hand_lines(parse_cards("10s Qh Ac"), style, cursor=1, selected=frozenset({0}))
    text = "\n".join(line.plain for line in lines)
    assert "10S" in text and "QH" in text and "AC" in text
    assert all(ord(ch) < 128 for ch in text)


def test_suit_symbols_by_default() -> None:
    lines = hand_lines(parse_cards("10s Qh"), CardStyle(), cursor=0, selected=frozenset())
    assert "│10♠│" in lines[2].plain and "│ Q♥│" in lines[2].plain


def test_selected_cards_are_raised_and_the_cursor_marked() -> None:
    lines = hand_lines(parse_cards("2c 3c 4c"), CardStyle(), cursor=2, selected=frozenset({1}))
    plain = [line.plain for line in lines]
    # card 2 is raised: its face on the second line, the others' on the third
    assert plain[1].split("│")[1:2] == [" 3♣"]
    assert "│ 2♣│" in plain[2] and "│ 4♣│" in plain[2]
    assert plain[4].split() == ["1", "2", "^3^"]


def test_four_colours_give_each_suit_its_own() -> None:
    four = CardStyle(four_colour=True)
    colours = {suit: four.suit_style(suit) for suit in Suit}
    assert len(set(colours.values())) == 4
    two = CardStyle()
    assert two.suit_style(Suit.HEARTS) == two.suit_style(Suit.DIAMONDS) == "red"
    assert two.suit_style(Suit.SPADES) == two.suit_style(Suit.CLUBS) == ""


def test_no_colour_means_no_colour() -> None:
    plain = CardStyle(four_colour=True, colour=False)
    assert all(plain.suit_style(suit) == "" for suit in Suit)
    assert str(card_text(parse_card("Qh"), plain).style) == ""


def test_spreads_name_their_owner_and_mark_hit_cards() -> None:
    spread = Spread(2, 1, SpreadKind.RUN, parse_cards("8s 9s 10s Js"), ((parse_card("8s"), 2),))
    line = spread_line(1, spread, NAMES, CardStyle(ascii=True))
    assert line.plain == "1 Goblin's run: 8S 9S 10S JS  +8S Elmo"
    underlined = [span for span in line.spans if "underline" in str(span.style)]
    assert [line.plain[s.start : s.end] for s in underlined] == ["8S"]
    mine = Spread(1, 0, SpreadKind.BOOK, parse_cards("8d 8h 8s"))
    assert spread_line(1, mine, NAMES, CardStyle()).plain.startswith("1 Your book:")


def test_log_lines_say_what_happened_as_the_seat_saw_it() -> None:
    style = CardStyle()
    owner = {3: (0, "run")}.get

    def line(event: Event) -> str | None:
        text = event_line(event, NAMES, 0, style, owner)
        return None if text is None else text.plain

    assert line(Event("take_discard", 1, parse_cards("Qc"))) == "Goblin took Q♣"
    assert line(Event("hit", 2, parse_cards("8s"), spread=3)) == "Elmo hit 8♠ on your run"
    assert line(Event("drop", 0, count=9)) == "You dropped with 9"
    assert line(Event("draw_stock", 1, private=True)) == "Goblin drew"
    assert line(Event("draw_stock", 0, parse_cards("6s"), private=True)) == "You drew 6♠"
    assert line(Event("deal", 1, private=True)) is None
    assert line(Event("turn", 1)) is None


def test_endings_and_payments_in_words() -> None:
    caught = Settlement(
        Ending.DROP_CAUGHT,
        (1,),
        (Payment(0, 1, 2),),
        (24, 17, 30),
        (None, None, None),
        dropper=0,
    )
    assert ending_line(caught, NAMES) == "You dropped with 24 and were caught by Goblin with 17."
    by_two = Settlement(
        Ending.DROP_CAUGHT,
        (2,),
        (Payment(0, 1, 2), Payment(0, 2, 2)),
        (22, 7, 6),
        (None, None, None),
        dropper=0,
    )
    assert ending_line(by_two, NAMES) == (
        "You dropped with 22 and were caught by Elmo with 6 and Goblin with 7."
    )
    assert payment_lines(caught, NAMES, "chips") == ["You pay Goblin 2 chips"]
    won = Settlement(
        Ending.DROP_WON,
        (1,),
        (Payment(0, 1, 1), Payment(2, 1, 1)),
        (20, 5, 30),
        (None, None, None),
        dropper=1,
    )
    assert ending_line(won, NAMES) == "Goblin dropped with 5 and won."
    assert payment_lines(won, NAMES, "chips") == [
        "You pay Goblin 1 chip",
        "Elmo pays Goblin 1 chip",
    ]
    void = Settlement(Ending.VOID, (), (), (None,) * 3, (None,) * 3, next_multiplier=2)
    assert ending_line(void, NAMES).endswith("The next hand is played for 2x stakes.")
    assert payment_lines(void, NAMES, "chips") == ["Nobody pays."]


def test_sparklines_share_a_scale_and_keep_to_their_width() -> None:
    assert sparkline([0, 1, 2, 3, 4, 5, 6, 7], 8) == "▁▂▃▄▅▆▇█"
    assert sparkline([0, -2, 4], 2) == "▁█"
    assert sparkline([0, 2], 5, scale=(-4, 4)) == "▅▆"
    assert sparkline([0, 4], 5, ascii_only=True) == "_^"


def test_addresses_default_to_port_7777() -> None:
    assert parse_address("tonkbox") == ("tonkbox", 7777)
    assert parse_address("10.0.0.5:9000") == ("10.0.0.5", 9000)
    assert parse_address("[::1]:7000") == ("::1", 7000)
    with pytest.raises(ValueError, match="not a port"):
        parse_address("host:http")


def _args(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(list(argv))


def test_the_command_line_builds_the_config() -> None:
    joined = config_from_args(_args("box:7001", "--name", "Kim", "--ascii"), {})
    assert (joined.host, joined.port, joined.name, joined.style.ascii) == ("box", 7001, "Kim", True)
    practice = config_from_args(_args("--bots", "3", "--rules", "pagat", "--four-colour"), {})
    assert practice.practice and practice.bots == 3 and practice.rules == "pagat"
    assert practice.style.four_colour and practice.style.colour
    assert not config_from_args(_args(), {"NO_COLOR": "1"}).style.colour
    with pytest.raises(ValueError, match="at most 4 players"):
        config_from_args(_args("--bots", "4"), {})  # classic seats 2 to 4


def test_the_command_line_names_each_bots_strategy() -> None:
    practice = config_from_args(_args("--bots", "expert,sharp"), {})
    assert practice.bots == 2 and practice.bot_strategies == ("expert", "sharp")
    counted = config_from_args(_args("--bots", "3"), {})
    assert counted.bots == 3 and counted.bot_strategies == ()
    assert "expert" in build_parser().format_help()
    with pytest.raises(ValueError, match="no bot 'wizard'"):
        config_from_args(_args("--bots", "expert,wizard"), {})
    with pytest.raises(ValueError, match="1 to 4 bots"):
        config_from_args(_args("--bots", "0"), {})
    with pytest.raises(ValueError, match="at most 4 players"):
        config_from_args(_args("--bots", "easy,sharp,expert,expert"), {})  # classic seats 4


def test_a_paused_table_says_why_in_the_status_line() -> None:
    from tonk.client.model.state import TableState
    from tonk.client.widgets import turn_message
    from tonk.shared.game.rules import HouseRules

    state = TableState("1", "t", HouseRules(), 1, "chips", 0, (), paused="the disk is full")
    assert turn_message(state) == "Play is paused: the disk is full"

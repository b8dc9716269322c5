"""The table's centre drawn with cards (client/text/felt.py): plain functions, no terminal."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from tonk.client.text.felt import (
    LARGE,
    MEDIUM,
    SMALL,
    Pile,
    card_row,
    marks_row,
    pile_block,
    spread_block,
    spreads_as_cards,
)
from tonk.client.text.render import CardStyle
from tonk.shared.game.cards import parse_card, parse_cards
from tonk.shared.game.spreads import Spread, SpreadKind

NAMES = ["You", "Ada (bot)", "Bix (bot)", "Cleo (bot)"]


def plain(rows: Sequence[Text]) -> list[str]:
    return [row.plain for row in rows]


def test_cards_side_by_side_share_their_edges_at_each_size() -> None:
    cards = [(parse_card("5s"), ""), (parse_card("10h"), "")]
    assert plain(card_row(cards, CardStyle(), SMALL)) == [
        "╭───┬───╮",
        "│ 5♠│10♥│",
        "╰───┴───╯",
    ]
    assert plain(card_row(cards, CardStyle(ascii=True), MEDIUM)) == [
        "+-----+-----+",
        "|5S   |10H  |",
        "|  S  |  H  |",
        "|   5S|  10H|",
        "+-----+-----+",
    ]
    # A card face down is its back.
    assert plain(card_row([(None, "")], CardStyle(), SMALL))[1] == "│▒▒▒│"


def test_a_spread_names_its_owner_and_marks_each_hit_card_with_who_hit_it() -> None:
    run = Spread(2, 1, SpreadKind.RUN, parse_cards("8s 9s 10s Js"), ((parse_card("Js"), 0),))
    rows = spread_block(2, run, NAMES, CardStyle(), SMALL)
    assert plain(rows) == [
        "2 Ada's run",
        "╭───┬───┬───┬───╮",
        "│ 8♠│ 9♠│10♠│ J♠│",
        "╰───┴───┴───┴───╯",
        "             +You",
    ]
    # The hit card's face underlined, the others not.
    face = rows[2]
    underlined = {
        face.plain[span.start : span.end] for span in face.spans if "underline" in str(span.style)
    }
    assert underlined == {"J♠"}  # (the label alone)


def test_names_under_cards_side_by_side_drop_their_plus_before_being_cut() -> None:
    assert marks_row([(0, "+Bix"), (1, "+Cleo")], 4).plain == " Bix Cleo"
    assert marks_row([(0, "+Bix"), (2, "+Cleo")], 4).plain == " +Bix    +Cleo"
    assert marks_row([(0, "up"), (1, "Cleo"), (2, "You")], 4).plain == " up  Cle You"


def test_spreads_are_grouped_by_owner_from_yours_and_flow_across_the_room() -> None:
    def book(id_: int, owner: int, rank: str) -> Spread:
        return Spread(id_, owner, SpreadKind.BOOK, parse_cards(f"{rank}h {rank}d {rank}c"))

    spreads = [book(1, 2, "4"), book(2, 0, "9"), book(3, 2, "7")]
    rows = spreads_as_cards(spreads, NAMES, CardStyle(), SMALL, 60, order=[0, 1, 2, 3])
    assert rows is not None
    # Yours first, then Bix's two, numbered as the table lists them, side by side.
    assert rows[0].plain.split() == [
        "2",
        "Your",
        "book",
        "1",
        "Bix's",
        "book",
        "3",
        "Bix's",
        "book",
    ]
    # Too narrow for one side by side: one under the other; narrower than one: none.
    narrow = spreads_as_cards(spreads, NAMES, CardStyle(), SMALL, 14, order=[0, 1, 2, 3])
    assert narrow is not None and [r.plain for r in narrow].count("╭───┬───┬───╮") == 3
    assert spreads_as_cards(spreads, NAMES, CardStyle(), SMALL, 12) is None


def test_the_pile_fans_as_many_discards_as_fit_with_who_threw_each() -> None:
    pile = Pile(
        29,
        parse_card("Qs"),
        3,
        ((parse_card("7d"), None), (parse_card("Jd"), "Bix"), (parse_card("Qs"), "Cleo")),
    )
    rows = plain(pile_block(pile, CardStyle(), SMALL, 60) or [])
    assert rows == [
        "╭───╮  ╭───┬───┬───╮  Stock: 29",
        "│▒▒▒│  │ 7♦│ J♦│ Q♠│  Discard: Q♠",
        "╰───╯  ╰───┴───┴───╯  3 in the pile",
        "        up  Bix Cleo",
    ]
    # Short of room, the oldest go first; the top discard stays.
    rows = plain(pile_block(pile, CardStyle(), SMALL, 30) or [])
    assert rows[1] == "│▒▒▒│  │ Q♠│  Discard: Q♠" and rows[3].split() == ["Cleo"]
    # A pile not followed from the deal: its top alone, nobody named.
    rows = plain(pile_block(Pile(29, parse_card("Qs"), 3), CardStyle(), SMALL, 60) or [])
    assert len(rows) == 3 and "│ Q♠│" in rows[1]
    assert pile_block(pile, CardStyle(), SMALL, 12) is None


def test_the_up_card_is_named_so_where_the_room_under_it_allows() -> None:
    up = parse_card("7d")
    last = ((up, None), (parse_card("Jd"), "Bix"))
    large = plain(pile_block(Pile(29, last[-1][0], 2, last), CardStyle(), LARGE, 80) or [])
    assert large[-1].split() == ["up", "card", "Bix"]
    # Alone on the pile, it has the row to itself.
    alone = plain(pile_block(Pile(30, up, 1, ((up, None),)), CardStyle(), SMALL, 60) or [])
    assert alone[-1].strip() == "up card"


def test_a_pile_that_must_fan_its_last_three_is_not_drawn_where_fewer_fit() -> None:
    last = ((parse_card("7d"), None), (parse_card("Jd"), "Bix"), (parse_card("Qs"), "Cleo"))
    pile = Pile(29, parse_card("Qs"), 3, last, least=3)
    assert pile_block(pile, CardStyle(), SMALL, 26) is not None
    assert pile_block(pile, CardStyle(), MEDIUM, 26) is None  # (two would fit)


def test_short_of_room_beside_the_pile_its_words_go_under_it() -> None:
    last = ((parse_card("7d"), None), (parse_card("Jd"), "Bix"), (parse_card("Qs"), "Cleo"))
    pile = Pile(29, parse_card("Qs"), 3, last, least=3)
    rows = plain(pile_block(pile, CardStyle(), MEDIUM, 40) or [])
    assert rows[1] == "│▒▒▒▒▒│  │7♦   │J♦   │Q♠   │"
    assert rows[-2:] == ["          up    Bix   Cleo", "Stock: 29   Discard: Q♠   3 in the pile"]
    # Narrower, on as many lines as they take, a word whole on each.
    rows = plain(pile_block(pile, CardStyle(), MEDIUM, 36) or [])
    assert rows[-2:] == ["Stock: 29   Discard: Q♠", "3 in the pile"], rows

"""The spreads on a full table at 80x24: five seats, several spreads carrying hits, every one
readable (its hits on its own line, not below it), or said to be more than the room."""

from __future__ import annotations

from dataclasses import replace

import pytest
from clientkit import at_my_turn, hand_text, my_turn, practice_app, table_state, wait_for
from textual.pilot import Pilot
from tonk.client.app import TonkApp
from tonk.client.text.felt import SMALL
from tonk.client.widgets import LineWidget
from tonk.client.widgets.table import CentrePanel, SpreadsPanel
from tonk.shared.game.cards import parse_card, parse_cards
from tonk.shared.game.spreads import Spread, SpreadKind

RUN, BOOK = SpreadKind.RUN, SpreadKind.BOOK


def spread(id_: int, owner: int, kind: SpreadKind, cards: str, *hits: tuple[str, int]) -> Spread:
    return Spread(id_, owner, kind, parse_cards(cards), tuple((parse_card(c), s) for c, s in hits))


#: Laid and hit by the five seats of a speno table (0 is you; 1-4 the bots Ada, Bix, Cleo, Dot).
SPREADS = (
    spread(1, 1, RUN, "8s 9s 10s Js Qs Ks", ("Qs", 2), ("Ks", 3)),
    spread(2, 2, BOOK, "7h 7d 7c 7s", ("7s", 4)),
    spread(3, 3, RUN, "2d 3d 4d 5d 6d", ("5d", 0), ("6d", 1)),
    spread(4, 4, BOOK, "Jh Jd Jc"),
    spread(5, 0, RUN, "Ah 2h 3h 4h", ("4h", 1)),
    spread(6, 1, BOOK, "Kh Kd Kc"),
    spread(7, 2, RUN, "5c 6c 7c 8c", ("8c", 3)),
)

#: Two more books, unhit.
BOOKS = (spread(8, 2, BOOK, "4h 4d 4c"), spread(9, 0, BOOK, "9h 9d 9c"))


async def laid(pilot: Pilot[None], app: TonkApp, spreads: tuple[Spread, ...]) -> list[str]:
    """The table drawn with `spreads` on it: the spreads panel's rows."""
    state = table_state(app)
    assert state is not None and state.view is not None
    app.table_state = replace(state, view=replace(state.view, spreads=spreads))
    await pilot.pause()
    panel = app.screen.query_one(SpreadsPanel)
    return [panel.line_text(y) for y in range(len(panel.rows))]


async def test_five_spreads_with_hits_fit_a_full_table_at_80x24() -> None:
    app = practice_app(bots=4, rules="speno")
    async with at_my_turn(app) as pilot:
        rows = await laid(pilot, app, SPREADS[:5])
        panel = app.screen.query_one(SpreadsPanel)
        assert len(rows) <= panel.size.height  # nothing cut off below the panel
        # One row a spread, its hits and who made them on it: short names, no kind words;
        # with every key on the key bar (two rows at 80 columns) the short book shares its
        # row with the spread after it.
        assert rows == [
            "1 Ada: 8♠ 9♠ 10♠ J♠ Q♠ K♠ +Q♠ Bix +K♠ Cleo",
            "2 Bix: 7♥ 7♦ 7♣ 7♠ +7♠ Dot",
            "3 Cleo: 2♦ 3♦ 4♦ 5♦ 6♦ +5♦ You +6♦ Ada",
            "4 Dot: J♥ J♦ J♣   5 You: A♥ 2♥ 3♥ 4♥ +4♥ Ada",
        ]
        # Four books side by side take two bands of cards, more than the rows: in whole
        # words where each fits its row.
        books = (*SPREADS[3:4], *SPREADS[5:6], *BOOKS)
        assert await laid(pilot, app, books) == [
            "1 Dot (bot)'s book: J♥ J♦ J♣",
            "2 Ada (bot)'s book: K♥ K♦ K♣",
            "3 Bix (bot)'s book: 4♥ 4♦ 4♣",
            "4 Your book: 9♥ 9♦ 9♣",
        ]
        # Five seats at 80x24 with every key on the bar (two rows): one spread is in words
        # too, as the pile's cards leave the spreads too few rows for a band of cards (at 100x30
        # it is cards: test_client_picture).
        rows = await laid(pilot, app, SPREADS[1:2])
        assert rows == ["1 Bix: 7♥ 7♦ 7♣ 7♠ +7♠ Dot"]


async def test_more_spreads_than_rows_go_two_a_line_then_say_how_many_more() -> None:
    app = practice_app(bots=4, rules="speno")
    async with at_my_turn(app) as pilot:
        rows = await laid(pilot, app, SPREADS)
        panel = app.screen.query_one(SpreadsPanel)
        assert len(rows) == panel.size.height
        # (The short book beside the spread after it is the test above's last row: here the
        # rows run out before it.)
        assert rows[-1] == "+4 more spreads: h lists them on your turn"
        for row in rows[:-1]:
            assert row[0].isdigit()  # every row a spread's start: no hit on a row of its own
        # On a touch screen, the button to tap.
        app.config.touch = True
        assert panel._more(4).plain == "+4 more spreads: Hit lists them on your turn"


@pytest.mark.parametrize("size", [(40, 30), (44, 28)], ids=str)
async def test_an_upright_table_keeps_the_pile_and_spreads_within_its_rows(
    size: tuple[int, int],
) -> None:
    """Upright with five seats the pile's line wraps: the spreads are fitted to the
    rows it leaves, every row of both inside the table."""
    app = practice_app(bots=4, rules="speno")
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: my_turn(app), "your first turn")
        panel = app.screen.query_one(SpreadsPanel)
        pile = app.screen.query_one("#pile", LineWidget)
        centre = app.screen.query_one(CentrePanel)

        def rows() -> list[str]:
            return [panel.line_text(y) for y in range(len(panel.rows))]

        def fitted() -> bool:
            return len(rows()) <= panel.size.height and (
                len(pile.rows) + panel.size.height <= centre.size.height
            )

        for count in range(1, len(SPREADS) + 1):
            await laid(pilot, app, SPREADS[:count])
            # (The pile's line wraps as the spreads come, and the panel is laid out again:
            # on a busy machine that may be a frame after the pause.)
            await wait_for(
                pilot,
                fitted,
                lambda count=count: (
                    f"{count} spreads fitted to the rows left: {rows()} in {panel.size}, "
                    f"the pile's {len(pile.rows)} rows, the centre {centre.size} for a budget "
                    f"of {centre.budget} (told {centre._told}, drawn {centre.chosen} for "
                    f"{centre._drawn_width} columns), the screen {app.screen.size}"
                ),
            )
            assert len(rows()) <= panel.size.height, (count, rows())
            assert len(pile.rows) + panel.size.height <= centre.size.height
            assert all(len(row) <= panel.size.width for row in rows())


async def test_an_upright_table_narrowed_redraws_its_pile_for_the_new_width() -> None:
    """The upright table's panel is sized to the rows its cards take; made narrower with
    nothing else changing (a phone turned, a pane split, a door guest's window sized as it
    opens), its pile is drawn again for the new width, not left to wrap its words."""
    app = practice_app()
    async with app.run_test(size=(78, 36)) as pilot:
        await wait_for(pilot, lambda: my_turn(app), "your first turn")
        await pilot.resize_terminal(40, 36)
        centre = app.screen.query_one(CentrePanel)
        pile = app.screen.query_one("#pile", LineWidget)

        def fits() -> bool:
            width = centre.size.width
            return 0 < width < 76 and all(line.cell_len <= width for line in pile.lines)

        await wait_for(pilot, fits, "the pile drawn for the narrower table")


async def test_at_80x24_the_pile_is_fanned_until_the_first_spread_takes_its_rows() -> None:
    """Three seats at 80x24: before any spread the pile's last cards are fanned with who threw
    each, over "No spreads on the table." on one row (not rows kept empty for a spread); the
    first spread laid takes the rows, and the pile keeps its size, folded."""
    app = practice_app(bots=2)
    async with at_my_turn(app) as pilot:
        centre = app.screen.query_one(CentrePanel)
        pile = app.screen.query_one("#pile", LineWidget)
        await pilot.press("d")
        await wait_for(pilot, lambda: len(hand_text(app).split()) == 6, "the card drawn")
        await pilot.press("x")

        def round_played() -> bool:
            state = table_state(app)
            return my_turn(app) and state is not None and len(state.pile) >= 4

        await wait_for(pilot, round_played, "the discard and the bots' turns")
        await wait_for(pilot, lambda: centre.chosen == (SMALL, None, True), "the pile fanned")
        text = "\n".join(pile.line_text(y) for y in range(len(pile.rows)))
        assert "Bix" in text and "Ada" in text, text
        rows = await laid(pilot, app, BOOKS[:1])
        await wait_for(pilot, lambda: centre.chosen == (SMALL, SMALL, False), "the spread laid")
        assert "Bix's book" in rows[0], rows


@pytest.mark.parametrize(("bots", "rules"), [(3, "classic"), (4, "speno")], ids=["4", "5"])
async def test_four_or_five_seats_at_80x24_show_the_pile_as_cards_before_any_spread(
    bots: int, rules: str
) -> None:
    """Four or five seats at 80x24 leave the table 6 or 5 rows: before any spread, the pile's
    cards fanned with who threw them over "No spreads on the table." (before, the pile in
    words over rows kept empty for a spread's cards: a mostly empty panel); a spread laid
    takes the rows, every row of both within the table."""
    app = practice_app(bots=bots, rules=rules)
    async with at_my_turn(app) as pilot:
        centre = app.screen.query_one(CentrePanel)
        pile = app.screen.query_one("#pile", LineWidget)
        panel = app.screen.query_one(SpreadsPanel)

        def within() -> bool:
            return len(pile.rows) + len(panel.rows) <= centre.size.height

        await wait_for(pilot, lambda: centre.chosen == (SMALL, None, True), "the pile as cards")
        assert centre.size.height == 9 - bots
        assert "▒▒▒" in pile.text and "up card" in pile.text, pile.text
        assert panel.text.strip() == "No spreads on the table." and within()
        rows = await laid(pilot, app, BOOKS[:1])
        await wait_for(pilot, within, "the spread within the table")
        assert any("Bix" in row for row in rows), rows
        assert "Stock: " in pile.text, pile.text


async def test_the_first_spreads_are_fitted_to_the_rows_under_the_pile_before_the_layout() -> None:
    """Before any spread the pile's cards leave the spreads one row ("No spreads on the
    table."); the spreads laid, the pile goes to words, and the spreads are fitted to the rows
    it leaves at once, not to the one row the panel has until the next layout (a frame of
    "+5 more spreads", and a test that read it on a loaded machine)."""
    app = practice_app(bots=4, rules="speno")
    async with at_my_turn(app) as pilot:
        await pilot.pause()
        panel = app.screen.query_one(SpreadsPanel)
        assert panel.size.height == 1 and panel.line_text(0).strip() == "No spreads on the table."
        state = table_state(app)
        assert state is not None and state.view is not None
        app.table_state = replace(state, view=replace(state.view, spreads=SPREADS[:5]))
        assert panel.size.height == 1  # (not laid out again yet)
        assert [panel.line_text(y) for y in range(len(panel.rows))] == [
            "1 Ada: 8♠ 9♠ 10♠ J♠ Q♠ K♠ +Q♠ Bix +K♠ Cleo",
            "2 Bix: 7♥ 7♦ 7♣ 7♠ +7♠ Dot",
            "3 Cleo: 2♦ 3♦ 4♦ 5♦ 6♦ +5♦ You +6♦ Ada",
            "4 Dot: J♥ J♦ J♣   5 You: A♥ 2♥ 3♥ 4♥ +4♥ Ada",
        ]

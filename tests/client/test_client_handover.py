"""A seat handed to a bot and taken back, as a friend meets it through tonk-client against a
real server: told on coming back that the seat went to a bot; offered their own seat back (not
the first bot's), watching the hand so far with every seat named; back in their own place in
the order of play with their own balance; the log saying what happened to a seat; and the
creator choosing whose seat `a` gives when two players are gone."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from clientkit import (
    BOTS,
    MINE,
    deck_text,
    log_text,
    running,
    screen_shown,
    table_state,
    wait_for,
)
from netclient import NetClient, start_server
from textual.pilot import Pilot
from tonk.client.app import ClientConfig, TonkApp
from tonk.client.dialogs import ChoiceModal, ConfirmModal, StandingsScreen
from tonk.client.messages import Request
from tonk.client.model.state import PlayerInfo, TableState
from tonk.client.screens import LobbyScreen
from tonk.client.text.render import CardStyle
from tonk.client.widgets.table import HandView
from tonk.shared.game.rules import HouseRules
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p

# Ann (seat 0) holds 9 and drops at once in hand 1: Ada (bot, seat 1) and cy (seat 2) pay her.
ANN = "Ac Ad 2c 2d 3h"
ADA = "Kc Qd Jh 4h 5d"
CY = "Ks Qh Jd 4c 5c"
DECK = deck_text([ANN, ADA, CY], dealer=2, up="9c", stock="8s 7c 10d 7d")


def cy_app(port: int, state_dir: Path, join: str | None = None) -> TonkApp:
    return TonkApp(
        ClientConfig(
            name="cy",
            host="127.0.0.1",
            port=port,
            state_dir=state_dir,
            join=join,
            style=CardStyle(),
        )
    )


def notified(app: TonkApp, words: str) -> bool:
    return any(words in n.message for n in app._notifications)


async def offered(pilot: Pilot[None], app: TonkApp) -> str:
    """Enter on the lobby's table under the cursor: the offer of a bot's seat (its words)."""
    await pilot.press("enter")
    await screen_shown(pilot, ConfirmModal, "the offer of a bot's seat")
    offer = app.screen
    assert isinstance(offer, ConfirmModal)
    return offer.question


async def yes_and_watch(pilot: Pilot[None], app: TonkApp) -> None:
    """Yes to the offer: the app watches the hand so far."""
    await pilot.press("y")
    await wait_for(
        pilot,
        lambda: (state := table_state(app)) is not None and state.view is not None,
        "the hand so far",
    )


async def seated_as_the_hand_ends(pilot: Pilot[None], app: TonkApp, ann: NetClient) -> TableState:
    """Ann plays the hand out (the bots play theirs): the app has its seat as it ends."""
    playing = asyncio.create_task(ann.play_until(lambda m: m["type"] == p.HAND_END))
    try:
        await wait_for(
            pilot,
            lambda: (state := table_state(app)) is not None and state.seat is not None,
            "the seat taken as the hand ends",
            limit=60,
        )
    finally:
        with contextlib.suppress(Exception):
            await playing
    state = table_state(app)
    assert state is not None
    return state


async def kitchen(port: int) -> tuple[NetClient, int]:
    """Ann's table for three, a bot in seat 1, dealt from DECK; its id."""
    ann = await NetClient.connect(port, "Ann")
    table = await ann.create_table(
        "easy", name="Kitchen", seats=3, deck=DECK, dealer=2, seed=5, bot_pause=0
    )
    return ann, table


async def test_a_friend_whose_seat_went_to_a_bot_is_told_and_takes_their_own_seat_back(
    tmp_path: Path,
) -> None:
    async with start_server(tmp_path) as server:
        ann, _table = await kitchen(server.port)
        state_dir = tmp_path / "cy"
        first = cy_app(server.port, state_dir, join="Kitchen")
        async with running(first, lambda: table_state(first) is not None, "cy at the table"):
            await ann.expect(p.UPDATE, lambda m: m["view"]["turn"] == 0)
            await ann.request({"type": p.DROP}, p.UPDATE)  # hand 1: everybody pays Ann
            # Hand 2: Ada plays, then it is cy's turn; cy's terminal closes.
            await ann.expect(p.UPDATE, lambda m: m["hand"] == 2 and m["view"]["turn"] == 2)
        await ann.expect(p.TABLE, lambda m: m["table"]["players"][2]["status"] == "disconnected")
        given = await ann.request({"type": p.SEAT_TO_BOT, "seat": 2}, p.TABLE)
        bot = given["table"]["players"][2]
        assert bot["kind"] == "bot" and bot["holds_for"] == "cy", bot
        await ann.expect(p.UPDATE, lambda m: m["hand"] == 2 and m["view"]["turn"] == 0)

        again = cy_app(server.port, state_dir)
        async with running(
            again, lambda: isinstance(again.screen, LobbyScreen), "cy back in the lobby"
        ) as pilot:
            await wait_for(pilot, lambda: notified(again, "given to a bot"), "cy told")
            await wait_for(pilot, lambda: again.tables, "the lobby's tables")
            question = await offered(pilot, again)
            assert "Your seat at Kitchen was given to a bot" in question
            assert "0 if you are new" not in question
            await yes_and_watch(pilot, again)
            assert notified(again, "You take your seat back")
            await wait_for(
                pilot,
                lambda: "your own seat is yours as this hand ends" in hand_note(again),
                "cy's own seat asked for, said",
            )
            log = log_text(again)
            # The hand so far, every seat named (as the table map came before the hand).
            assert "Ada" in log and bot["name"].split()[0] in log, log
            assert "seat 1" not in log and "seat 2" not in log and "seat 3" not in log, log
            # cy's own log from before, kept on disk, then the hand as it went on without cy.
            before, _, since = log.partition("Back at table Kitchen.")
            assert "Ann dropped with 9 and won." in before and "Hand 2: Ann deals." in before, log
            assert since.startswith(f"\nYour seat went to {bot['name']}: you are watching."), log
            assert log.count("Hand 2:") == 1 and log.count("Your hand:") == 2, log
            panel = table_state(again).last_turns  # type: ignore[union-attr]
            assert panel and all("seat " not in text.plain for _, text in panel), panel

            state = await seated_as_the_hand_ends(pilot, again, ann)
            # cy's own place in the order of play, and cy's own balance (paid Ann in hand 1).
            assert state.seat == 2
            assert [pl.name for pl in state.players][:2] == ["Ann", "Ada (bot)"]
            assert state.players[2].name == "cy"
            assert state.balances.get("cy") == -1, state.balances
            log = log_text(again)
            assert "You are back in your own seat at Kitchen" in log, log
            assert "Ann dropped with 9 and won." in log, log
        # The log kept on disk has the whole evening: a client started again has it all.
        third = cy_app(server.port, state_dir)
        async with running(third, lambda: table_state(third) is not None, "cy back") as pilot:
            await wait_for(pilot, lambda: "Back at table Kitchen." in log_text(third), "the log")
            log = log_text(third)
            assert "Ann dropped with 9 and won." in log, log
            assert "You are back in your own seat at Kitchen" in log, log
        await ann.close()


async def test_the_log_says_a_seat_was_given_to_a_bot_and_the_creator_chooses_whose(
    tmp_path: Path,
) -> None:
    async with start_server(tmp_path) as server:
        state_dir = tmp_path / "ann"
        app = TonkApp(
            ClientConfig(
                name="Ann",
                host="127.0.0.1",
                port=server.port,
                state_dir=state_dir,
                style=CardStyle(),
            )
        )
        bob = await NetClient.connect(server.port, "Bob")
        cy = await NetClient.connect(server.port, "cy")
        async with running(app, lambda: isinstance(app.screen, LobbyScreen), "the lobby") as pilot:
            # The table for three as the create form sends it (from Ann's lobby).
            app.post_message(Request(m.CreateTable("Kitchen", seats=3, dealer=2, deck=DECK)))
            await wait_for(pilot, lambda: table_state(app) is not None, "Ann's table")
            table = int(table_state(app).table_id)  # type: ignore[union-attr]
            await bob.request({"type": p.SIT, "table": table}, p.SEATED)
            await cy.request({"type": p.SIT, "table": table}, p.SEATED)
            await wait_for(pilot, lambda: table_state(app).playing, "the start")  # type: ignore[union-attr]
            await bob.close()
            await cy.close()
            await wait_for(
                pilot,
                lambda: sum(not pl.connected for pl in table_state(app).players) == 2,  # type: ignore[union-attr]
                "both gone",
            )
            await pilot.press("a")
            await screen_shown(pilot, ChoiceModal, "whose seat")
            chooser = app.screen
            assert isinstance(chooser, ChoiceModal)
            assert [a.split()[0] for a in chooser.answers] == ["Bob", "cy"]
            await pilot.press("2")  # cy's, not the first one's
            await wait_for(
                pilot,
                lambda: table_state(app).players[2].bot,  # type: ignore[union-attr]
                "cy's seat given to a bot",
            )
            state = table_state(app)
            assert state is not None
            assert state.players[1].name == "Bob" and not state.players[1].bot
            log = log_text(app)
            assert f"cy's seat was given to a bot: {state.players[2].name} plays it." in log, log
            assert "cy left the table" not in log, log


async def test_w_watches_a_finished_table_the_lobby_lists_and_its_rematch_offer(
    tmp_path: Path,
) -> None:
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        # One hand: Bob (seat 1, 35) plays first and drops against Alice's 36.
        deck = deck_text([MINE, BOTS], dealer=0)
        table = await alice.create_table(name="Over", seats=2, hands=1, dealer=0, deck=deck)
        bob = await NetClient.connect(server.port, "Bob")
        await bob.request({"type": p.SIT, "table": table}, p.SEATED)
        await bob.expect(p.UPDATE, lambda m: m["view"]["turn"] == 1)
        await bob.request({"type": p.DROP}, p.UPDATE)
        await alice.expect(p.SESSION_END)
        app = cy_app(server.port, tmp_path / "cy")
        async with running(app, lambda: isinstance(app.screen, LobbyScreen), "the lobby") as pilot:
            await wait_for(
                pilot,
                lambda: [t.state for t in app.tables] == [m.TableState.FINISHED],
                "the finished table listed",
            )
            await pilot.press("w")
            await screen_shown(pilot, StandingsScreen, "the finished table's standings")
            standings = app.screen
            assert isinstance(standings, StandingsScreen) and standings.table_id == table
            assert [name for name, _ in standings.standings] == ["Bob", "Alice"]
            await alice.request({"type": p.REMATCH, "answer": True}, p.REMATCH_STATUS)
            await wait_for(
                pilot,
                lambda: (
                    standings.rematch is not None and ("Alice", "yes") in standings.rematch.seats
                ),
                "Alice's answer shown to the spectator",
            )
            assert not notified(app, "there is no open table")
        await alice.close()
        await bob.close()


async def test_one_who_never_sat_there_takes_a_bots_seat_from_the_lobby_during_a_hand(
    tmp_path: Path,
) -> None:
    async with start_server(tmp_path) as server:
        ann = await NetClient.connect(server.port, "Ann")
        table = await ann.create_table(
            "easy",
            name="Kitchen",
            seats=2,
            deck=deck_text([MINE, BOTS], dealer=1),
            dealer=1,
            open_bot_seats=True,  # (Dee never sat there)
        )
        await ann.expect(p.UPDATE, lambda m: m["view"]["turn"] == 0)  # the hand waits on Ann
        await ann.request({"type": p.DRAW_STOCK}, p.UPDATE)
        await ann.request({"type": p.DISCARD, "card": "9d"}, p.UPDATE)  # Ada plays; Ann again
        await ann.expect(p.UPDATE, lambda m: m["view"]["turn"] == 0)
        app = cy_app(server.port, tmp_path / "dee")
        async with running(app, lambda: isinstance(app.screen, LobbyScreen), "the lobby") as pilot:
            await wait_for(pilot, lambda: app.tables, "the lobby's tables")
            assert "0 if you are new to it" in await offered(pilot, app)
            await yes_and_watch(pilot, app)
            # Watching meanwhile, Dee's hand panel says the seat is coming.
            await wait_for(
                pilot,
                lambda: "Ada (bot)'s seat is yours as this hand ends" in hand_note(app),
                "the seat asked for, said",
            )
            assert app.screen.check_action("take_bot_seat", ()) is False  # asked already
            log = log_text(app)
            assert "Ann drew, discarded 9♦" in log and "Ada drew" in log, log
            assert "Back at" not in log and "seat 1" not in log, log
            assert (await seated_as_the_hand_ends(pilot, app, ann)).seat == 1
            assert table_state(app).awaiting_seat is None  # type: ignore[union-attr]
            log = log_text(app)
            assert "You sit at Kitchen, in Ada (bot)'s seat." in log, log
            assert "Back at" not in log, log
            assert table == int(table_state(app).table_id)  # type: ignore[union-attr]
        await ann.close()


def hand_note(app: TonkApp) -> str:
    """What the table's hand panel says (a spectator's: that they watch, and the last turns)."""
    note = app.screen.query_one(HandView).note
    return str(note) if isinstance(note, str) else note.plain


def test_t_takes_ones_own_seat_else_a_bots_seat_held_for_nobody() -> None:
    players = (
        PlayerInfo(0, "Ann"),
        PlayerInfo(1, "Bix (bot)", bot=True, holds_for="cy"),
        PlayerInfo(2, "Ada (bot)", bot=True),
        PlayerInfo(3, "Cal (bot)", bot=True, holds_for="dee"),
    )

    def taken(me: str, *seats: int) -> int | None:
        state = TableState(
            "1", "Kitchen", HouseRules(), 1, "chips", None, tuple(players[n] for n in seats), me=me
        )
        bot = state.bot_to_take()
        return None if bot is None else bot.seat

    assert taken("cy", 0, 1, 2, 3) == 1  # cy's own seat, not Ada's before it
    assert taken("dee", 0, 1, 2, 3) == 3
    assert taken("eve", 0, 1, 2, 3) == 2  # a newcomer: the bot that holds nobody's seat
    assert taken("eve", 0, 1, 3) == 1  # (only held ones: the first)
    assert taken("eve", 0) is None

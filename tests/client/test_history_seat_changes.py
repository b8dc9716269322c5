"""A seat that changes hands in the middle of a hand, read back by everything that reads a hand
back (issue 30): the friend who lost the link has his seat given to a bot by the creator, comes
back, watches and asks for a bot's seat (taken as the hand ends), while a friend in the lobby
asks for the other bot's; then the history and its replay, `tonk-server audit` and `replay`,
and the coach, each through the real server and the real commands. Each of them must say the
hand as live play did: the bot's moves the bot's, its cards hidden from the friend, the payer
as `hand_end` named it, and the ledger sound. The same seen on the real `tonk-client` (`l`), and
after a restart in the middle of the hand, where a hand sent whole still names who made each
event (`holders`). A database from before the seats' occupants were kept reads as before."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest
from historykit import answer, ask, scripted
from netclient import NetClient, cards_in, start_server
from ptyterm import Term
from reliakit import server_process
from termkit import command_path, tonk_server
from test_client_seats import client_env
from test_server_audit import tonk_server as tonk_server_command
from tonk.client.model.replay import board, names_by_step, step_logs
from tonk.client.text.render import CardStyle
from tonk.server.commands import audit
from tonk.server.store import store as st
from tonk.shared.game.history import HandSummary
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p

ANN, ADA, CY = 0, 1, 2  # the seats: Ann the creator, a bot, Cy


def term_client(state: Path, port: int, name: str) -> Term:
    """The real tonk-client on an 80x24 terminal, its state kept in `state`."""
    term = Term(80, 24)
    term.start(
        [command_path("tonk-client"), f"127.0.0.1:{port}", "--name", name], client_env(state)
    )
    return term


async def read_to(client: NetClient, count: int) -> None:
    """Read until `client` has been sent hand 1 at `count` events or more."""
    while not any(
        got["type"] == p.UPDATE and got["hand"] == 1 and got["view"]["event_count"] >= count
        for got in client.received
    ):
        await client.recv()


async def play_to_cys_second_turn(ann: NetClient, cy: NetClient) -> int:
    """Ann and Cy play hand 1 (the bot plays its own seat) until Cy's turn comes round again
    after he has made a turn of his own: the hand's count of events then."""
    moved = 0
    while True:
        got = await ann.recv()
        assert got["type"] != p.HAND_END, "the hand ended before Cy's seat was given away"
        if got["type"] != p.UPDATE or got["hand"] != 1:
            continue
        view = got["view"]
        count = view["event_count"]
        if view["turn"] == ANN:
            await ann.play_turn_if_mine()
        elif view["turn"] == CY:
            if moved >= 2 and view["phase"] == "start":
                return int(count)
            await read_to(cy, count)
            assert await cy.play_turn_if_mine()
            moved += 1


async def test_a_seat_given_to_a_bot_mid_hand_reads_back_as_live_play_said_it(tmp_path):
    deck = scripted("classic", "stock_out").deck
    async with start_server(tmp_path, coach_in_thread=True) as server:
        ann = await NetClient.connect(server.port, "Ann")
        table = await ann.create_table(  # (its bots' seats open: Dee never sat there)
            "easy", name="Friday", seats=3, deck=deck, dealer=2, seed=7, open_bot_seats=True
        )
        cy = await NetClient.connect(server.port, "Cy")
        await cy.request({"type": p.SIT, "table": table, "seat": CY}, p.SEATED)
        spec = await NetClient.connect(server.port, "Spec")
        await spec.request({"type": p.WATCH, "table": table}, p.WATCHING)
        count = await play_to_cys_second_turn(ann, cy)

        # Cy loses the link on his turn; Ann gives his seat to a bot, which plays on.
        await read_to(cy, count)
        cy_token = cy.token
        await cy.close()
        await ann.expect(
            p.TABLE, lambda got: got["table"]["players"][CY]["status"] == "disconnected"
        )
        given = await ann.request({"type": p.SEAT_TO_BOT, "seat": CY}, p.TABLE)
        bix = given["table"]["players"][CY]["name"]
        assert bix.endswith("(bot)") and given["table"]["players"][CY]["kind"] == "bot"

        # Cy is back: his token no longer holds the seat; he watches and asks for it back,
        # and Dee, from the lobby, asks for the other bot's seat: both taken as the hand ends.
        cy_back = await NetClient.connect(server.port, "Cy")
        await cy_back.send({"type": p.RESUME, "table": table, "token": cy_token})
        await cy_back.expect_error(p.BAD_TOKEN)
        await cy_back.request({"type": p.WATCH, "table": table}, p.WATCHING)
        await cy_back.request({"type": p.TAKE_BOT_SEAT, "table": table, "seat": CY}, p.TABLE)
        dee = await NetClient.connect(server.port, "Dee")
        await dee.request({"type": p.TAKE_BOT_SEAT, "table": table, "seat": ADA}, p.TABLE)
        ended = await ann.play_until(lambda got: got["type"] == p.HAND_END, timeout=120)
        names = ended["names"]
        assert names[CY] == bix and names[ANN] == "Ann"
        await cy_back.expect(p.SEATED)
        await dee.expect(p.SEATED)
        for client in (cy_back, dee):  # the next deal comes to the seat
            await client.expect(p.UPDATE, lambda got: got["hand"] == 2)

        steps = await answer(cy_back, {"type": p.HISTORY_HAND, "table": table, "hand": 1})
        page = await answer(cy_back, {"type": p.HISTORY, "table": table})
        dees = await answer(dee, {"type": p.HISTORY_HAND, "table": table, "hand": 1})

        # The coach: Cy's own move before the seat left him is his to ask about; a move the
        # bot made from it after is not.
        changed = steps["occupants"][1][1]  # the step from which the bot held Cy's seat
        record = m.HistoryHandSteps.from_wire(steps)
        turns = [step.view.turn for step in record.steps]
        mine = next(n for n in range(changed - 1) if turns[n] == CY)
        theirs = next(n for n in range(changed - 1, len(turns) - 1) if turns[n] == CY)
        coached = await answer(cy_back, {"type": p.COACH, "table": table, "hand": 1, "step": mine})
        refused = await ask(cy_back, {"type": p.COACH, "table": table, "hand": 1, "step": theirs})
        spectator_steps = await answer(spec, {"type": p.HISTORY_HAND, "table": table, "hand": 1})

    # Who sat where, as hand_end said it, and who held Cy's seat from which step.
    assert steps["names"] == names and page["hands"][0]["names"] == names
    assert steps["occupants"] == [[CY, 0, "Cy"], [CY, changed, bix]]
    assert page["hands"][0]["occupants"] == steps["occupants"]
    assert steps["seat"] == CY and dees["seat"] is None  # Dee did not sit in hand 1
    summary = HandSummary.from_wire(page["hands"][0])
    assert summary.payments == tuple(
        (names[x.payer], names[x.payee], x.amount) for x in summary.settlement.payments
    )
    assert summary.dealer_name == "Cy"  # seat 2 dealt, Cy's then
    assert any(payer == bix for payer, _, _ in summary.payments)  # (the bot paid, not Cy)

    # Cy saw his own cards while the seat was his, and as a spectator after: none of the bot's
    # cards, none of its draws, nothing a spectator was not shown.
    for number, step in enumerate(steps["steps"]):
        assert step["view"]["seat"] == (CY if number < changed else None), number
        if number >= changed:
            assert step == spectator_steps["steps"][number], number
    assert steps["steps"][changed - 1]["view"]["hand"]
    spectator_saw = set().union(*(cards_in(got) for got in spec.received))
    assert cards_in(steps["steps"][changed:]) <= spectator_saw

    # Live play did not show them the bot's hand once they sat in its seat either: hand 1 came
    # to them only as a spectator saw it.
    for client in (cy_back, dee):
        seen = [got for got in client.received if got["type"] == p.UPDATE and got["hand"] == 1]
        assert all(got["view"]["seat"] is None for got in seen), client.name
        assert cards_in(seen) <= spectator_saw

    # The client's replay (`l`): "You" and your hand only while the seat was Cy's, the bot by
    # its name after.
    shown = names_by_step(record.seating, record.steps)
    assert shown[0][CY] == "You" and shown[changed][CY] == bix
    style = CardStyle()
    before = board(record.steps[changed - 1].view, shown[changed - 1], "chips", style).plain
    after = board(record.steps[changed].view, shown[changed], "chips", style).plain
    assert "Your hand:" in before and "Your hand:" not in after
    assert "Seen as a spectator sees it" in after
    logs = step_logs(1, record.steps, shown, style)
    later = [line.plain for line in logs[-1][len(logs[changed - 1]) :]]
    assert any(line.startswith(bix.split()[0]) for line in later), later
    assert not any(line.startswith("You") for line in later), later
    # The seat changing hands is said where it did, before the bot's first move from it.
    handed = [line.plain for line in logs[changed][len(logs[changed - 1]) :]]
    assert handed[0] == f"{bix} takes your seat.", handed
    assert all("takes your seat" not in line.plain for line in logs[changed - 1])

    # The coach answers Cy's move and refuses the bot's.
    assert coached["advice"]["played"]["seat"] == CY
    assert refused["type"] == p.ERROR and refused["code"] == p.BAD_VALUE, refused
    assert refused["detail"] == "step" and refused["fatal"] is False

    # `tonk-server audit` finds the ledger sound, and `replay` names the bot for its moves.
    db = str(tmp_path / "tonk.db")
    audited = tonk_server_command("audit", "--db", db, str(table))
    assert audited.returncode == 0, audited.stdout + audited.stderr
    assert "ledger sound" in audited.stdout
    replayed = tonk_server_command("replay", "--db", db, str(table), "1")
    assert replayed.returncode == 0, replayed.stderr
    lines = replayed.stdout.splitlines()
    took = lines.index(f"{bix} takes Cy's seat")
    assert not any(re.match(r"\d+\. Cy ", line) for line in lines[took:]), lines[took:]
    assert any(re.match(rf"\d+\. {re.escape(bix)} ", line) for line in lines[took:])
    assert any(re.match(r"\d+\. Cy ", line) for line in lines[:took])
    assert "Cy" not in " ".join(line for line in lines if " pays " in line)


async def test_a_database_from_before_the_occupants_reads_as_before(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    store = st.Store(path)
    store.open()
    await store.write([st.insert_table(1, "Friday", {"rules": {"preset": "classic"}}, 0.0, 0)])
    await store.close()
    with sqlite3.connect(path) as conn:  # as a server from before issue 30 left it
        conn.execute("DROP TABLE occupants")
    with audit.read_only(path) as conn:  # read-only, as `tonk-server audit` reads it
        assert audit.table_problems(conn, 1) == []
        seating = st.hand_occupants(conn, 1, 1, ["Ann", "Ben"])
        assert seating.final == ("Ann", "Ben") and seating.changes == ()
    store = st.Store(path)
    store.open()  # brought up to date: the table is made, empty
    await store.write([st.seat_changed(1, 1, 3, 1, "Bix (bot)")])
    await store.close()
    with audit.read_only(path) as conn:
        seating = st.hand_occupants(conn, 1, 1, ["Ann", "Ben"])
        assert seating.final == ("Ann", "Bix (bot)") and seating.names_at(2) == ("Ann", "Ben")


@pytest.mark.e2e
async def test_the_friends_replay_on_the_real_client_shows_his_hand_only_while_it_was_his(
    tmp_path: Path,
) -> None:
    """The issue's first finding as Cy met it: the real `tonk-client` on a terminal, his seat
    given to a bot after he closed it mid-hand, back in a bot's seat, `l` on the hand."""
    deck = scripted("classic", "stock_out").deck
    with tonk_server(tmp_path, "--bot-pause", "0", "--next-hand-delay", "600") as port:
        ann = await NetClient.connect(port, "Ann")
        table = await ann.create_table("easy", name="Friday", seats=3, deck=deck, dealer=2, seed=7)
        cy = term_client(tmp_path / "first", port, "Cy")
        try:
            await cy.wait_for("Friday")
            cy.keys("Enter")
            await cy.wait_for("Your hand")
            await ann.play_until(lambda got: got["type"] == p.UPDATE and got["view"]["turn"] == CY)
            await cy.wait_for("Your turn")
        finally:
            cy.close()  # the terminal goes, on his turn
        await ann.expect(
            p.TABLE, lambda got: got["table"]["players"][CY]["status"] == "disconnected"
        )
        given = await ann.request({"type": p.SEAT_TO_BOT, "seat": CY}, p.TABLE)
        bix = given["table"]["players"][CY]["name"]
        await ann.play_until(lambda got: got["type"] == p.HAND_END, timeout=120)
        cy = term_client(tmp_path / "again", port, "Cy")
        try:
            await cy.wait_for("Friday")
            cy.keys("Enter")
            await cy.wait_for("Take it back?")  # his own seat, from the bot
            cy.keys("y")
            await cy.wait_for("(you)")
            cy.keys("l")
            await cy.wait_for("the session's hands (1)")
            cy.keys("Enter")
            deal = await cy.wait_for_all("Hand 1, as you saw it", "the deal", "Your hand: ")
            assert "Seen as a spectator" not in deal
            cy.keys("End")
            end = await cy.wait_for_all(
                "the hand is over", "Seen as a spectator sees it", f"{bix.split()[0]} "
            )
            # The board shows no hand (the seat was the bot's); "Your hand" is only the log's
            # line of the deal, which Cy saw.
            assert end.count("Your hand: ") <= 1, end
            assert f"{bix.split()[0]} " in end  # the bot, by its name, for the seat's moves
        finally:
            cy.close()
        await ann.close()
    assert table


async def test_a_seat_given_away_before_a_restart_reads_back_after_it(tmp_path: Path) -> None:
    """The seat changes hands, the server stops mid-hand and starts again on the same
    database: the hand goes on, and its history and audit still have the bot from that step."""
    deck = scripted("classic", "stock_out").deck
    async with start_server(tmp_path, grace=600) as server:
        ann = await NetClient.connect(server.port, "Ann")
        table = await ann.create_table("easy", name="Friday", seats=3, deck=deck, dealer=2, seed=7)
        token = ann.token
        cy = await NetClient.connect(server.port, "Cy")
        await cy.request({"type": p.SIT, "table": table, "seat": CY}, p.SEATED)
        await play_to_cys_second_turn(ann, cy)
        await cy.close()
        await ann.expect(
            p.TABLE, lambda got: got["table"]["players"][CY]["status"] == "disconnected"
        )
        given = await ann.request({"type": p.SEAT_TO_BOT, "seat": CY}, p.TABLE)
        bix = given["table"]["players"][CY]["name"]
        await ann.close()
    async with start_server(tmp_path, grace=600) as server:
        ann = await NetClient.connect(server.port, "Ann")
        await ann.request({"type": p.RESUME, "table": table, "token": token}, p.SEATED)
        ended = await ann.play_until(lambda got: got["type"] == p.HAND_END, timeout=120)
        steps = await answer(ann, {"type": p.HISTORY_HAND, "table": table, "hand": 1})
    assert ended["names"][CY] == bix == steps["names"][CY]
    assert [row[::2] for row in steps["occupants"]] == [[CY, "Cy"], [CY, bix]]
    with audit.read_only(tmp_path / "tonk.db") as conn:
        assert audit.table_problems(conn, table) == []


@pytest.mark.e2e
async def test_a_hand_sent_whole_after_a_crash_names_who_made_each_event(tmp_path: Path) -> None:
    """Cy's seat goes to a bot mid-hand and the bot plays it; the server is killed (SIGKILL)
    and started again on the same database. A spectator who comes after is sent the hand from
    its first event with the same `holders` live play sent: Cy's moves his, the bot's its own."""
    db = tmp_path / "tonk.db"
    deck = scripted("classic", "stock_out").deck
    async with server_process(db) as server:
        ann = await NetClient.connect(server.port, "Ann")
        table = await ann.create_table("easy", name="Friday", seats=3, deck=deck, dealer=2, seed=7)
        cy = await NetClient.connect(server.port, "Cy")
        await cy.request({"type": p.SIT, "table": table, "seat": CY}, p.SEATED)
        count = await play_to_cys_second_turn(ann, cy)
        await cy.close()
        await ann.expect(
            p.TABLE, lambda got: got["table"]["players"][CY]["status"] == "disconnected"
        )
        given = await ann.request({"type": p.SEAT_TO_BOT, "seat": CY}, p.TABLE)
        bix = given["table"]["players"][CY]["name"]
        # The bot plays Cy's turn; Ann's comes round, and she leaves it to a spectator.
        await ann.expect(p.UPDATE, lambda got: got["view"]["turn"] == ANN)
        spec = await NetClient.connect(server.port, "Spec")
        await spec.request({"type": p.WATCH, "table": table}, p.WATCHING)
        live = await spec.expect(p.UPDATE, lambda got: got["from"] == 0)
        server.kill()  # no goodbye, no last write
        await server.wait()
    assert live["holders"] == [[CY, 0, "Cy"], [CY, count, bix]]
    assert any(event.get("seat") == CY for event in live["events"][count:])  # the bot's

    async with server_process(db) as server:
        dee = await NetClient.connect(server.port, "Dee")
        await dee.request({"type": p.WATCH, "table": table}, p.WATCHING)
        again = await dee.expect(p.UPDATE, lambda got: got["from"] == 0)
        # Eve watches on the real client: her log names Cy for his deal and his turn, and
        # the bot for the turn it played in his seat.
        eve = term_client(tmp_path / "eve", server.port, "Eve")
        try:
            await eve.wait_for("Friday")
            eve.keys("w")
            bot = bix.split()[0]
            log = await eve.wait_for_all(
                "You are watching this table.",
                "Hand 1: Cy deals.",
                "│ Cy drew, discarded ",
                f"│ {bot} drew, discarded ",
            )
        finally:
            eve.close()
    assert f"{bot} deals" not in log and log.count("Cy drew") == 1, log
    assert again["hand"] == live["hand"] == 1
    assert again["events"][: len(live["events"])] == live["events"]
    assert again["holders"] == live["holders"]


@pytest.mark.e2e
async def test_a_seat_given_away_shows_beside_it_the_last_move_with_who_made_it(
    tmp_path: Path,
) -> None:
    """A large terminal (140x44) draws each player's last move beside their seat. Cy plays a
    turn, loses the link, and his seat goes to a bot before its turn comes: beside the bot's
    name, Cy's move is said as Cy's, not as a move the bot made; once the bot plays, its own."""
    deck = scripted("classic", "stock_out").deck
    async with server_process(tmp_path / "tonk.db") as server:
        ann = await NetClient.connect(server.port, "Ann")
        table = await ann.create_table("easy", name="Friday", seats=3, deck=deck, dealer=2, seed=7)
        eve = Term(140, 44)
        eve.start(
            [command_path("tonk-client"), f"127.0.0.1:{server.port}", "--name", "Eve"],
            client_env(tmp_path / "eve"),
        )
        try:
            await eve.wait_for("Friday")
            eve.keys("w")
            await eve.wait_for("You are watching this table.")
            cy = await NetClient.connect(server.port, "Cy")
            await cy.request({"type": p.SIT, "table": table, "seat": CY}, p.SEATED)
            # Ann and Cy play until Cy has played a turn and Ann's comes round.
            cy_played = False
            while True:
                got = await ann.recv()
                assert got["type"] != p.HAND_END
                if got["type"] != p.UPDATE or got["hand"] != 1:
                    continue
                view = got["view"]
                cy_played = cy_played or any(
                    event["kind"] == "discard" and event.get("seat") == CY
                    for event in got["events"]
                )
                if view["turn"] == ANN and cy_played:
                    break
                if view["turn"] == ANN:
                    await ann.play_turn_if_mine()
                elif view["turn"] == CY:
                    await read_to(cy, view["event_count"])
                    await cy.play_turn_if_mine()
            await cy.close()
            await ann.expect(
                p.TABLE, lambda got: got["table"]["players"][CY]["status"] == "disconnected"
            )
            given = await ann.request({"type": p.SEAT_TO_BOT, "seat": CY}, p.TABLE)
            bix = given["table"]["players"][CY]["name"]
            # Beside the bot's name, under its cards: Cy's move, said as Cy's.
            await eve.wait_until(
                lambda screen: move_beside(screen, bix).startswith("Cy drew, discarded"),
                "Cy's move beside the bot, with his name",
            )
            # Ann plays; the bot plays the seat: its own move beside it, said without a name.
            await ann.play_until(
                lambda got: (
                    got["type"] == p.UPDATE
                    and got["view"]["turn"] == ANN
                    and got["view"]["phase"] == "start"
                ),
                timeout=60,
            )
            await eve.wait_until(
                lambda screen: move_beside(screen, bix) not in ("", "Cy drew, discarded"),
                "the bot's own move beside it",
            )
        finally:
            eve.close()


def move_beside(screen: str, name: str) -> str:
    """On a large terminal, the last move drawn beside the seat of `name` (the second row
    under it, from its column, up to the table's right edge); "" if it is not drawn."""
    rows = screen.splitlines()
    for number, row in enumerate(rows[:-2]):
        column = row.find(name)
        if column > 0:
            return rows[number + 2][column:].split("│")[0].strip()
    return ""

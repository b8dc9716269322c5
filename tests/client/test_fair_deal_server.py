"""A deal anyone can check, through real sockets: the commitment before the deal, the players'
values in it, the secret only after the hand, a server that changes the deck after committing
caught by the client, a player who sends nothing not holding up the deal, test decks as before,
and stored hands (sealed, or older than seals) audited."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from clientkit import joined_app, my_turn, screen_shown, table_state, wait_for
from netclient import NetClient, cards_in, start_server
from test_server_audit import tonk_server
from textual.pilot import Pilot
from tonk.client.app import TonkApp
from tonk.client.connection import TableRequest
from tonk.client.dialogs import EndOfHandModal
from tonk.client.model.dealwatch import CHECKED, DealWatch
from tonk.server.tables import table_deal, table_play
from tonk.shared.game.cards import Card
from tonk.shared.game.fairdeal import deal_seed, deck_of
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p

#: A server whose deals wait for the players' values long enough for any test machine: the
#: deal goes as soon as they are in, so this is never waited out where a value is sent.
PATIENT = 30.0


def watch_of(client: NetClient, seated: bool = True) -> dict[int, Any]:
    """Every hand `client` was shown, checked as the client does it (its DealWatch fed the
    messages it received, in order): hand number to its DealChecked."""
    watch = DealWatch()
    table = 0
    for data in client.received:
        message = m.read_server(data)
        match message:
            case m.DealCommit():
                table = message.table
                watch.committed(message, seated=False)  # (values are the test's to send)
            case m.Cut():
                watch.cut(message)
            case m.Update():
                watch.update(message)
            case m.DealReveal():
                watch.revealed(message, table)
    return watch.checked


async def bot_table(client: NetClient, **table: Any) -> int:
    """`client` creates a two-seat table with an easy bot (no seed, no deck: a deal anyone can
    check), sits at seat 0; the session starts."""
    fields = {"type": p.CREATE_TABLE, "name": "Fair", "seats": 2, "bot_pause": 0, **table}
    seated = await client.request(fields, p.SEATED)
    await client.send({"type": p.ADD_BOT})
    return int(seated["table"])


async def give_value(client: NetClient, value: str) -> dict[str, Any]:
    commit = await client.expect(p.DEAL_COMMIT)
    await client.send(
        {"type": p.DEAL_VALUE, "table": commit["table"], "hand": commit["hand"], "value": value}
    )
    return commit


async def test_the_deal_follows_the_commitment_and_the_secret_comes_after_the_hand(tmp_path):
    async with start_server(tmp_path, deal_wait=PATIENT) as server:
        ann = await NetClient.connect(server.port, "Ann")
        table = await bot_table(ann)
        watcher = await NetClient.connect(server.port, "Wes")
        await watcher.request({"type": p.WATCH, "table": table}, p.WATCHING)
        commit = await give_value(ann, "5a" * 32)
        assert commit["hand"] == 1 and commit["dev"] is False and commit["wait"] > 0
        await ann.play_until(lambda msg: msg["type"] == p.HAND_END, timeout=60)
        await watcher.expect(p.HAND_END)
        reveal = next(msg for msg in ann.received if msg["type"] == p.DEAL_REVEAL)
        # Ann's value is in the deal: the server waited for it (it waits PATIENT s at most).
        assert reveal["values"] == [[0, "5a" * 32]]
        for client in (ann, watcher):
            kinds = [msg["type"] for msg in client.received]
            hand_1 = [i for i, msg in enumerate(client.received) if msg.get("hand") == 1]
            updates = [i for i in hand_1 if kinds[i] == p.UPDATE]
            commit_at, reveal_at, end_at = (
                next(i for i in hand_1 if kinds[i] == kind)
                for kind in (p.DEAL_COMMIT, p.DEAL_REVEAL, p.HAND_END)
            )
            # The commitment before the deal; the secret after the hand's last update, just
            # before its end, and in no frame before.
            assert commit_at < updates[0] and updates[-1] < reveal_at == end_at - 1
            assert not any(reveal["secret"].encode() in f for f in client.frames[:reveal_at])
            # Nor a card of the stock left at the end in any of the hand's messages (the cut's
            # cards are drawn from another stream, the next hand from another deck).
            secret = bytes.fromhex(reveal["secret"])
            deck = deck_of(deal_seed(secret, table, 1, dict(reveal["values"])))
            end = m.read_server(client.received[updates[-1]])
            assert isinstance(end, m.Update) and end.view.settlement is not None
            left = _stock_left(deck, end.view.stock_size)
            shown = cards_in([client.received[i] for i in hand_1])
            assert left and not {str(card) for card in left} & shown
            checked = watch_of(client)
            assert checked[1].ok and checked[1].line == CHECKED, checked


def _stock_left(deck: tuple[Card, ...], size: int) -> tuple[Card, ...]:
    """The cards still in the stock at the end: its bottom `size` cards, the deck's last."""
    return deck[len(deck) - size :] if size else ()


async def test_a_players_value_changes_the_deck_dealt(tmp_path, monkeypatch):
    # The server's secret made the same every time: only Ann's value differs between runs.
    monkeypatch.setattr(table_deal.secrets, "token_bytes", lambda n: bytes(range(n)))
    dealt: dict[str, list[str]] = {}
    for run, value in (("first", "01" * 32), ("again", "01" * 32), ("other", "02" * 32)):
        async with start_server(tmp_path / run, deal_wait=PATIENT) as server:
            ann = await NetClient.connect(server.port, "Ann")
            await bot_table(ann, dealer=0)
            await give_value(ann, value)
            first = await ann.expect(p.UPDATE)
            dealt[run] = [first["view"]["hand"], first["view"]["discard_top"]]
            await ann.close()
    assert dealt["first"] == dealt["again"]  # the same secret and value: the same deal
    assert dealt["other"] != dealt["first"]


async def test_a_server_changing_the_deck_after_committing_is_caught_by_the_client(
    tmp_path, monkeypatch
):
    def swapped(seed: bytes) -> tuple[Card, ...]:
        deck = list(deck_of(seed))
        deck[0], deck[1] = deck[1], deck[0]  # a card of each player's swapped
        return tuple(deck)

    monkeypatch.setattr(table_play, "deck_of", swapped)
    async with start_server(tmp_path, deal_wait=PATIENT, next_hand_delay=600.0) as server:
        app = _fair_app(server.port, tmp_path / "state")
        async with app.run_test(size=(100, 30)) as pilot:
            await _to_the_hands_end(app, pilot)
            modal = app.screen
            assert isinstance(modal, EndOfHandModal)
            line = str(modal.query_one("#deck-check").render())
            assert line.startswith("Hand 1: the deck did NOT check")
            assert "Hand 1: the deck did NOT check" in _log(app)
            warned = [n for n in app._notifications if n.severity == "error"]
            assert warned and "Hand 1" in warned[0].message


async def test_the_client_gives_its_value_and_says_the_deck_checked(tmp_path):
    async with start_server(tmp_path, deal_wait=PATIENT, next_hand_delay=600.0) as server:
        app = _fair_app(server.port, tmp_path / "state")
        async with app.run_test(size=(100, 30)) as pilot:
            watcher = await NetClient.connect(server.port, "Wes")
            await wait_for(pilot, lambda: table_state(app) is not None, "the table")
            table = int(table_state(app).table_id)  # type: ignore[union-attr]
            await watcher.request({"type": p.WATCH, "table": table}, p.WATCHING)
            await _to_the_hands_end(app, pilot)
            modal = app.screen
            assert isinstance(modal, EndOfHandModal)
            assert str(modal.query_one("#deck-check").render()) == CHECKED
            assert not [n for n in app._notifications if n.severity == "error"]
            reveal = await watcher.expect(p.DEAL_REVEAL)
            assert [seat for seat, _ in reveal["values"]] == [0]  # the client's value was used


def _fair_app(port: int, state: Path) -> TonkApp:
    """A client that creates a table for itself and a bot with no seed and no deck."""
    request = TableRequest(m.CreateTable("Fair", seats=2, bot_pause=0), bots=1)
    return joined_app(port, state, table=request)


async def _to_the_hands_end(app: TonkApp, pilot: Pilot[Any]) -> None:
    """Drop whenever it is our turn, until the end-of-hand window shows."""

    def ended() -> bool:
        return isinstance(app.screen, EndOfHandModal)

    while not ended():
        await wait_for(pilot, lambda: ended() or my_turn(app), "our turn or the hand's end")
        if not ended():
            await pilot.press("k", "k")
            await wait_for(pilot, lambda: ended() or not my_turn(app), "the drop")
    await screen_shown(pilot, EndOfHandModal, "the hand's end")


def _log(app: TonkApp) -> str:
    state = table_state(app)
    return "\n".join(line.text.plain for line in state.log) if state else ""


async def test_a_player_who_sends_nothing_does_not_hold_up_the_deal(tmp_path):
    # Bea gives no value (a client that does not take part, or a slow link): the deal goes
    # once the short wait is over, from the secret and Ann's value alone; Bea's, sent after,
    # is refused as late, and everybody checks the deal all the same.
    async with start_server(tmp_path, deal_wait=0.5) as server:
        ann = await NetClient.connect(server.port, "Ann")
        seated = await ann.request({"type": p.CREATE_TABLE, "name": "Two", "seats": 2}, p.SEATED)
        table = int(seated["table"])
        bea = await NetClient.connect(server.port, "Bea")
        await bea.request({"type": p.SIT, "table": table}, p.SEATED)
        await give_value(ann, "aa" * 32)
        commit = await bea.expect(p.DEAL_COMMIT)
        await bea.expect(p.UPDATE)
        late = {"type": p.DEAL_VALUE, "table": table, "hand": commit["hand"], "value": "bb" * 32}
        await bea.send(late)
        error = await bea.expect(p.ERROR)
        assert (error["code"], error["detail"], error["fatal"]) == (p.NO_HAND, "hand", False)
        assert "was dealt before your value came" in error["message"]

        async def play(client: NetClient) -> None:
            await client.play_until(lambda msg: msg["type"] == p.HAND_END, timeout=60)

        await asyncio.gather(play(ann), play(bea))
        reveal = next(msg for msg in ann.received if msg["type"] == p.DEAL_REVEAL)
        assert reveal["values"] == [[0, "aa" * 32]]
        for client in (ann, bea):
            assert watch_of(client)[1].ok


async def test_a_bad_value_is_refused_a_second_one_counts_and_the_table_plays_on(tmp_path):
    async with start_server(tmp_path, deal_wait=PATIENT) as server:
        ann = await NetClient.connect(server.port, "Ann")
        seated = await ann.request({"type": p.CREATE_TABLE, "name": "Two", "seats": 2}, p.SEATED)
        table = int(seated["table"])
        bea = await NetClient.connect(server.port, "Bea")
        await bea.request({"type": p.SIT, "table": table}, p.SEATED)
        commit = await ann.expect(p.DEAL_COMMIT)
        value = {"type": p.DEAL_VALUE, "table": table, "hand": commit["hand"]}
        await ann.send({**value, "value": "AB" * 32})  # upper case: not the form
        bad = await ann.expect(p.ERROR)
        assert (bad["code"], bad["detail"]) == (p.BAD_VALUE, "value")
        # Ann's client gives one, and again (as one that took its seat back would): the
        # seat's latest value counts.
        await ann.send({**value, "value": "ab" * 32})
        await ann.send({**value, "value": "cd" * 32})
        watcher = await NetClient.connect(server.port, "Wes")
        await watcher.request({"type": p.WATCH, "table": table}, p.WATCHING)
        watched = await watcher.expect(p.DEAL_COMMIT)  # the round under way, to a newcomer
        assert watched["commitment"] == commit["commitment"]
        await watcher.send({**value, "value": "ef" * 32})
        spectators = await watcher.expect(p.ERROR)
        assert spectators["code"] == p.NOT_SEATED
        await give_value(bea, "12" * 32)

        async def play(client: NetClient) -> None:
            await client.play_until(lambda msg: msg["type"] == p.HAND_END, timeout=60)

        await asyncio.gather(play(ann), play(bea))
        reveal = next(msg for msg in ann.received if msg["type"] == p.DEAL_REVEAL)
        assert reveal["values"] == [[0, "cd" * 32], [1, "12" * 32]]
        assert [msg for msg in ann.received if msg["type"] == p.ERROR] == [bad]  # one only


async def test_a_test_deck_deals_as_before_and_is_marked(tmp_path):
    async with start_server(tmp_path, deal_wait=PATIENT) as server:
        ann = await NetClient.connect(server.port, "Ann")
        await bot_table(ann, seed=5)
        commit = await ann.expect(p.DEAL_COMMIT)
        assert (commit["dev"], commit["commitment"], commit["wait"]) == (True, None, 0)
        await ann.play_until(lambda msg: msg["type"] == p.HAND_END, timeout=60)
        assert not [msg for msg in ann.received if msg["type"] == p.DEAL_REVEAL]
        # The same seed deals the same hand as ever: the seeded shuffle is untouched.
    async with start_server(tmp_path / "again", deal_wait=PATIENT) as server:
        bob = await NetClient.connect(server.port, "Ann")
        await bot_table(bob, seed=5)
        first = await bob.expect(p.UPDATE)
        ann_first = next(msg for msg in ann.received if msg["type"] == p.UPDATE)
        assert first["view"]["hand"] == ann_first["view"]["hand"]


# -- the store: seals audited, older hands still read --------------------------------------


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def sealed_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database with a bot table's three hands or more settled from sealed deals, played
    once for the module's tests: each reads it, or changes a copy of it."""
    path = tmp_path_factory.mktemp("sealed")
    async with start_server(path) as server:
        host = await NetClient.connect(server.port, "Host")
        table = await host.create_table(None, name="Sealed", seats=2, bot_pause=0)
        await host.expect(p.UPDATE)  # (the session is on)
        await host.request({"type": p.LEAVE}, p.LEFT)  # (its seat played for it)
        watcher = await NetClient.connect(server.port, "Wes")
        await watcher.request({"type": p.WATCH, "table": table}, p.WATCHING)
        await watcher.expect(p.HAND_END, lambda msg: msg["hand"] >= 3, timeout=60)
    return path / "tonk.db"


def _edit_first_record(db: Path, change: Any) -> Path:
    copy = db.parent / f"copy-{len(list(db.parent.glob('copy-*')))}.db"
    with sqlite3.connect(db) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    with sqlite3.connect(copy) as conn:
        rows = conn.execute("SELECT table_id, number, record FROM hands ORDER BY number").fetchall()
        for table, number, text in rows:
            record = json.loads(text)
            change(record)
            conn.execute(
                "UPDATE hands SET record = ? WHERE table_id = ? AND number = ?",
                (json.dumps(record), table, number),
            )
            break
    return copy


async def test_audit_checks_every_sealed_deal_and_finds_a_forged_one(sealed_db):
    audit = await asyncio.to_thread(tonk_server, "audit", "--db", str(sealed_db))
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert "deals checked against their commitment" in audit.stdout

    def other_value(record: dict[str, Any]) -> None:
        record["seal"]["values"] = [[1, "00" * 32]]

    def other_secret(record: dict[str, Any]) -> None:
        record["seal"]["secret"] = "00" * 32

    for change, said in (
        (other_value, "its deck is not the one drawn"),
        (other_secret, "the secret stored is not the one its commitment was made for"),
    ):
        copy = _edit_first_record(sealed_db, change)
        found = await asyncio.to_thread(tonk_server, "audit", "--db", str(copy))
        assert found.returncode == 1, found.stdout
        assert f"hand 1: {said}" in found.stdout, found.stdout


async def test_replay_says_what_a_hand_was_dealt_from(sealed_db):
    with sqlite3.connect(sealed_db) as conn:
        (table,) = conn.execute("SELECT id FROM tables").fetchone()
    replay = await asyncio.to_thread(tonk_server, "replay", str(table), "1", "--db", str(sealed_db))
    assert replay.returncode == 0, replay.stderr
    (line,) = [x for x in replay.stdout.splitlines() if x.startswith("Dealt from")]
    assert line.startswith("Dealt from the secret committed to (")
    assert line.endswith(": the deck is the one they draw"), line
    forged = _edit_first_record(sealed_db, lambda record: record["seal"].update(secret="00" * 32))
    again = await asyncio.to_thread(tonk_server, "replay", str(table), "1", "--db", str(forged))
    assert "NOT SOUND: the secret stored is not the one" in again.stdout


async def test_hands_stored_before_seals_still_read_audit_and_play_on(sealed_db, tmp_path):
    def older(record: dict[str, Any]) -> None:
        del record["seal"]

    copy = _edit_first_record(sealed_db, older)
    audit = await asyncio.to_thread(tonk_server, "audit", "--db", str(copy))
    assert audit.returncode == 0, audit.stdout
    assert "1 from before commitments" in audit.stdout
    # The hand in play, stored without a seal, is played on after a restart.
    with sqlite3.connect(copy) as conn:
        (last,) = conn.execute("SELECT max(number) FROM hands").fetchone()
        text = conn.execute("SELECT record FROM hands WHERE number = ?", (last,)).fetchone()[0]
        record = json.loads(text)
        record.pop("seal", None)
        conn.execute("UPDATE hands SET record = ? WHERE number = ?", (json.dumps(record), last))
        (table,) = conn.execute("SELECT id FROM tables").fetchone()
    async with start_server(tmp_path, db_path=copy) as server:
        wes = await NetClient.connect(server.port, "Wes")
        await wes.request({"type": p.WATCH, "table": table}, p.WATCHING)
        ended = await wes.expect(p.HAND_END, lambda msg: msg["hand"] >= last + 1, timeout=60)
        assert ended["hand"] >= last + 1
        checked = watch_of(wes, seated=False)
        assert checked and all(result.ok for result in checked.values()), checked

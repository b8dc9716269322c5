"""The standings across nights: what each hand counts for each seat, nights by the server's
clock, the periods, best and worst nights, units apart, people and bots apart, names claimed at
the door, the upgrade of an older database, `tonk-server standings`, and the `standings`
message through a real server after hands played from stacked decks."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from netclient import NetClient, start_server
from standingskit import Seat, hand_ops, local, settlement, table_ops, time_zone, write
from tonk.server.store import store as st
from tonk.server.store.standings import StandingsReader, connect_read_only, read_standings
from tonk.server.store.store_schema import NIGHT_TOTALS_SCHEMA, SCHEMA
from tonk.shared.game.cards import format_cards, parse_card, parse_cards, stacked_deck
from tonk.shared.game.settlement import Ending
from tonk.shared.game.standings import HandCount, Period, Standing, hand_counts
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import validate_server

ANN, BOB, ADA = ("Ann", "human"), ("Bob", "human"), ("Ada (bot)", "bot")
ANN_LOWER, CY = ("ann", "human"), ("Cy", "human")
ZED = ("Zed (bot)", "bot")  # a bot whose seat the seats table no longer holds
T1: list[Seat] = [ANN, BOB, ADA]
T2: list[Seat] = [ANN_LOWER, CY]
ZONE = "America/New_York"


def test_each_ending_counts_for_the_seats_it_should() -> None:
    dropped = settlement(Ending.DROP_WON, [1], [(0, 1, 1), (2, 1, 1)], 3, dropper=1)
    assert hand_counts(dropped, 3) == (
        HandCount(False, False, False, False, False, -1),
        HandCount(True, True, False, False, False, 2),
        HandCount(False, False, False, False, False, -1),
    )
    caught = settlement(Ending.DROP_CAUGHT, [2], [(0, 2, 2), (0, 1, 2)], 3, dropper=0)
    assert [(c.won, c.drop_caught, c.drop_won, c.net) for c in hand_counts(caught, 3)] == [
        (False, True, False, -4),
        (False, False, False, 2),
        (True, False, False, 2),
    ]
    out = hand_counts(settlement(Ending.TONK_OUT, [0], [(1, 0, 2)], 2), 2)
    assert (out[0].tonk_out, out[0].won, out[1].tonk_out) == (True, True, False)
    on_discard = hand_counts(settlement(Ending.OUT_ON_DISCARD, [1], [(0, 1, 1)], 2), 2)
    assert (on_discard[1].won, on_discard[1].tonk_out) == (True, False)
    tonks = hand_counts(settlement(Ending.DEAL_TONK, [0, 2], [(1, 0, 2), (1, 2, 2)], 3), 3)
    assert [c.deal_tonk for c in tonks] == [True, False, True]
    void = hand_counts(settlement(Ending.VOID, [], [], 2), 2)
    assert not any(c.won or c.deal_tonk for c in void) and [c.net for c in void] == [0, 0]


# -- hands of known endings at known times, through the store's statements --------------------


def every_hand(counted: bool = True) -> list[st.Op]:
    """Two tables (chips, and pennies) and their hands over four months, in New York time;
    "now" is 1:30 a.m. on Saturday 28 November 2026, still Friday the 27th's night."""
    ops = table_ops(1, T1) + table_ops(2, T2, "pennies")
    # Zed sat at table 1 for one hand, and his seat was given to Ada after it.
    ops += [*table_ops(3, [ANN, ZED])[:1], st.put_seat(3, st.SavedSeat(1, *ADA, None, None, 1))]

    def hand(table: int, number: int, seats: list[Seat], settled: Any, started: float) -> None:
        unit = "pennies" if table == 2 else "chips"
        ops.extend(hand_ops(table, number, seats, settled, started, unit, counted))

    # Tonight (the night of the 27th): Ann's drop wins, then after midnight her drop is caught.
    hand(1, 1, T1, settlement(Ending.DROP_WON, [0], [(1, 0, 1), (2, 0, 1)], 3, 0), friday(21))
    caught = settlement(Ending.DROP_CAUGHT, [1], [(0, 1, 2), (0, 2, 2)], 3, dropper=0)
    hand(1, 2, T1, caught, local(2026, 11, 28, 0, 45))
    hand(2, 1, T2, settlement(Ending.STOCK_OUT, [1], [(0, 1, 3)], 2), friday(22))
    # The night before (a minute before 6:00 on the 27th) and the Tuesday before.
    hand(2, 2, T2, settlement(Ending.OUT_ON_DISCARD, [0], [(1, 0, 1)], 2), friday(5, 59))
    out = settlement(Ending.TONK_OUT, [1], [(0, 1, 3), (2, 1, 2)], 3)
    hand(1, 3, T1, out, local(2026, 11, 24, 20))
    # This month: two deal tonks paid each (Ann's and the bot Ada's).
    tonks = settlement(Ending.DEAL_TONK, [0, 2], [(1, 0, 2), (1, 2, 2)], 3)
    hand(1, 4, T1, tonks, local(2026, 11, 10, 20))
    # In August: a throw-in, and Zed's only hand.
    hand(1, 5, T1, settlement(Ending.VOID, [], [], 3), local(2026, 8, 1, 22))
    hand(
        3, 1, [ANN, ZED], settlement(Ending.DROP_WON, [1], [(0, 1, 1)], 2, 1), local(2026, 8, 2, 21)
    )
    return ops


def friday(hour: int, minute: int = 0) -> float:
    return local(2026, 11, 27, hour, minute)


def now() -> float:
    return local(2026, 11, 28, 1, 30)


def standings_of(path: Path, period: Period) -> Any:
    conn = connect_read_only(path)
    try:
        return read_standings(conn, period, now())
    finally:
        conn.close()


def rows(answer: Any) -> dict[str, Standing]:
    return {row.name: row for row in answer.people + answer.bots}


def counts(row: Standing) -> tuple[int, ...]:
    return (row.hands, row.won, row.drops_won, row.drops_caught, row.tonk_outs, row.deal_tonks)


def nets(row: Standing) -> list[tuple[str, int, str, int, str, int]]:
    return [(n.unit, n.net, n.best_night[5:], n.best, n.worst_night[5:], n.worst) for n in row.nets]


async def test_every_column_for_each_period_by_the_servers_clock(tmp_path: Path) -> None:
    path = tmp_path / "tonk.db"
    with time_zone(ZONE):
        await write(path, every_hand())
        tonight = standings_of(path, Period.TONIGHT)
        week = standings_of(path, Period.WEEK)
        month = standings_of(path, Period.MONTH)
        always = standings_of(path, Period.ALL)
    assert (tonight.tonight, tonight.since, tonight.zone) == ("2026-11-27", "2026-11-27", "EST")
    assert (week.since, month.since, always.since) == ("2026-11-21", "2026-10-29", None)
    # Tonight: chips at table 1 (six seats played), pennies at table 2 (two).
    assert tonight.unit == "chips"
    assert [r.name for r in tonight.people] == ["Bob", "Cy", "Ann"]  # by net in chips
    assert [r.name for r in tonight.bots] == ["Ada (bot)"]
    ann, bob, cy, ada = (rows(tonight)[n] for n in ("Ann", "Bob", "Cy", "Ada (bot)"))
    # "Ann" and "ann" are one player; chips and pennies are never added together.
    assert counts(ann) == (3, 1, 1, 1, 0, 0)
    assert nets(ann) == [
        ("chips", -2, "11-27", -2, "11-27", -2),
        ("pennies", -3, "11-27", -3, "11-27", -3),
    ]
    assert counts(bob) == (2, 1, 0, 0, 0, 0) and nets(bob)[0][:2] == ("chips", 1)
    assert counts(cy) == (1, 1, 0, 0, 0, 0) and nets(cy) == [("pennies", 3, "11-27", 3, "11-27", 3)]
    assert counts(ada) == (2, 0, 0, 0, 0, 0) and nets(ada)[0][:2] == ("chips", 1)
    # The last 7 nights: the night of the 26th (5:59 on the 27th) and Tuesday the 24th.
    ann, bob = rows(week)["Ann"], rows(week)["Bob"]
    assert counts(ann) == (5, 2, 1, 1, 0, 0)  # going out on a discard: won, not a tonk out
    assert nets(ann) == [
        ("chips", -5, "11-27", -2, "11-24", -3),
        ("pennies", -2, "11-26", 1, "11-27", -3),
    ]
    assert counts(bob) == (3, 2, 0, 0, 1, 0)
    assert nets(bob) == [("chips", 6, "11-24", 5, "11-27", 1)]
    # The last 30 nights: the deal tonks of the 10th, a person's and a bot's.
    assert counts(rows(month)["Ann"]) == (6, 3, 1, 1, 0, 1)
    assert nets(rows(month)["Ann"])[0] == ("chips", -3, "11-10", 2, "11-24", -3)
    assert counts(rows(month)["Ada (bot)"]) == (4, 1, 0, 0, 0, 1)
    assert "Zed (bot)" not in rows(month)
    # All time: the throw-in counts a hand for each and a win for nobody; Zed is a bot.
    assert counts(rows(always)["Bob"]) == (5, 2, 0, 0, 1, 0)
    assert counts(rows(always)["Ann"]) == (8, 3, 1, 1, 0, 1)
    assert [r.name for r in always.bots] == ["Ada (bot)", "Zed (bot)"]
    assert counts(rows(always)["Zed (bot)"]) == (1, 1, 1, 0, 0, 0)
    assert nets(rows(always)["Ann"])[0] == ("chips", -4, "11-10", 2, "11-24", -3)


async def test_a_name_claimed_at_the_door_is_shown_as_claimed(tmp_path: Path) -> None:
    path = tmp_path / "tonk.db"
    await write(path, every_hand())
    assert "Ann" in rows(standings_of(path, Period.ALL))
    claim = st.SavedName("ANN", "ssh-ed25519 AAAA", "SHA256:x", 0.0)
    await write(path, [st.claim_name("ann", claim)])
    people = standings_of(path, Period.ALL).people
    assert [r.name for r in people if r.name.casefold() == "ann"] == ["ANN"]
    assert counts(rows(standings_of(path, Period.ALL))["ANN"])[0] == 8


@pytest.mark.e2e
async def test_an_older_database_has_its_hands_counted_when_a_server_opens_it(
    tmp_path: Path,
) -> None:
    live = tmp_path / "live.db"
    old = tmp_path / "old.db"
    with time_zone(ZONE):
        await write(live, every_hand())
        # A database as a server made before the standings across nights wrote it.
        conn = sqlite3.connect(old)
        conn.executescript(SCHEMA.replace(NIGHT_TOTALS_SCHEMA, ""))
        for sql, params in every_hand(counted=False):
            conn.execute(sql, params)
        # A hand that cannot be read is left out (the audit tells of it), the others counted.
        conn.execute(
            "INSERT INTO hands (table_id, number, record, names, settlement, started)"
            ' VALUES (9, 1, \'{}\', \'["Ann", "Bob"]\', \'{"ending": "lost"}\', ?)',
            (friday(20),),
        )
        conn.commit()
        assert not conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'night_totals'"
        ).fetchall()
        conn.close()
        before = subprocess.run(
            [sys.executable, "-m", "tonk.server", "standings", "--db", str(old), "--period", "all"],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "TZ": ZONE},
        ).stdout
        store = st.Store(old)
        store.open()  # the upgrade
        await store.close()
        store = st.Store(old)
        store.open()  # and again: nothing counted twice
        await store.close()
        for period in Period:
            assert standings_of(old, period) == standings_of(live, period), period
        after = subprocess.run(
            [sys.executable, "-m", "tonk.server", "standings", "--db", str(old), "--period", "all"],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "TZ": ZONE},
        ).stdout
    # Before its upgrade the database was read, not written, and counted the same.
    assert before == after and "Zed (bot)" in before


@pytest.mark.e2e
def test_tonk_server_standings_prints_people_then_bots(tmp_path: Path) -> None:
    path = tmp_path / "tonk.db"
    with time_zone(ZONE):
        asyncio.run(write(path, every_hand()))
    run = subprocess.run(
        [sys.executable, "-m", "tonk.server", "standings", "--db", str(path), "--period", "all"],
        capture_output=True,
        text=True,
        env={**os.environ, "TZ": ZONE},
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "All time: every night · net in chips"
    assert "(EST), each from 6:00 to 6:00 the next day" in lines[1]
    people, bots = lines.index("People"), lines.index("Bots")
    assert people < bots
    assert lines[people + 1].split() == ["Drops", "Tonks", "Best", "Worst"]
    assert lines[people + 2].split()[:4] == ["Player", "Hands", "Won", "won"]
    # Bob: 5 hands, 2 won, a tonk out, +2 chips; his best night the 24th, worst the 10th.
    assert lines[people + 3].split() == [
        *("Bob", "5", "2", "0", "0", "1", "0", "+2"),
        *("24", "Nov", "+5", "10", "Nov", "-4"),
    ]
    ann = lines.index(next(line for line in lines if line.startswith("Ann ")))
    assert lines[ann].split() == [
        *("Ann", "8", "3", "1", "1", "0", "1", "-4"),
        *("10", "Nov", "+2", "24", "Nov", "-3"),
    ]
    assert lines[ann + 1].split() == ["in", "pennies", "-2", "26", "Nov", "+1", "27", "Nov", "-3"]
    assert lines[bots + 3].startswith("Ada (bot)") and lines[bots + 4].startswith("Zed (bot)")
    assert all(len(line) <= 80 for line in lines[2:])
    # Another period, and a database that is not there.
    week = subprocess.run(
        [sys.executable, "-m", "tonk.server", "standings", "--db", str(path)],
        capture_output=True,
        text=True,
    )
    assert week.returncode == 0 and week.stdout.startswith("Tonight: the night of ")
    missing = subprocess.run(
        [sys.executable, "-m", "tonk.server", "standings", "--db", str(tmp_path / "no.db")],
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 2 and "no database at" in missing.stderr
    wrong = subprocess.run(
        [sys.executable, "-m", "tonk.server", "standings", "--period", "year"],
        capture_output=True,
        text=True,
    )
    assert wrong.returncode == 2 and "invalid choice: 'year'" in wrong.stderr


# -- through a real server, hands played from stacked decks -----------------------------------


def deck(first: str, second: str, up: str = "Qc", stock: str = "") -> str:
    """Seat 0 is dealt `first` and seat 1 `second` (seat 1 deals, so seat 0 plays first)."""
    hands = [parse_cards(first), parse_cards(second)]
    return format_cards(stacked_deck(hands, 1, parse_card(up), parse_cards(stock)))


async def one_hand(alice: NetClient, bob: NetClient | None, **table: Any) -> dict[str, Any]:
    """Alice makes a two-seat table of one hand, Bob (or a bot) sits; the hand is played (by
    `play`) and the session ends; Alice leaves. The `hand_end`."""
    play = table.pop("play")
    options = {"name": "Night", "seats": 2, "dealer": 1, "hands": 1, **table}
    table_id = await alice.create_table(*([] if bob else [None]), **options)
    if bob is not None:
        await bob.request({"type": p.SIT, "table": table_id}, p.SEATED)
    await alice.expect(p.UPDATE)
    await play()
    end = await alice.expect(p.HAND_END)
    await alice.expect(p.SESSION_END)
    await alice.request({"type": p.LEAVE}, p.LEFT)
    if bob is not None:
        await bob.request({"type": p.LEAVE}, p.LEFT)
    return end


async def test_standings_through_a_server_after_each_ending(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        alice = await NetClient.connect(server.port, "Alice")
        bob = await NetClient.connect(server.port, "Bob")

        async def alice_drops() -> None:
            await alice.send({"type": p.DROP})

        async def alice_goes_out() -> None:
            await alice.send({"type": p.DRAW_STOCK})
            await alice.expect(p.UPDATE, lambda m: m["view"]["phase"] == "play")
            await alice.send({"type": p.SPREAD, "cards": "2s 3s 4s 5s 6s 7s"})

        async def nothing() -> None:
            pass

        ends = [
            # Bob tonks on the deal (49), for 2 chips.
            await one_hand(
                alice, bob, deck=deck("2h 3d 4c 5s 7h", "10s Js Qs Ks 9h"), stake=2, play=nothing
            ),
            # Alice's drop at 15 against the bot's 46 wins, in pennies.
            await one_hand(
                alice,
                None,
                deck=deck("As 2h 3d 4c 5h", "10h 10d 9c 9d 8s"),
                unit="pennies",
                play=alice_drops,
            ),
            # Alice goes out with no discard: a tonk out.
            await one_hand(
                alice,
                None,
                deck=deck("2s 3s 4s 5s 6s", "Kh Qd Jc 9h 8d", stock="7s"),
                play=alice_goes_out,
            ),
            # Alice's drop at 46 is caught by Bob's 15.
            await one_hand(
                alice, bob, deck=deck("10h 10d 9c 9d 8s", "As 2h 3d 4c 5h"), play=alice_drops
            ),
        ]
        assert [end["settlement"]["ending"] for end in ends] == [
            "deal_tonk",
            "drop_won",
            "tonk_out",
            "drop_caught",
        ]
        paid: dict[tuple[str, str], int] = {}
        for end, unit in zip(ends, ["chips", "pennies", "chips", "chips"], strict=True):
            for payer, payee, amount in end["payments"]:
                paid[(payer, unit)] = paid.get((payer, unit), 0) - amount
                paid[(payee, unit)] = paid.get((payee, unit), 0) + amount
        bot_name = ends[1]["names"][1]
        assert bot_name.endswith("(bot)") and ends[2]["names"][1] == bot_name

        # Asked from the lobby by somebody who never played.
        carol = await NetClient.connect(server.port, "Carol")
        answer = await carol.request({"type": p.STANDINGS, "period": "all"}, p.STANDINGS)
        validate_server(answer)
        people = {row["name"]: row for row in answer["people"]}
        assert set(people) == {"Alice", "Bob"}
        assert [row["name"] for row in answer["bots"]] == [bot_name]

        def columns(row: dict[str, Any]) -> tuple[int, ...]:
            keys = ("hands", "won", "drops_won", "drops_caught", "tonk_outs", "deal_tonks")
            return tuple(row[key] for key in keys)

        def by_unit(row: dict[str, Any]) -> dict[str, int]:
            return {n["unit"]: n["net"] for n in row["nets"]}

        assert columns(people["Alice"]) == (4, 2, 1, 1, 1, 0)
        assert columns(people["Bob"]) == (2, 2, 0, 0, 0, 1)
        assert columns(answer["bots"][0]) == (2, 0, 0, 0, 0, 0)
        assert by_unit(people["Alice"]) == {
            "chips": paid[("Alice", "chips")],
            "pennies": paid[("Alice", "pennies")],
        }
        assert paid[("Alice", "pennies")] > 0 and people["Alice"]["nets"][0]["unit"] == "chips"
        assert by_unit(people["Bob"]) == {"chips": paid[("Bob", "chips")]}
        assert by_unit(answer["bots"][0]) == {
            "chips": paid[(bot_name, "chips")],
            "pennies": paid[(bot_name, "pennies")],
        }
        # Everything tonight: tonight's standings are all time's.
        tonight = await carol.request({"type": p.STANDINGS, "id": 77}, p.STANDINGS)
        assert tonight["reply_to"] == 77 and tonight["period"] == "tonight"
        assert tonight["people"] == answer["people"] and tonight["bots"] == answer["bots"]
        for row in answer["people"]:
            for net in row["nets"]:
                assert (
                    net["best"] == net["worst"] == {"night": answer["tonight"], "net": net["net"]}
                )
        # And from a table, while a hand is being played there (Alice to act first, no tonk
        # dealt: it is not over before the standings are asked for).
        await alice.create_table(
            None, name="Again", seats=2, dealer=1, deck=deck("2h 3d 4c 9s 7h", "10s Js 3s 4s 9h")
        )
        await alice.expect(p.UPDATE)
        again = await alice.request({"type": p.STANDINGS, "period": "week"}, p.STANDINGS)
        assert again["people"] == answer["people"]
        await alice.send({"type": p.STANDINGS, "period": "forever", "id": 78})
        error = await alice.expect_error(p.BAD_VALUE)
        assert error["reply_to"] == 78
        assert (error["code"], error["detail"], error["fatal"]) == (p.BAD_VALUE, "period", False)
        assert "tonight, week, month, all" in error["message"]
        for client in (alice, bob, carol):
            await client.close()


async def test_the_servers_reader_reads_again_once_a_hand_is_counted_or_a_name_claimed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "tonk.db"
    start = time.time() - 5
    dropped = settlement(Ending.DROP_WON, [0], [(1, 0, 1)], 2, dropper=0)
    await write(path, table_ops(1, [ANN, BOB]) + hand_ops(1, 1, [ANN, BOB], dropped, start))
    reader = StandingsReader(path)
    try:
        first = await reader.read(Period.ALL)
        assert counts(rows(first)["Ann"]) == (1, 1, 1, 0, 0, 0)
        again = await asyncio.gather(reader.read(Period.ALL), reader.read(Period.ALL))
        assert again[0] is again[1] is first  # nothing changed: the same answer
        await write(path, hand_ops(1, 2, [ANN, BOB], dropped, start + 1))
        counted = await reader.read(Period.ALL)
        assert counts(rows(counted)["Ann"]) == (2, 2, 2, 0, 0, 0)
        claim = st.SavedName("ANN", "ssh-ed25519 AAAA", "SHA256:x", 0.0)
        await write(path, [st.claim_name("ann", claim)])
        assert "ANN" in rows(await reader.read(Period.ALL))
        assert "ANN" in rows(await reader.read(Period.TONIGHT))
    finally:
        reader.close()

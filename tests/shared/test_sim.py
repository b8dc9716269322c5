"""The simulator and `tonk-sim`: seeded, zero-sum, every hand counted once; the command line."""

from __future__ import annotations

import csv
import functools
import json
import math
import os
import random
import shutil
import subprocess
import sys
from collections import Counter
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from checkout import ROOT
from ptyterm import Term
from test_client_terminal import colour_codes
from tonk.shared.bots.bots import BOT_STRATEGIES, BotError
from tonk.shared.game.hand import cut_for_deal
from tonk.shared.game.rules import PRESETS, HouseRules
from tonk.shared.game.settlement import Ending
from tonk.shared.sim.command import build_parser, process_runner, resolve_bot
from tonk.shared.sim.export import record_from_csv
from tonk.shared.sim.play import (
    Batch,
    HandSummary,
    SimResult,
    Table,
    compare,
    play_batch,
    registry_bot,
    seat_bots,
    simulate,
)
from tonk.shared.stats import Z95, Mean, percentile, wilson

ENDINGS = {e.value for e in Ending}


def test_the_same_seed_gives_the_same_result() -> None:
    first = simulate(PRESETS["black-tonk"], 5, 150, 42, ["easy", "sharp"])
    second = simulate(PRESETS["black-tonk"], 5, 150, 42, ["easy", "sharp"])
    assert first.to_dict() == second.to_dict()
    assert first.ledger.to_dict() == second.ledger.to_dict()
    other = simulate(PRESETS["black-tonk"], 5, 150, 43, ["easy", "sharp"])
    assert other.ledger.to_dict() != first.ledger.to_dict()


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_endings_count_every_hand_once_and_the_stakes_sum_to_zero(preset: str) -> None:
    result = simulate(PRESETS[preset], 4, 300, 7, ["easy", "sharp", "easy"])
    assert set(result.endings) == ENDINGS
    assert sum(result.endings.values()) == result.hands == 300
    assert len(result.ledger.history) == 300
    assert sum(result.net) == 0
    assert any(result.net)
    # each hand's ending in the ledger agrees with the counts
    counted = {e: 0 for e in ENDINGS}
    for entry in result.ledger.history:
        counted[entry.ending] += 1
    assert counted == result.endings
    assert result.bots == ("easy", "sharp", "easy", "easy")


def test_seat_stakes_are_zero_sum_too() -> None:
    result = simulate(PRESETS["speno"], 5, 200, 3, ["sharp", "easy"])
    assert sum(result.net) == 0 and result.endings["deal_tonk"] > 0


def test_the_first_dealer_is_found_by_the_cut() -> None:
    for seed in range(6):
        result = simulate(PRESETS["classic"], 4, 1, seed)
        assert result.first_dealer == cut_for_deal(4, random.Random(seed)).dealer


def test_a_void_double_hand_doubles_the_stakes_of_the_next_hand() -> None:
    # Tonks on the deal at 35 or more make several tonks (a void) common.
    rules = PRESETS["classic"].with_options(
        {"deal_tonk_high": 35, "several_deal_tonks": "void_double"}
    )
    result = simulate(rules, 4, 400, 1, ["easy"])
    history = result.ledger.history
    doubled = 0
    for before, after in pairwise(history):
        if before.ending == "void" and after.ending != "void":
            doubled += 1
            # a drop won pays 1 stake, a deal tonk 2, and so on: doubled, all are even
            assert all(amount % 2 == 0 for _, _, amount in after.payments), after
            assert after.payments
    assert doubled > 0
    odd = [e for e in history if any(amount % 2 for _, _, amount in e.payments)]
    assert odd, "without a void before it, a drop won pays an odd 1 stake"


def test_progress_is_reported_up_to_the_last_hand() -> None:
    seen: list[tuple[int, int]] = []
    simulate(PRESETS["classic"], 3, 250, 1, ["easy"], progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (250, 250)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_a_shorter_bot_list_repeats_and_unknown_bots_are_refused() -> None:
    assert seat_bots(["easy", "sharp"], 5) == ("easy", "sharp", "easy", "sharp", "easy")
    with pytest.raises(BotError, match="unknown bot 'wild'"):
        seat_bots(["easy", "wild"], 4)
    with pytest.raises(ValueError, match="2 to 4"):
        simulate(PRESETS["classic"], 5, 10, 1)


# -- the command line ----------------------------------------------------------------------------


def tonk_sim() -> list[str]:
    """The installed console script (next to this Python, or on PATH)."""
    beside = Path(sys.executable).with_name("tonk-sim")
    found = str(beside) if beside.exists() else shutil.which("tonk-sim")
    assert found, "tonk-sim is not installed: pip install -e ."
    return [found]


def run_sim(*args: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run(
        [*tonk_sim(), *args], capture_output=True, text=True, timeout=120, check=False, env=env
    )


@pytest.mark.e2e
def test_tonk_sim_json_has_every_key() -> None:
    done = run_sim(
        "--rules", "speno", "--players", "5", "--hands", "120", "--seed", "9", "--bots",
        "easy,sharp", "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["hands"] == 120 and data["players"] == 5
    assert data["rules"] == "speno" and data["seed"] == 9
    assert set(data["endings"]) == ENDINGS
    assert sum(data["endings"].values()) == 120
    assert [s["bot"] for s in data["seats"]] == ["easy", "sharp", "easy", "sharp", "easy"]
    assert sum(s["net"] for s in data["seats"]) == 0
    assert all(set(s) >= {"bot", "net", "wins"} for s in data["seats"])
    assert data["hands_per_second"] > 0
    again = json.loads(run_sim(
        "--rules", "speno", "--players", "5", "--hands", "120", "--seed", "9", "--bots",
        "easy,sharp", "--json",
    ).stdout)  # fmt: skip
    assert again["seats"] == data["seats"] and again["endings"] == data["endings"]


@pytest.mark.e2e
def test_tonk_sim_defaults_and_table(tmp_path: Path) -> None:
    done = run_sim("--hands", "50")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "50 hands of classic, 4 players, seed 1" in out
    for label in ("drop won", "drop caught", "stock out", "tonk out", "hands per second"):
        assert label in out
    assert out.count("easy") == 4
    rules = tmp_path / "house.toml"
    rules.write_text('preset = "pagat"\nhit_lock = 1\n')
    data = json.loads(run_sim("--rules", str(rules), "--hands", "30", "--json").stdout)
    assert data["rules"] == "pagat+" and data["rules_options"] == {"preset": "pagat", "hit_lock": 1}


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rules", "poker"], "unknown preset 'poker'"),
        (["--players", "5"], "--players must be 2 to 4"),
        (["--rules", "speno", "--players", "6"], "--players must be 2 to 5"),
        (["--players", "1"], "--players must be 2 to 4"),
        (["--bots", "easy,genius"], "unknown bot 'genius'"),
        (["--hands", "-3"], "--hands cannot be negative"),
        (["--hands", "many"], "invalid int value"),
        (["--sweep", "hit_lok=0,1"], "--sweep: unknown option 'hit_lok'"),
        (["--sweep", "hit_lock"], "--sweep takes OPTION=V1,V2"),
        (["--sweep", "hit_lock=0,9"], "option hit_lock cannot be 9"),
        (["--sweep", "hit_lock=1", "--compare", "pagat"], "not allowed with"),
        (["--compare", "poker"], "--compare: unknown preset 'poker'"),
        (["--stakes", "1,2,1,1"], "--stakes: one stake for the table"),
        (["--rules", "speno", "--stakes", "1,2"], "one for each of the 4 seats"),
        (["--stakes", "0"], "--stakes: a stake is a whole number"),
        (["--stakes", "x"], "--stakes: stakes are whole numbers"),
        (["--jobs", "0"], "--jobs must be 1 or more"),
        (["--export", "hands.txt"], "--export: name a .jsonl"),
        (["--bots", "nosuchmodule:Bot"], "cannot import 'nosuchmodule'"),
        (["--bots", "json:NoSuchBot"], "module 'json' has no 'NoSuchBot'"),
        (["--bots", "json:dumps"], "failed"),
    ],
)
def test_tonk_sim_bad_arguments_exit_2_with_one_line(args: list[str], message: str) -> None:
    done = run_sim(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.e2e
def test_tonk_sim_bad_toml_exits_2(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("preset = [\n")
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('preset = "classic"\nhit_lock = "often"\n')
    for path, message in ((broken, "not valid TOML"), (wrong, "hit_lock")):
        done = run_sim("--rules", str(path))
        assert done.returncode == 2
        assert message in done.stderr and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


# -- statistics ----------------------------------------------------------------------------------


def test_a_95_percent_interval_holds_a_known_mean_about_95_times_in_100() -> None:
    # Synthetic nets with a known mean (0.35): a hand's net is -2, -1, +1 or +3.
    values, weights = (-2, -1, 1, 3), (0.2, 0.3, 0.3, 0.2)
    true_mean = sum(v * w for v, w in zip(values, weights, strict=True))
    rng = random.Random(11)
    covered = 0
    for _ in range(600):
        mean = Mean()
        mean.extend(rng.choices(values, weights, k=150))
        ci = mean.ci95()
        assert ci is not None and ci[0] < ci[1]
        covered += ci[0] <= true_mean <= ci[1]
    assert 0.925 <= covered / 600 <= 0.975, covered


def test_a_rate_interval_holds_a_known_rate_about_95_times_in_100() -> None:
    rng = random.Random(12)
    covered = 0
    for _ in range(800):
        hits = sum(rng.random() < 0.08 for _ in range(120))
        ci = wilson(hits, 120)
        assert ci is not None
        covered += ci[0] <= 0.08 <= ci[1]
    assert 0.925 <= covered / 800 <= 0.98, covered
    # never empty at the edges, never outside 0 to 1
    low, high = wilson(0, 50) or (1.0, 0.0)
    assert low == 0.0 and 0.05 < high < 0.1
    assert wilson(50, 50) == (pytest.approx(1 - high), 1.0)
    assert wilson(0, 0) is None and Mean().ci95() is None


def test_percentiles_of_counted_values() -> None:
    counts = Counter({0: 2, 5: 3, 9: 5})
    assert [percentile(counts, q) for q in (0.1, 0.2, 0.21, 0.5, 0.51, 1.0)] == [0, 0, 5, 5, 9, 9]
    assert percentile(Counter(), 0.5) is None


# -- the same results in any number of processes -------------------------------------------------

# Deal tonks at 35 or more make several tonks (a void) common: under void_double the hand after
# one is played at x2, so the multiplier crosses from batch to batch.
DOUBLING = PRESETS["classic"].with_options(
    {"deal_tonk_high": 35, "several_deal_tonks": "void_double"}
)


def hands_of(rules: HouseRules, hands: int, **kwargs: Any) -> tuple[SimResult, list[HandSummary]]:
    seen: list[HandSummary] = []
    result = simulate(rules, 4, hands, 5, ["easy", "sharp"], on_hand=seen.append, **kwargs)
    return result, seen


@functools.cache
def classic_hands() -> tuple[SimResult, tuple[HandSummary, ...]]:
    """hands_of(classic, 300), played once for the tests that read it (none changes it)."""
    result, seen = hands_of(PRESETS["classic"], 300)
    return result, tuple(seen)


def reference(rules: HouseRules, hands: int, batch_size: int) -> list[HandSummary]:
    """The hands as played one batch after another, each batch from the multiplier the batch
    before it left: what any runner must come to."""
    result = simulate(rules, 4, 0, 5)  # the first dealer, by the cut
    table = Table(rules, 4, 5, ("easy", "sharp") * 2, (1,) * 4, result.first_dealer)
    factories = [registry_bot(name) for name in table.bots]
    out: list[HandSummary] = []
    multiplier = 1
    for start in range(0, hands, batch_size):
        batch = Batch(table, start, min(hands, start + batch_size))
        out += play_batch(batch, factories, multiplier)
        multiplier = out[-1].settlement.next_multiplier
    return out


def test_processes_give_the_same_hands_as_one_process_and_carry_the_multiplier() -> None:
    expected = reference(DOUBLING, 240, 7)
    # the test means something only if a doubled hand opens some batch
    assert any(h.multiplier > 1 and h.number % 7 == 0 for h in expected)
    assert any(h.multiplier > 2 for h in expected)
    for before, after in pairwise(expected):
        assert after.multiplier == before.settlement.next_multiplier
    one, seen = hands_of(DOUBLING, 240, batch_size=7)
    assert seen == expected
    other, seen = hands_of(DOUBLING, 240, batch_size=7, runner=process_runner(2))
    assert seen == expected
    assert other.to_dict() == one.to_dict()
    assert other.ledger.to_dict() == one.ledger.to_dict()


def test_a_batch_deals_the_same_decks_however_its_hands_are_played() -> None:
    table = Table(PRESETS["classic"], 4, 9, ("easy",) * 4, (1,) * 4, 2)
    batch = Batch(table, 300, 340)
    easy = play_batch(batch, [registry_bot("easy")] * 4)
    sharp = play_batch(batch, [registry_bot("sharp")] * 4)
    assert [h.deck for h in easy] == [h.deck for h in sharp]
    assert [h.ending for h in easy] != [h.ending for h in sharp]
    assert play_batch(batch, [registry_bot("easy")] * 4) == easy
    assert len({h.deck for h in easy}) == 40
    # hand 300 is dealt by seat 2 (the first dealer, 2, and 300 deals later): seat 0 is second
    # from the dealer's left, so gets the second card and every fourth after it
    assert easy[0].dealer == 2 and easy[0].deal[0] == easy[0].deck[1:20:4]


@pytest.mark.e2e
def test_tonk_sim_jobs_give_the_same_report_and_export(tmp_path: Path) -> None:
    reports = []
    for jobs in ("1", "2"):
        path = tmp_path / f"hands{jobs}.jsonl"
        done = run_sim(
            "--rules", "speno", "--players", "3", "--hands", "250", "--seed", "4", "--json",
            "--jobs", jobs, "--export", str(path),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        data = json.loads(done.stdout)
        assert data.pop("jobs") == int(jobs)
        for key in ("seconds", "hands_per_second"):
            data.pop(key)
        reports.append((data, path.read_text()))
    assert reports[0] == reports[1]


# -- what a report holds -------------------------------------------------------------------------


def test_nets_by_position_follow_the_dealer() -> None:
    result, seen = hands_of(PRESETS["pagat"], 300)
    data = result.to_dict()
    by_position = [0] * 4
    for hand in seen:
        net = hand.settlement.net(4)
        for seat in range(4):
            by_position[(seat - hand.dealer - 1) % 4] += net[seat]
    assert [p["net"] for p in data["by_position"]] == by_position
    assert sum(by_position) == 0 and any(by_position)
    assert [p["label"] for p in data["by_position"]][::3] == [
        "1st to act (dealer's left)",
        "dealer (last to act)",
    ]
    for entry in data["by_position"] + data["seats"]:
        low, high = entry["ci95"]
        assert low < entry["net_per_hand"] < high
    wins = sum(p["wins"] for p in data["by_position"])
    assert wins == sum(s["wins"] for s in data["seats"])


def test_the_endings_break_down_and_their_money_adds_up() -> None:
    # Low tonks at 25 or less and tonks at 40 or more make every kind of deal tonk common.
    rules = PRESETS["speno"].with_options({"deal_tonk_low": 25, "deal_tonk_high": 40})
    result = simulate(rules, 5, 300, 3, ["easy"], stakes=(1, 2, 3, 1, 2))
    data = result.to_dict()
    kinds = data["deal_tonks"]
    assert all(kinds[k]["hands"] > 0 for k in ("high", "low", "several"))
    assert sum(k["hands"] for k in kinds.values()) == result.endings["deal_tonk"]
    caught = data["caught_by"]
    assert sum(c["hands"] for c in caught.values()) == result.endings["drop_caught"] > 0
    paid: Counter[str] = Counter()
    for entry in result.ledger.history:
        paid[entry.ending] += sum(amount for _, _, amount in entry.payments)
    assert {e: m["stakes"] for e, m in data["money"].items()} == {e: paid[e] for e in ENDINGS}
    rates = data["ending_rates"]
    assert sum(r["hands"] for r in rates.values()) == 300
    for rate in rates.values():
        low, high = rate["ci95"]
        assert low <= rate["rate"] <= high


def test_turns_are_counted_so_the_dropper_is_the_seat_whose_turn_it_was() -> None:
    result, seen = classic_hands()
    drops = [h for h in seen if h.settlement.dropper is not None]
    assert len(drops) > 100
    for hand in drops:
        assert hand.drop_turn == hand.turns
        assert hand.settlement.dropper == (hand.dealer + hand.turns) % 4
    for hand in seen:
        assert (hand.turns == 0) == (hand.ending in ("deal_tonk", "void"))
        if hand.ending == "stock_out":
            assert hand.stock_left == 0
    data = result.to_dict()
    turns = data["hand_turns"]
    assert sum(turns["counts"].values()) == 300
    assert turns["p10"] <= turns["p50"] <= turns["p90"] <= turns["max"]
    assert turns["mean"] == pytest.approx(sum(h.turns for h in seen) / 300, abs=1e-3)
    assert sum(data["drop_turns"]["counts"].values()) == len(drops)
    low = sum(1 for h in seen if h.turns and h.stock_left < 4)
    assert data["stock_low"]["hands"] == low > 0


def test_seat_stakes_size_each_payment_by_the_rule() -> None:
    stakes = (1, 2, 5)
    result, seen = hands_of_three(PRESETS["speno"], stakes)
    assert result.stakes == stakes
    checked = set()
    for hand in seen:
        for p in hand.settlement.payments:
            if hand.ending == "deal_tonk":  # sized by the payer's stake
                assert p.amount == 2 * stakes[p.payer]
            elif hand.ending in ("drop_won", "out_on_discard", "stock_out"):
                assert p.amount == stakes[p.payee]
            checked.add(hand.ending)
    assert {"deal_tonk", "drop_won", "stock_out"} <= checked
    with pytest.raises(ValueError, match="stake_mode = seat"):
        simulate(PRESETS["classic"], 3, 1, 1, stakes=(1, 2, 5))


def hands_of_three(
    rules: HouseRules, stakes: tuple[int, ...]
) -> tuple[SimResult, list[HandSummary]]:
    seen: list[HandSummary] = []
    result = simulate(rules, 3, 400, 8, ["easy"], stakes=stakes, on_hand=seen.append)
    return result, seen


# -- comparisons on the same deals ---------------------------------------------------------------


@pytest.mark.slow
def test_rule_sets_are_compared_on_the_same_deals() -> None:
    base, base_hands = classic_hands()
    dearer, dearer_hands = hands_of(PRESETS["classic"].with_options({"caught_pays": 4}), 300)
    assert [h.deal for h in base_hands] == [h.deal for h in dearer_hands]
    assert [h.dealer for h in base_hands] == [h.dealer for h in dearer_hands]
    same = compare(base, base)
    assert same["hands_alike"] == 300
    assert same["seats"][0]["net_per_hand"] == {"difference": 0.0, "ci95": [0.0, 0.0]}
    diff = compare(base, dearer)
    # the deals are the same, so the tonks on the deal are exactly the same
    assert diff["endings"]["deal_tonk"] == {"difference": 0.0, "ci95": [0.0, 0.0]}
    # paired on the deals, the difference is measured far more closely than two separate runs
    # would measure it
    for seat in range(4):
        paired = diff["seats"][seat]["net_per_hand"]["ci95"]
        apart = [r.tally.seat_net(seat) for r in (base, dearer)]
        unpaired = Z95 * math.sqrt(sum(variance(m) / m.n for m in apart))
        assert paired[1] - paired[0] < unpaired
    with pytest.raises(ValueError, match="same deals"):
        compare(base, simulate(PRESETS["classic"], 4, 300, 6, ["easy", "sharp"]))


def variance(mean: Mean) -> float:
    m = mean.total / mean.n
    return (mean.squares - mean.n * m * m) / (mean.n - 1)


@pytest.mark.e2e
def test_tonk_sim_sweep_and_compare(tmp_path: Path) -> None:
    done = run_sim(
        "--rules", "speno", "--players", "3", "--hands", "200", "--json", "--jobs", "1",
        "--sweep", "deal_tonk_low=10,12,15",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["variants"] == ["deal_tonk_low=10", "deal_tonk_low=12", "deal_tonk_low=15"]
    assert data["sweep"] == {"option": "deal_tonk_low", "values": [10, 12, 15]}
    # (15 is speno's own: no override)
    assert [r["rules_options"].get("deal_tonk_low") for r in data["runs"]] == [10, 12, None]
    rates = [r["ending_rates"]["deal_tonk"]["rate"] for r in data["runs"]]
    assert rates[0] <= rates[1] <= rates[2] and rates[0] < rates[2]
    assert [d["variant"] for d in data["differences"]] == data["variants"][1:]
    low, high = data["differences"][1]["endings"]["deal_tonk"]["ci95"]
    assert 0 < low < high  # more low tonks at 15 than at 10, beyond doubt
    house = tmp_path / "house.toml"
    house.write_text('preset = "classic"\ncaught_pays = 4\n')
    table = run_sim(
        "--hands", "100", "--jobs", "1", "--compare", str(house), "--compare", "pagat",
        columns=160,
    )  # fmt: skip
    assert table.returncode == 0, table.stderr
    assert "differences from classic" in table.stdout
    assert "house.toml" in table.stdout and "pagat" in table.stdout
    assert "tonk on the" in table.stdout and "net/hand, dealer" in table.stdout


# -- the export ----------------------------------------------------------------------------------


@pytest.mark.e2e
def test_the_export_round_trips_as_json_lines_and_csv(tmp_path: Path) -> None:
    lines, table = tmp_path / "hands.jsonl", tmp_path / "hands.csv"
    args = ["--rules", "speno", "--players", "5", "--hands", "150", "--seed", "2", "--jobs", "1"]
    args += ["--stakes", "1,2,1,3,1", "--json"]
    first = run_sim(*args, "--export", str(lines))
    second = run_sim(*args, "--export", str(table))
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    records = [json.loads(line) for line in lines.read_text().splitlines()]
    with table.open(newline="") as handle:
        rows = [record_from_csv(row) for row in csv.DictReader(handle)]
    assert rows == records
    assert [r["hand"] for r in records] == list(range(1, 151))
    data = json.loads(first.stdout)
    assert [sum(r["net"][s] for r in records) for s in range(5)] == [
        s["net"] for s in data["seats"]
    ]
    assert Counter(r["ending"] for r in records) == +Counter(data["endings"])
    for record in records:
        assert sum(record["net"]) == 0
        assert len(record["deal"]) == 5 and all(len(d.split()) == 5 for d in record["deal"])
        assert record["variant"] == "speno"
    assert {r["tonk"] for r in records} >= {None, "low"}


# -- bots of one's own ---------------------------------------------------------------------------

OWN_BOT = '''
import random

from tonk.shared.game.actions import Discard, DrawStock, Drop, Hit, LaySpread
from tonk.shared.game.cards import count


class DropAtTen:
    """Draws from the stock, lays what it can, throws its highest card, drops at 10 or less."""

    strategy = "drop-at-ten"

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def observe(self, events):
        pass

    def choose(self, view):
        legal = view.legal()
        seat = view.seat
        if legal.drop and count(view.hand) <= 10:
            return Drop(seat)
        if legal.draw_stock:
            return DrawStock(seat)
        if legal.spreads:
            return LaySpread(seat, legal.spreads[0])
        if legal.hits:
            card, spread = legal.hits[0]
            return Hit(seat, card, spread)
        return Discard(seat, max(legal.discards, key=lambda card: card.value))


class Cheat(DropAtTen):
    def choose(self, view):
        return Drop((view.seat + 1) % view.players)
'''


@pytest.mark.e2e
def test_tonk_sim_plays_a_bot_of_ones_own_in_several_processes(tmp_path: Path) -> None:
    (tmp_path / "mybots.py").write_text(OWN_BOT)
    args = ["--hands", "220", "--bots", "mybots:DropAtTen,easy", "--json", "--jobs"]
    runs = []
    for jobs in ("1", "2"):
        done = subprocess.run(
            [*tonk_sim(), *args, jobs], capture_output=True, text=True, timeout=120, cwd=tmp_path
        )
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout))
    assert [s["bot"] for s in runs[0]["seats"]] == ["mybots:DropAtTen", "easy"] * 2
    assert runs[0]["seats"] == runs[1]["seats"]
    cheat = subprocess.run(
        [*tonk_sim(), "--hands", "5", "--bots", "mybots:Cheat"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert cheat.returncode == 1 and "a bot failed" in cheat.stderr
    assert len(cheat.stderr.strip().splitlines()) == 1


@pytest.mark.e2e
def test_tonk_sim_draws_pictures_without_colour_into_a_pipe() -> None:
    done = run_sim("--hands", "120", "--plot", "--jobs", "1")
    assert done.returncode == 0, done.stderr
    assert "hands by the turn they ended on" in done.stdout
    assert "each seat's running net" in done.stdout and "seat 3 (easy)" in done.stdout
    assert "\x1b[" not in done.stdout


@pytest.mark.e2e
async def test_tonk_sim_draws_pictures_without_colour_on_a_terminal_under_no_color() -> None:
    term = Term(100, 40)
    try:
        term.start([*tonk_sim(), "--hands", "120", "--plot", "--jobs", "1"], {"NO_COLOR": "1"})
        assert await term.wait_exit(120) == 0
        raw = term.raw()
    finally:
        term.close()
    assert b"running net" in raw
    found = colour_codes(raw)
    assert found == [], sorted(set(found))[:5]


@pytest.mark.e2e
def test_the_manuals_bot_of_ones_own_plays(tmp_path: Path) -> None:
    manual = (ROOT / "docs" / "simulating.md").read_text(encoding="utf-8")
    section = manual.split("**A bot of your own.**", 1)[1]
    (tmp_path / "mybots.py").write_text(section.split("```python\n", 1)[1].split("```", 1)[0])
    done = subprocess.run(
        [*tonk_sim(), "--hands", "60", "--bots", "mybots:Cautious,sharp", "--json", "--jobs", "1"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [s["bot"] for s in data["seats"]][:2] == ["mybots:Cautious", "sharp"]
    assert sum(data["endings"].values()) == 60


@pytest.mark.e2e
@pytest.mark.parametrize("name", BOT_STRATEGIES)
def test_every_bot_of_the_registry_plays_in_tonk_sim(name: str) -> None:
    # tonk-sim takes its bots from the registry: a bot added there is offered here at once.
    result = simulate(PRESETS["speno"], 3, 12, 1, [name], resolve=resolve_bot)
    assert result.bots == (name,) * 3 and sum(result.endings.values()) == 12
    assert name in build_parser().format_help().replace("\n", " ")


@pytest.mark.e2e
def test_tonk_sim_says_when_it_cannot_write_the_export(tmp_path: Path) -> None:
    done = run_sim("--hands", "5", "--export", str(tmp_path / "no" / "such" / "dir.csv"))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("tonk-sim: error: cannot write ") and "dir.csv" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1

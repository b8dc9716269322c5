"""The simulator and `tonk-sim`: seeded, zero-sum, every hand counted once; the command line."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest
from tonk.shared.bots import BotError
from tonk.shared.hand import cut_for_deal
from tonk.shared.rules import PRESETS
from tonk.shared.settlement import Ending
from tonk.shared.sim import seat_bots, simulate

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


def run_sim(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*tonk_sim(), *args], capture_output=True, text=True, timeout=120, check=False
    )


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
    ],
)
def test_tonk_sim_bad_arguments_exit_2_with_one_line(args: list[str], message: str) -> None:
    done = run_sim(*args)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert "Traceback" not in done.stderr


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

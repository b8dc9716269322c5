"""Counts in words: "1 hand", never "1 hands" or "1 hand(s)"."""

from __future__ import annotations

import io

from rich.console import Console
from tonk.shared.game.rules import PRESETS
from tonk.shared.game.words import plural
from tonk.shared.sim.play import simulate
from tonk.shared.sim.text import result_table


def test_a_count_takes_its_noun_in_the_right_number() -> None:
    assert plural(1, "hand") == "1 hand"
    assert plural(0, "hand") == "0 hands"
    assert plural(2, "table") == "2 tables"
    assert plural(3, "box", "boxes") == "3 boxes"


def test_one_simulated_hand_is_one_hand() -> None:
    result = simulate(PRESETS["classic"], 2, 1, seed=3)
    console = Console(file=io.StringIO(), width=100)
    console.print(result_table(result, 0.1))
    text = console.file.getvalue()  # type: ignore[attr-defined]
    assert "1 hand of classic" in text and "1 hands" not in text


def test_an_amount_is_named_in_the_tables_unit_in_the_right_number() -> None:
    from tonk.shared.game.words import amount_text

    assert amount_text(1, "chips") == "1 chip"
    assert amount_text(3, "chips") == "3 chips"
    assert amount_text(1, "pennies") == "1 penny"
    assert amount_text(2, "penny") == "2 pennies"
    assert amount_text(5, "$") == "5 $"
    assert amount_text(4, "") == "4"

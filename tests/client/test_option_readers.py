"""Every reader of house-rule options is made from the core's one table of them (OPTIONS): the
server's and the simulator's command lines, rules files, and the text the create-table form
reads. Each reader is checked here against every option, so an option added to the table and
missing from a reader fails; the client's help and the form's hint list them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tonk.client.dialogs.createtable import option_hint
from tonk.client.dialogs.help import option_rows
from tonk.server.commands.cli import build_config, parse_args
from tonk.shared.game.rules import OPTIONS, PRESETS, HouseRules, Option, parse_options
from tonk.shared.sim.command import UsageError
from tonk.shared.sim.command import parse_args as sim_args


def typed(value: Any) -> str:
    """An option's value as a person types it."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(getattr(value, "value", value))


#: Every option at a value other than classic's (a whole number's other end, a switch turned
#: over, another choice), with a base preset that allows it.
def other_value(name: str) -> Any:
    option = OPTIONS[name]
    if option.kind is bool:
        return not option.default
    if option.kind is int:
        return option.high if option.default != option.high else option.low
    return next(member for member in option.kind if member != option.default)


def test_tonk_server_changes_every_option_of_its_default_rules(tmp_path: Path) -> None:
    for name in OPTIONS:
        if name == "caught_dropper_pays_lowest":
            continue  # needs another option: below
        value = other_value(name)
        args = parse_args(["--db", str(tmp_path / "t.db"), "--option", f"{name}={typed(value)}"])
        rules = build_config(args).default_rules
        assert getattr(rules, name) == value, name
        assert rules.name == "classic+"
    args = parse_args(
        [
            "--rules",
            "speno",
            "--option",
            "caught_dropper_pays_lowest=yes",
            "--option",
            "deal_tonk_low=off",
        ]
    )
    rules = build_config(args).default_rules
    assert rules == PRESETS["speno"].with_options(
        {"caught_dropper_pays_lowest": True, "deal_tonk_low": None}
    )


def test_tonk_server_names_every_option_and_refuses_a_bad_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit):
        parse_args(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name in OPTIONS:
        assert name in text, name
    with pytest.raises(ValueError, match="--option: option hit_lock cannot be 9"):
        build_config(parse_args(["--option", "hit_lock=9"]))
    with pytest.raises(ValueError, match="--option: unknown option 'jokers'"):
        build_config(parse_args(["--option", "jokers=1"]))


def test_tonk_server_takes_the_watched_pace_and_refuses_a_negative_one() -> None:
    assert build_config(parse_args([])).watched_pace == 1.0
    assert build_config(parse_args(["--watched-pace", "2.5"])).watched_pace == 2.5
    assert build_config(parse_args(["--watched-pace", "0"])).watched_pace == 0.0
    with pytest.raises(ValueError, match="--watched-pace takes a number of seconds"):
        build_config(parse_args(["--watched-pace", "-1"]))


def test_tonk_sim_sweeps_every_option() -> None:
    for name in OPTIONS:
        base = "black-tonk" if name == "caught_dropper_pays_lowest" else "classic"
        first = getattr(PRESETS[base], name)
        second = other_value(name)
        plan = sim_args(["--rules", base, "--sweep", f"{name}={typed(first)},{typed(second)}"])
        assert [getattr(rules, name) for _, rules in plan.variants] == [first, second], name
        assert [label for label, _ in plan.variants] == [
            f"{name}={typed(first)}",
            f"{name}={typed(second)}",
        ]
    with pytest.raises(UsageError, match="--sweep: option hit_books cannot be 'maybe'"):
        sim_args(["--sweep", "hit_books=true,maybe"])


def test_a_rules_file_sets_every_option(tmp_path: Path) -> None:
    lines = ['preset = "black-tonk"']
    expected: dict[str, Any] = {}
    for name in OPTIONS:
        value = other_value(name)
        if name == "caught_others_pay_lowest":
            value = True  # black-tonk's, which caught_dropper_pays_lowest needs
        expected[name] = value
        if isinstance(value, bool):
            lines.append(f"{name} = {typed(value)}")
        elif isinstance(value, int):
            lines.append(f"{name} = {value}")
        else:
            lines.append(f'{name} = "{typed(value)}"')
    path = tmp_path / "every.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rules = HouseRules.load(str(path))
    assert rules.options() == {**PRESETS["black-tonk"].options(), **expected}


def test_the_forms_text_sets_every_option() -> None:
    """The create-table form hands its Options text to `parse_options` (the form itself is
    driven in test_client_lobby.py)."""
    text = " ".join(
        f"{name}={typed(other_value(name) if name != 'caught_others_pay_lowest' else True)}"
        for name in OPTIONS
    )
    options = parse_options(text)
    assert list(options) == list(OPTIONS)
    rules = PRESETS["classic"].with_options(options)
    assert all(getattr(rules, name) != OPTIONS[name].default for name in OPTIONS)


def test_the_help_lists_every_option_with_what_it_takes_and_its_classic_value() -> None:
    rows = dict(option_rows())
    assert list(rows) == list(OPTIONS)
    for option in OPTIONS.values():
        text = rows[option.name]
        assert f"Takes {option.takes};" in text
        classic = getattr(PRESETS["classic"], option.name)
        assert text.endswith(f"classic: {option.typed(classic)}.")
        assert option.parse(option.typed(classic)) == classic  # typed as the form reads it
        assert option.meaning.replace("`", "") in text


def test_an_option_added_to_the_table_shows_in_the_help_and_the_forms_hint(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The help and the form's hint read the table: a new option needs no client change."""
    added = Option(
        name="jokers", kind=int, default=0, meaning="jokers in the deck", low=0, high=2, noun="a"
    )
    monkeypatch.setitem(OPTIONS, "jokers", added)
    assert dict(option_rows())["jokers"] == (
        "jokers in the deck. Takes a 0 (off) to 2; classic: 0."
    )
    assert option_hint("hit_lock=1 jok") == "Options: jokers"
    assert option_hint("hit_lock=1 jokers=") == (
        "jokers: takes a 0 (off) to 2; classic: 0. Jokers in the deck."
    )


def test_the_forms_hint_follows_the_option_being_typed() -> None:
    assert option_hint("") == ""
    assert option_hint("deal_tonk_") == "Options: deal_tonk_high, deal_tonk_low, deal_tonk_pays"
    assert option_hint("hit_lock=1, no_re").startswith("Options: no_rediscard")
    assert option_hint("hit_lock=1").startswith(
        "hit_lock: takes a whole number of turns, 0 (off) to 5; classic: 0. A player whose spread"
    )
    assert option_hint("hit_lock=1 ") == ""
    assert option_hint("jokers") == "No option begins 'jokers'; f1 lists them."


def test_the_forms_hint_is_cut_at_a_word_never_mid_word_and_says_so() -> None:
    from tonk.client.dialogs.createtable import HINT_CHARS, option_explained

    for name, option in OPTIONS.items():
        hint = option_hint(f"{name}=")
        whole = option_explained(name)
        assert len(hint) <= HINT_CHARS, name
        assert hint.startswith(f"{name}: takes {option.takes}"), hint
        if hint != whole:
            kept = hint.removesuffix("…")
            assert hint.endswith("…") and whole.startswith(kept), hint
            assert whole[len(kept)] in " ,;:.", (hint, whole)  # a word kept whole


def test_no_help_repeats_itself_or_counts_turns_with_s_in_brackets() -> None:
    for name, text in option_rows():
        assert "(s)" not in text, text
        option = OPTIONS[name]
        assert option.meaning.rstrip(",.") not in option.takes, name
    one = HouseRules.preset_named("classic").with_options({"hit_lock": 1})
    assert any(line.endswith("their next turn.") for line in one.describe())

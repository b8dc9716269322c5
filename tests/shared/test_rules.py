"""House rules: the presets exactly as tabled in the rules, option validation, TOML rules files,
and the plain-English description."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from checkout import ROOT
from tonk.shared.game.rules import (
    OPTIONS,
    PRESETS,
    HouseRules,
    RulesError,
    SeveralDealTonks,
    StakeMode,
    option_named,
    options_reference,
    parse_option,
    parse_options,
)

VOID, PAY_EACH = SeveralDealTonks.VOID, SeveralDealTonks.PAY_EACH
TABLE, SEAT = StakeMode.TABLE, StakeMode.SEAT

# The rules reference's preset table, column by column (players: the most seats).
PRESET_TABLE: dict[str, dict[str, Any]] = {
    "classic": dict(
        players=4, deal_tonk_high=49, deal_tonk_low=None, deal_tonk_pays=2,
        several_deal_tonks=VOID, tonk_out_pays=2, caught_pays=2,
        caught_others_pay_lowest=False, caught_dropper_pays_lowest=False,
        hit_books=True, ace_high_runs=False, stake_mode=TABLE,
    ),
    "black-tonk": dict(
        players=5, deal_tonk_high=49, deal_tonk_low=15, deal_tonk_pays=2,
        several_deal_tonks=VOID, tonk_out_pays=2, caught_pays=2,
        caught_others_pay_lowest=True, caught_dropper_pays_lowest=False,
        hit_books=True, ace_high_runs=False, stake_mode=TABLE,
    ),
    "speno": dict(
        players=5, deal_tonk_high=49, deal_tonk_low=15, deal_tonk_pays=2,
        several_deal_tonks=PAY_EACH, tonk_out_pays=1, caught_pays=2,
        caught_others_pay_lowest=True, caught_dropper_pays_lowest=False,
        hit_books=False, ace_high_runs=True, stake_mode=SEAT,
    ),
    "pagat": dict(
        players=5, deal_tonk_high=49, deal_tonk_low=None, deal_tonk_pays=2,
        several_deal_tonks=VOID, tonk_out_pays=2, caught_pays=2,
        caught_others_pay_lowest=True, caught_dropper_pays_lowest=False,
        hit_books=True, ace_high_runs=False, stake_mode=TABLE,
    ),
}  # fmt: skip
APP_OPTIONS_OFF = dict(hit_lock=0, discard_must_use=False, no_rediscard=False)


def test_there_are_exactly_the_four_presets_and_classic_is_the_default() -> None:
    assert set(PRESETS) == set(PRESET_TABLE)
    assert HouseRules() == PRESETS["classic"]
    assert HouseRules.from_dict({}) == PRESETS["classic"]


@pytest.mark.parametrize("name", sorted(PRESET_TABLE))
def test_preset_is_exactly_as_tabled(name: str) -> None:
    rules = PRESETS[name]
    assert rules.preset == name
    assert rules.options() == {**PRESET_TABLE[name], **APP_OPTIONS_OFF}


def test_every_option_of_the_rules_reference_is_a_house_rule() -> None:
    assert set(OPTIONS) == set(PRESET_TABLE["classic"]) | set(APP_OPTIONS_OFF)
    assert set(HouseRules().options()) == set(OPTIONS)


def test_deal_tonk_is_at_or_above_high_or_at_or_below_low() -> None:
    speno, classic = PRESETS["speno"], PRESETS["classic"]
    assert [speno.is_deal_tonk(t) for t in (15, 16, 48, 49, 50)] == [True, False, False, True, True]
    assert [classic.is_deal_tonk(t) for t in (5, 15, 48, 49, 50)] == [
        False,
        False,
        False,
        True,
        True,
    ]


# -- validation ------------------------------------------------------------------------------


def test_unknown_option_is_an_error_naming_it_and_the_options() -> None:
    with pytest.raises(RulesError) as caught:
        PRESETS["classic"].with_options({"jokers": True})
    message = str(caught.value)
    assert "'jokers'" in message
    for option in OPTIONS:
        assert option in message


BAD_VALUES: list[tuple[str, Any]] = [
    ("players", 1),
    ("players", 6),
    ("players", "4"),
    ("players", True),
    ("players", 4.0),
    ("deal_tonk_high", 25),
    ("deal_tonk_high", 51),
    ("deal_tonk_low", 4),
    ("deal_tonk_low", 5),  # no five cards total under 6 (A A A A 2)
    ("deal_tonk_low", 26),
    ("deal_tonk_low", "never"),
    ("deal_tonk_pays", 0),
    ("deal_tonk_pays", 11),
    ("several_deal_tonks", "double"),
    ("several_deal_tonks", 2),
    ("tonk_out_pays", 0),
    ("tonk_out_pays", "2"),
    ("caught_pays", -1),
    ("caught_others_pay_lowest", "yes"),
    ("caught_others_pay_lowest", 1),
    ("caught_dropper_pays_lowest", "yes"),
    ("hit_books", "no"),
    ("ace_high_runs", 0),
    ("stake_mode", "player"),
    ("stake_mode", None),
    ("hit_lock", -1),
    ("hit_lock", 6),
    ("hit_lock", False),
    ("discard_must_use", "true"),
    ("no_rediscard", None),
]


@pytest.mark.parametrize(("option", "value"), BAD_VALUES)
def test_bad_option_value_is_an_error_naming_the_option_and_what_it_takes(
    option: str, value: Any
) -> None:
    with pytest.raises(RulesError) as caught:
        PRESETS["pagat"].with_options({option: value})
    message = str(caught.value)
    assert option in message
    assert OPTIONS[option].takes in message


@pytest.mark.parametrize(("option", "value"), BAD_VALUES)
def test_bad_option_value_is_refused_when_building_a_rule_set_directly(
    option: str, value: Any
) -> None:
    if option in ("several_deal_tonks", "stake_mode"):
        value = str(value)  # the enum options take enum values when built directly
    with pytest.raises(RulesError, match=option):
        HouseRules(**{option: value})


GOOD_VALUES: list[tuple[str, Any, Any]] = [
    ("players", 2, 2),
    ("players", 5, 5),
    ("deal_tonk_high", 26, 26),
    ("deal_tonk_high", 50, 50),
    ("deal_tonk_low", 6, 6),
    ("deal_tonk_low", 25, 25),
    ("deal_tonk_low", "none", None),
    ("deal_tonk_low", "off", None),
    ("deal_tonk_low", None, None),
    ("deal_tonk_pays", 10, 10),
    ("several_deal_tonks", "void", VOID),
    ("several_deal_tonks", "pay_each", PAY_EACH),
    ("several_deal_tonks", "void_double", SeveralDealTonks.VOID_DOUBLE),
    ("tonk_out_pays", 1, 1),
    ("caught_pays", 3, 3),
    ("caught_others_pay_lowest", True, True),
    ("hit_books", False, False),
    ("ace_high_runs", True, True),
    ("stake_mode", "seat", SEAT),
    ("stake_mode", "table", TABLE),
    ("hit_lock", 0, 0),
    ("hit_lock", 5, 5),
    ("discard_must_use", True, True),
    ("no_rediscard", True, True),
]


@pytest.mark.parametrize(("option", "raw", "value"), GOOD_VALUES)
def test_every_allowed_option_value_is_accepted(option: str, raw: Any, value: Any) -> None:
    rules = PRESETS["classic"].with_options({option: raw})
    assert getattr(rules, option) == value
    assert rules.preset == "classic"


def test_the_lowest_a_deal_tonk_low_can_be_is_the_lowest_five_cards() -> None:
    assert PRESETS["classic"].with_options({"deal_tonk_low": 6}).is_deal_tonk(6)
    with pytest.raises(RulesError, match="cannot be 5: it takes a whole number 6 to 25"):
        PRESETS["classic"].with_options({"deal_tonk_low": 5})


def test_the_dropper_pays_the_lowest_only_where_the_others_do() -> None:
    literal = PRESETS["black-tonk"].with_options({"caught_dropper_pays_lowest": True})
    assert literal.caught_dropper_pays_lowest and literal.name == "black-tonk+"
    with pytest.raises(RulesError, match="needs caught_others_pay_lowest = true"):
        PRESETS["classic"].with_options({"caught_dropper_pays_lowest": True})
    with pytest.raises(RulesError, match="needs caught_others_pay_lowest = true"):
        literal.with_options({"caught_others_pay_lowest": False})


def test_unknown_preset_is_an_error_naming_the_presets() -> None:
    builds: list[Callable[[], HouseRules]] = [
        lambda: HouseRules.preset_named("vegas"),
        lambda: HouseRules.from_dict({"preset": "vegas"}),
        lambda: HouseRules.load("vegas"),
    ]
    for build in builds:
        with pytest.raises(RulesError) as caught:
            build()
        assert "'vegas'" in str(caught.value)
        assert all(name in str(caught.value) for name in PRESETS)


def test_a_rule_set_cannot_claim_a_preset_that_does_not_exist() -> None:
    with pytest.raises(RulesError, match="preset"):
        HouseRules(preset="vegas")
    with pytest.raises(RulesError, match="preset"):
        HouseRules.from_dict({"preset": 3})


def test_rule_sets_are_frozen_values() -> None:
    rules = PRESETS["speno"]
    with pytest.raises(AttributeError):
        rules.hit_books = True  # type: ignore[misc]
    assert rules.with_options({}) == rules
    assert hash(rules.with_options({"hit_lock": 1})) == hash(
        PRESETS["speno"].with_options({"hit_lock": 1})
    )


def test_overrides_to_dict_and_name_show_what_differs_from_the_preset() -> None:
    rules = PRESETS["speno"].with_options({"hit_lock": 2, "several_deal_tonks": "void_double"})
    assert rules.overrides() == {"hit_lock": 2, "several_deal_tonks": "void_double"}
    assert rules.to_dict() == {
        "preset": "speno",
        "hit_lock": 2,
        "several_deal_tonks": "void_double",
    }
    assert rules.name == "speno+"
    assert PRESETS["speno"].name == "speno"
    assert HouseRules.from_dict(rules.to_dict()) == rules
    # An override back to the preset's own value is no override at all.
    assert PRESETS["speno"].with_options({"hit_books": False}).name == "speno"


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_round_trips_through_plain_data(name: str) -> None:
    rules = PRESETS[name].with_options({"deal_tonk_low": 10, "no_rediscard": True})
    assert HouseRules.from_dict(rules.to_dict()) == rules
    assert HouseRules.from_dict(PRESETS[name].to_dict()) == PRESETS[name]


# -- TOML rules files ----------------------------------------------------------------------


def test_rules_file_names_a_base_preset_and_overrides_options(tmp_path: Path) -> None:
    path = tmp_path / "house.toml"
    path.write_text(
        '# our kitchen table\npreset = "speno"\nhit_lock = 1\nhit_books = true\n'
        'deal_tonk_low = "none"\nseveral_deal_tonks = "void_double"\n',
        encoding="utf-8",
    )
    rules = HouseRules.from_toml(path)
    assert rules.preset == "speno"
    assert rules.hit_lock == 1
    assert rules.hit_books is True
    assert rules.deal_tonk_low is None
    assert rules.several_deal_tonks is SeveralDealTonks.VOID_DOUBLE
    # Everything not overridden stays as the preset has it.
    assert rules.ace_high_runs is True
    assert rules.stake_mode is SEAT
    assert rules.tonk_out_pays == 1
    assert HouseRules.load(str(path)) == rules


def test_rules_file_without_a_preset_builds_on_classic(tmp_path: Path) -> None:
    path = tmp_path / "plain.toml"
    path.write_text("no_rediscard = true\n", encoding="utf-8")
    assert HouseRules.from_toml(path) == PRESETS["classic"].with_options({"no_rediscard": True})


def test_rules_file_with_an_unknown_key_names_the_file_and_the_key(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('preset = "pagat"\njokers = 2\n', encoding="utf-8")
    with pytest.raises(RulesError) as caught:
        HouseRules.load(str(path))
    assert str(path) in str(caught.value)
    assert "'jokers'" in str(caught.value)
    assert "hit_lock" in str(caught.value)


def test_rules_file_with_a_bad_value_names_the_key_and_what_is_allowed(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('preset = "pagat"\nhit_lock = "two"\n', encoding="utf-8")
    with pytest.raises(RulesError) as caught:
        HouseRules.from_toml(path)
    assert "hit_lock" in str(caught.value)
    assert OPTIONS["hit_lock"].takes in str(caught.value)


def test_rules_file_with_an_unknown_preset_names_the_presets(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('preset = "vegas"\n', encoding="utf-8")
    with pytest.raises(RulesError, match="black-tonk"):
        HouseRules.from_toml(path)


def test_rules_file_that_is_not_toml_or_not_there_is_a_rules_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("preset = speno\n", encoding="utf-8")
    with pytest.raises(RulesError, match="not valid TOML"):
        HouseRules.from_toml(broken)
    with pytest.raises(RulesError, match="cannot read"):
        HouseRules.load(str(tmp_path / "missing.toml"))


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_load_takes_a_preset_name(name: str) -> None:
    assert HouseRules.load(name) is PRESETS[name]


# -- describe ------------------------------------------------------------------------------


def _text(rules: HouseRules) -> str:
    return "\n".join(rules.describe())


def test_describe_names_the_preset_and_says_when_it_is_changed() -> None:
    assert "speno" in _text(PRESETS["speno"])
    assert "with changes" not in _text(PRESETS["speno"])
    assert "with changes" in _text(PRESETS["speno"].with_options({"hit_lock": 1}))


# (option overrides, a phrase the description must contain, a phrase it must then lack)
DESCRIBED: list[tuple[dict[str, Any], str, str | None]] = [
    ({"players": 3}, "Two to 3 players", None),
    ({"deal_tonk_high": 47}, "47 or more", None),
    ({"deal_tonk_low": 13}, "13 or less", None),
    ({"deal_tonk_pays": 3}, "paid 3 stakes", None),
    ({"several_deal_tonks": "void"}, "thrown in with no payments", "double stakes"),
    ({"several_deal_tonks": "pay_each"}, "every other player pays each", "thrown in"),
    ({"several_deal_tonks": "void_double"}, "next hand is played for double stakes", None),
    ({"tonk_out_pays": 3}, "tonk out) wins 3 stakes", None),
    ({"caught_pays": 4}, "pays 4 stakes to each player at or below", None),
    ({"caught_others_pay_lowest": True}, "neither the dropper nor lowest", None),
    (
        {"caught_others_pay_lowest": True, "caught_dropper_pays_lowest": True},
        "from every other player, the dropper included",
        "neither the dropper nor lowest",
    ),
    ({"hit_books": True}, "may hit a book of three", "may not hit a book"),
    ({"hit_books": False}, "may not hit a book of three", None),
    ({"ace_high_runs": True}, "Q-K-A", "Q-K-A is not a run"),
    ({"ace_high_runs": False}, "Q-K-A is not a run", None),
    ({"stake_mode": "seat"}, "own stake", None),
    ({"hit_lock": 2}, "may not drop on their next 2 turn", None),
    ({"discard_must_use": True}, "must be spread or hit that turn", None),
    ({"no_rediscard": True}, "may not be discarded that turn", None),
]


@pytest.mark.parametrize(("overrides", "phrase", "absent"), DESCRIBED)
def test_describe_mentions_each_rule_that_is_on(
    overrides: dict[str, Any], phrase: str, absent: str | None
) -> None:
    text = _text(PRESETS["classic"].with_options(overrides))
    assert phrase in text
    if absent is not None:
        assert absent not in text


def test_describe_leaves_out_the_options_that_are_off() -> None:
    text = _text(PRESETS["classic"])
    for phrase in (
        "own stake",
        "neither the dropper nor lowest",
        "may not drop on their next",
        "must be spread or hit",
        "may not be discarded",
        "or less",
    ):
        assert phrase not in text


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_describe_always_states_the_core_rules(name: str) -> None:
    text = _text(PRESETS[name])
    for phrase in (
        "5 cards each",
        "drop before drawing",
        "empty stock",
        "every player who is not lowest",
        "caught dropper",
    ):
        assert phrase in text


def test_the_rules_file_example_in_rules_md_loads(tmp_path: Path) -> None:
    text = (ROOT / "RULES.md").read_text(encoding="utf-8")
    example = text.split("```toml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "kitchen.toml"
    path.write_text(example, encoding="utf-8")
    rules = HouseRules.load(str(path))
    assert rules.to_dict() == {
        "preset": "speno",
        "hit_books": True,
        "deal_tonk_low": None,
        "several_deal_tonks": "void_double",
        "hit_lock": 1,
    }
    assert rules.name == "speno+"


def test_rules_md_tables_every_option_with_each_presets_value() -> None:
    text = (ROOT / "RULES.md").read_text(encoding="utf-8")
    section = text.split("## House rules", 1)[1]
    table = section[section.index("| option |") :].split("\n\n", 1)[0]
    header, _, *rows = table.splitlines()
    presets = [cell.strip().strip("`") for cell in header.strip("|").split("|")][3:]
    assert presets == ["classic", "black-tonk", "speno", "pagat"]
    tabled: dict[str, list[str]] = {}
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        tabled[cells[0].strip("`")] = cells[3:]

    def shown(value: Any) -> str:
        if value is None:
            return "none"
        if isinstance(value, bool):
            return str(value).lower()
        return str(getattr(value, "value", value))

    assert list(tabled) == list(OPTIONS)
    for option, values in tabled.items():
        assert values == [shown(getattr(PRESETS[p], option)) for p in presets], option


def test_rules_md_has_the_table_of_options_the_core_makes_from_its_declarations() -> None:
    text = (ROOT / "RULES.md").read_text(encoding="utf-8")
    assert options_reference() in text


# -- the one table of options, and the readers made from it ---------------------------------


def test_each_option_is_read_from_its_house_rules_field() -> None:
    hit_lock = OPTIONS["hit_lock"]
    assert (hit_lock.kind, hit_lock.default, hit_lock.low, hit_lock.high) == (int, 0, 0, 5)
    assert OPTIONS["deal_tonk_low"].off and not OPTIONS["deal_tonk_high"].off
    assert OPTIONS["stake_mode"].kind is StakeMode
    assert OPTIONS["hit_books"].kind is bool
    assert {name: option.default for name, option in OPTIONS.items()} == HouseRules().options()
    for option in OPTIONS.values():
        assert option.meaning and option.takes, option.name
        assert option.name in options_reference()


def test_an_option_typed_as_text_is_read_as_the_core_reads_it() -> None:
    assert parse_option("deal_tonk_low", "off") is None
    assert parse_option("deal_tonk_low", "None") is None
    assert parse_option("deal_tonk_low", "12") == 12
    assert parse_option("hit_books", "yes") is True
    assert parse_option("hit_books", "Off") is False
    assert parse_option("stake_mode", "Seat") == "seat"
    assert parse_option("several_deal_tonks", "pay_each") == "pay_each"
    assert parse_options("deal_tonk_low=off, hit_lock=1 no_rediscard=true") == {
        "deal_tonk_low": None,
        "hit_lock": 1,
        "no_rediscard": True,
    }
    # Every option's classic value, typed, reads back to it.
    for option in OPTIONS.values():
        default = option.default
        text = "none" if default is None else str(getattr(default, "value", default))
        assert (
            PRESETS["classic"].with_options({option.name: parse_option(option.name, text)})
            == (PRESETS["classic"])
        )


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (
            "hit_lock=9",
            "option hit_lock cannot be 9: it takes a whole number of turns, 0 (off) to 5",
        ),
        ("hit_lock=two", "option hit_lock cannot be 'two'"),
        ("deal_tonk_high=off", "option deal_tonk_high cannot be 'off'"),
        ("hit_books=maybe", "option hit_books cannot be 'maybe': it takes true or false"),
        ("stake_mode=player", "it takes table or seat"),
        ("jokers=2", "unknown option 'jokers'; the options are players, deal_tonk_high"),
        ("hit_lock", "write options as name=value, not 'hit_lock'"),
        ("=3", "write options as name=value, not '=3'"),
    ],
)
def test_options_typed_wrongly_are_refused_with_a_reason(text: str, error: str) -> None:
    with pytest.raises(RulesError) as caught:
        parse_options(text)
    assert error in str(caught.value)


def test_an_unknown_option_name_is_refused_naming_every_option() -> None:
    with pytest.raises(RulesError) as caught:
        option_named("hit_lok")
    assert all(name in str(caught.value) for name in OPTIONS)

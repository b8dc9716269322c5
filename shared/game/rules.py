"""House rules: every option of the rules reference, declared once (OPTIONS), the four
presets, TOML files, options typed as text, and a plain-English description of a rule set."""

# ruff: noqa: RUF009 (each option field is dataclasses.field, made by _option)

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from pathlib import Path
from types import UnionType
from typing import Any, get_type_hints

from ..records import record


class RulesError(ValueError):
    """A rule set could not be built: an unknown preset or option, or a bad value."""


class SeveralDealTonks(Enum):
    VOID = "void"
    PAY_EACH = "pay_each"
    VOID_DOUBLE = "void_double"


class StakeMode(Enum):
    TABLE = "table"
    SEAT = "seat"


def _option(
    default: Any,
    meaning: str,
    noun: str = "",
    *,
    low: int | None = None,
    high: int | None = None,
    note: str = "",
) -> Any:
    """A field of HouseRules that is a house-rule option: its classic value, what it means,
    how a message names a whole number's values (` low to high` follows), its range, and a
    note on what else it needs. OPTIONS is read from these fields."""
    spec = {"meaning": meaning, "noun": noun, "low": low, "high": high, "note": note}
    return field(default=default, metadata={"option": spec})


@dataclass(frozen=True, slots=True)
class HouseRules:
    """One rule set: a preset with, possibly, some options overridden. Each option is declared
    once, here: its type, its classic value, its range and its help (see `OPTIONS`)."""

    preset: str = "classic"
    players: int = _option(
        4,
        "the most seats at the table (the least is 2)",
        "a number of seats,",
        low=2,
        high=5,
    )
    deal_tonk_high: int = _option(
        49, "a dealt total at or above this is a tonk", "a whole number", low=26, high=50
    )
    deal_tonk_low: int | None = _option(
        None,
        "a dealt total at or below this is a tonk",
        "a whole number",
        low=6,
        high=25,
        note="(five cards total at least 6)",
    )
    deal_tonk_pays: int = _option(
        2,
        "stakes each other player pays a deal tonk",
        "a whole number of stakes,",
        low=1,
        high=10,
    )
    several_deal_tonks: SeveralDealTonks = _option(
        SeveralDealTonks.VOID, "what happens when two or more players tonk on the deal"
    )
    tonk_out_pays: int = _option(
        2,
        "stakes each player pays for a tonk out (going out with no discard)",
        "a whole number of stakes,",
        low=1,
        high=10,
    )
    caught_pays: int = _option(
        2,
        "stakes a caught dropper pays each player at or below",
        "a whole number of stakes,",
        low=1,
        high=10,
    )
    caught_others_pay_lowest: bool = _option(
        False,
        "when a drop is caught, each player who is neither the dropper nor lowest also "
        "pays each lowest player 1 stake",
    )
    caught_dropper_pays_lowest: bool = _option(
        False,
        "with `caught_others_pay_lowest`, the caught dropper too pays each lowest player "
        "1 stake, on top of `caught_pays` (black-tonk's source read word for word)",
        note="(true needs caught_others_pay_lowest)",
    )
    hit_books: bool = _option(True, "a book of three may be hit to make four")
    ace_high_runs: bool = _option(
        False, "an ace may also end a run high (Q-K-A, J-Q-K-A), never round the corner (K-A-2)"
    )
    stake_mode: StakeMode = _option(
        StakeMode.TABLE, '`"table"`: one stake for everybody; `"seat"`: each player sets their own'
    )
    hit_lock: int = _option(
        0,
        "a player whose spread is hit may not drop for this many of their next turns "
        '("hit and hold"); 0 is off',
        "a whole number of turns,",
        low=0,
        high=5,
    )
    discard_must_use: bool = _option(
        False, "a card taken from the discard pile must be spread or hit that same turn"
    )
    no_rediscard: bool = _option(
        False, "a card taken from the discard pile may not be discarded that same turn"
    )

    def __post_init__(self) -> None:
        if self.preset not in PRESET_TITLES:
            raise RulesError(
                f"unknown preset {self.preset!r}; the presets are {', '.join(PRESET_TITLES)}"
            )
        for option in OPTIONS.values():
            option.check(getattr(self, option.name))
        if self.caught_dropper_pays_lowest and not self.caught_others_pay_lowest:
            raise RulesError(
                "option caught_dropper_pays_lowest needs caught_others_pay_lowest = true: it adds "
                "the dropper to the players who pay the lowest"
            )

    # -- building -----------------------------------------------------------------------------

    @classmethod
    def preset_named(cls, name: str) -> HouseRules:
        try:
            return PRESETS[name]
        except KeyError:
            raise RulesError(
                f"unknown preset {name!r}; the presets are {', '.join(PRESETS)}"
            ) from None

    def with_options(self, overrides: Mapping[str, Any]) -> HouseRules:
        """This rule set with options overridden; values may be given as TOML/msgpack plain
        data (`"pay_each"`, `"none"`). Raises RulesError naming a bad key or value."""
        changes = {key: option_named(key).coerce(raw) for key, raw in overrides.items()}
        return replace(self, **changes)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HouseRules:
        """A rule set from `{"preset": name, option: value, ...}` (preset defaults to classic)."""
        preset = data.get("preset", "classic")
        if not isinstance(preset, str):
            raise RulesError("preset must be a preset name")
        base = cls.preset_named(preset)
        return base.with_options({k: v for k, v in data.items() if k != "preset"})

    @classmethod
    def from_toml(cls, path: str | Path) -> HouseRules:
        """A rule set from a TOML file: `preset = "speno"` and any options to override."""
        try:
            with open(path, "rb") as handle:
                data = tomllib.load(handle)
        except OSError as exc:
            raise RulesError(f"cannot read rules file {path}: {exc.strerror}") from None
        except tomllib.TOMLDecodeError as exc:
            raise RulesError(f"rules file {path} is not valid TOML: {exc}") from None
        try:
            return cls.from_dict(data)
        except RulesError as exc:
            raise RulesError(f"rules file {path}: {exc}") from None

    @classmethod
    def load(cls, preset_or_path: str) -> HouseRules:
        """A preset by name, or a TOML file by path."""
        if preset_or_path in PRESETS:
            return PRESETS[preset_or_path]
        if preset_or_path.endswith(".toml") or Path(preset_or_path).exists():
            return cls.from_toml(preset_or_path)
        return cls.preset_named(preset_or_path)

    # -- reading ------------------------------------------------------------------------------

    def options(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in OPTIONS}

    def overrides(self) -> dict[str, Any]:
        """The options that differ from this rule set's preset, as plain data."""
        base = PRESETS[self.preset].options()
        return {k: _plain(v) for k, v in self.options().items() if base[k] != v}

    def to_dict(self) -> dict[str, Any]:
        """Plain data that `from_dict` reads back to an equal rule set."""
        # Every view sent carries its rules: work them out once per rule set (a fresh copy
        # each time, so a caller may change what it gets).
        data = _TO_DICT.get(self)
        if data is None:
            data = {"preset": self.preset, **self.overrides()}
            if len(_TO_DICT) < 256:
                _TO_DICT[self] = data
        return dict(data)

    def to_wire(self) -> dict[str, Any]:
        """The preset and every option's effective value, as plain data (what `rules` in a
        view or a table carries: a client need not know the presets); `from_dict` reads it
        back to an equal rule set."""
        data = _TO_WIRE.get(self)
        if data is None:
            data = {"preset": self.preset, **{k: _plain(v) for k, v in self.options().items()}}
            if len(_TO_WIRE) < 256:
                _TO_WIRE[self] = data
        return dict(data)

    @property
    def name(self) -> str:
        """`speno`, or `speno+` when options are overridden."""
        return self.preset + ("+" if self.overrides() else "")

    def is_deal_tonk(self, total: int) -> bool:
        if total >= self.deal_tonk_high:
            return True
        return self.deal_tonk_low is not None and total <= self.deal_tonk_low

    def describe(self) -> list[str]:
        """The rule set in plain English, one sentence a line."""
        lines = [
            f"Rules: {PRESET_TITLES[self.preset]}"
            + (" with changes" if self.overrides() else "")
            + "."
        ]
        lines.append(f"Two to {self.players} players, 5 cards each; ace 1, J Q K 10.")
        tonk = f"{self.deal_tonk_high} or more"
        if self.deal_tonk_low is not None:
            tonk += f", or {self.deal_tonk_low} or less,"
        lines.append(
            f"A dealt hand totalling {tonk} is a tonk: it is shown and paid "
            f"{_times(self.deal_tonk_pays)} by each other player."
        )
        lines.append(
            {
                SeveralDealTonks.VOID: "If several players tonk on the deal, the hand is thrown "
                "in with no payments.",
                SeveralDealTonks.PAY_EACH: "If several players tonk on the deal, every other "
                "player pays each of them.",
                SeveralDealTonks.VOID_DOUBLE: "If several players tonk on the deal, the hand is "
                "thrown in and the next hand is played for double stakes.",
            }[self.several_deal_tonks]
        )
        lines.append(
            "On your turn: drop before drawing, or draw from the stock or take the top discard, "
            "then spread and hit as you like, then discard."
        )
        runs = "Runs are 3 or more in one suit, aces low"
        runs += (
            " or high (Q-K-A), never K-A-2."
            if self.ace_high_runs
            else " only (Q-K-A is not a run)."
        )
        lines.append("Books are 3 or 4 of a rank. " + runs)
        lines.append(
            "You may hit a book of three to make four."
            if self.hit_books
            else "You may not hit a book of three; books are made of 3 or 4 cards when spread."
        )
        lines.append(
            f"Going out without a discard (tonk out) wins {_times(self.tonk_out_pays)} from each "
            "player; going out on a discard wins 1 stake from each."
        )
        lines.append(
            "A drop with the strictly lowest count wins 1 stake from each player. A caught dropper "
            f"(someone at or below) pays {_times(self.caught_pays)} to each player at or below."
        )
        if self.caught_dropper_pays_lowest:
            lines.append(
                "When a drop is caught, the lowest player(s) also get 1 stake from every other "
                "player, the dropper included."
            )
        elif self.caught_others_pay_lowest:
            lines.append(
                "When a drop is caught, the lowest player(s) also get 1 stake from each player "
                "who is neither the dropper nor lowest."
            )
        lines.append(
            "If someone wants to draw from an empty stock, the hand ends: the lowest count(s) "
            "each get 1 stake from every player who is not lowest."
        )
        if self.stake_mode is StakeMode.SEAT:
            lines.append(
                "Each player sets their own stake: a payment is sized by the receiver's stake, "
                "except a deal tonk, which is sized by the payer's."
            )
        if self.hit_lock:
            lines.append(
                "A player whose spread is hit may not drop on their next "
                + ("turn." if self.hit_lock == 1 else f"{self.hit_lock} turns.")
            )
        if self.discard_must_use:
            lines.append("A card taken from the discard pile must be spread or hit that turn.")
        if self.no_rediscard:
            lines.append("A card taken from the discard pile may not be discarded that turn.")
        return lines


def _options() -> dict[str, Option]:
    hints = get_type_hints(HouseRules)
    found: dict[str, Option] = {}
    for each in fields(HouseRules):
        spec = each.metadata.get("option")
        if spec is None:
            continue
        kind = hints[each.name]
        off = isinstance(kind, UnionType)  # `int | None`: a number that may be off
        found[each.name] = Option(
            name=each.name,
            kind=int if off else kind,
            default=each.default,
            meaning=spec["meaning"],
            low=spec["low"],
            high=spec["high"],
            off=off,
            noun=spec["noun"],
            note=spec["note"],
        )
    return found


@record
class Option:
    """One house-rule option, as its HouseRules field declares it: what it takes, its classic
    value and its help. The rules reference, the command lines, rules files and the
    create-table form all read options from `OPTIONS`."""

    name: str
    kind: type  # int, bool or an Enum: the values it takes
    default: Any  # its value under `classic`
    meaning: str  # what it does, in a sentence
    low: int | None = None  # a whole number's range
    high: int | None = None
    off: bool = False  # a whole number that may be off: None, "none" or "off"
    noun: str = ""  # how a message names its values, before the range
    note: str = ""  # what else it needs

    @property
    def takes(self) -> str:
        """What it accepts, for error messages and help: `a whole number of turns, 0 (off) to 5`."""
        if self.kind is bool:
            text = "true or false"
        elif issubclass(self.kind, Enum):
            words = [member.value for member in self.kind]
            text = f"{', '.join(words[:-1])} or {words[-1]}"
        else:
            text = f"{self.noun} {self.low}{' (off)' if self.low == 0 else ''} to {self.high}"
        if self.note:
            text += f" {self.note}"
        return text + (", or none" if self.off else "")

    def check(self, value: Any) -> None:
        """Raise RulesError unless `value` is one this option takes (as HouseRules holds it)."""
        if value is None and self.off:
            return
        if self.kind is int:
            assert self.low is not None and self.high is not None
            ok = type(value) is int and self.low <= value <= self.high
        elif self.kind is bool:
            ok = type(value) is bool
        else:
            ok = isinstance(value, self.kind)
        if not ok:
            raise self.refusal(value)

    def coerce(self, raw: Any) -> Any:
        """The value from plain data (TOML, msgpack): `"pay_each"`, `"none"`, `3`, `true`."""
        if self.off and (raw is None or raw in ("none", "off")):
            return None
        if issubclass(self.kind, Enum):
            try:
                return self.kind(raw)
            except ValueError:
                raise self.refusal(raw) from None
        self.check(raw)
        return raw

    def parse(self, text: str) -> Any:
        """The value from text a person typed (a form, a command line): `3`, `true`, `yes`,
        `off`, `pay_each`. Raises RulesError saying what the option takes."""
        word = text.strip()
        lowered = word.lower()
        if self.off and lowered in ("none", "off", "nil"):
            return None
        if self.kind is bool:
            if lowered in ("true", "yes", "on"):
                return True
            if lowered in ("false", "no", "off"):
                return False
            raise self.refusal(word)
        if self.kind is int:
            try:
                number = int(word)
            except ValueError:
                raise self.refusal(word) from None
            self.check(number)
            return number
        return self.coerce(lowered)

    def typed(self, value: Any) -> str:
        """`value` written as a person types it, which `parse` reads back: `3`, `true`,
        `pay_each`, `off`."""
        if value is None:
            return "off"
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(_plain(value))

    def refusal(self, value: Any) -> RulesError:
        return RulesError(f"option {self.name} cannot be {value!r}: it takes {self.takes}")


def option_named(name: str) -> Option:
    """The option called `name`; RulesError naming every option if there is none."""
    try:
        return OPTIONS[name]
    except KeyError:
        raise RulesError(f"unknown option {name!r}; the options are {', '.join(OPTIONS)}") from None


def parse_option(name: str, text: str) -> Any:
    """Option `name`'s value from typed text (see Option.parse), as plain data for a rules
    file or a request: `deal_tonk_low=off` gives None, `stake_mode=Seat` gives "seat"."""
    return _plain(option_named(name).parse(text))


def parse_options(text: str) -> dict[str, Any]:
    """Options typed as `name=value`, separated by spaces or commas (`hit_lock=1
    no_rediscard=yes`), as plain data for `HouseRules.with_options`. Raises RulesError with
    a reason a person can act on."""
    options: dict[str, Any] = {}
    for part in text.replace(",", " ").split():
        name, equals, value = part.partition("=")
        if not equals or not name:
            raise RulesError(f"write options as name=value, not {part!r}")
        options[name] = parse_option(name, value)
    return options


def options_reference() -> str:
    """The rules reference's table of options (RULES.md, "House rules"), made from OPTIONS
    and PRESETS: each option, its meaning, what it takes and its value under each preset."""
    names = list(PRESETS)
    lines = [
        "| option | meaning | allowed values | " + " | ".join(f"`{n}`" for n in names) + " |",
        "|---|---|---|" + "---|" * len(names),
    ]
    for option in OPTIONS.values():
        values = " | ".join(_doc_value(getattr(PRESETS[n], option.name)) for n in names)
        lines.append(f"| `{option.name}` | {option.meaning} | {_doc_takes(option)} | {values} |")
    return "\n".join(lines)


def _doc_takes(option: Option) -> str:
    if option.kind is bool:
        text = "`true`, `false`"
    elif issubclass(option.kind, Enum):
        text = ", ".join(f'`"{member.value}"`' for member in option.kind)
    else:
        text = f"{option.low} to {option.high}"
    if option.note:
        text += " " + re.sub(r"(\w+_\w+)", r"`\1`", option.note).replace("`true`", "true")
    return text + (', or `"none"` (off)' if option.off else "")


def _doc_value(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(_plain(value))


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value


def _times(stakes: int) -> str:
    return {1: "1 stake", 2: "double the stake"}.get(stakes, f"{stakes} stakes")


#: Every house-rule option by name, in the rules reference's order.
OPTIONS: dict[str, Option] = _options()

PRESET_TITLES = {
    "classic": "classic (Tonk in one page)",
    "black-tonk": "black-tonk (the Black Company rules)",
    "speno": "speno (John P. Speno's rules)",
    "pagat": "pagat (pagat.com's rules)",
}

#: HouseRules.to_dict's answers by rule set (the values are plain and immutable).
_TO_DICT: dict[HouseRules, dict[str, Any]] = {}
#: HouseRules.to_wire's answers by rule set.
_TO_WIRE: dict[HouseRules, dict[str, Any]] = {}

PRESETS: dict[str, HouseRules] = {
    "classic": HouseRules(),
    "black-tonk": HouseRules(
        preset="black-tonk", players=5, deal_tonk_low=15, caught_others_pay_lowest=True
    ),
    "speno": HouseRules(
        preset="speno",
        players=5,
        deal_tonk_low=15,
        several_deal_tonks=SeveralDealTonks.PAY_EACH,
        tonk_out_pays=1,
        caught_others_pay_lowest=True,
        hit_books=False,
        ace_high_runs=True,
        stake_mode=StakeMode.SEAT,
    ),
    "pagat": HouseRules(preset="pagat", players=5, caught_others_pay_lowest=True),
}

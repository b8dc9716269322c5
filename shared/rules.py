"""House rules: every option of the rules reference, the four presets, TOML loading, and a
plain-English description of a rule set."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from enum import Enum
from pathlib import Path
from typing import Any


class RulesError(ValueError):
    """A rule set could not be built: an unknown preset or option, or a bad value."""


class SeveralDealTonks(Enum):
    VOID = "void"
    PAY_EACH = "pay_each"
    VOID_DOUBLE = "void_double"


class StakeMode(Enum):
    TABLE = "table"
    SEAT = "seat"


@dataclass(frozen=True, slots=True)
class HouseRules:
    """One rule set: a preset with, possibly, some options overridden."""

    preset: str = "classic"
    players: int = 4
    deal_tonk_high: int = 49
    deal_tonk_low: int | None = None
    deal_tonk_pays: int = 2
    several_deal_tonks: SeveralDealTonks = SeveralDealTonks.VOID
    tonk_out_pays: int = 2
    caught_pays: int = 2
    caught_others_pay_lowest: bool = False
    caught_dropper_pays_lowest: bool = False
    hit_books: bool = True
    ace_high_runs: bool = False
    stake_mode: StakeMode = StakeMode.TABLE
    hit_lock: int = 0
    discard_must_use: bool = False
    no_rediscard: bool = False

    def __post_init__(self) -> None:
        if self.preset not in PRESET_TITLES:
            raise RulesError(
                f"unknown preset {self.preset!r}; the presets are {', '.join(PRESET_TITLES)}"
            )
        for name, value in self.options().items():
            _check(name, value)
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
        changes: dict[str, Any] = {}
        for key, raw in overrides.items():
            if key not in OPTION_HELP:
                raise RulesError(
                    f"unknown option {key!r}; the options are {', '.join(OPTION_HELP)}"
                )
            changes[key] = _coerce(key, raw)
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
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "preset"}

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
                f"A player whose spread is hit may not drop on their next {self.hit_lock} turn(s)."
            )
        if self.discard_must_use:
            lines.append("A card taken from the discard pile must be spread or hit that turn.")
        if self.no_rediscard:
            lines.append("A card taken from the discard pile may not be discarded that turn.")
        return lines


#: Every option with what it accepts, for error messages and help.
OPTION_HELP: dict[str, str] = {
    "players": "the most seats at the table, 2 to 5",
    "deal_tonk_high": "a whole number 26 to 50",
    "deal_tonk_low": "a whole number 6 to 25 (five cards total at least 6), or none",
    "deal_tonk_pays": "a whole number of stakes, 1 to 10",
    "several_deal_tonks": "void, pay_each or void_double",
    "tonk_out_pays": "a whole number of stakes, 1 to 10",
    "caught_pays": "a whole number of stakes, 1 to 10",
    "caught_others_pay_lowest": "true or false",
    "caught_dropper_pays_lowest": "true or false (true needs caught_others_pay_lowest)",
    "hit_books": "true or false",
    "ace_high_runs": "true or false",
    "stake_mode": "table or seat",
    "hit_lock": "a whole number of turns, 0 (off) to 5",
    "discard_must_use": "true or false",
    "no_rediscard": "true or false",
}

_INT_RANGES = {
    "players": (2, 5),
    "deal_tonk_high": (26, 50),
    "deal_tonk_low": (6, 25),
    "deal_tonk_pays": (1, 10),
    "tonk_out_pays": (1, 10),
    "caught_pays": (1, 10),
    "hit_lock": (0, 5),
}
_BOOLS = {
    "caught_others_pay_lowest",
    "caught_dropper_pays_lowest",
    "hit_books",
    "ace_high_runs",
    "discard_must_use",
    "no_rediscard",
}
_ENUMS: dict[str, type[Enum]] = {
    "several_deal_tonks": SeveralDealTonks,
    "stake_mode": StakeMode,
}


def _bad(name: str, value: Any) -> RulesError:
    return RulesError(f"option {name} cannot be {value!r}: it takes {OPTION_HELP[name]}")


def _check(name: str, value: Any) -> None:
    if name in _INT_RANGES:
        if name == "deal_tonk_low" and value is None:
            return
        low, high = _INT_RANGES[name]
        if type(value) is not int or not low <= value <= high:
            raise _bad(name, value)
    elif name in _BOOLS:
        if type(value) is not bool:
            raise _bad(name, value)
    elif not isinstance(value, _ENUMS[name]):
        raise _bad(name, value)


def _coerce(name: str, raw: Any) -> Any:
    if name == "deal_tonk_low" and (raw is None or raw in ("none", "off")):
        return None
    if name in _ENUMS:
        try:
            return _ENUMS[name](raw)
        except ValueError:
            raise _bad(name, raw) from None
    _check(name, raw)
    return raw


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value


def _times(stakes: int) -> str:
    return {1: "1 stake", 2: "double the stake"}.get(stakes, f"{stakes} stakes")


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

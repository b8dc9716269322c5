"""The table a `create_table` asks for, checked against the server's options: its rules, seats,
stakes and timers (`TableConfig`), or the request's refusal (RequestError)."""

from __future__ import annotations

from typing import TypeVar

from tonk.shared.game.cards import CardError, parse_cards, validate_deck
from tonk.shared.game.rules import HouseRules, RulesError
from tonk.shared.game.session import SessionError, check_fixed_dealer, check_players
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import UNSET, CreateTable, Unset

from ..config import ServerConfig
from ..errors import RequestError
from .table import TableConfig

T = TypeVar("T")


def given(value: T | Unset | None) -> T | None:
    """A field that may be nil or left out (both: None)."""
    return None if value is UNSET else value


def table_config(config: ServerConfig, message: CreateTable) -> TableConfig:
    """The table options of a create_table message, checked; RequestError if not allowed."""
    dev_fields = [
        name
        for name, value in (
            ("seed", message.seed),
            ("deck", message.deck),
            ("dealer", message.dealer),
        )
        if value is not None
    ]
    if dev_fields and not config.dev:
        raise RequestError(
            p.DEV_ONLY,
            f"{', '.join(dev_fields)} may be set only on a server started with --dev",
        )
    raw_rules = message.rules
    try:
        if raw_rules is None:
            rules = config.default_rules
        elif "preset" in raw_rules:
            rules = HouseRules.from_dict(raw_rules)
        else:
            rules = config.default_rules.with_options(raw_rules)
    except RulesError as exc:
        raise RequestError(p.BAD_RULES, str(exc)) from None
    seats = message.seats or rules.players
    try:
        check_players(rules, seats)
    except SessionError as exc:
        raise RequestError.refused(exc) from None
    unit = "chips" if message.unit is None else message.unit
    if unit and not p.is_printable_text(unit):
        raise RequestError(p.BAD_TABLE, "unit: the stake's unit must be printable", "unit")
    deck = message.deck
    if deck is not None:
        try:
            validate_deck(parse_cards(deck))
        except CardError as exc:
            raise RequestError(p.BAD_TABLE, f"deck: {exc}", "deck") from None
    dealer = message.dealer
    try:
        check_fixed_dealer(dealer, seats)
    except SessionError as exc:
        raise RequestError.refused(exc) from None
    return TableConfig(
        rules=rules,
        stake=1 if message.stake is None else message.stake,
        unit=unit,
        seats=seats,
        turn_timer=given(message.turn_timer) or None,
        hands=given(message.hands),
        minutes=given(message.minutes) or None,
        bot_pause=config.bot_pause if message.bot_pause is None else message.bot_pause,
        # A table made to be joined (its creator does not sit) takes strangers into its bots'
        # seats; one whose creator plays keeps them for who has played at it, unless told.
        open_bot_seats=message.sit is False
        if message.open_bot_seats is None
        else message.open_bot_seats,
        seed=message.seed,
        deck=deck,
        dealer=dealer,
    )

"""Bots: the interface a bot plays through, and the registry of strategies.
`make_bot("easy" | "sharp" | "expert", rng)` builds one; `easy` is in seatbots.py, `sharp`
in sharp.py, `expert` in expert.py.

A strategy's module is imported when a bot of it is first made (or its class first asked for
here): a client lists the strategies in its create-table form, and need not load the search
code (and the whole hand engine under it) to do so."""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .seatbots import Bot, BotError, EasyBot, SeatBot, fallback

if TYPE_CHECKING:
    from .expert import ExpertBot
    from .sharp import SharpBot

__all__ = [
    "BOT_STRATEGIES",
    "Bot",
    "BotError",
    "EasyBot",
    "ExpertBot",
    "SeatBot",
    "SharpBot",
    "fallback",
    "make_bot",
]

#: Every strategy by name, weakest first: the module (in this package) and the class playing it.
_STRATEGIES: dict[str, tuple[str, str]] = {
    "easy": ("seatbots", "EasyBot"),
    "sharp": ("sharp", "SharpBot"),
    "expert": ("expert", "ExpertBot"),
}
BOT_STRATEGIES = tuple(_STRATEGIES)
_LAZY = {name: module for module, name in _STRATEGIES.values()}


def _strategy_class(module: str, name: str) -> Any:
    return getattr(importlib.import_module(f".{module}", __package__), name)


def make_bot(strategy: str, rng: random.Random) -> Bot:
    """A bot playing `strategy` (one of BOT_STRATEGIES), drawing its randomness from `rng`."""
    try:
        module, name = _STRATEGIES[strategy]
    except KeyError:
        raise BotError(
            f"unknown bot {strategy!r}; the bots are {', '.join(BOT_STRATEGIES)}"
        ) from None
    make: Callable[[random.Random], Bot] = _strategy_class(module, name)
    return make(rng)


def __getattr__(name: str) -> Any:
    """`SharpBot` and `ExpertBot`, imported when first asked for."""
    if name in _LAZY:
        return _strategy_class(_LAZY[name], name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

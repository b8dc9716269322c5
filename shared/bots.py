"""Bots: the interface a bot plays through, and the registry of strategies.
`make_bot("easy" | "sharp" | "expert", rng)` builds one; `easy` is in seatbots.py, `sharp`
in sharp.py, `expert` in expert.py."""

from __future__ import annotations

import random
from collections.abc import Callable

from .expert import ExpertBot
from .seatbots import Bot, BotError, EasyBot, SeatBot, fallback
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

#: Every strategy by name, weakest first.
_STRATEGIES: dict[str, Callable[[random.Random], Bot]] = {
    "easy": EasyBot,
    "sharp": SharpBot,
    "expert": ExpertBot,
}
BOT_STRATEGIES = tuple(_STRATEGIES)


def make_bot(strategy: str, rng: random.Random) -> Bot:
    """A bot playing `strategy` (one of BOT_STRATEGIES), drawing its randomness from `rng`."""
    try:
        return _STRATEGIES[strategy](rng)
    except KeyError:
        raise BotError(
            f"unknown bot {strategy!r}; the bots are {', '.join(BOT_STRATEGIES)}"
        ) from None

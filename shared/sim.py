"""Bots playing hand after hand at one table, from a seed: the same seed gives the same result."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .bots import BOT_STRATEGIES, Bot, BotError, make_bot
from .hand import Hand, cut_for_deal
from .ledger import Ledger
from .rules import HouseRules
from .settlement import Ending

#: Called with (hands played, hands in all) as the simulation goes.
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class SimResult:
    """What a simulation came to: how the hands ended, and each seat's net stakes and wins."""

    rules: HouseRules
    players: int
    seed: int
    bots: tuple[str, ...]
    hands: int
    endings: dict[str, int]
    net: tuple[int, ...]
    wins: tuple[int, ...]
    actions: int
    first_dealer: int
    ledger: Ledger

    def to_dict(self) -> dict[str, Any]:
        return {
            "hands": self.hands,
            "players": self.players,
            "rules": self.rules.name,
            "rules_options": self.rules.to_dict(),
            "seed": self.seed,
            "endings": dict(self.endings),
            "seats": [
                {"seat": seat, "bot": bot, "net": net, "wins": wins}
                for seat, (bot, net, wins) in enumerate(
                    zip(self.bots, self.net, self.wins, strict=True)
                )
            ],
            "actions": self.actions,
            "first_dealer": self.first_dealer,
        }


def seat_bots(bots: Sequence[str], players: int) -> tuple[str, ...]:
    """Each seat's bot: a shorter list repeats. Raises BotError for an unknown bot."""
    if not bots:
        raise BotError("name at least one bot")
    for name in bots:
        if name not in BOT_STRATEGIES:
            raise BotError(f"unknown bot {name!r}; the bots are {', '.join(BOT_STRATEGIES)}")
    return tuple(bots[seat % len(bots)] for seat in range(players))


def simulate(
    rules: HouseRules,
    players: int,
    hands: int,
    seed: int,
    bots: Sequence[str] = ("easy",),
    *,
    stake: int = 1,
    progress: Progress | None = None,
    progress_every: int = 100,
) -> SimResult:
    """Play `hands` hands between bots: the first dealer by the cut, the deal passing left,
    a void_double multiplier carried to the next hand, every settlement into a ledger."""
    if not 2 <= players <= rules.players:
        raise ValueError(f"these rules seat 2 to {rules.players} players, not {players}")
    if hands < 0:
        raise ValueError("the number of hands cannot be negative")
    strategies = seat_bots(bots, players)
    rng = random.Random(seed)
    first_dealer = cut_for_deal(players, rng).dealer
    seated: list[Bot] = [make_bot(name, random.Random(rng.getrandbits(64))) for name in strategies]
    names = [f"seat {seat}" for seat in range(players)]
    ledger = Ledger()
    for name in names:
        ledger.join(name)
    endings = {ending.value: 0 for ending in Ending}
    wins = [0] * players
    stakes = (stake,) * players
    dealer = first_dealer
    multiplier = 1
    actions = 0
    for number in range(hands):
        hand = Hand(rules, players, dealer, stakes, rng=rng, multiplier=multiplier)
        actions += play_hand(hand, seated)
        settlement = hand.settlement
        assert settlement is not None
        ledger.record(settlement, names)
        endings[settlement.ending.value] += 1
        for winner in settlement.winners:
            wins[winner] += 1
        multiplier = settlement.next_multiplier
        dealer = (dealer + 1) % players
        if progress is not None and ((number + 1) % progress_every == 0 or number + 1 == hands):
            progress(number + 1, hands)
    return SimResult(
        rules=rules,
        players=players,
        seed=seed,
        bots=strategies,
        hands=hands,
        endings=endings,
        net=tuple(ledger.balances[name] for name in names),
        wins=tuple(wins),
        actions=actions,
        first_dealer=first_dealer,
        ledger=ledger,
    )


def play_hand(hand: Hand, bots: Sequence[Bot], max_actions: int = 10_000) -> int:
    """Play one hand to its end, each bot seeing only its seat's view and events. Returns the
    number of actions taken."""
    players = hand.players
    for seat, bot in enumerate(bots):
        bot.observe(hand.events_for(seat))
    taken = 0
    # Until the hand is settled (it ends with its settlement): `hand.ended` is a property, slow
    # to read in CPython 3.11, and this runs once an action.
    while hand.settlement is None:
        if taken >= max_actions:
            raise RuntimeError(f"a hand did not end after {max_actions} actions")
        seat = hand.turn
        action = bots[seat].choose(hand.view(seat))
        events = hand.apply(action)
        taken += 1
        # Each seat sees the events as `Event.for_seat` shows them. Most actions cause only
        # public events, shown to every bot as they are; the cards of a private event (a draw
        # from the stock) belong to the seat that acted, and everyone else shares one hidden
        # copy. (A plain loop to tell which: this runs on every action.)
        public = True
        acting_seats_own = True
        for event in events:
            if event.private:
                public = False
                if event.seat != seat:
                    acting_seats_own = False
        if public:
            for bot in bots:
                bot.observe(events)
        elif acting_seats_own:
            hidden = [event.for_seat(None) for event in events]
            for other in range(players):
                bots[other].observe(events if other == seat else hidden)
        else:
            for other in range(players):
                bots[other].observe([event.for_seat(other) for event in events])
    return taken

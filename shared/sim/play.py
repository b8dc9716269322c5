"""Bots playing hand after hand at one table, from a seed: the same seed gives the same result,
however the hands are shared out between processes.

The hands are played in batches of a fixed size (BATCH_SIZE), and each batch's decks and bots
draw from random sources seeded by the run's seed and the batch alone (`Batch.stream`), the decks
from one of their own: so hand 731 is the same deal whether its batch is played first or last,
here or in another process, and under any rules, which is what lets two rule sets be compared on
the same deals. The one thing a batch takes from the one before it, the stake multiplier a
`void_double` throw-in leaves, is carried across by `simulate` (see `_stitch`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from ..bots.bots import BOT_STRATEGIES, Bot, BotError, make_bot
from ..game.actions import DrawStock, Drop, TakeDiscard
from ..game.hand import Hand
from ..game.ledger import Ledger
from ..game.rules import HouseRules
from ..game.session import check_players, dealer_of, first_dealer
from ..game.session import seat_stakes as seat_stakes  # (re-exported, as the other two below)
from .tally import ENDINGS, Tally

# Re-exported: a run's result and its comparisons are read from here too.
from .tally import TONK_KINDS as TONK_KINDS
from .tally import HandSummary as HandSummary
from .tally import SimResult as SimResult
from .tally import compare as compare

#: Called with (hands played, hands in all) as the simulation goes.
Progress = Callable[[int, int], None]
#: Builds one seat's bot for one hand from that seat's random source.
BotFactory = Callable[[random.Random], Bot]
#: Turns a `--bots` entry into a factory: a registry name, or whatever the caller allows.
BotResolver = Callable[[str], BotFactory]

#: The actions that open a turn: a turn is counted when one of them is taken.
_OPENERS = frozenset((Drop, DrawStock, TakeDiscard))
#: Hands are played in batches of this many: the unit of work of a process and of progress.
BATCH_SIZE = 100


def registry_bot(name: str) -> BotFactory:
    """A factory for a bot of the bot registry (BOT_STRATEGIES). Raises BotError."""
    if name not in BOT_STRATEGIES:
        raise BotError(f"unknown bot {name!r}; the bots are {', '.join(BOT_STRATEGIES)}")

    def factory(rng: random.Random) -> Bot:
        return make_bot(name, rng)

    return factory


def seat_bots(
    bots: Sequence[str], players: int, resolve: BotResolver = registry_bot
) -> tuple[str, ...]:
    """Each seat's bot: a shorter list repeats. Raises BotError for an unknown bot."""
    if not bots:
        raise BotError("name at least one bot")
    for name in bots:
        resolve(name)
    return tuple(bots[seat % len(bots)] for seat in range(players))


def position_of(seat: int, dealer: int, players: int) -> int:
    """A seat's position from the dealer: 0 is the dealer's left (first to act), players - 1
    the dealer."""
    return (seat - dealer - 1) % players


# -- one hand ------------------------------------------------------------------------------------


def play_hand(hand: Hand, bots: Sequence[Bot], max_actions: int = 10_000) -> int:
    """Play one hand to its end, each bot seeing only its seat's view and events. Returns the
    number of actions taken."""
    players = hand.players
    for seat, bot in enumerate(bots):
        bot.observe(hand.events_for(seat))
    taken = 0
    while hand.settlement is None:  # until the hand is settled (it ends with its settlement)
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


@dataclass(frozen=True, slots=True)
class Table:
    """What every hand of a run shares: the rules, the seats, their bots and stakes, the seed,
    and the first dealer (found by the cut)."""

    rules: HouseRules
    players: int
    seed: int
    bots: tuple[str, ...]
    stakes: tuple[int, ...]
    first_dealer: int

    def dealer(self, number: int) -> int:
        return dealer_of(self.first_dealer, number, self.players)


def _play_one(
    table: Table, bots: Sequence[Bot], deck: random.Random, number: int, multiplier: int
) -> HandSummary:
    dealer = table.dealer(number)
    hand = Hand(table.rules, table.players, dealer, table.stakes, rng=deck, multiplier=multiplier)
    actions = play_hand(hand, bots)
    settlement = hand.settlement
    assert settlement is not None
    openers = _OPENERS
    turns = sum([1 for action in hand.actions if type(action) in openers])
    return HandSummary(
        number, dealer, multiplier, hand.deck_order, settlement, turns, actions, len(hand.stock)
    )


@dataclass(frozen=True, slots=True)
class Batch:
    """Hands `start` to `stop - 1` of a run."""

    table: Table
    start: int
    stop: int

    def stream(self, which: int) -> random.Random:
        """The batch's random source number `which`: 0 shuffles the decks, 1 and on are the
        seats' bots'. Each is seeded from the run's seed and the batch's first hand alone, so
        the decks do not depend on how the hands were played (the same deals under any rules)
        and a batch plays the same wherever it is played."""
        seed = self.table.seed
        key = ((abs(seed) * 2 + (seed < 0)) << 40 | self.start) << 3 | which
        return random.Random(key)


def play_batch(
    batch: Batch, factories: Sequence[BotFactory], multiplier: int = 1
) -> list[HandSummary]:
    """Play a batch with bots built for it, its first hand at `multiplier` (what the hand
    before the batch left), each later one at what the hand before it left."""
    deck = batch.stream(0)
    bots = [factory(batch.stream(1 + seat)) for seat, factory in enumerate(factories)]
    summaries = []
    for number in range(batch.start, batch.stop):
        summary = _play_one(batch.table, bots, deck, number, multiplier)
        summaries.append(summary)
        multiplier = summary.settlement.next_multiplier
    return summaries


#: Plays batches and yields their hands, batch by batch, in the order given.
BatchRunner = Callable[[Sequence[Batch]], Iterable[list[HandSummary]]]


# -- a run ---------------------------------------------------------------------------------------


def simulate(
    rules: HouseRules,
    players: int,
    hands: int,
    seed: int,
    bots: Sequence[str] = ("easy",),
    *,
    stake: int = 1,
    stakes: Sequence[int] | None = None,
    resolve: BotResolver = registry_bot,
    runner: BatchRunner | None = None,
    batch_size: int = BATCH_SIZE,
    progress: Progress | None = None,
    on_hand: Callable[[HandSummary], None] | None = None,
) -> SimResult:
    """Play `hands` hands between bots: the first dealer by the cut, the deal passing left,
    a void_double multiplier carried to the next hand, every settlement into a ledger.

    `runner` plays the batches (in this process when None); whatever plays them, the result
    is the same for the same seed (and `batch_size`). `on_hand` sees every hand, in order."""
    try:
        check_players(rules, players)
    except ValueError as exc:
        raise ValueError(f"{exc}, not {players}") from None
    if hands < 0:
        raise ValueError("the number of hands cannot be negative")
    if batch_size < 1:
        raise ValueError("a batch has at least one hand")
    specs = seat_bots(bots, players, resolve)
    table = Table(
        rules,
        players,
        seed,
        specs,
        seat_stakes(rules, players, (stake,) if stakes is None else stakes),
        first_dealer(players, random.Random(seed))[0],
    )
    factories = [resolve(spec) for spec in specs]
    batches = [
        Batch(table, start, min(start + batch_size, hands)) for start in range(0, hands, batch_size)
    ]
    if runner is None:
        played: Iterable[list[HandSummary]] = (play_batch(b, factories) for b in batches)
    else:
        played = runner(batches)
    names = [f"seat {seat}" for seat in range(players)]
    ledger = Ledger()
    for name in names:
        ledger.join(name)
    tally = Tally(rules, players)
    wins = [0] * players
    for done, summary in enumerate(_stitch(batches, factories, played), 1):
        ledger.record(summary.settlement, names)
        tally.add(summary)
        for winner in summary.settlement.winners:
            wins[winner] += 1
        if on_hand is not None:
            on_hand(summary)
        if progress is not None and (done % batch_size == 0 or done == hands):
            progress(done, hands)
    return SimResult(
        rules=rules,
        players=players,
        seed=seed,
        bots=specs,
        hands=hands,
        endings={e: tally.endings[e] for e in ENDINGS},
        net=tuple(ledger.balances[name] for name in names),
        wins=tuple(wins),
        actions=tally.actions,
        first_dealer=table.first_dealer,
        ledger=ledger,
        stakes=table.stakes,
        tally=tally,
    )


def _stitch(
    batches: Sequence[Batch], factories: Sequence[BotFactory], played: Iterable[list[HandSummary]]
) -> Iterator[HandSummary]:
    """The hands of the batches in order, each at the multiplier the hand before it left.

    Every batch was played from multiplier 1 (it could not wait for the one before it). When
    the hand before it left another (a void_double throw-in, rare), the batch is played again
    here from the right one: a batch plays the same from the same multiplier."""
    carry = 1
    for batch, summaries in zip(batches, played, strict=True):
        if summaries and summaries[0].multiplier != carry:
            summaries = play_batch(batch, factories, carry)
        yield from summaries
        if summaries:
            carry = summaries[-1].settlement.next_multiplier

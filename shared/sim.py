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
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any, NamedTuple

from .actions import DrawStock, Drop, TakeDiscard
from .bots import BOT_STRATEGIES, Bot, BotError, make_bot
from .cards import Card, format_cards
from .hand import HAND_SIZE, Hand, cut_for_deal
from .ledger import Ledger
from .rules import HouseRules, StakeMode
from .settlement import Ending, Settlement
from .stats import Mean, percentile, rounded, wilson

#: Called with (hands played, hands in all) as the simulation goes.
Progress = Callable[[int, int], None]
#: Builds one seat's bot for one hand from that seat's random source.
BotFactory = Callable[[random.Random], Bot]
#: Turns a `--bots` entry into a factory: a registry name, or whatever the caller allows.
BotResolver = Callable[[str], BotFactory]

ENDINGS = tuple(ending.value for ending in Ending)
_ENDING_CODE = {ending: code for code, ending in enumerate(ENDINGS)}
#: The kinds of tonk on the deal: one seat's high or low total, or several seats at once.
TONK_KINDS = ("high", "low", "several")
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


def seat_stakes(rules: HouseRules, players: int, stakes: Sequence[int]) -> tuple[int, ...]:
    """One stake per seat from one stake, or from one per seat under `stake_mode = seat`.
    Raises ValueError with a reason."""
    if any(type(s) is not int or s < 1 for s in stakes):
        raise ValueError("a stake is a whole number, 1 or more")
    if len(stakes) not in (1, players):
        raise ValueError(f"give one stake, or one for each of the {players} seats")
    if len(set(stakes)) > 1 and rules.stake_mode is not StakeMode.SEAT:
        raise ValueError(
            f"one stake for the table under stake_mode = table ({rules.name}); seat stakes "
            "need stake_mode = seat"
        )
    if len(stakes) == 1:
        return (stakes[0],) * players
    return tuple(stakes)


def position_of(seat: int, dealer: int, players: int) -> int:
    """A seat's position from the dealer: 0 is the dealer's left (first to act), players - 1
    the dealer."""
    return (seat - dealer - 1) % players


def position_label(position: int, players: int) -> str:
    """`1st to act (dealer's left)`, `2nd to act`, ..., `dealer (last to act)`."""
    if position == players - 1:
        return "dealer (last to act)"
    ordinal = {0: "1st", 1: "2nd", 2: "3rd"}.get(position, f"{position + 1}th")
    return f"{ordinal} to act" + (" (dealer's left)" if position == 0 else "")


# -- one hand ------------------------------------------------------------------------------------


class HandSummary(NamedTuple):
    """One simulated hand: its number (from 0), dealer, stake multiplier, deck order, how it was
    settled, and how long it lasted. (A named tuple, not a frozen dataclass: one is made every
    hand, and a tuple is made several times faster.)"""

    number: int
    dealer: int
    multiplier: int
    deck: tuple[Card, ...]
    settlement: Settlement
    turns: int
    actions: int
    stock_left: int

    @property
    def players(self) -> int:
        return len(self.settlement.counts)

    @property
    def deal(self) -> tuple[tuple[Card, ...], ...]:
        """Each seat's five cards as dealt, one at a time from the dealer's left."""
        players = self.players
        dealt = HAND_SIZE * players
        return tuple(
            self.deck[(seat - self.dealer - 1) % players : dealt : players]
            for seat in range(players)
        )

    @property
    def up_card(self) -> Card:
        return self.deck[HAND_SIZE * self.players]

    @property
    def ending(self) -> str:
        return self.settlement.ending.value

    def tonk_kind(self, rules: HouseRules) -> str | None:
        """For a hand ended on the deal: `several` seats, one seat's `high` total or its `low`
        one. None for a hand that was played."""
        if self.settlement.ending not in (Ending.DEAL_TONK, Ending.VOID):
            return None
        counts = [c for c in self.settlement.counts if c is not None]
        if len(counts) > 1:
            return "several"
        return "high" if counts[0] >= rules.deal_tonk_high else "low"

    @property
    def caught(self) -> int | None:
        """For a caught drop, how many players were at or below the dropper."""
        s = self.settlement
        if s.ending is not Ending.DROP_CAUGHT or s.dropper is None:
            return None
        mine = s.counts[s.dropper]
        assert mine is not None
        return sum(
            1
            for seat, c in enumerate(s.counts)
            if seat != s.dropper and c is not None and c <= mine
        )

    @property
    def drop_turn(self) -> int | None:
        """The turn (from 1) on which a player dropped, for a hand ended by a drop."""
        return self.turns if self.settlement.dropper is not None else None

    def record(self, rules: HouseRules, players: int, variant: str) -> dict[str, Any]:
        """The hand as plain data, one line of the per-hand export."""
        s = self.settlement
        return {
            "variant": variant,
            "hand": self.number + 1,
            "dealer": self.dealer,
            "multiplier": self.multiplier,
            "deal": [format_cards(cards) for cards in self.deal],
            "up_card": str(self.up_card),
            "ending": self.ending,
            "tonk": self.tonk_kind(rules),
            "winners": list(s.winners),
            "dropper": s.dropper,
            "caught": self.caught,
            "counts": list(s.counts),
            "payments": [[p.payer, p.payee, p.amount] for p in s.payments],
            "net": s.net(players),
            "turns": self.turns,
            "drop_turn": self.drop_turn,
            "actions": self.actions,
            "stock_left": self.stock_left,
        }


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
        return (self.first_dealer + number) % self.players


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


# -- adding up -----------------------------------------------------------------------------------


@dataclass(slots=True)
class Tally:
    """Everything a run's report needs, added up hand by hand. Each hand's ending, dealer,
    turns and nets are kept (compactly, in arrays): the means and intervals are worked out from
    them when asked for, and paired comparisons and pictures read them hand by hand."""

    rules: HouseRules
    players: int
    hands: int = 0
    actions: int = 0
    endings: Counter[str] = field(default_factory=Counter)
    tonk_kinds: Counter[str] = field(default_factory=Counter)
    caught: Counter[int] = field(default_factory=Counter)
    money: Counter[str] = field(default_factory=Counter)
    turns: Counter[int] = field(default_factory=Counter)
    drop_turns: Counter[int] = field(default_factory=Counter)
    stock_low: int = 0
    seat_wins: list[int] = field(init=False)
    position_wins: list[int] = field(init=False)
    ending_codes: bytearray = field(default_factory=bytearray)
    hand_turns: array[int] = field(default_factory=lambda: array("l"))
    dealers: bytearray = field(default_factory=bytearray)
    nets: list[array[int]] = field(init=False)

    def __post_init__(self) -> None:
        n = self.players
        self.seat_wins = [0] * n
        self.position_wins = [0] * n
        self.nets = [array("q") for _ in range(n)]

    def add(self, hand: HandSummary) -> None:
        # (Kept short: it runs once a hand, and a simulated hand takes about 200 microseconds.)
        players = self.players
        s = hand.settlement
        ending = s.ending.value
        self.hands += 1
        self.actions += hand.actions
        self.endings[ending] += 1
        turns = hand.turns
        if turns == 0:
            kind = hand.tonk_kind(self.rules)
            assert kind is not None
            self.tonk_kinds[kind] += 1
        elif s.dropper is not None:
            self.drop_turns[turns] += 1
            caught = hand.caught
            if caught is not None:
                self.caught[caught] += 1
        if s.payments:
            self.money[ending] += sum([p.amount for p in s.payments])
        self.turns[turns] += 1
        if turns and hand.stock_left < players:
            self.stock_low += 1
        net = s.net(players)
        for seat_nets, value in zip(self.nets, net, strict=True):
            seat_nets.append(value)
        dealer = hand.dealer
        for winner in s.winners:
            self.seat_wins[winner] += 1
            self.position_wins[(winner - dealer - 1) % players] += 1
        self.ending_codes.append(_ENDING_CODE[ending])
        self.hand_turns.append(turns)
        self.dealers.append(dealer)

    def seat_net(self, seat: int) -> Mean:
        """A seat's net per hand, with its interval."""
        mean = Mean()
        mean.extend(self.nets[seat])
        return mean

    def position_net(self, position: int) -> Mean:
        """The net per hand of the seat at `position` from the dealer, with its interval."""
        mean = Mean()
        mean.extend(self.position_nets(position))
        return mean

    def position_nets(self, position: int) -> Iterator[int]:
        """The net of the seat at `position` from the dealer, hand by hand."""
        players = self.players
        nets = self.nets
        for number, dealer in enumerate(self.dealers):
            yield nets[(dealer + 1 + position) % players][number]

    def running_net(self, seat: int) -> list[int]:
        """A seat's balance after each hand, from 0."""
        return [0, *accumulate(self.nets[seat])]


def _rate(count: int, trials: int) -> dict[str, Any]:
    return {
        "hands": count,
        "rate": round(count / trials, 6) if trials else None,
        "ci95": rounded(wilson(count, trials), 6),
    }


def _mean(mean: Mean, places: int = 4) -> dict[str, Any]:
    value = mean.mean
    return {
        "mean": None if value is None else round(value, places),
        "ci95": rounded(mean.ci95(), places),
    }


def _net(mean: Mean) -> dict[str, Any]:
    figures = _mean(mean)
    return {"net_per_hand": figures["mean"], "ci95": figures["ci95"]}


def distribution(counts: Counter[int]) -> dict[str, Any]:
    """A distribution held as counts: its mean with interval, percentiles, and the counts."""
    mean = Mean()
    for value, n in counts.items():
        mean.n += n
        mean.total += value * n
        mean.squares += value * value * n
    return {
        **_mean(mean, 3),
        **{f"p{q}": percentile(counts, q / 100) for q in (10, 25, 50, 75, 90, 99)},
        "max": max(counts) if counts else None,
        "counts": {str(value): counts[value] for value in sorted(counts)},
    }


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
    stakes: tuple[int, ...]
    tally: Tally

    def to_dict(self) -> dict[str, Any]:
        tally = self.tally
        hands = self.hands
        return {
            "hands": hands,
            "players": self.players,
            "rules": self.rules.name,
            "rules_options": self.rules.to_dict(),
            "seed": self.seed,
            "endings": dict(self.endings),
            "ending_rates": {e: _rate(self.endings[e], hands) for e in ENDINGS},
            "deal_tonks": {kind: _rate(tally.tonk_kinds[kind], hands) for kind in TONK_KINDS},
            "caught_by": {str(k): _rate(tally.caught[k], hands) for k in range(1, self.players)},
            "money": {
                e: {
                    "stakes": tally.money[e],
                    "per_hand": round(tally.money[e] / hands, 6) if hands else None,
                }
                for e in ENDINGS
            },
            "seats": [
                {
                    "seat": seat,
                    "bot": bot,
                    "stake": self.stakes[seat],
                    "net": net,
                    "wins": wins,
                    **_net(tally.seat_net(seat)),
                    "win_rate": _rate(wins, hands)["rate"],
                    "win_ci95": _rate(wins, hands)["ci95"],
                }
                for seat, (bot, net, wins) in enumerate(
                    zip(self.bots, self.net, self.wins, strict=True)
                )
            ],
            "by_position": [
                {
                    "position": position,
                    "label": position_label(position, self.players),
                    "net": int(tally.position_net(position).total),
                    **_net(tally.position_net(position)),
                    "wins": tally.position_wins[position],
                    "win_rate": _rate(tally.position_wins[position], hands)["rate"],
                    "win_ci95": _rate(tally.position_wins[position], hands)["ci95"],
                }
                for position in range(self.players)
            ],
            "hand_turns": distribution(tally.turns),
            "drop_turns": distribution(tally.drop_turns),
            "stock_low": {"below": self.players, **_rate(tally.stock_low, hands)},
            "actions": self.actions,
            "first_dealer": self.first_dealer,
        }


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
    if not 2 <= players <= rules.players:
        raise ValueError(f"these rules seat 2 to {rules.players} players, not {players}")
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
        cut_for_deal(players, random.Random(seed)).dealer,
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


# -- paired comparisons --------------------------------------------------------------------------


def _difference(mean: Mean) -> dict[str, Any]:
    value = mean.mean
    return {
        "difference": None if value is None else round(value, 6),
        "ci95": rounded(mean.ci95(), 6),
    }


def compare(base: SimResult, other: SimResult) -> dict[str, Any]:
    """`other` less `base`, hand by hand on the same deals, with 95% intervals on the mean
    difference: each ending's rate, each seat's and each position's net per hand, and the
    hand's length in turns. Raises ValueError unless both runs played the same deals."""
    for name in ("seed", "players", "hands", "first_dealer"):
        if getattr(base, name) != getattr(other, name):
            raise ValueError(f"the runs differ in {name}: they did not play the same deals")
    a, b = base.tally, other.tally
    endings = {}
    for code, ending in enumerate(ENDINGS):
        mean = Mean()
        for x, y in zip(a.ending_codes, b.ending_codes, strict=True):
            mean.add((y == code) - (x == code))
        endings[ending] = _difference(mean)
    seats = []
    for seat in range(base.players):
        mean = Mean()
        mean.extend(y - x for x, y in zip(a.nets[seat], b.nets[seat], strict=True))
        seats.append({"seat": seat, "net_per_hand": _difference(mean)})
    positions = []
    for position in range(base.players):
        mean = Mean()
        mean.extend(
            y - x for x, y in zip(a.position_nets(position), b.position_nets(position), strict=True)
        )
        positions.append(
            {
                "position": position,
                "label": position_label(position, base.players),
                "net_per_hand": _difference(mean),
            }
        )
    turns = Mean()
    turns.extend(y - x for x, y in zip(a.hand_turns, b.hand_turns, strict=True))
    same = sum(
        1
        for x, y, tx, ty in zip(
            a.ending_codes, b.ending_codes, a.hand_turns, b.hand_turns, strict=True
        )
        if x == y and tx == ty
    )
    return {
        "base": base.rules.to_dict(),
        "rules": other.rules.to_dict(),
        "endings": endings,
        "seats": seats,
        "by_position": positions,
        "hand_turns": _difference(turns),
        "hands_alike": same,
    }

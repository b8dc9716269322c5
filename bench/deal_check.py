"""What a deal anyone can check costs a hand, in CPU time: the server's side (a secret drawn,
its commitment, the players' values read, the seed, the keyed shuffle, the seal kept with the
hand's record, the two messages encoded), against the seeded shuffle it replaces; and a client's
side (the check of a whole hand once the secret is revealed: the shuffle again, and the hand
played again from its events).

    python bench/deal_check.py [--hands 2000] [--players 4]

Each figure is the median over `--hands` hands of the time one hand's work took (process CPU
time is too coarse for one hand: wall time, perf_counter, on a machine as quiet as it can be
made), with the 99th percentile beside it. The client's hands are played by `easy` bots.
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import statistics
import time
from collections.abc import Callable

from tonk.server.connection import encode_message
from tonk.server.tables.table_deal import open_round, reveal_of, seal_of, take_value
from tonk.shared.bots.bots import make_bot
from tonk.shared.game.cards import shuffled_deck
from tonk.shared.game.dealcheck import Shown, check_deal, cut_of
from tonk.shared.game.fairdeal import Seal, deck_of
from tonk.shared.game.hand import Hand
from tonk.shared.game.rules import PRESETS
from tonk.shared.sim.play import play_hand


def timed(work: Callable[[int], object], hands: int) -> tuple[float, float]:
    """Median and 99th percentile, in microseconds, of `work(i)` for i in range(hands)."""
    times = []
    for i in range(hands):
        start = time.perf_counter()
        work(i)
        times.append((time.perf_counter() - start) * 1e6)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.99) - 1]


def seeded_deal(i: int) -> object:
    """What a table did for a deal before: a generator from the system's entropy, shuffled."""
    rng = random.Random(random.SystemRandom().getrandbits(128))
    return shuffled_deck(rng)


def committed_deal(players: int) -> Callable[[int], object]:
    values = [os.urandom(32).hex() for _ in range(players)]

    def deal(i: int) -> object:
        round_ = open_round(i + 1, frozenset(range(players)), 0.0, 1.5, dev=False)
        commit = encode_message(round_.commit(7, 0.0))
        for seat, value in enumerate(values):
            take_value(round_, i, seat, i + 1, value)
        seal = seal_of(round_, 7)
        seed = seal.seed()
        deck = deck_of(seed)
        if i == 0:
            cut_of(seed, players)
        stored = seal.to_dict()
        reveal = encode_message(reveal_of(seal))
        return commit, deck, stored, reveal

    return deal


def played_hands(hands: int, players: int) -> list[tuple[Shown, str, dict[int, str]]]:
    """Hands dealt from seals and played to their end by easy bots, as seat 0 was shown them."""
    rules = PRESETS["classic"]
    out = []
    rng = random.Random(5)
    for number in range(1, hands + 1):
        secret = secrets.token_bytes(32)
        values = {seat: os.urandom(32).hex() for seat in range(players)}
        seal = Seal(7, number, secret.hex(), tuple(sorted(values.items())))
        hand = Hand(rules, players, number % players, (1,), deck=deck_of(seal.seed()))
        play_hand(hand, [make_bot("easy", random.Random(rng.random())) for _ in range(players)])
        shown = Shown(
            table=7,
            hand=number,
            commitment=seal.commitment,
            rules=rules,
            players=players,
            dealer=hand.dealer,
            stakes=hand.stakes,
            multiplier=1,
            seat=0,
            events=tuple(hand.events_for(0)),
            settlement=hand.settlement,
        )
        out.append((shown, seal.secret, values))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=2000)
    parser.add_argument("--players", type=int, default=4)
    args = parser.parse_args()
    hands, players = args.hands, args.players
    before = timed(seeded_deal, hands)
    after = timed(committed_deal(players), hands)
    played = played_hands(hands, players)
    events = statistics.mean(len(shown.events) for shown, _, _ in played)

    def check(i: int) -> object:
        shown, secret, values = played[i]
        problem = check_deal(shown, secret, values, own=values[0])
        assert problem is None, problem
        return problem

    checked = timed(check, hands)
    print(f"{hands} hands, {players} players; median and p99 per hand, microseconds")
    print(f"server, seeded shuffle (before):       {before[0]:8.1f} {before[1]:8.1f}")
    print(f"server, committed deal (after):        {after[0]:8.1f} {after[1]:8.1f}")
    print(f"client, check of a hand ({events:.0f} events):  {checked[0]:8.1f} {checked[1]:8.1f}")


if __name__ == "__main__":
    main()

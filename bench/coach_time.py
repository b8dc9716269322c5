"""How long the coach takes to answer: the CPU time of one answer (tonk.shared.bots.coach's
`advise_record`, the hand played again to the decision included) for every decision of one
seat in hands `sharp` bots play, by table size.

    python bench/coach_time.py [--hands 20] [--seed 7] [--rules classic]

Thread CPU time, so a busy machine does not inflate it; the server adds a process's round trip
(a few milliseconds) and, for a settled hand, one read of the database.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Sequence

from bench_core import machine, ms, percentile
from tonk.shared.bots.bots import make_bot
from tonk.shared.bots.coach import advise_record
from tonk.shared.game.cards import shuffled_deck
from tonk.shared.game.hand import Hand, HandRecord
from tonk.shared.game.rules import PRESETS, HouseRules


def sharp_hand(rules: HouseRules, players: int, rng: random.Random) -> HandRecord:
    """One hand of `sharp` bots, to its end, as its record."""
    hand = Hand(rules, players, 0, (1,) * players, deck=shuffled_deck(rng))
    bots = [make_bot("sharp", random.Random(rng.random())) for _ in range(players)]
    for seat, bot in enumerate(bots):
        bot.observe(hand.events_for(seat, 0))
    while not hand.ended:
        seat, start = hand.turn, len(hand.events)
        hand.apply(bots[seat].choose(hand.view(seat)))
        for other, bot in enumerate(bots):
            bot.observe(hand.events_for(other, start))
    return hand.record()


def answer_times(rules: HouseRules, players: int, hands: int, seed: int) -> list[float]:
    """The CPU seconds of the coach's answer to each of seat 0's decisions in `hands` hands."""
    rng = random.Random(seed)
    times: list[float] = []
    for _ in range(hands):
        record = sharp_hand(rules, players, rng)
        for at, action in enumerate(record.actions):
            if action.seat != 0:
                continue
            started = time.thread_time()
            advise_record(record, 0, at, random.Random(at))
            times.append(time.thread_time() - started)
    return times


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--hands", type=int, default=20, help="hands a table size")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rules", default="classic", choices=list(PRESETS))
    args = parser.parse_args(argv)
    print(f"Machine: {machine()}. Rules: {args.rules}, {args.hands} hands a table size.")
    print("| players | answers | median | p99 | max |")
    print("|---|---|---|---|---|")
    for players in (2, 3, 4):
        times = answer_times(PRESETS[args.rules], players, args.hands, args.seed)
        med, p99, top = statistics.median(times), percentile(times, 0.99), max(times)
        print(f"| {players} | {len(times)} | {ms(med)} | {ms(p99)} | {ms(top)} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

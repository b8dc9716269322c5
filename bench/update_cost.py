"""What the server's CPU pays to encode one change's `update` frames: every seat's frame and the
spectators' one, after each action of easy-bot hands, as `Table.send_updates` makes them.

    python bench/update_cost.py [--hands 200] [--players 4] [--repeat 20]

Each change's frames are made `--repeat` times in a row and the time of one making is the
least of those (what the encoding costs, not what the machine's other work adds); the figure
is that time's median and p99 over every change, in microseconds, with the mean frame size.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import time

from tonk.server.tables.table import Table, TableConfig
from tonk.shared.bots.bots import make_bot
from tonk.shared.game.hand import Hand
from tonk.shared.game.rules import PRESETS

REPLY_TO = 12345


def table_for(players: int) -> Table:
    table = Table(
        server=None,  # type: ignore[arg-type]  # the frames ask nothing of the server
        id=7,
        name="t",
        config=TableConfig(rules=PRESETS["classic"], seats=players, turn_timer=None),
        created=0.0,
    )
    frames: list[bytes] = []
    for number, seat in enumerate(table.seats):
        seat.name, seat.kind = f"p{number}", "human"
        seat.conn = Catcher(frames)  # type: ignore[assignment]
    table.spectators.add(Catcher(frames))  # type: ignore[arg-type]
    return table


class Catcher:
    """A connection that keeps the frames it is sent."""

    def __init__(self, frames: list[bytes]) -> None:
        self.frames = frames
        self.request_id: int | None = None

    def send_frame(self, frame: bytes) -> None:
        self.frames.append(frame)


def frames_of(table: Table, start: int, acting: Catcher) -> list[bytes]:
    """The frames `send_updates` sends for one change: each seat's (the acting seat's with its
    request's `reply_to`) and a spectator's."""
    acting.frames.clear()
    table.send_updates(start, acting)  # type: ignore[arg-type]
    return acting.frames


async def cost(hands: int, players: int, repeat: int, seed: int) -> tuple[list[float], int, int]:
    """Microseconds per change (the least of `repeat` makings), bytes sent, frames sent (in
    a coroutine: a table wants a running loop)."""
    rng = random.Random(seed)
    table = table_for(players)
    clock = time.perf_counter
    times: list[float] = []
    sent = count = 0
    for number in range(hands):
        hand = Hand(table.rules, players, number % players, (1,) * players, rng=rng)
        table.hand, table.hand_number = hand, number + 1
        bots = [make_bot("easy", random.Random(rng.getrandbits(32))) for _ in range(players)]
        while not hand.ended:
            seat = hand.turn
            start = len(hand.events)
            hand.apply(bots[seat].choose(hand.view(seat)))
            for bot_seat, bot in enumerate(bots):
                bot.observe(hand.events_for(bot_seat, start))
            acting = table.seats[seat].conn
            acting.request_id = REPLY_TO  # type: ignore[union-attr]
            best = float("inf")
            for _ in range(repeat):
                began = clock()
                frames = frames_of(table, start, acting)  # type: ignore[arg-type]
                best = min(best, clock() - began)
            times.append(best * 1e6)
            sent += sum(len(frame) for frame in frames)
            count += len(frames)
            acting.request_id = None  # type: ignore[union-attr]
    return times, sent, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=200)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    times, sent, count = asyncio.run(cost(args.hands, args.players, args.repeat, args.seed))
    times.sort()
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
    print(
        f"{len(times)} changes, {args.players} seats and the spectators: "
        f"median {statistics.median(times):.1f} us, p99 {p99:.1f} us per change "
        f"({count / len(times):.1f} frames of {sent / count:.0f} bytes on average)"
    )


if __name__ == "__main__":
    main()

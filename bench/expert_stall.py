"""How long the server's event loop is kept from running while `expert` seats play flat out,
with their decisions made in the event loop (`inline`, as before they were moved) or in the
server's worker thread (`thread`, as shipped).

    python bench/expert_stall.py --tables 2 --seconds 8 --runs 2

One server in this process (tests/netclient.py's loopback server: `--dev`, no bot pause, no
delay between hands), and at each table three `expert` seats: two bots and the creator's seat,
which leaves at once and is played for by the autoplay bot (`autoplay_strategy = "expert"`);
a spectator keeps the hands being dealt. A probe coroutine in the same event loop sleeps 1 ms
over and over; the stall is how much later than asked it wakes (p50, p99 and max over the
window): how long any other table's action would wait before the server reads it. `inline`
is got by marking the expert not slow (`ExpertBot.slow = False`), for this comparison only.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from netclient import NetClient, start_server
from tonk.shared.bots.expert import ExpertBot
from tonk.shared.wire import protocol as p


async def measure(slow: bool, tables: int, seconds: float) -> tuple[list[float], int]:
    ExpertBot.slow = slow
    with tempfile.TemporaryDirectory() as folder:
        overrides = {"grace": 0.1, "autoplay_strategy": "expert"}
        async with start_server(Path(folder), **overrides) as server:
            watchers = []
            for number in range(tables):
                host = await NetClient.connect(server.port, f"Host{number}")
                seated = await host.request(
                    {"type": "create_table", "name": f"t{number}", "seats": 3, "seed": number},
                    p.SEATED,
                )
                watcher = await NetClient.connect(server.port, f"Watch{number}")
                await watcher.request({"type": "watch", "table": seated["table"]}, p.WATCHING)
                watchers.append(watcher)
                for _ in range(2):
                    await host.send({"type": "add_bot", "strategy": "expert"})
                await host.expect(p.UPDATE)
                await host.close()
            await asyncio.sleep(1.0)  # every creator away, every seat played by an expert
            start = sum(table.hands_played for table in server.tables.values())
            loop = asyncio.get_running_loop()
            lags: list[float] = []
            end = loop.time() + seconds
            while loop.time() < end:
                before = time.perf_counter()
                await asyncio.sleep(0.001)
                lags.append(time.perf_counter() - before - 0.001)
            hands = sum(table.hands_played for table in server.tables.values()) - start
            for watcher in watchers:
                await watcher.close()
    return sorted(lags), hands


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--runs", type=int, default=2, help="each mode, alternately")
    args = parser.parse_args()
    print("| mode | tables | hands played | stall p50 | p99 | max |")
    print("|---|---|---|---|---|---|")
    for _ in range(args.runs):
        for mode, slow in (("inline", False), ("thread", True)):
            lags, hands = asyncio.run(measure(slow, args.tables, args.seconds))
            p50 = lags[len(lags) // 2] * 1e3
            p99 = lags[int(len(lags) * 0.99)] * 1e3
            print(
                f"| {mode} | {args.tables} | {hands} | {p50:.1f} ms | {p99:.1f} ms "
                f"| {lags[-1] * 1e3:.1f} ms |"
            )


if __name__ == "__main__":
    main()

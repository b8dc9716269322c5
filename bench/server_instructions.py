"""The server's instructions per action, counted under valgrind: a flat-out figure that does not
depend on what else the machine is doing.

    python bench/server_instructions.py --tables 1 --hands 10,40
    python bench/server_instructions.py --baseline 'python bench/run_tree.py /tmp/before'

tonk-server runs under `valgrind --tool=callgrind` (every thread, the store's writer too) on
loopback, started with `--dev` so that each table's shuffles are fixed by its seed. Each table
is four `easy` bot clients in this process, acting as soon as it is their turn, in a session
that ends by itself after N hands. The server is run twice, for the two hand counts: the
difference in instructions over the difference in actions is the cost of one action, with the
start, the seating and the shutdown cancelled out. The same seeds give the same hands, so two
servers (this tree and `--baseline`) play exactly the same actions; the report checks that.
`--keep DIR` keeps the callgrind files, for `callgrind_annotate` (which function costs what).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import loadkit as lk
from load_driver import server_limits
from tonk.shared.wire import protocol as p


class CountingClient(lk.BotClient):
    """A bot client that counts the actions it sends, and sees its session end."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sent = 0
        self.ended: asyncio.Future[dict[str, Any]] = self.loop.create_future()

    def act(self) -> None:
        super().act()
        self.sent += 1

    def handle(self, message: dict[str, Any]) -> None:
        if message["type"] == p.SESSION_END and not self.ended.done():
            self.ended.set_result(message)
        super().handle(message)


async def play_table(port: int, index: int, hands: int, seed: int, stats: lk.Stats) -> int:
    """One table of four bot clients, through a session of `hands` hands; returns the actions
    they sent."""
    rng = random.Random(seed * 1_000_003 + index)
    clients: list[CountingClient] = []
    for seat in range(4):
        client = await CountingClient.connect(
            port, f"t{index}s{seat}", stats, random.Random(rng.random()), None
        )
        assert isinstance(client, CountingClient)
        clients.append(client)
    seated = await clients[0].request(
        {
            "type": p.CREATE_TABLE,
            "name": f"count {index}",
            "seats": 4,
            "hands": hands,
            "seed": seed * 7919 + index,
            "dealer": 0,
        },
        p.SEATED,
    )
    for client in clients[1:]:
        await client.request({"type": p.SIT, "table": seated["table"]}, p.SEATED)
    await asyncio.wait_for(clients[0].ended, timeout=3600)
    for client in clients:
        client.close()
    return sum(c.sent for c in clients)


async def run_workload(port: int, tables: int, hands: int, seed: int) -> dict[str, Any]:
    stats = lk.Stats()  # (no window: no latencies kept, only the actions answered)
    counts = await asyncio.gather(*(play_table(port, i, hands, seed, stats) for i in range(tables)))
    await asyncio.sleep(0.5)  # the byes reach the server before it is stopped
    return {"actions": sum(counts), "answered": stats.actions_total, "errors": stats.errors}


def count_run(
    program: list[str],
    tables: int,
    hands: int,
    seed: int,
    workdir: Path,
    keep: Path | None,
    label: str,
) -> dict[str, Any]:
    """tonk-server (`program`) under callgrind through `hands` hands at each of `tables`
    tables: the actions, and the instructions the server ran from its start to its exit."""
    run = Path(tempfile.mkdtemp(prefix="run-", dir=workdir))
    out = run / "callgrind.out"
    valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    options = ["--log-level", "warning", "--dev", "--next-hand-delay", "0"]
    started = time.monotonic()
    server = lk.start_server(
        run / "tonk.db",
        server_limits(tables, flat=True),
        options,
        log=run / "server.log",
        program=valgrind + program,
    )
    try:
        result = asyncio.run(run_workload(server.port, tables, hands, seed))
    finally:
        code = server.stop(timeout=600)
    result["server_exit"] = code
    result["seconds"] = time.monotonic() - started
    totals = [line for line in out.read_text().splitlines() if line.startswith("totals:")]
    if not totals:
        raise RuntimeError(f"no totals in {out}: {(run / 'server.log').read_text()[-2000:]}")
    result["instructions"] = int(totals[0].split()[1])
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        shutil.copy(out, keep / f"callgrind.{label}.{hands}")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=1, help="tables played at once")
    parser.add_argument(
        "--hands", default="10,40", help="the two session lengths, in hands (default 10,40)"
    )
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--baseline", metavar="COMMAND", help="another tonk-server to count the same way"
    )
    parser.add_argument("--keep", type=Path, help="keep the callgrind files in this folder")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        sys.exit("server_instructions.py needs valgrind (Debian package: valgrind)")
    short, long = (int(h) for h in args.hands.split(","))
    if not 0 < short < long:
        sys.exit("--hands takes two counts, the first smaller: e.g. 10,40")
    programs = {"this tree": lk.server_command()}
    if args.baseline:
        programs = {"baseline": shlex.split(args.baseline), **programs}
    report: dict[str, Any] = {"machine": lk.machine(), "tables": args.tables, "runs": {}}
    with tempfile.TemporaryDirectory(prefix="tonk-instr-") as tmp:
        for label, program in programs.items():
            name = label.split()[0]  # (the callgrind files: callgrind.this.N, .baseline.N)
            runs = [
                count_run(program, args.tables, h, args.seed, Path(tmp), args.keep, name)
                for h in (short, long)
            ]
            for h, r in zip((short, long), runs, strict=True):
                print(
                    f"{label}: {h} hands a table: {r['actions']} actions, "
                    f"{r['instructions']:,} instructions ({r['seconds']:.0f} s)",
                    file=sys.stderr,
                )
            actions = runs[1]["actions"] - runs[0]["actions"]
            per_action = (runs[1]["instructions"] - runs[0]["instructions"]) / actions
            report["runs"][label] = {"runs": runs, "per_action": per_action}
    for label, entry in report["runs"].items():
        print(f"{label}: {entry['per_action']:,.0f} instructions per action")
    if args.baseline:
        base, this = (report["runs"][k] for k in ("baseline", "this tree"))
        same = [a["actions"] for a in base["runs"]] == [a["actions"] for a in this["runs"]]
        report["same_actions"] = same
        report["ratio"] = this["per_action"] / base["per_action"]
        differ = "" if same else " (the actions differ: not the same workload)"
        print(f"this tree / baseline: {report['ratio']:.3f}{differ}")
    if args.json:
        print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Soak test of tonk-server: hundreds of tables of bot clients for a set time, with random
disconnects and reconnects, then an audit of the ledger on disk.

    python bench/soak.py --tables 200 --seconds 300
    python bench/soak.py --tables 10 --seconds 10 --json   # tests/e2e/bench/test_soak_short.py's

A real `tonk-server` child process (`--port 0`, a fresh SQLite file, `--log-level warning`,
`--next-hand-delay 0.5`, the connection and table limits raised to fit) hosts `--tables` tables
of 4 `easy` bot clients over TCP (one asyncio loop, this process). Each seat acts a uniformly
drawn `--pace` seconds after its turn comes. At each table, on average every `--drop-every`
seconds, one seat's connection goes away in one of three ways:

- abort: the socket is reset without a word;
- close: the client says `bye` and closes;
- takeover: a second connection resumes the seat while the first is still open (the first is
  told `seat_resumed_elsewhere`, the only error a client may receive in a soak).

After 0.1 to 2 s (abort, close) it comes back on a new connection: `hello`, then `resume` with
the table and the seat token, and goes on from the full view the server sends.

Checks (any failing makes the exit code 1):

- errors: no `error` message but the expected `seat_resumed_elsewhere` for takeovers; no gap
  in any connection's event numbering; every reconnect succeeds; no table stalls (each table's
  last update is recent at the end); no ERROR line in the server's log; a clean server exit.
- hands: at least one hand completed.
- ledgers, read from the SQLite file after the server has stopped: at every table the balances
  sum to zero, each player's balance is what the payments on record add up to, the number of
  settled hands is the table's `hands_played`, and every settled hand's record replays, through
  the core, to the settlement that was stored.
- memory: the server's RSS at the end is at most its RSS at the start (every table seated and
  playing) plus MEMORY_SLACK_MIB plus MEMORY_PER_HAND_KIB for each hand completed (each table
  keeps the newest hands of its ledger in memory, up to 200, one entry per hand).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import shlex
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import loadkit as lk
from tonk.server.commands import audit
from tonk.shared.wire import protocol as p

#: The memory bound: RSS at the end <= RSS at the start + this slack + this much per hand.
MEMORY_SLACK_MIB = 16.0
MEMORY_PER_HAND_KIB = 2.0
#: Errors a client may be sent in a soak: the old connection of a seat taken over.
EXPECTED_ERRORS = frozenset({p.SEAT_RESUMED_ELSEWHERE})
DROP_KINDS = ("abort", "close", "takeover")


@dataclass
class SoakSeat:
    """One seat as the soak sees it: its current client, and how to get the seat back."""

    name: str
    table: int = 0
    token: str = ""
    client: lk.BotClient | None = None
    away: bool = False  # between a drop and the reconnect
    last_update: float = 0.0


@dataclass
class Soak:
    port: int
    pace: tuple[float, float]
    rng: random.Random
    stats: lk.Stats = field(default_factory=lk.Stats)
    seats: list[list[SoakSeat]] = field(default_factory=list)
    drops: dict[str, int] = field(default_factory=lambda: dict.fromkeys(DROP_KINDS, 0))
    failures: list[str] = field(default_factory=list)
    expected_errors: int = 0
    tasks: set[asyncio.Task[None]] = field(default_factory=set)

    def new_client(self, seat: SoakSeat) -> lk.BotClient:
        client = lk.BotClient(seat.name, self.stats, random.Random(self.rng.random()), self.pace)

        def on_update(_: lk.BotClient, message: dict[str, Any]) -> None:
            seat.last_update = time.monotonic()

        client.on_update = on_update
        return client

    async def connect(self, seat: SoakSeat) -> lk.BotClient:
        loop = asyncio.get_running_loop()
        client = self.new_client(seat)
        await loop.create_connection(lambda: client, "127.0.0.1", self.port)
        await client.request(
            {"type": p.HELLO, "version": p.PROTOCOL_VERSION, "name": seat.name}, p.WELCOME
        )
        return client

    async def seat_table(self, index: int) -> None:
        seats = [SoakSeat(f"s{index}p{n}") for n in range(4)]
        clients = [await self.connect(seat) for seat in seats]
        clients[0].track_hands = True
        answer = await clients[0].request(
            {"type": p.CREATE_TABLE, "name": f"soak {index}", "seats": 4}, p.SEATED
        )
        for client in clients[1:]:
            await client.request({"type": p.SIT, "table": answer["table"]}, p.SEATED)
        now = time.monotonic()
        for seat, client in zip(seats, clients, strict=True):
            assert client.token is not None and client.table is not None
            seat.client, seat.token, seat.table, seat.last_update = (
                client,
                client.token,
                client.table,
                now,
            )
        self.seats.append(seats)

    # -- disconnects and reconnects ----------------------------------------------------------

    def drop(self, seat: SoakSeat) -> None:
        kind = self.rng.choice(DROP_KINDS)
        self.drops[kind] += 1
        old = seat.client
        assert old is not None
        if kind == "takeover":
            old.playing = False  # it stays connected, but the seat is played by the new one
            self.spawn(self.takeover(seat, old))
            return
        seat.away = True
        seat.client = None
        old.playing = False
        if kind == "abort":
            old.abort()
        else:
            old.close()
        self.spawn(self.come_back(seat, self.rng.uniform(0.1, 2.0)))

    async def come_back(self, seat: SoakSeat, delay: float) -> None:
        await asyncio.sleep(delay)
        try:
            seat.client = await self.resume(seat)
        except Exception as exc:
            self.failures.append(f"{seat.name}: reconnect failed: {exc!r}")
        finally:
            seat.away = False

    async def takeover(self, seat: SoakSeat, old: lk.BotClient) -> None:
        seat.away = True
        try:
            errors_before = dict(self.stats.errors)
            seat.client = await self.resume(seat)
            # The old connection is told its seat was resumed elsewhere: wait for it.
            for _ in range(100):
                if self.stats.errors.get(p.SEAT_RESUMED_ELSEWHERE, 0) > errors_before.get(
                    p.SEAT_RESUMED_ELSEWHERE, 0
                ):
                    break
                await asyncio.sleep(0.02)
            self.expected_errors += 1
            old.close()
        except Exception as exc:
            self.failures.append(f"{seat.name}: takeover failed: {exc!r}")
        finally:
            seat.away = False

    async def resume(self, seat: SoakSeat) -> lk.BotClient:
        client = await self.connect(seat)
        client.track_hands = seat.name.endswith("p0")  # one connection per table counts hands
        await client.request({"type": p.RESUME, "table": seat.table, "token": seat.token}, p.SEATED)
        self.stats.reconnects += 1
        return client

    def spawn(self, coroutine: Any) -> None:
        task = asyncio.create_task(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def chaos(self, drop_every: float, until: float) -> None:
        """Drop a random seat at each table, on average every `drop_every` seconds."""
        tick = 0.1
        chance = tick / drop_every
        while time.monotonic() < until:
            await asyncio.sleep(tick)
            for seats in self.seats:
                if self.rng.random() >= chance:
                    continue
                present = [s for s in seats if not s.away and s.client is not None]
                if present:
                    self.drop(self.rng.choice(present))


# -- the audit of the database ----------------------------------------------------------------


def check_ledgers(db: Path) -> dict[str, Any]:
    """Audit every table's ledger in the SQLite file, as `tonk-server audit` does: returns the
    counts and the problems."""
    problems: list[str] = []
    with audit.read_only(db) as conn:  # one snapshot for every read
        tables = conn.execute("SELECT id FROM tables ORDER BY id").fetchall()
        for (table_id,) in tables:
            problems += [f"table {table_id}: {x}" for x in audit.table_problems(conn, table_id)]
        (hands,) = conn.execute(
            "SELECT COUNT(*) FROM hands WHERE settlement IS NOT NULL"
        ).fetchone()
    # Every settled hand is replayed by the audit; any that did not replay is a problem above.
    return {"tables": len(tables), "hands": hands, "replayed": hands, "problems": problems}


def server_log_errors(log: Path) -> list[str]:
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return []
    return [line for line in lines if " ERROR " in line or line.startswith("Traceback")]


# -- the run -----------------------------------------------------------------------------------


async def soak(
    port: int,
    pid: int,
    tables: int,
    seconds: float,
    pace: tuple[float, float],
    drop_every: float,
    warmup: float,
    seed: int,
) -> dict[str, Any]:
    run = Soak(port, pace, random.Random(seed))
    gate = asyncio.Semaphore(25)

    async def one(index: int) -> None:
        async with gate:
            await run.seat_table(index)

    await asyncio.gather(*(one(i) for i in range(tables)))
    gc.set_threshold(20_000, 5, 10)  # the clients' own collections out of the latencies
    await asyncio.sleep(warmup)
    rss_start = lk.rss_kib(pid)
    rss_max = rss_start
    start = time.monotonic()
    end = start + seconds
    run.stats.window = (start, end)
    hands_before = run.stats.hands
    chaos = asyncio.create_task(run.chaos(drop_every, end))
    timeline: list[tuple[float, float, int]] = [(0.0, rss_start / 1024, 0)]
    while time.monotonic() < end:
        await asyncio.sleep(min(1.0, max(0.0, end - time.monotonic())))
        rss = lk.rss_kib(pid)
        rss_max = max(rss_max, rss)
        elapsed = time.monotonic() - start
        if elapsed - timeline[-1][0] >= seconds / 10 - 0.5:
            timeline.append((round(elapsed), rss / 1024, run.stats.hands - hands_before))
    await chaos
    # Let the reconnects in progress finish, then look for stalled tables.
    for _ in range(60):
        if not run.tasks:
            break
        await asyncio.sleep(0.1)
    rss_end = lk.rss_kib(pid)
    now = time.monotonic()
    stall_after = max(10.0, 20 * pace[1] + 5)
    stalled = [
        seats[0].table
        for seats in run.seats
        if now - max(seat.last_update for seat in seats) > stall_after
    ]
    for seats in run.seats:
        for seat in seats:
            if seat.client is not None:
                seat.client.close()
    await asyncio.sleep(0.2)
    return {
        "run": run,
        "rss_start": rss_start,
        "rss_end": rss_end,
        "rss_max": rss_max,
        "timeline": timeline,
        "stalled": stalled,
        "hands_seen": run.stats.hands - hands_before,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--pace", default="0.05,0.3", help="LOW,HIGH seconds before each action")
    parser.add_argument(
        "--drop-every", type=float, default=20.0, help="mean seconds between drops at a table"
    )
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--db", type=Path, help="keep the database here (default: a temp dir)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--write", type=Path, help="replace the '## Soak' section of this file")
    args = parser.parse_args(argv)
    low, high = (float(x) for x in args.pace.split(","))
    lk.raise_nofile()
    with tempfile.TemporaryDirectory(prefix="tonk-soak-") as tmp:
        db = args.db or Path(tmp) / "soak.db"
        log = Path(tmp) / "server.log"
        limits = {
            "max_connections": 5 * args.tables + 100,
            "max_per_address": 5 * args.tables + 100,
            "max_tables": args.tables + 10,
            "max_tables_per_address": args.tables + 10,
        }
        load_before = lk.load_average()
        server = lk.start_server(
            db, limits, ["--log-level", "warning", "--next-hand-delay", "0.5"], log=log
        )
        try:
            time.sleep(0.3)
            rss_empty = lk.rss_kib(server.pid)
            result = asyncio.run(
                soak(
                    server.port,
                    server.pid,
                    args.tables,
                    args.seconds,
                    (low, high),
                    args.drop_every,
                    args.warmup,
                    args.seed,
                )
            )
        finally:
            exit_code = server.stop()
        ledger = check_ledgers(db)
        log_errors = server_log_errors(log)
    run: Soak = result["run"]
    unexpected = {k: v for k, v in run.stats.errors.items() if k not in EXPECTED_ERRORS}
    expected = {k: v for k, v in run.stats.errors.items() if k in EXPECTED_ERRORS}
    growth_mib = (result["rss_end"] - result["rss_start"]) / 1024
    bound_mib = MEMORY_SLACK_MIB + MEMORY_PER_HAND_KIB * ledger["hands"] / 1024
    report: dict[str, Any] = {
        "machine": lk.machine(),
        "date": time.strftime("%Y-%m-%d"),
        "load_before": load_before,
        "tables": args.tables,
        "connections": 4 * args.tables,
        "seconds": args.seconds,
        "pace": [low, high],
        "drop_every": args.drop_every,
        "hands": ledger["hands"],
        "hands_in_window": result["hands_seen"],
        "actions": run.stats.actions,
        "actions_per_second": run.stats.actions / args.seconds,
        "drops": run.drops,
        "reconnects": run.stats.reconnects,
        "errors": {
            "unexpected": unexpected,
            "expected": expected,
            "failures": run.failures,
            "stalled_tables": result["stalled"],
            "server_log": log_errors[:20],
            "server_exit": exit_code,
        },
        "latency_ms": lk.latency_summary(run.stats.latencies),
        "memory_mib": {
            "empty": rss_empty / 1024,
            "start": result["rss_start"] / 1024,
            "end": result["rss_end"] / 1024,
            "max": result["rss_max"] / 1024,
            "growth": growth_mib,
            "bound": bound_mib,
            "timeline": [
                {"second": t, "rss_mib": round(m, 1), "hands": h} for t, m, h in result["timeline"]
            ],
        },
        "ledger": ledger,
    }
    checks = {
        "no unexpected errors": not unexpected
        and not run.failures
        and not result["stalled"]
        and not log_errors
        and exit_code == 0,
        "hands completed": ledger["hands"] > 0,
        "ledgers sum to zero and replay": not ledger["problems"]
        and ledger["tables"] == args.tables,
        "memory within bound": growth_mib <= bound_mib,
    }
    report["checks"] = checks
    report["ok"] = all(checks.values())
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(describe(report))
    if args.write:
        command = "python bench/soak.py " + shlex.join(argv if argv is not None else sys.argv[1:])
        lk.write_section(args.write, "## Soak", section(report, command))
    return 0 if report["ok"] else 1


def describe(r: dict[str, Any]) -> str:
    lat, mem, err = r["latency_ms"], r["memory_mib"], r["errors"]
    lines = [
        f"soak: {r['tables']} tables ({r['connections']} connections) for {r['seconds']:g} s",
        f"hands completed {r['hands']:,}; actions {r['actions']:,} "
        f"({r['actions_per_second']:,.0f}/s); drops {r['drops']}; reconnects {r['reconnects']}",
        f"latency p50 {lat['p50']:.1f} ms, p90 {lat['p90']:.1f} ms, p99 {lat['p99']:.1f} ms, "
        f"p99.9 {lat['p999']:.1f} ms, max {lat['max']:.1f} ms",
        f"server RSS {mem['empty']:.1f} MiB empty, {mem['start']:.1f} at the start, "
        f"{mem['end']:.1f} at the end (max {mem['max']:.1f}): growth {mem['growth']:+.1f} MiB, "
        f"bound {mem['bound']:.1f} MiB",
        f"errors: unexpected {err['unexpected']}, expected {err['expected']}, "
        f"failures {len(err['failures'])}, stalled tables {len(err['stalled_tables'])}, "
        f"server log {len(err['server_log'])}, server exit {err['server_exit']}",
        f"ledgers: {r['ledger']['tables']} tables, {r['ledger']['hands']:,} settled hands, "
        f"{r['ledger']['replayed']:,} replayed, problems {len(r['ledger']['problems'])}",
    ]
    lines += [f"check {name}: {'ok' if ok else 'FAILED'}" for name, ok in r["checks"].items()]
    for problem in r["ledger"]["problems"][:10] + err["failures"][:10] + err["server_log"][:10]:
        lines.append(f"  {problem}")
    return "\n".join(lines)


def section(r: dict[str, Any], command: str) -> str:
    lat, mem, err = r["latency_ms"], r["memory_mib"], r["errors"]
    return "\n".join(
        [
            f"Measured {r['date']} on {r['machine']}; load average {r['load_before']} before "
            "the run. The machine was shared with other work while this was measured; the bot "
            "clients (one process) run on the same two cores as the server.",
            "",
            "Reproduce:",
            "",
            "```",
            command,
            "```",
            "",
            f"{r['tables']} tables of 4 `easy` bot clients ({r['connections']} connections) for "
            f"{r['seconds']:g} s, each seat acting {r['pace'][0]:g}-{r['pace'][1]:g} s after its "
            f"turn comes, one seat per table dropped on average every {r['drop_every']:g} s "
            "(reset, `bye`, or its seat resumed from a second connection) and back with its "
            "seat token 0.1-2 s later. The server is a real `tonk-server` child process "
            "(`--log-level warning --next-hand-delay 0.5`, `max_connections` and "
            "`max_per_address` 5 x tables + 100, `max_tables` and `max_tables_per_address` "
            "tables + 10); the ledgers are "
            "audited in its SQLite file after it has stopped. A short version (10 tables, "
            "10 s, a drop every 4 s at each table) runs with the tests: "
            "`tests/e2e/bench/test_soak_short.py`.",
            "",
            "| measure | value |",
            "|---|---|",
            f"| hands completed (settled on disk) | {r['hands']:,} |",
            f"| actions answered | {r['actions']:,} ({r['actions_per_second']:,.0f}/s) |",
            f"| drops (reset / bye / takeover) | {r['drops']['abort']} / {r['drops']['close']} / "
            f"{r['drops']['takeover']} |",
            f"| reconnects with the seat token | {r['reconnects']:,} |",
            f"| latency p50 / p90 / p99 / p99.9 / max | {lat['p50']:.1f} / {lat['p90']:.1f} / "
            f"{lat['p99']:.1f} / {lat['p999']:.1f} / {lat['max']:.0f} ms |",
            f"| server RSS empty / start / end / max | {mem['empty']:.1f} / {mem['start']:.1f} / "
            f"{mem['end']:.1f} / {mem['max']:.1f} MiB |",
            f"| memory growth (bound) | {mem['growth']:+.1f} MiB ({mem['bound']:.1f} MiB) |",
            f"| unexpected errors | {sum(err['unexpected'].values()) + len(err['failures'])} |",
            f"| expected errors (`seat_resumed_elsewhere` after a takeover) | "
            f"{sum(err['expected'].values())} |",
            f"| stalled tables / server log errors | {len(err['stalled_tables'])} / "
            f"{len(err['server_log'])} |",
            f"| ledgers summing to zero, matching their payments, replaying | "
            f"{r['ledger']['tables'] - len({x.split(':')[0] for x in r['ledger']['problems']})}"
            f" of {r['ledger']['tables']} tables; {r['ledger']['replayed']:,} hands replayed |",
            "",
            "The server's RSS during the run, with the hands completed so far:",
            "",
            "| second | " + " | ".join(f"{x['second']:g}" for x in mem["timeline"]) + " |",
            "|---|" + "---|" * len(mem["timeline"]),
            "| RSS (MiB) | " + " | ".join(f"{x['rss_mib']:.1f}" for x in mem["timeline"]) + " |",
            "| hands | " + " | ".join(f"{x['hands']:,}" for x in mem["timeline"]) + " |",
            "",
            f"The memory bound: RSS at the end <= RSS at the start + {MEMORY_SLACK_MIB:g} MiB + "
            f"{MEMORY_PER_HAND_KIB:g} KiB per hand completed (each table keeps the newest "
            f"hands of its ledger in memory, up to {p.LEDGER_HANDS}, one entry per hand). Checks: "
            + ", ".join(f"{k}: {'ok' if v else 'FAILED'}" for k, v in r["checks"].items())
            + ".",
        ]
    )


if __name__ == "__main__":
    sys.exit(main())

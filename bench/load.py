"""Load generator for tonk-server: N tables of 4 bot clients over TCP, in processes of their own.

    python bench/load.py paced --tables 1000 --seconds 60
    python bench/load.py flat --tables 100 --seconds 20
    python bench/load.py all --write BENCHMARKS.md      # both, with the default sizes
    python bench/load.py all --repeat 3 --tables 1000,2000 --flat-tables 10,100,400 \
        --baseline "python bench/run_tree.py /tmp/before" --write BENCHMARKS.md

`--repeat N` runs each measurement N times and keeps the median; `--baseline CMD` measures
another server command too (runs alternate), e.g. an older tonk-server from a source tree with
bench/run_tree.py. (`--profile DIR`, py-spy's samples of each window, retired: see
docs/benchmarks-journal.md.)

The server is a real `tonk-server` child process (`--port 0`, a fresh SQLite file in a temporary
directory, `--log-level warning`) with these limits raised so that one machine can play every
table from one address: `max_connections`, `max_per_address`, `max_tables`, and (flat out only)
`messages_per_second`/`burst`, since a seat acting the moment its turn comes may exceed the
default 20 a second. Every action is still written to SQLite (WAL, synchronous=FULL) before
anybody is told of it.

The clients run in `--procs` generator processes (one asyncio loop each); every seat is an
`easy` bot (tonk.shared.bots.bots) choosing from the view it receives. Reported:

- actions per second (answered actions, counted by the time they were sent, inside the window);
- latency: from writing an action to the arrival of the acting connection's next `update`;
- server memory per table: the server's VmRSS after every table is seated and playing, less
  its VmRSS before the first connection, divided by the tables;
- CPU seconds used in the window by the server and by the generators (the machine may have
  fewer cores than the processes: they compete).

Modes:

- paced: each seat acts a uniformly drawn 0.5 to 1.5 s after its turn comes (and again after
  each of its actions while its turn goes on), as people play. Target: p99 < 50 ms at 1,000
  tables.
- flat: every seat acts the moment its turn comes; then, in the same run, a bare asyncio +
  msgpack echo server (same framing: one request, one reply) in its own process is driven by as
  many concurrent actors (one per table) from as many generator processes: the ceiling for this
  machine and this Python. Target: actions/s >= 25% of the echo's round trips/s. (The fan-out
  bound, the I/O of an action alone, retired with issue 34: BENCHMARKS.md, "Server: what the
  figures say".)

`--json` prints the report as JSON; `--from-json FILE --write BENCHMARKS.md` writes the section
again from a saved report without measuring.

This file is the command line; the server and the generators are driven by load_driver.py, the
echo baseline is in load_baselines.py, and the report is written by load_report.py.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import loadkit as lk
from load_baselines import echo_server_main, run_echo
from load_driver import PACE, run_tonk
from load_report import describe, median_run, section


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["paced", "flat", "all", "echo-server"])
    parser.add_argument(
        "--tables",
        type=lambda text: [int(x) for x in text.split(",")],
        help="paced: 1000 (several separated by commas: 1000,2000); flat: 100",
    )
    parser.add_argument(
        "--flat-tables",
        type=lambda text: [int(x) for x in text.split(",")],
        default=[100],
        help="flat out in 'all': tables (= concurrent actors), several separated by commas",
    )
    parser.add_argument("--seconds", type=float, default=30.0, help="length of each window")
    parser.add_argument("--procs", type=int, default=2, help="generator processes")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds before measuring")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each; the median is kept")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--baseline",
        help="also measure this server command (e.g. an older tonk-server), alternating runs",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument(
        "--from-json",
        type=Path,
        metavar="FILE",
        help="measure nothing: write the section (--write) from a report saved with --json",
    )
    parser.add_argument("--write", type=Path, help="replace the '## Server' section of this file")
    args = parser.parse_args(argv)
    if args.mode == "echo-server":
        echo_server_main()
        return 0
    if args.from_json:
        if not args.write:
            parser.error("--from-json needs --write")
        saved = json.loads(args.from_json.read_text())
        lk.write_section(args.write, "## Server", section(saved, saved["command"]))
        return 0
    lk.raise_nofile()
    command = "python bench/load.py " + shlex.join(argv if argv is not None else sys.argv[1:])
    report: dict[str, Any] = {
        "command": command,
        "machine": lk.machine(),
        "date": time.strftime("%Y-%m-%d"),
        "load_before": lk.load_average(),
        "procs": args.procs,
        "repeat": args.repeat,
        "cpus": os.cpu_count() or 1,
    }
    baseline = args.baseline.split() if args.baseline else None
    programs: list[tuple[str, list[str] | None]] = [("", None)]
    if baseline:
        programs = [("baseline_", baseline), ("", None)]
    with tempfile.TemporaryDirectory(prefix="tonk-load-") as tmp:
        workdir = Path(tmp)

        def run_each(
            tables: int,
            pace: tuple[float, float] | None,
            label: str,
            runs: dict[str, list[dict[str, Any]]],
        ) -> None:
            """One run of tonk-server (and of the baseline command, first) at `tables` tables,
            printed as it ends and kept under its program's prefix."""
            for prefix, program in programs:
                result = run_tonk(
                    tables,
                    args.seconds,
                    args.procs,
                    pace,
                    args.seed,
                    workdir,
                    args.warmup,
                    program,
                )
                print(describe(f"{prefix}{label}", result), flush=True)
                runs[prefix].append(result)

        if args.mode in ("paced", "all"):
            report["paced_sizes"] = []
            for tables in args.tables or [1000]:
                runs: dict[str, list[dict[str, Any]]] = {prefix: [] for prefix, _ in programs}
                for _ in range(args.repeat):
                    run_each(tables, PACE, "paced", runs)
                size: dict[str, Any] = {"tables": tables}
                for prefix, found in runs.items():
                    size[f"{prefix}paced"] = median_run(found, "p99")
                report["paced_sizes"].append(size)
        if args.mode in ("flat", "all"):
            sizes = args.tables if args.mode == "flat" and args.tables else args.flat_tables
            report["flat_sizes"] = []
            for tables in sizes:
                runs = {prefix: [] for prefix, _ in programs}
                echoes = []
                for _ in range(args.repeat):
                    run_each(tables, None, "flat out", runs)
                    echo = run_echo(tables, args.seconds, args.procs, workdir)
                    print(describe("echo ceiling", echo), flush=True)
                    echoes.append(echo)
                size = {"tables": tables}
                size["echo"] = median_run(echoes, "actions_per_second")
                for prefix, found in runs.items():
                    size[f"{prefix}flat"] = median_run(found, "actions_per_second")
                    share = (
                        100
                        * size[f"{prefix}flat"]["actions_per_second"]
                        / size["echo"]["actions_per_second"]
                    )
                    size[f"{prefix}share_percent"] = share
                    print(f"{tables} tables: {prefix}flat out is {share:.1f}% of the echo ceiling")
                report["flat_sizes"].append(size)
    if args.json:
        print(json.dumps(report, indent=2))
    if args.write:
        lk.write_section(args.write, "## Server", section(report, command))
    ran = [size["paced"] for size in report.get("paced_sizes", [])]
    ran += [size["flat"] for size in report.get("flat_sizes", [])]
    failed = any(r["server_exit"] != 0 for r in ran)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

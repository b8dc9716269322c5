"""The load generator's report (bench/load.py): one line per run as it goes, and the
'## Server' section of BENCHMARKS.md from a whole report."""

from __future__ import annotations

from typing import Any

import loadkit as lk


def describe(name: str, r: dict[str, Any]) -> str:
    lat = r["latency_ms"]
    text = (
        f"{name}: {r['tables']} tables, {r['actions_per_second']:,.0f} actions/s "
        f"({r['actions']:,} in {r['seconds']:g} s); latency p50 {lat['p50']:.1f} ms, "
        f"p90 {lat['p90']:.1f} ms, p99 {lat['p99']:.1f} ms, max {lat['max']:.1f} ms; "
        f"server CPU {r['server_cpu_percent']:.0f}%, generators {r['generator_cpu_percent']:.0f}%"
    )
    if "server_loop_cpu_percent" in r:
        text += (
            f" (server event loop {r['server_loop_cpu_percent']:.0f}%, "
            f"store thread {r['server_store_cpu_percent']:.0f}%)"
        )
    if "mean_frame_bytes" in r:
        text += f"; {r['mean_frame_bytes']:.0f} B a frame received on average"
    if "kib_per_table" in r:
        text += (
            f"; server RSS {r['rss_before_mib']:.1f} -> {r['rss_after_mib']:.1f} MiB "
            f"({r['kib_per_table']:.0f} KiB per table), {r['rss_end_mib']:.1f} MiB at the end"
        )
    if r["errors"]:
        text += f"; errors {r['errors']}"
    return text


def _paced_row(label: str, r: dict[str, Any]) -> str:
    lat = r["latency_ms"]
    return (
        f"| {label} | {r['tables']:,} | {4 * r['tables']:,} | {r['actions_per_second']:,.0f} | "
        f"{lat['p50']:.1f} ms | {lat['p90']:.1f} ms | {lat['p99']:.1f} ms | {lat['max']:.0f} ms | "
        f"{r['kib_per_table']:.0f} KiB ({r['rss_before_mib']:.0f} -> {r['rss_after_mib']:.0f} "
        f"MiB) | {r['server_cpu_percent']:.0f}% | {sum(r['errors'].values())} |"
    )


def _flat_row(label: str, r: dict[str, Any], echo: dict[str, Any]) -> str:
    lat = r["latency_ms"]
    runs = ", ".join(f"{x:,.0f}" for x in r.get("all_runs", []))
    loop = r.get("server_loop_cpu_percent")
    cpu = f"{r['server_cpu_percent']:.0f}%"
    if loop is not None:
        cpu += f" ({loop:.0f}% loop, {r['server_store_cpu_percent']:.0f}% store)"
    per_action = "-"
    if r["actions_per_second"]:
        # CPU time per answered action: less at the mercy of other work than the rate.
        per_action = f"{r['server_cpu_percent'] * 1e4 / r['actions_per_second']:.0f} µs"
        if loop is not None:
            per_action += f" ({loop * 1e4 / r['actions_per_second']:.0f} µs loop)"
    return (
        f"| {label} | {r['actions_per_second']:,.0f} ({runs}) | "
        f"{100 * r['actions_per_second'] / echo['actions_per_second']:.1f}% | "
        f"{lat['p50']:.1f} ms | {lat['p99']:.1f} ms | {cpu} | {per_action} | "
        f"{r['generator_cpu_percent']:.0f}% |"
    )


#: How to measure the server as it was before the latest work on it (commit 949a682).
BASELINE = """\
`--baseline` measures another server command in alternation with this one. The "before" rows
are tonk-server as it was before the latest work on its speed (commit 949a682, `server/` and
`shared/` from then), run from a source tree (the rows of the round before that, against commit
7f964b3, are in this file's history):

```
mkdir -p /tmp/before/tonk && git archive 949a682 server shared | tar -x -C /tmp/before/tonk
```
"""


def section(report: dict[str, Any], command: str) -> str:
    repeat = report.get("repeat", 1)
    lines = [
        f"Measured {report['date']} on {report['machine']}; load average "
        f"{report['load_before']} before the run. The machine was shared with other work "
        "while this was measured (other engineers' builds and tests), and the generator "
        "processes run on the same two cores as the server, so they compete with it for CPU. "
        + (
            f"Each figure is the median of {repeat} runs (runs alternate between servers)."
            if repeat > 1
            else ""
        ),
        "",
        "The server is a real `tonk-server --host 127.0.0.1 --port 0 --db FRESH.db "
        "--log-level warning` child process, with `--limit max_connections=` and "
        "`--limit max_per_address=` 4 x tables + 100, `--limit max_tables=` and "
        "`--limit max_tables_per_address=` tables + 10 (every client comes from 127.0.0.1; "
        "a server without a limit is run without it); flat out also `--next-hand-delay 0` and "
        "`--limit messages_per_second=100000 --limit burst=100000` (a seat acting the moment "
        "its turn comes may send more than the default 20 a second). Every seat is an `easy` "
        "bot (`tonk.shared.bots.bots`) in a generator process, choosing from the views it is sent; "
        "latency is from writing an action to the arrival of that connection's next `update`; "
        "memory per table is the server's VmRSS with every table seated and playing, less its "
        "VmRSS before the first connection, over the tables.",
        "",
        *lk.reproduce(command),
        "",
    ]
    if any(
        "baseline_paced" in x or "baseline_flat" in x
        for x in report.get("paced_sizes", []) + report.get("flat_sizes", [])
    ):
        lines += [BASELINE]
    paced_sizes = report.get("paced_sizes", [])
    head = (
        "| server | tables | connections | actions/s | p50 | p90 | p99 | max "
        "| server RSS per table | server CPU | errors |"
    )
    if paced_sizes:
        lines += [
            f"**Paced** (each seat acts 0.5-1.5 s after its turn comes, and again after each of "
            f"its actions while its turn lasts; {report['procs']} generator processes; "
            f"{paced_sizes[0]['paced']['seconds']:g} s windows; the median run by p99):",
            "",
            head,
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for size in paced_sizes:
            if "baseline_paced" in size:
                lines.append(_paced_row("before", size["baseline_paced"]))
            lines.append(_paced_row("now", size["paced"]))
        met = any(
            size["tables"] >= 1000 and size["paced"]["latency_ms"]["p99"] < 50
            for size in paced_sizes
        )
        lines += [
            "",
            f"Target p99 < 50 ms at 1,000 tables: **{'met' if met else 'not met'}**.",
            "",
        ]
    sizes = report.get("flat_sizes", [])
    if sizes:
        lines += [
            "**Flat out** (every seat acts the moment its turn comes, so there are as many "
            "actions in flight as tables; the echo ceiling is driven with as many concurrent "
            f"actors; {report['procs']} generator processes; {sizes[0]['flat']['seconds']:g} s "
            "windows; round trips/s with every run's figure in brackets; tonk-server commits "
            "every action to SQLite before it answers):",
            "",
            "| tables = actors | server | round trips/s | of the ceiling | p50 | p99 | server CPU "
            "| server CPU per round trip | generator CPU |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for size in sizes:
            echo = size["echo"]
            elat = echo["latency_ms"]
            eruns = ", ".join(f"{x:,.0f}" for x in echo.get("all_runs", []))
            if "baseline_flat" in size:
                lines.append(
                    f"| {size['tables']} | "
                    + _flat_row("tonk-server before", size["baseline_flat"], echo)[2:]
                )
            lines += [
                f"| {size['tables']} | " + _flat_row("tonk-server now", size["flat"], echo)[2:],
                f"| {size['tables']} | bare asyncio + msgpack echo (the ceiling) | "
                f"{echo['actions_per_second']:,.0f} ({eruns}) | 100% | {elat['p50']:.1f} ms | "
                f"{elat['p99']:.1f} ms | {echo['server_cpu_percent']:.0f}% | "
                f"{echo['server_cpu_percent'] * 1e4 / echo['actions_per_second']:.0f} µs | "
                f"{echo['generator_cpu_percent']:.0f}% |",
            ]
        best = max(size["share_percent"] for size in sizes)
        lines += [
            "",
            f"Best share of the ceiling: **{best:.1f}%** (target 25%: "
            f"**{'met' if best >= 25 else 'not met'}**).",
            "",
        ]
    lines += ['What the figures say is in "Server: what the figures say", below.', ""]
    return "\n".join(lines)


def median_run(runs: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """The run with the median `key` (the lower middle one for an even count), with every
    run's value of it attached."""
    ordered = sorted(runs, key=lambda r: lr_value(r, key))
    chosen = dict(ordered[(len(ordered) - 1) // 2])
    chosen["all_runs"] = [lr_value(r, key) for r in runs]
    return chosen


def lr_value(run: dict[str, Any], key: str) -> float:
    return float(run["latency_ms"]["p99"] if key == "p99" else run[key])

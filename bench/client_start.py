"""What a client process pays to start: the CPU time and peak memory of a fresh interpreter
importing the client (`tonk.client.app` and `tonk.client.cli`, what `tonk-client` and every SSH
door session's child load before drawing anything), as the operating system accounts for the
finished process; with `--screen`, the app also run headless to its first screen (a server it
cannot reach, 100x30), as the door sessions' template runs it: the import and the start's CSS,
widgets and first frame.

    python bench/client_start.py --runs 30 --cpu 0
    python bench/client_start.py --runs 30 --cpu 0 --vs OTHER/.venv/bin/python
    python bench/client_start.py --runs 30 --cpu 0 --screen --vs OTHER/.venv/bin/python

With `--vs`, the two interpreters (each with its own installed tonk) run in turn, this one
first, and the ratio is taken pair by pair, so a drift in the machine's speed cancels out.
Run the interpreters once each before measuring, so that both have their bytecode cached
(`PYTHONDONTWRITEBYTECODE` must be unset). Medians are printed, with the least and greatest.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

IMPORT = "import tonk.client.app, tonk.client.cli"
#: ... and the app run to its first screen (the connection refused), then ended.
SCREEN = f"""{IMPORT}
import asyncio
from tonk.client.app import ClientConfig, TonkApp

async def refused():
    raise ConnectionRefusedError("(no server)")

async def run():
    config = ClientConfig(name="bench", host="bench")
    config.opener = refused
    async with TonkApp(config).run_test(size=(100, 30)) as pilot:
        await pilot.pause()

asyncio.run(run())
"""


def run_once(python: str, cpu: int | None, code: str = IMPORT) -> tuple[float, float]:
    """One fresh interpreter running `code` (importing the client): (CPU seconds, peak RSS in
    MiB)."""

    def pin() -> None:
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})

    process = subprocess.Popen(
        [python, "-c", code], preexec_fn=pin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        error = process.stderr.read().decode() if process.stderr else ""
        sys.exit(f"{python} could not import the client:\n{error}")
    if process.stderr:
        process.stderr.close()
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def spread(values: list[float], unit: str, digits: int) -> str:
    return (
        f"{statistics.median(values):.{digits}f} {unit} "
        f"({min(values):.{digits}f} to {max(values):.{digits}f})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="processes timed (each side)")
    parser.add_argument("--warmup", type=int, default=2, help="processes first run, not timed")
    parser.add_argument("--cpu", type=int, default=None, help="pin every process to this CPU")
    parser.add_argument("--vs", metavar="PYTHON", help="another interpreter, run in turn")
    parser.add_argument("--screen", action="store_true", help="run the app to its first screen")
    args = parser.parse_args(argv)
    code = SCREEN if args.screen else IMPORT
    sides = [sys.executable] + ([args.vs] if args.vs else [])
    for _ in range(args.warmup):
        for python in sides:
            run_once(python, args.cpu, code)
    results: list[list[tuple[float, float]]] = [[] for _ in sides]
    for _ in range(args.runs):
        for n, python in enumerate(sides):
            results[n].append(run_once(python, args.cpu, code))
    for python, runs in zip(sides, results, strict=True):
        cpu = [c * 1000 for c, _ in runs]
        peak = [m for _, m in runs]
        print(f"{python}: CPU {spread(cpu, 'ms', 1)}, peak {spread(peak, 'MiB', 1)}")
    if args.vs:
        ratios = [a[0] / b[0] for a, b in zip(results[0], results[1], strict=True)]
        print(f"CPU, this / --vs, pair by pair: {spread(ratios, '', 3).strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The client's two numbers, measured through a real pseudo-terminal (what an SSH link
carries):

1. the time from starting `tonk-client` (a practice table) to its first drawn table frame,
   and to the frame showing the dealt hand;
2. the bytes the client writes to its terminal when an opponent makes a move.

    python bench/bench_client.py [--runs 5] [--moves 40] [--size 80x24]

Targets: first frame within 1 s; under 2 KB per opponent move.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import re
import select
import shutil
import signal
import statistics
import struct
import sys
import termios
import time
from dataclasses import dataclass, field


@dataclass
class Terminal:
    """A child process on a pty of a given size; every byte it writes is kept with its time."""

    pid: int
    fd: int
    started: float
    chunks: list[tuple[float, bytes]] = field(default_factory=list)

    @classmethod
    def spawn(cls, argv: list[str], width: int, height: int, env: dict[str, str]) -> Terminal:
        started = time.perf_counter()
        pid, fd = pty.fork()
        if pid == 0:  # the child: become the client
            os.execve(argv[0], argv, env)
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", height, width, 0, 0))
        return cls(pid, fd, started)

    def read(self, timeout: float) -> bytes:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return b""
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            return b""
        self.chunks.append((time.perf_counter(), data))
        return data

    def read_until(self, marker: bytes, limit: float = 30.0) -> float:
        """Read until `marker` has been written; the time it was."""
        seen = b""
        give_up = time.perf_counter() + limit
        while time.perf_counter() < give_up:
            data = self.read(0.05)
            seen = (seen + data)[-65536:]
            if marker in seen:
                return self.chunks[-1][0]
        raise SystemExit(f"the client never wrote {marker!r}")

    def send(self, keys: bytes) -> float:
        os.write(self.fd, keys)
        return time.perf_counter()

    def close(self) -> None:
        try:
            os.kill(self.pid, signal.SIGTERM)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(self.fd)


def client_argv(*extra: str) -> list[str]:
    found = shutil.which("tonk-client") or shutil.which(
        "tonk-client", path=os.path.dirname(sys.executable)
    )
    if found is None:
        raise SystemExit("tonk-client is not installed: pip install -e . first")
    return [found, "--name", "Bench", *extra]


def client_env(truecolor: bool = False) -> dict[str, str]:
    """A terminal as SSH usually presents one: xterm-256color, UTF-8. COLORTERM is not sent
    over SSH by default; with it, Textual writes 24-bit colours, which cost more bytes."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TEXTUAL", "COLORTERM")}
    env.update(TERM="xterm-256color", LANG="C.UTF-8")
    if truecolor:
        env["COLORTERM"] = "truecolor"
    return env


def startup(runs: int, width: int, height: int) -> tuple[list[float], list[float]]:
    """Seconds to the first table frame and to the frame with the dealt hand, per run."""
    table, dealt = [], []
    for _ in range(runs):
        term = Terminal.spawn(
            client_argv("--bots", "2", "--seed", "1"), width, height, client_env()
        )
        try:
            table.append(term.read_until(b"Your hand") - term.started)
            dealt.append(term.read_until("Your hand · count".encode()) - term.started)
        finally:
            term.close()
    return table, dealt


def opponent_moves(moves: int, width: int, height: int, truecolor: bool = False) -> list[int]:
    """Bytes written for each opponent move at a practice table of four, playing our own
    turns (draw, discard) with keys. Opponents think 0.6 s, so each of their moves is its
    own burst of output; bursts that follow our keys, deals and hand ends are left out."""
    term = Terminal.spawn(
        client_argv("--bots", "3", "--seed", "2", "--bot-pause", "0.6"),
        width,
        height,
        client_env(truecolor),
    )
    sizes: list[int] = []
    last_key = 0.0
    try:
        term.read_until("Your hand · count".encode())
        burst = bytearray()
        burst_start = 0.0
        while len(sizes) < moves:
            data = term.read(0.15)
            if data:
                if not burst:
                    burst_start = term.chunks[-1][0]
                burst += data
                continue
            if not burst:
                continue
            text = bytes(burst)
            burst.clear()
            if b"is over" in text:
                last_key = term.send(b"\r")
                continue
            if b"Your turn: d draw" in text:
                last_key = term.send(b"d")
                continue
            if b"Your turn: s spread" in text:
                last_key = term.send(b"x")
                continue
            ours = burst_start - last_key < 0.35
            if not ours and not re.search(rb"Hand \d+: ", text):  # a deal is no move
                sizes.append(len(text))
    finally:
        term.close()
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--moves", type=int, default=40)
    parser.add_argument("--size", default="80x24")
    args = parser.parse_args()
    width, height = (int(n) for n in args.size.split("x"))

    table, dealt = startup(args.runs, width, height)
    print(f"terminal {width}x{height}, {args.runs} runs")
    print(
        f"start to first table frame: median {statistics.median(table):.3f} s, "
        f"worst {max(table):.3f} s"
    )
    print(
        f"start to the dealt hand drawn: median {statistics.median(dealt):.3f} s, "
        f"worst {max(dealt):.3f} s"
    )
    for truecolor in (False, True):
        sizes = sorted(opponent_moves(args.moves, width, height, truecolor))
        p90 = sizes[int(len(sizes) * 0.9) - 1]
        mean = statistics.mean(sizes)
        print(
            f"bytes per opponent move, {'24-bit' if truecolor else '256'} colours "
            f"({len(sizes)} moves): median {statistics.median(sizes):.0f}, mean {mean:.0f}, "
            f"p90 {p90}, worst {max(sizes)}"
        )


if __name__ == "__main__":
    main()

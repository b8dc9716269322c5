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
    seen: bytes = b""  # what `read_until` read

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
                self.seen = seen
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
            marker = "Your hand · count".encode()
            if marker in term.seen:  # the deal came with the first frame
                dealt.append(table[-1])
            else:
                dealt.append(term.read_until(marker) - term.started)
        finally:
            term.close()
    return table, dealt


def opponent_moves(
    moves: int, width: int, height: int, truecolor: bool = False
) -> tuple[list[int], list[int]]:
    """Bytes written for each opponent move at a practice table of four, playing our own
    turns (draw, then discard the card under the cursor) with keys. Opponents think 0.6 s,
    so each of their moves is its own burst of output; the bursts that follow our keys, deals
    and hand ends are left out. Returns the sizes of all opponent moves, and of those among
    them that gave us the turn (they also open our keys)."""
    term = Terminal.spawn(
        client_argv("--bots", "3", "--seed", "2", "--bot-pause", "0.6"),
        width,
        height,
        client_env(truecolor),
    )
    sizes: list[int] = []
    turning: list[int] = []
    last_key = 0.0
    try:
        term.read_until("Your hand · count".encode())
        first = bytearray(term.seen)
        while data := term.read(0.3):  # the rest of the first frame
            first += data
        if b"Your turn: d draw" in first:
            last_key = term.send(b"d")
        burst = bytearray()
        burst_start = 0.0
        quiet_since = time.perf_counter()
        while len(sizes) < moves:
            data = term.read(0.15)
            if data:
                if not burst:
                    burst_start = term.chunks[-1][0]
                burst += data
                continue
            if not burst:
                if time.perf_counter() - quiet_since > 20:
                    raise SystemExit("the client has written nothing for 20 s: stuck")
                continue
            quiet_since = time.perf_counter()
            text = bytes(burst)
            burst.clear()
            if b"is over" in text:
                last_key = term.send(b"\r")
                continue
            ours = burst_start - last_key < 0.35
            if not ours and not re.search(rb"Hand \d+: ", text):  # a deal is no move
                sizes.append(len(text))
                if b"Your turn: d draw" in text:
                    turning.append(len(text))
            # The status line says what is open now; the last thing it said counts.
            drawing, discarding = text.rfind(b"Your turn: d draw"), text.rfind(b"x discard")
            if drawing > discarding:
                last_key = term.send(b"d")
            elif discarding > drawing:
                last_key = term.send(b"x")
    finally:
        term.close()
    return sizes, turning


def summary(sizes: list[int]) -> str:
    ordered = sorted(sizes)
    p90 = ordered[max(0, int(len(ordered) * 0.9) - 1)]
    return (
        f"median {statistics.median(ordered):.0f}, mean {statistics.mean(ordered):.0f}, "
        f"p90 {p90}, worst {ordered[-1]}"
    )


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
        sizes, turning = opponent_moves(args.moves, width, height, truecolor)
        colours = "24-bit" if truecolor else "256"
        print(f"bytes per opponent move, {colours} colours ({len(sizes)} moves): {summary(sizes)}")
        if turning:
            print(f"  of which gave us the turn ({len(turning)}): {summary(turning)}")


if __name__ == "__main__":
    main()

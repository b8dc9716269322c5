"""What the server benchmarks share: the server as a child process, its memory and CPU time,
bot clients over TCP (asyncio protocols, no streams: the generator must stay light), latency
percentiles, and writing a section of BENCHMARKS.md.

Used by bench/load.py and bench/soak.py (and, through soak.py, tests/e2e/bench/test_soak_short.py).
"""

from __future__ import annotations

import asyncio
import os
import platform
import random
import re
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tonk.shared.bots.bots import Bot, make_bot
from tonk.shared.game.actions import Event
from tonk.shared.game.rules import HouseRules
from tonk.shared.game.view import SeatView
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import action_request

# -- the machine and the process limits -------------------------------------------------------


def raise_nofile(wanted: int = 65536) -> int:
    """Raise this process's open-file limit towards `wanted` (up to the hard limit)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def cpu_name(unknown: str) -> str:
    """The processor's model name from /proc/cpuinfo, or `unknown` where it does not say."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return unknown


def machine() -> str:
    cpu = cpu_name(platform.machine())
    ram = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram = f", {int(line.split()[1]) / 1024 / 1024:.1f} GiB RAM"
    except OSError:
        pass
    return (
        f"{cpu}, nproc {os.cpu_count()}{ram}, Python {platform.python_version()} "
        f"({platform.python_implementation()}), {platform.system()} {platform.release()}"
    )


def pin_to_one_core() -> str:
    """Pin this process to one core where the OS allows it, and say which."""
    if hasattr(os, "sched_setaffinity"):
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return f"pinned to CPU {cpu}"
    return "not pinned"


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def rss_kib(pid: int) -> int:
    """The resident set of process `pid` (VmRSS in /proc/PID/status), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of process `pid` so far (all its threads)."""
    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text[text.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu_seconds(pid: int) -> tuple[float, float]:
    """CPU seconds of process `pid`'s main thread (its event loop) and of all its other
    threads together (for the server: the store's writer thread)."""
    main = other = 0.0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            text = (task / "stat").read_text()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()
        seconds = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        if task.name == str(pid):
            main += seconds
        else:
            other += seconds
    return main, other


# -- the server, as a child process ---------------------------------------------------------


@dataclass
class ServerProcess:
    proc: subprocess.Popen[str]
    port: int
    db: Path

    @property
    def pid(self) -> int:
        return self.proc.pid

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM, then wait for a clean exit; returns the exit code."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def server_command() -> list[str]:
    found = shutil.which("tonk-server")
    return [found] if found else [sys.executable, "-m", "tonk.server"]


def start_server(
    db: Path,
    limits: dict[str, float],
    options: Sequence[str] = (),
    log: Path | None = None,
    program: Sequence[str] | None = None,
) -> ServerProcess:
    """`tonk-server --host 127.0.0.1 --port 0 --db DB --limit ...`; waits for its first line.
    `program` replaces `tonk-server` (e.g. another version of it, to compare)."""
    base = list(program) if program else server_command()
    limits = dict(limits)
    why = ""
    for attempt in range(3):  # another engineer's reinstall can briefly hide the package
        if attempt:
            time.sleep(3)
        command = [*base, "--host", "127.0.0.1", "--port", "0", "--db", str(db)]
        for name, value in limits.items():
            command += ["--limit", f"{name}={value:g}"]
        command += list(options)
        err = open(log, "w") if log is not None else subprocess.DEVNULL  # noqa: SIM115
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, text=True)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        match = re.search(r"listening on .*:(\d+)$", line.strip())
        if match is not None:
            return ServerProcess(proc, int(match.group(1)), db)
        proc.kill()
        proc.wait()
        why = log.read_text(errors="replace")[-2000:] if log is not None else line
        print(f"tonk-server did not start (attempt {attempt + 1}): {why}", file=sys.stderr)
        known = re.search(r"the names are ([\w, ]+)", why)
        if known is not None:  # an older server (--baseline): leave out the limits it lacks
            names = set(known.group(1).replace(" ", "").split(","))
            limits = {k: v for k, v in limits.items() if k in names}
    raise RuntimeError(f"tonk-server did not start: {why}")


# -- statistics ----------------------------------------------------------------------------------


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-th percentile (0-100) of already sorted values, nearest rank."""
    if not sorted_values:
        return float("nan")
    rank = max(0, min(len(sorted_values) - 1, round(q / 100 * len(sorted_values) + 0.5) - 1))
    return sorted_values[rank]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms"


def latency_summary(samples: Sequence[float]) -> dict[str, float]:
    """p50, p90, p99, p99.9 and max, in milliseconds."""
    values = sorted(samples)
    return {
        "count": len(values),
        "p50": percentile(values, 50) * 1000,
        "p90": percentile(values, 90) * 1000,
        "p99": percentile(values, 99) * 1000,
        "p999": percentile(values, 99.9) * 1000,
        "max": (values[-1] * 1000) if values else float("nan"),
    }


# -- a bot client over TCP ---------------------------------------------------------------------


class ViewReader:
    """SeatView.from_dict, with the rules (the same in every view of a table) read once."""

    def __init__(self) -> None:
        self._rules: HouseRules | None = None
        self._rules_data: dict[str, Any] | None = None

    def read(self, data: dict[str, Any]) -> SeatView:
        if self._rules is None or data["rules"] != self._rules_data:
            self._rules_data = data["rules"]
            self._rules = HouseRules.from_dict(data["rules"])
        return SeatView.from_dict(data, self._rules)


@dataclass
class Stats:
    """What the clients of one process saw."""

    window: tuple[float, float] = (float("inf"), float("inf"))  # monotonic: record inside
    latencies: list[float] = field(default_factory=list)
    actions: int = 0  # actions answered inside the window
    actions_total: int = 0
    hands: int = 0  # hand_end messages seen by seat 0 of each table
    errors: dict[str, int] = field(default_factory=dict)
    reconnects: int = 0
    frames: int = 0  # frames received, and their bytes (length prefixes included)
    frame_bytes: int = 0

    def error(self, code: str) -> None:
        self.errors[code] = self.errors.get(code, 0) + 1


#: The request id of every `deal_value` a BotClient sends (its other requests carry none): an
#: error answering it is a value that came too late, which PROTOCOL.md says is no fault.
VALUE_ID = 1


class BotClient(asyncio.Protocol):
    """One seat played by an `easy` bot, over a real TCP connection.

    `pace` is (low, high): seconds to wait, uniformly drawn, before each action once it is this
    seat's turn; None acts at once. The latency of an action is the time from writing it to
    the arrival of this connection's next `update` (the answer to it).
    """

    def __init__(
        self,
        name: str,
        stats: Stats,
        rng: random.Random,
        pace: tuple[float, float] | None,
    ) -> None:
        self.name = name
        self.stats = stats
        self.rng = rng
        self.pace = pace
        self.bot: Bot = make_bot("easy", rng)
        self.views = ViewReader()
        self.decoder = p.FrameDecoder(p.MAX_SERVER_FRAME)
        self.transport: asyncio.Transport | None = None
        self.loop = asyncio.get_running_loop()
        self.waiters: list[tuple[str, asyncio.Future[dict[str, Any]]]] = []
        self.closed: asyncio.Future[None] = self.loop.create_future()
        self.view: dict[str, Any] | None = None
        self.token: str | None = None
        self.table: int | None = None
        self.sent_at: float | None = None
        self.scheduled: asyncio.TimerHandle | None = None
        self.playing = True  # False: connected, but not acting (the soak's "away" seats)
        self.track_hands = False  # count hand_end messages (one seat per table does)
        self.expected_from: int | None = None  # the next update's `from`, for gap checks
        self.on_update: Callable[[BotClient, dict[str, Any]], None] | None = None

    # -- connection ----------------------------------------------------------------------------

    @classmethod
    async def connect(cls, port: int, *args: Any, **kwargs: Any) -> BotClient:
        loop = asyncio.get_running_loop()
        client = cls(*args, **kwargs)
        await loop.create_connection(lambda: client, "127.0.0.1", port)
        await client.request(
            {"type": p.HELLO, "version": p.PROTOCOL_VERSION, "name": client.name}, p.WELCOME
        )
        return client

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        if self.scheduled is not None:
            self.scheduled.cancel()
            self.scheduled = None
        for _, future in self.waiters:
            if not future.done():
                future.set_exception(ConnectionError("the server closed the connection"))
        self.waiters.clear()
        if not self.closed.done():
            self.closed.set_result(None)

    def send(self, message: dict[str, Any]) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(p.encode(message, p.MAX_CLIENT_FRAME))

    def close(self) -> None:
        if self.transport is not None:
            self.send({"type": p.BYE})
            self.transport.close()

    def abort(self) -> None:
        """Drop the connection without a word (the soak's lost connections)."""
        if self.transport is not None:
            self.transport.abort()

    async def request(
        self, message: dict[str, Any], reply: str, timeout: float = 30
    ) -> dict[str, Any]:
        future: asyncio.Future[dict[str, Any]] = self.loop.create_future()
        self.waiters.append((reply, future))
        self.send(message)
        async with asyncio.timeout(timeout):
            return await future

    # -- receiving -----------------------------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        decoder = self.decoder
        decoder.feed(data)
        stats = self.stats
        stats.frame_bytes += len(data)
        while True:
            message = decoder.next_message()
            if message is None:
                return
            stats.frames += 1
            self.handle(message)

    def handle(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == p.UPDATE:
            self.updated(message)
        elif kind == p.ERROR:
            if message.get("reply_to") == VALUE_ID and message["code"] == p.NO_HAND:
                return  # a value that came after its deal (it waited for no one): no fault
            self.stats.error(message["code"])
            for i, (_, future) in enumerate(self.waiters):
                if not future.done():
                    del self.waiters[i]
                    future.set_exception(RuntimeError(f"{message['code']}: {message['message']}"))
                    break
            if message["code"] == p.ILLEGAL_ACTION and self.sent_at is not None:
                self.sent_at = None  # answered: look at the view again
                self.maybe_act()
            return
        elif kind == p.SEATED:
            self.token, self.table = message["token"], message["table"]
        elif kind == p.HAND_END and self.track_hands:
            self.stats.hands += 1
        elif kind == p.DEAL_COMMIT and message["wait"] > 0:
            # A value for the deal, as tonk-client gives one (PROTOCOL.md, "A deal anyone can
            # check"): the server deals as soon as every player here has given theirs.
            value = os.urandom(32).hex()  # (not self.rng: the bots play as before)
            table, hand = message["table"], message["hand"]
            given = {"type": p.DEAL_VALUE, "table": table, "hand": hand, "value": value}
            self.send({**given, "id": VALUE_ID})
        elif kind == p.PING:
            self.send({"type": p.PONG, **({"n": message["n"]} if "n" in message else {})})
        for i, (wanted, future) in enumerate(self.waiters):
            if wanted == kind:
                del self.waiters[i]
                if not future.done():
                    future.set_result(message)
                break

    def updated(self, message: dict[str, Any]) -> None:
        now = time.monotonic()
        sent = self.sent_at
        if sent is not None:
            self.sent_at = None
            start, end = self.stats.window
            self.stats.actions_total += 1
            if start <= sent < end:
                self.stats.latencies.append(now - sent)
                self.stats.actions += 1
        if self.expected_from is not None and message["from"] not in (0, self.expected_from):
            self.stats.error("gap")
        view = message["view"]
        self.expected_from = view["event_count"]
        self.bot.observe([Event.from_dict(e) for e in message["events"]])
        self.view = view
        if self.on_update is not None:
            self.on_update(self, message)
        self.maybe_act()

    # -- acting --------------------------------------------------------------------------------

    def my_turn(self) -> bool:
        view = self.view
        return (
            view is not None
            and view["seat"] is not None
            and view["turn"] == view["seat"]
            and view["phase"] != "ended"
        )

    def maybe_act(self) -> None:
        if not self.playing or self.sent_at is not None or self.scheduled is not None:
            return
        if not self.my_turn():
            return
        if self.pace is None:
            self.act()
        else:
            delay = self.rng.uniform(*self.pace)
            self.scheduled = self.loop.call_later(delay, self._scheduled)

    def _scheduled(self) -> None:
        self.scheduled = None
        if self.playing and self.sent_at is None and self.my_turn():
            self.act()

    def act(self) -> None:
        assert self.view is not None
        view = self.views.read(self.view)
        action = self.bot.choose(view)
        data = action_request(action).to_wire()
        self.send(data)
        self.sent_at = time.monotonic()


# -- writing BENCHMARKS.md ---------------------------------------------------------------------


def reproduce(command: str) -> list[str]:
    """The lines of a section that say how to run its measurement again."""
    return [
        "Reproduce (from the repository, after `pip install -e '.[test]'`):",
        "",
        "```",
        command,
        "```",
    ]


def write_section(path: Path, heading: str, body: str) -> None:
    """Replace the section that starts with `heading` (up to the next "## ") in `path`, or add
    it at the end; the rest of the file is kept."""
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    section = f"{heading}\n\n{body.strip()}\n"
    lines = text.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip() == heading), None)
    if start is None:
        text = text.rstrip("\n") + "\n\n" + section
    else:
        end = next(
            (i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines)
        )
        tail = "".join(lines[end:])
        text = "".join(lines[:start]) + section + ("\n" + tail if tail else "")
    path.write_text(text)

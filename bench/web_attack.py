"""The web door under attack, measured from outside: a real `tonk-server --web-port 0`, the
paced game benchmark (bench/load.py's paced mode) playing beside it, and websocket clients
posing as pages:

- `flood`: `--sessions` pages each sending `--kind` messages (`resize` to new sizes, `focus`,
  or a message the door ignores, `ignored`) as fast as the socket takes them, one second into
  the paced window; and, in the same run, a control window with the same pages open and quiet
  before it: the tables' latency in each, the server's memory with its children (the pages'
  apps) at the end, and when each page was closed;
- `keys`: the same pages sending keys (arrows, tab, letters) at `--rate` bytes a second each,
  under the input budget, through the window (after the same control): the tables' latency,
  and the apps' memory before and after;
- `watchers`: `--pages` television pages on one table (from as many loopback addresses as
  needed, two each; `web_watchers` raised to let them all in), the memory of the server with
  its children, how many processes run under it, and whether a player then gets in;
- `grow`: one session of each door in `--doors` (`web`, `ssh`), in the lobby or, with
  `--table`, at a table (the web page makes one with the lobby's form, no bots: nobody's turn
  comes; the SSH guest asks for `practice`, three bots playing), sent keys at `--rate` bytes a
  second for `--seconds`, then none for `--after`: each session's app's VmRSS and the
  anonymous memory in it (/proc/PID/smaps) every `--every` seconds;
- `idle`: `--connections` idle HTTP connections to the door with the server under an
  open-file limit of `--files` (prlimit), then: does tonk-client get its welcome, the page
  its answer, and how many lines did the log grow by.

    python bench/web_attack.py flood --kind resize --sessions 8 --tables 50
    python bench/web_attack.py idle --tree /tmp/before   # another version's server
    python bench/web_attack.py grow --doors web,ssh --seconds 600 --after 120 [--table]

`--tree DIR` runs DIR's server through bench/run_tree.py (DIR/tonk/server, DIR/tonk/shared):
the figures before a change, from `git archive` of the commit before it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent))

import load_driver
import loadkit as lk
from door_attack import paced_during
from door_sessions import descendants, sessions_of
from doorkit import Session, children_rss_kib, memory_kib

#: What a flooding page sends, by kind (`resize`: a new size each time).
KINDS = ("resize", "focus", "ignored")
#: Keys a player sends (the lobby's and a table's: arrows, tab, letters that move the cursor).
KEYS = "\x1b[A\x1b[B\tjkjk\x1b[C\x1b[D"


def program(tree: Path | None) -> list[str] | None:
    if tree is None:
        return None
    return [sys.executable, str(Path(__file__).with_name("run_tree.py")), str(tree)]


def start(args: argparse.Namespace, workdir: Path, prefix: tuple[str, ...] = ()) -> tuple[Any, str]:
    """The server with its web door; returns it and the page's URL."""
    limits = load_driver.server_limits(max(2 * args.tables, 1), False)  # (two windows)
    if args.what in ("flood", "keys"):  # (the television pages and idle sockets: as served)
        limits.update({"web_per_address": 100, "web_names_per_address": 1000})
    if args.what == "watchers":  # (every page let in, from a server of any version)
        limits.update({"web_watchers": max(64, args.pages)})
    base = program(args.tree) or lk.server_command()
    server = lk.start_server(
        workdir / "tonk.db",
        limits,
        ["--log-level", "info", "--web-port", "0"],
        log=workdir / "server.log",
        program=[*prefix, *base],
    )
    assert server.proc.stdout is not None
    line = server.proc.stdout.readline().strip()
    return server, f"http://127.0.0.1:{line.rsplit(':', 1)[1]}"


def rss_mib(server: Any) -> float:
    return (lk.rss_kib(server.pid) + children_rss_kib(server.pid)) / 1024


def pss_mib(pid: int) -> float:
    """The proportional set of `pid` and everything under it (RSS would count the pages a
    session's app shares with the template it was forked from once in each)."""
    total = 0
    with contextlib.suppress(OSError):
        total += memory_kib(pid)["pss"]
    with contextlib.suppress(OSError):
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            total += int(pss_mib(int(child)) * 1024)
    return total / 1024


async def page(url: str, name: str, local: str = "127.0.0.1") -> tuple[Any, Any]:
    """A browser's session in the lobby: the name, then the websocket until it is drawn."""
    client = aiohttp.ClientSession(
        cookie_jar=aiohttp.CookieJar(unsafe=True),
        connector=aiohttp.TCPConnector(local_addr=(local, 0)),
    )
    await client.post(url + "/", data={"name": name}, headers={"Origin": url})
    socket = await client.ws_connect(url + "/ws?width=100&height=30", headers={"Origin": url})
    await until_drawn(socket, b"lobby")
    return client, socket


async def until_drawn(socket: Any, text: bytes) -> None:
    seen = b""
    async with asyncio.timeout(120):
        while text not in seen:
            message = await socket.receive()
            if message.type != aiohttp.WSMsgType.BINARY:
                raise RuntimeError(f"the page's session ended: {seen[-300:]!r}")
            seen += message.data


async def drain(socket: Any) -> None:
    """Read what comes (a page that does not read is another attack)."""
    with contextlib.suppress(Exception):
        while (await socket.receive()).type == aiohttp.WSMsgType.BINARY:
            pass


async def window(server: Any, args: argparse.Namespace, attack: Any) -> dict[str, Any]:
    """The paced benchmark's window, with `attack()` started one second into it."""
    summary = await paced_during(server, args, attack)
    return {k: summary[k] for k in ("latency_ms", "actions", "errors", "server_cpu_percent")}


def message(kind: str, n: int) -> str:
    if kind == "resize":
        return json.dumps(["resize", {"width": 80 + n % 40, "height": 24 + n % 20}])
    return json.dumps(["focus"] if kind == "focus" else ["nothing", "x" * 30])


async def flood(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    closed: list[float] = []

    async def one(socket: Any) -> None:
        started, n = time.perf_counter(), 0
        with contextlib.suppress(Exception):
            while not socket.closed:
                n += 1
                await socket.send_str(message(args.kind, n))
                if n % 50 == 0:
                    await asyncio.sleep(0)
        closed.append(time.perf_counter() - started)

    result = await pages_sending(args, workdir, one)
    result["pages_closed_after_s"] = sorted(round(c, 2) for c in closed)
    return result


async def keys(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    chunk = (KEYS * 100)[: int(args.rate / 20)]

    async def one(socket: Any) -> None:
        with contextlib.suppress(Exception):
            while not socket.closed:
                await socket.send_str(json.dumps(["stdin", chunk]))
                await asyncio.sleep(0.05)

    return await pages_sending(args, workdir, one)


async def pages_sending(
    args: argparse.Namespace, workdir: Path, one: Callable[[Any], Awaitable[None]]
) -> dict[str, Any]:
    """`--sessions` pages in the lobby, quiet through a control window, then each sending
    what `one(socket)` sends through a second window: the tables' latency in each, and the
    memory of the server with its children (the pages' apps)."""
    server, url = start(args, workdir)
    pages = [await page(url, f"p{n}") for n in range(args.sessions)]
    readers = [asyncio.ensure_future(drain(socket)) for _, socket in pages]
    try:
        result: dict[str, Any] = {"rss_start_mib": rss_mib(server)}

        async def quiet() -> None:
            await asyncio.sleep(3600)

        result["control"] = await window(server, args, quiet)
        result["rss_before_mib"] = rss_mib(server)

        async def attack() -> None:
            await asyncio.gather(*(one(socket) for _, socket in pages))
            await asyncio.sleep(3600)

        result[args.what] = await window(server, args, attack)
        result["rss_end_mib"] = rss_mib(server)
        result["pages_open_at_end"] = sum(1 for _, socket in pages if not socket.closed)
        await asyncio.sleep(10)
        result["rss_10s_later_mib"] = rss_mib(server)
    finally:
        await close_pages(pages, readers)
        server.stop()
    return result


async def close_pages(pages: list[tuple[Any, Any]], readers: list[Any]) -> None:
    for reader in readers:
        reader.cancel()
    for client, socket in pages:
        with contextlib.suppress(Exception):
            await socket.close()
        await client.close()


async def watchers(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    args.tables = 0
    server, url = start(args, workdir)
    opened: list[tuple[Any, Any]] = []
    result: dict[str, Any] = {}
    try:
        from netclient import NetClient  # (tests/, for the table's creator)

        ann = await NetClient.connect(server.port, "Ann")
        table = await ann.create_table(name="Friday", seats=3)
        await asyncio.sleep(2)
        result["pss_start_mib"] = pss_mib(server.pid)
        refused = 0
        for n in range(args.pages):
            local = f"127.0.0.{2 + n // 2}"
            client = aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(local, 0)))
            socket = await client.ws_connect(
                f"{url}/watch/{table}/ws?width=100&height=30", headers={"Origin": url}
            )
            try:
                await until_drawn(socket, b"Friday")
            except RuntimeError:
                refused += 1
            opened.append((client, socket))
        await asyncio.sleep(5)
        result["pages"] = args.pages
        result["pages_refused"] = refused
        result["pss_with_pages_mib"] = pss_mib(server.pid)
        result["processes_under_the_server"] = len(descendants(server.pid))
        try:
            client, socket = await page(url, "Player", "127.0.0.200")
            result["a_player_gets_in"] = True
            opened.append((client, socket))
        except RuntimeError as exc:
            result["a_player_gets_in"] = str(exc)[:200]
        await ann.close()
    finally:
        await close_pages(opened, [])
        server.stop()
    return result


def app_mib(pid: int) -> tuple[float, float]:
    """A process's VmRSS, and the part of it in anonymous mappings (the heap and the
    allocators' arenas: what an app's own objects take), in MiB."""
    anonymous, mapping = 0, ""
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if not fields[0].endswith(":"):  # a mapping's first line: its path, if any, is 6th
            mapping = fields[5] if len(fields) > 5 else ""
        elif fields[0] == "Rss:" and mapping in ("", "[heap]"):
            anonymous += int(fields[1])
    return round(lk.rss_kib(pid) / 1024, 1), round(anonymous / 1024, 1)


async def door_session(door: str, ssh_port: int, url: str, args: argparse.Namespace) -> Any:
    """One door's session in the lobby or at a table; returns how to send it keys."""
    if door == "web":
        client, socket = await page(url, "Web")
        reader = asyncio.ensure_future(drain(socket))

        async def to_page(keys: str) -> None:
            await socket.send_str(json.dumps(["stdin", keys]))

        if args.table:  # the lobby's form, as it comes (no bots), and ctrl+s: a table
            await to_page("n")
            await asyncio.sleep(2)
            await to_page("\x13")
        return to_page, lambda: close_pages([(client, socket)], [reader])
    session = Session(ssh_port, "Ssh", command="practice" if args.table else None)
    await session.open(b"practice" if args.table else b"playing as")

    async def to_terminal(keys: str) -> None:
        assert session.process is not None
        session.process.stdin.write(keys.encode())
        await session.process.stdin.drain()

    return to_terminal, session.close


async def grow(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    limits = {"web_per_address": 100, "web_names_per_address": 1000}
    server = lk.start_server(
        workdir / "tonk.db",
        limits,
        ["--log-level", "warning", "--ssh-port", "0", "--web-port", "0"],
        log=workdir / "server.log",
        program=program(args.tree),
    )
    assert server.proc.stdout is not None
    ssh_port = int(server.proc.stdout.readline().split(" (")[0].rsplit(":", 1)[1])
    url = "http://127.0.0.1:" + server.proc.stdout.readline().strip().rsplit(":", 1)[1]
    apps: dict[str, tuple[Any, int]] = {}  # door: (send keys, its app's pid)
    closing = []
    result: dict[str, Any] = {"samples": []}
    try:
        await asyncio.sleep(3)  # the door sessions' template
        for door in args.doors.split(","):
            before = set(sessions_of(server.pid))
            send, close = await door_session(door, ssh_port, url, args)
            closing.append(close)
            await asyncio.sleep(3)
            (pid,) = set(sessions_of(server.pid)) - before
            apps[door] = (send, pid)
        chunk = (KEYS * 100)[: int(args.rate / 20)]
        pressing = True

        async def keys(send: Any) -> None:
            with contextlib.suppress(Exception):
                while pressing:
                    await send(chunk)
                    await asyncio.sleep(0.05)

        started = time.monotonic()
        tasks = [asyncio.ensure_future(keys(send)) for send, _ in apps.values()]
        for end, keys_on in ((args.seconds, True), (args.seconds + args.after, False)):
            pressing = keys_on
            while (at := time.monotonic() - started) < end:
                sample: dict[str, Any] = {"s": round(at), "keys": keys_on}
                for door, (_, pid) in apps.items():
                    with contextlib.suppress(OSError):
                        sample[door] = app_mib(pid)
                result["samples"].append(sample)
                print(json.dumps(sample), file=sys.stderr, flush=True)
                await asyncio.sleep(min(args.every, end - at))
        await asyncio.gather(*tasks)
    finally:
        for close in closing:
            with contextlib.suppress(Exception):
                await close()
        server.stop()
    return result


async def idle(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    args.tables = 0
    limit = f"--nofile={args.files}:{args.files}"
    prlimit = shutil.which("prlimit")
    assert prlimit is not None, "prlimit (util-linux) is needed"
    server, url = start(args, workdir, (prlimit, limit))
    port = int(url.rsplit(":", 1)[1])
    held = []
    result: dict[str, Any] = {"files": args.files, "connections": args.connections}
    try:
        log_before = len((workdir / "server.log").read_bytes())
        for n in range(args.connections):  # (30 an address: under the door's cap for one)
            with contextlib.suppress(OSError):
                local = (f"127.0.{1 + n // 7500}.{1 + n // 30 % 250}", 0)
                held.append(await asyncio.open_connection("127.0.0.1", port, local_addr=local))
        await asyncio.sleep(3)
        from netclient import NetClient

        started = time.perf_counter()
        try:
            async with asyncio.timeout(15):
                client = await NetClient.connect(server.port, "Tcp")
            result["tonk_client_welcome_s"] = round(time.perf_counter() - started, 3)
            await client.close()
        except Exception as exc:
            result["tonk_client_welcome_s"] = f"failed: {exc!r}"[:200]
        try:
            async with asyncio.timeout(15), aiohttp.ClientSession() as session:
                connector_page = await session.get(url + "/")
                result["page_status"] = connector_page.status
        except Exception as exc:
            result["page_status"] = f"failed: {exc!r}"[:200]
        await asyncio.sleep(args.seconds)
        still = 0
        for reader, _ in held:
            if not reader.at_eof():
                with contextlib.suppress(TimeoutError, OSError):
                    async with asyncio.timeout(0.01):
                        if await reader.read(1):
                            still += 1
                        continue
                still += 1
        result["idle_still_open_after_s"] = {args.seconds: still}
        result["log_grew_bytes"] = len((workdir / "server.log").read_bytes()) - log_before
    finally:
        for _, writer in held:
            writer.close()
        server.stop()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("flood", "keys", "watchers", "idle", "grow"))
    parser.add_argument("--tree", type=Path, help="run this checkout's server instead")
    parser.add_argument("--tables", type=int, default=50, help="paced benchmark tables")
    parser.add_argument("--seconds", type=float, default=30.0, help="the window")
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--sessions", type=int, default=8, help="flood, keys: pages")
    parser.add_argument("--kind", choices=KINDS, default="resize", help="flood: what")
    parser.add_argument("--rate", type=float, default=1800.0, help="keys: bytes a second")
    parser.add_argument("--pages", type=int, default=50, help="watchers: television pages")
    parser.add_argument("--doors", default="web,ssh", help="grow: web, ssh, or both")
    parser.add_argument("--table", action="store_true", help="grow: at a table")
    parser.add_argument("--after", type=float, default=120.0, help="grow: seconds after")
    parser.add_argument("--every", type=float, default=15.0, help="grow: seconds a sample")
    parser.add_argument("--files", type=int, default=1024, help="idle: open-file limit")
    parser.add_argument("--connections", type=int, default=1100, help="idle: connections")
    parser.add_argument("--json", type=Path, help="save the result as JSON here")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "kit"))
    with tempfile.TemporaryDirectory() as directory:
        run = {"flood": flood, "keys": keys, "watchers": watchers, "idle": idle, "grow": grow}
        result = asyncio.run(run[args.what](args, Path(directory)))
    text = json.dumps(result, indent=1)
    print(text)
    if args.json is not None:
        args.json.write_text(text)


if __name__ == "__main__":
    main()

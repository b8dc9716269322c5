"""Finding a server on the LAN, for real: `tonk-server` announcing `_tonk._tcp` over multicast DNS
in one network namespace, the real `tonk-client` in another finding it across a virtual
Ethernet pair (tests/kit/netnskit.py: root and iproute2; skipped naming why where they are
missing). Then the pure part (the TXT record) and the start screen driven by Textual's pilot."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from checkout import KIT, ROOT
from netclient import NetClient, start_server
from netnskit import SERVER_ADDRESS, Lan, NoNamespaces, lan_pair, made_lan
from ptyterm import Term
from termkit import command_path, stop_process
from textual.widgets import Input, Static
from tonk.client.cli import build_parser, config_from_args, wants_start_screen
from tonk.client.discovery import FoundServer, LanBrowser
from tonk.client.recent import RecentServer, read_recent, remember
from tonk.client.start import Choice, StartApp, server_label
from tonk.server.announce import Announcer
from tonk.server.qr import qr_svg, qr_terminal
from tonk.shared.wire import discovery as dd
from tonk.shared.wire.protocol import PROTOCOL_VERSION
from webkit import Browser, web_server

ENV = {"LANG": "C.UTF-8"}

#: A player at a table of her own in the server's namespace, until her standard input closes.
ANN = """
import asyncio, sys
sys.path.insert(0, sys.argv[2])
from netclient import NetClient

async def main():
    ann = await NetClient.connect(int(sys.argv[1]), "Ann")
    await ann.create_table(name="Friday", seats=3)
    print("seated", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await ann.close()

asyncio.run(main())
"""


@pytest.fixture
def lan() -> Iterator[Lan]:
    with lan_pair() as pair:
        yield pair


class LanServer:
    """`tonk-server` on all the addresses of the server's namespace, its stdout's first lines
    read (the port, and what it says of its addresses)."""

    def __init__(self, lan: Lan, directory: Path, *extra: str, host: str = "0.0.0.0") -> None:
        self.log_path = directory / f"server-{len(list(directory.glob('server-*')))}.log"
        self.proc = subprocess.Popen(
            lan.run_in(
                lan.server,
                [
                    command_path("tonk-server"),
                    *("--host", host, "--port", "0", "--db", str(directory / "s.db")),
                    *extra,
                ],
            ),
            stdout=subprocess.PIPE,
            stderr=open(self.log_path, "w"),  # noqa: SIM115
            text=True,
        )
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline().strip()
        if not first.startswith("tonk-server listening on "):
            self.stop()
            raise AssertionError(f"tonk-server did not start: {first!r}\n{self.log()}")
        self.port = int(first.rsplit(":", 1)[1])
        self.lines = [self.proc.stdout.readline().strip() for _ in range(2)]

    def log(self) -> str:
        return self.log_path.read_text("utf-8", "replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            stop_process(self.proc, 15)


def lan_list(lan: Lan, wait: float = 3.0) -> subprocess.CompletedProcess[str]:
    """`tonk-client --lan` in the client's namespace."""
    return subprocess.run(
        lan.run_in(lan.client, [command_path("tonk-client"), "--lan", "--lan-wait", str(wait)]),
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.e2e
async def test_a_server_is_listed_in_the_other_namespace_kept_current_and_gone_when_it_stops(
    lan: Lan, tmp_path: Path, term: Term
) -> None:
    server = LanServer(lan, tmp_path, "--name", "Kim's box")
    ann: subprocess.Popen[str] | None = None
    try:
        # What the host is told: the address friends can use, not 0.0.0.0.
        address = f"{SERVER_ADDRESS}:{server.port}"
        assert server.lines[1].startswith(f"tonk-server for friends: tonk-client {address}")
        term.start(lan.run_in(lan.client, [command_path("tonk-client"), "--name", "Bo"]), ENV)
        screen = await term.wait_for("Kim's box")
        row = next(line for line in screen.splitlines() if "Kim's box" in line)
        assert address in row and "0 tables" in row, screen
        # The practice table is the highlighted choice, first.
        assert screen.index("Practice table against 2 bots") < screen.index("Kim's box")

        # A table opens: the list says so (the TXT record sent again).
        ann = subprocess.Popen(
            lan.run_in(lan.server, [sys.executable, "-c", ANN, str(server.port), str(KIT)]),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert ann.stdout is not None
        assert ann.stdout.readline().strip() == "seated"
        await term.wait_for("1 table: Ann")

        # `--lan`, for scripts: one tab-separated line.
        listed = lan_list(lan)
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.splitlines() == [f"Kim's box\t{address}\t1\t1\tAnn"]

        # `invite` in the server's namespace tells the same address, with no warning.
        invite = subprocess.run(
            lan.run_in(
                lan.server,
                [command_path("tonk-server"), "invite", "--db", str(tmp_path / "s.db")],
            ),
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert invite.returncode == 0, invite.stderr
        told = invite.stdout.splitlines()
        assert any(line.startswith(f"This machine: {SERVER_ADDRESS}") for line in told), told
        assert f"  tonk-client {address}" in told and "0.0.0.0" not in invite.stdout
        assert not any(line.startswith("Warning:") for line in told), told

        # Stopped: its goodbye takes it off the list.
        server.stop()
        await term.wait_gone("Kim's box")
        assert "none found yet" in term.screen() or "looking" in term.screen()
    finally:
        if ann is not None:
            ann.communicate(timeout=15)
        server.stop()


@pytest.mark.e2e
async def test_a_server_found_is_joined_with_enter_and_kept_among_those_joined_before(
    lan: Lan, tmp_path: Path
) -> None:
    server = LanServer(lan, tmp_path, "--name", "Den")
    state = {**ENV, "XDG_STATE_HOME": str(tmp_path / "state")}
    client = lan.run_in(lan.client, [command_path("tonk-client"), "--name", "Bo"])
    try:
        first = Term(80, 24)
        try:
            first.start(client, state)
            await first.wait_for("Den  ")
            first.keys("Down", "Enter")  # (the highlight moves past the heading)
            await first.wait_for("No tables yet")
            first.keys("q")
            assert await first.wait_exit() == 0
        finally:
            first.close()
        again = Term(80, 24)
        try:
            again.start(client, state)
            den = f"Den  {SERVER_ADDRESS}:{server.port}"
            await again.wait_until(
                lambda s: den in s.partition("Joined before:")[2], "Den under Joined before"
            )
        finally:
            again.close()
    finally:
        server.stop()


@pytest.mark.e2e
async def test_a_server_on_loopback_or_told_not_to_announces_nothing_and_says_so(
    lan: Lan, tmp_path: Path
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "c").mkdir()
    loopback = LanServer(lan, tmp_path / "a", "--name", "Loop", host="127.0.0.1")
    quiet = LanServer(lan, tmp_path / "b", "--name", "Quiet", "--no-announce")
    shown = LanServer(lan, tmp_path / "c", "--name", "Shown", host=SERVER_ADDRESS)
    try:
        assert loopback.lines[1].startswith(
            "tonk-server: Warning: the server listens on 127.0.0.1 only (loopback)"
        ), loopback.lines
        # The one announced is found: by then the others would have been, if announced.
        for _ in range(20):
            listed = lan_list(lan)
            if "Shown" in listed.stdout:
                break
        # (Listening on one address: announced there, and found at it.)
        assert [line.split("\t")[:2] for line in listed.stdout.splitlines()] == [
            ["Shown", f"{SERVER_ADDRESS}:{shown.port}"]
        ]
        assert "not announced on the LAN: the server listens on loopback" in loopback.log()
        assert "not announced on the LAN (--no-announce)" in quiet.log()
    finally:
        for server in (loopback, quiet, shown):
            server.stop()


# -- the code for a phone ------------------------------------------------------------------------


@pytest.mark.e2e
def test_invite_prints_the_web_door_as_a_qr_code_and_the_television_shows_the_same(
    tmp_path: Path,
) -> None:
    with web_server(tmp_path) as server:

        async def create_and_watch() -> tuple[int, str]:
            ann = await NetClient.connect(server.tcp_port, "Ann")
            table = await ann.create_table(name="Friday", seats=3)
            await ann.close()
            async with aiohttp.ClientSession() as session:
                for _ in range(300):  # (the corner is drawn once the door is open: waited for)
                    async with session.get(f"{server.url}/watch/{table}") as response:
                        assert response.status == 200
                        page = await response.text()
                    if "scan to play" in page:
                        break
                    await asyncio.sleep(0.1)
                return table, page

        table, television = asyncio.run(create_and_watch())
        with Browser(1280, 720, touch=False) as browser:  # (the television's browser)
            from selenium.webdriver.common.by import By

            browser.driver.get(f"{server.url}/watch/{table}")
            corner = browser.driver.find_element(By.ID, "scan")
            drawn = corner.find_element(By.TAG_NAME, "svg").rect
            box = corner.rect
            shown = corner.is_displayed() and "scan to play" in corner.text
            width, height = browser.driver.execute_script(
                "return [window.innerWidth, window.innerHeight]"
            )
        said = subprocess.run(
            [command_path("tonk-server"), "invite", "--db", str(server.db)],
            capture_output=True,
            text=True,
            timeout=30,
        )
    assert said.returncode == 0, said.stderr
    page = f"http://127.0.0.1:{server.port}/"
    lines = said.stdout.splitlines()
    start = lines.index(f"A phone's camera opens {page} from this code:")
    code = qr_terminal(page).splitlines()
    assert lines[start + 1 : start + 1 + len(code)] == code
    assert len(code) > 10 and "▀" in "".join(code)
    # The television page's corner: the same address, drawn as SVG, shown in the bottom right
    # corner of the screen, the code at least 150 pixels wide.
    assert shown and drawn["width"] >= 150, (box, drawn)
    assert width - 40 < box["x"] + box["width"] <= width, (box, width)
    assert height - 40 < box["y"] + box["height"] <= height, (box, height)
    assert qr_svg(page) in television and "scan to play" in television
    assert f"/watch/{table}/ws" in television
    # Bound to loopback: said, with what to do instead.
    assert any(
        line.startswith("Warning: the server listens on 127.0.0.1 only (loopback)")
        and "--host 0.0.0.0" in line
        for line in lines
    ), lines


# -- the TXT record ---------------------------------------------------------------------------


def test_the_txt_record_says_the_version_the_doors_and_the_tables_and_reads_back() -> None:
    record = dd.txt_record(ssh_port=2222, web_port=8080, tables=3, players=["Ann", "Bo, Jr"])
    assert record == {
        "v": str(PROTOCOL_VERSION),
        "tables": "3",
        "players": "2",
        "who": "Ann,Bo  Jr",
        "ssh": "2222",
        "web": "8080",
    }
    said = dd.read_txt({k.encode(): v.encode() for k, v in record.items()})
    assert said == dd.Announced(PROTOCOL_VERSION, 2222, 8080, 3, 2, ("Ann", "Bo  Jr"), False)
    # No doors: no keys for them.
    assert "ssh" not in dd.txt_record(ssh_port=None, web_port=None, tables=0, players=[])


def test_a_long_list_of_names_is_cut_to_fit_a_txt_string_and_says_so() -> None:
    names = [f"Player{n:02}" for n in range(40)]
    who = dd.who_text(names)
    assert len(who.encode()) <= dd.WHO_BYTES and who.endswith(",...")
    said = dd.read_txt({"who": who, "players": "40"})
    assert said.more and said.players == 40 and said.who == tuple(names[: len(said.who)])


def test_a_malformed_txt_record_from_anyone_on_the_lan_is_read_as_nothing() -> None:
    said = dd.read_txt({b"v": b"x", b"ssh": b"99999", b"tables": None, b"web": b"-1"})
    assert said == dd.Announced(None, None, None, 0, 0, (), False)


def test_a_server_s_name_becomes_a_dns_sd_instance_label() -> None:
    assert dd.instance_name("Kim's box") == "Kim's box"
    assert dd.instance_name("box.example.org") == "box example org"
    assert dd.instance_name("   ") == "tonk"
    long = dd.instance_name("é" * 40)
    assert len(long.encode()) <= dd.NAME_BYTES and long == "é" * 31


# -- the start screen -------------------------------------------------------------------------


class QuietBrowser(LanBrowser):
    """A browser that opens no socket: the test says what it finds."""

    async def start(self) -> None:
        pass

    def found(self, *servers: FoundServer) -> None:
        self.servers = {s.name: s for s in servers}
        self._changed()


def found(name: str, host: str, port: int, *who: str) -> FoundServer:
    return FoundServer(
        name, (host,), port, dd.Announced(PROTOCOL_VERSION, None, None, 1, len(who), who, False)
    )


async def test_enter_alone_takes_a_newcomer_to_the_practice_table() -> None:
    app = StartApp("Practice table against 2 bots", browser=QuietBrowser())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("enter")
    assert app.return_value == Choice()


@pytest.mark.parametrize("width", [40, 52, 80])
async def test_the_start_screens_keys_break_between_keys_and_its_example_shows_whole(
    width: int,
) -> None:
    """Upright (40 columns) the keys under the start screen take rows: each row ends between
    two keys (after a ` ·`), never `p:` on one row and `practice` on the next; the address's
    example is not cut."""
    app = StartApp("Practice table against 2 bots", browser=QuietBrowser())
    async with app.run_test(size=(width, 30)) as pilot:
        await pilot.pause()
        help_ = app.query_one("#help", Static)
        rows = [line.rstrip() for line in str(help_.content).splitlines()]
        assert len(rows) == help_.size.height and all(len(row) <= help_.size.width for row in rows)
        assert " · ".join(row.removesuffix(" ·") for row in rows) == (
            "Enter: play the highlighted · p: practice · a: address · Tab: move · q: quit"
        )
        assert all(row.endswith(" ·") for row in rows[:-1]), rows
        assert (len(rows) > 1) == (width < 80), rows
        address = app.query_one("#address", Input)
        assert len(str(address.placeholder)) <= address.content_size.width


async def test_servers_come_and_go_on_the_start_screen_and_one_is_chosen(tmp_path: Path) -> None:
    browser = QuietBrowser()
    app = StartApp("Practice", [RecentServer("10.0.0.9:7777", "Old")], browser=browser)
    async with app.run_test(size=(80, 24)) as pilot:
        browser.found(found("Kim", "10.0.0.5", 7001, "Ann", "Bo"))
        await pilot.pause()
        text = [str(o.prompt) for o in app.query_one("#choices").options]  # type: ignore[attr-defined]
        assert "  Kim  10.0.0.5:7001  1 table: Ann, Bo" in text
        later = dd.Announced(PROTOCOL_VERSION + 1, None, None, 0, 0, (), False)
        assert server_label(FoundServer("New", ("10.0.0.7",), 7777, later)) == (
            f"New  10.0.0.7:7777  0 tables  (protocol {PROTOCOL_VERSION + 1}: another tonk's)"
        )
        assert "  Old  10.0.0.9:7777" in text
        browser.found()
        await pilot.pause()
        text = [str(o.prompt) for o in app.query_one("#choices").options]  # type: ignore[attr-defined]
        assert not any("Kim" in t for t in text)
        browser.found(found("Kim", "10.0.0.5", 7001))
        await pilot.pause()
        await pilot.press("down", "enter")
    assert app.return_value == Choice("10.0.0.5", 7001, "Kim")


async def test_an_address_typed_is_checked_then_chosen() -> None:
    app = StartApp("Practice", browser=QuietBrowser())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("a", *"box:x", "enter")
        said = str(app.query_one("#said").render())
        assert "Not an address" in said and "port number" in said
        await pilot.press("backspace", *"7001", "enter")
    assert app.return_value == Choice("box", 7001)


def test_the_servers_joined_are_kept_newest_first_with_their_names(tmp_path: Path) -> None:
    remember("10.0.0.5:7001", "Kim", tmp_path)
    remember("10.0.0.6:7777", "", tmp_path)
    remember("10.0.0.5:7001", "", tmp_path)  # (its name kept from before)
    assert read_recent(tmp_path) == [
        RecentServer("10.0.0.5:7001", "Kim"),
        RecentServer("10.0.0.6:7777", ""),
    ]
    (tmp_path / "recent.json").write_text("not json")
    assert read_recent(tmp_path) == []


def test_found_server_line_for_scripts() -> None:
    server = found("Kim", "10.0.0.5", 7001, "Ann")
    assert server.line() == "Kim\t10.0.0.5:7001\t1\t1\tAnn"


def test_protocol_md_names_every_txt_key_and_the_service_type() -> None:
    doc = (ROOT / "PROTOCOL.md").read_text()
    text = doc.split("\n## Finding a server on the LAN", 1)[1].split("\n## ", 1)[0]
    keys = re.findall(r"^\| `([a-z]+)` \|", text, re.M)
    record = dd.txt_record(ssh_port=1, web_port=2, tables=0, players=[])
    assert sorted(keys) == sorted(record)
    assert f"`{dd.SERVICE_TYPE}`" in text


def test_where_namespaces_cannot_be_made_the_reason_is_given() -> None:
    reason = r"cannot make network namespaces here: ip netns add"
    with pytest.raises(NoNamespaces, match=reason), made_lan("/bin/false"):
        pass


def test_the_start_screen_is_for_tonk_client_alone_and_any_practice_option_skips_it() -> None:
    def start_screen(*argv: str) -> bool:
        return wants_start_screen(build_parser().parse_args(list(argv)))

    assert start_screen() and start_screen("--name", "Bo", "--ascii")
    for argv in (["--practice"], ["--bots", "3"], ["--rules", "speno"], ["--hands", "5"], ["box"]):
        assert not start_screen(*argv), argv
    with pytest.raises(ValueError, match="--practice plays on this machine"):
        config_from_args(build_parser().parse_args(["box", "--practice"]), {})


async def test_the_txt_record_counts_the_open_tables_and_the_people_seated_not_bots(
    tmp_path: Path,
) -> None:
    async with start_server(tmp_path) as server:
        announcer = Announcer(server, "Den", ["10.0.0.5"], web_port=8080)
        assert announcer.txt()["tables"] == "0"
        ann = await NetClient.connect(server.port, "Ann")
        await ann.create_table(None, name="Friday", seats=3)
        bo = await NetClient.connect(server.port, "Bo")
        await bo.create_table(name="Kitchen", seats=2)
        async with asyncio.timeout(30):  # (the bot sits down: waited for, not timed)
            while not any(s.kind == "bot" for t in server.tables.values() for s in t.seats):
                await asyncio.sleep(0.01)
        record = announcer.txt()
        await ann.close()
        await bo.close()
    assert (record["tables"], record["players"], record["who"]) == ("2", "2", "Ann,Bo")
    assert record["web"] == "8080" and "ssh" not in record


def test_the_start_screen_with_a_server_found_and_one_joined_before(snap_compare: Any) -> None:
    browser = QuietBrowser()
    app = StartApp(
        "Practice table against 2 bots, on this machine",
        [RecentServer("192.168.1.20:7777", "Den"), RecentServer("tonkbox:7000", "")],
        browser=browser,
    )

    async def found_one(pilot: Any) -> None:
        browser.found(found("Kim's box", "192.168.1.31", 7777, "Ann", "Bo"))
        await pilot.pause()

    assert snap_compare(app, terminal_size=(80, 24), run_before=found_one)

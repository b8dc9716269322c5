"""The web door from outside: `tonk-server --web-port` as a subprocess, and a real browser,
Debian's headless Chromium driven by Selenium (with Debian's chromedriver: nothing is
downloaded), whose terminal is read through the page (`tonk.screenText()`) and tapped by
touch events at a cell."""

from __future__ import annotations

import contextlib
import re
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from termkit import command_path, loopback_args, require_tool, stop_process

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
#: Chromium on a machine with no network but loopback: nothing of its own is fetched.
CHROMIUM_ARGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


class WebServer:
    """`tonk-server` with the web door, in a directory of the test's own."""

    TCP = re.compile(r"^tonk-server listening on (\S+):(\d+)$")
    WEB = re.compile(r"^tonk-server web on (\S+):(\d+)$")

    def __init__(self, directory: Path, *extra: str, web_port: int = 0) -> None:
        self.directory = directory
        self.db = directory / "web.sqlite3"
        self.log = open(directory / "server.log", "ab")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(
            [
                command_path("tonk-server"),
                *loopback_args(self.db),
                "--web-port",
                str(web_port),
                "--bot-pause",
                "0.05",
                "--next-hand-delay",
                "0.5",
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )
        assert self.proc.stdout is not None
        lines = [self.proc.stdout.readline().strip() for _ in range(2 + ("--ssh-port" in extra))]
        tcp = self.TCP.match(lines[0])
        web = self.WEB.match(lines[-1])
        if tcp is None or web is None:
            self.stop()
            raise AssertionError(f"no web line from tonk-server: {lines!r}\n{self.server_log()}")
        self.tcp_port = int(tcp.group(2))
        self.port = int(web.group(2))
        self.lines = lines
        self.url = f"http://127.0.0.1:{self.port}"

    def server_log(self) -> str:
        return (self.directory / "server.log").read_text("utf-8", "replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            stop_process(self.proc, 15)
        self.log.close()


@contextlib.contextmanager
def web_server(directory: Path, *extra: str, web_port: int = 0) -> Iterator[WebServer]:
    server = WebServer(directory, *extra, web_port=web_port)
    try:
        yield server
    finally:
        server.stop()


def require_browser() -> None:
    """Chromium and its driver from Debian's packages, or the test skips naming them (fails
    where TONK_TESTS_REQUIRE_TOOLS is set)."""
    require_tool("chromium", "chromium")
    require_tool("chromedriver", "chromium-driver")


class Browser:
    """One headless Chromium with a new, empty profile of its own, the size of a window."""

    def __init__(self, width: int = 1000, height: int = 700, *, touch: bool = True) -> None:
        require_browser()
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        self.profile = tempfile.TemporaryDirectory(prefix="tonk-chromium-")
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for arg in CHROMIUM_ARGS:
            options.add_argument(arg)
        options.add_argument(f"--user-data-dir={self.profile.name}")
        options.add_argument(f"--window-size={width},{height}")
        self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        if touch:  # a phone's or a tablet's screen: taps are touches
            self.driver.execute_cdp_cmd(
                "Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 1}
            )

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.driver.quit()
        self.profile.cleanup()

    def as_new(self, width: int, height: int) -> None:
        """The browser as it started, at another size: one tab, on a blank page, with no
        cookie and nothing cached."""
        first, *others = self.driver.window_handles
        for handle in others:
            self.driver.switch_to.window(handle)
            self.driver.close()
        self.driver.switch_to.window(first)
        self.driver.get("about:blank")
        self.driver.execute_cdp_cmd("Network.clearBrowserCookies", {})
        self.driver.execute_cdp_cmd("Network.clearBrowserCache", {})
        self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        self.driver.set_window_size(width, height)

    def screen_as(self, width: int, height: int, *, phone: bool = True) -> None:
        """The page's window as a device's screen of `width`x`height` CSS pixels: a phone's
        (or a tablet's) turned as its shape says, or (`phone` False) a computer's or a
        television's. Called again with the sizes swapped, the phone is turned."""
        upright = height > width
        self.driver.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {
                "width": width,
                "height": height,
                "deviceScaleFactor": 1,
                "mobile": phone,
                "screenOrientation": {
                    "type": "portraitPrimary" if upright else "landscapePrimary",
                    "angle": 0 if upright else 90,
                },
            },
        )

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- pages ---------------------------------------------------------------------------------

    def open(self, url: str) -> None:
        self.driver.get(url)

    def choose_name(self, name: str) -> None:
        from selenium.webdriver.common.by import By

        field = self.driver.find_element(By.ID, "name")
        field.clear()
        field.send_keys(name)
        self.tap_element(self.driver.find_element(By.CSS_SELECTOR, "button"))

    def text(self) -> str:
        """The page's text as shown (not the terminal's)."""
        from selenium.webdriver.common.by import By

        return str(self.driver.find_element(By.TAG_NAME, "body").text)

    def wait_for_page(self, text: str, timeout: float = 20.0) -> str:
        end = time.monotonic() + timeout
        while True:
            shown = self.text()
            if text in shown:
                return shown
            if time.monotonic() > end:
                raise AssertionError(f"{text!r} never shown on the page:\n{shown}")
            time.sleep(0.1)

    # -- the terminal --------------------------------------------------------------------------

    def js(self, script: str, *args: Any) -> Any:
        return self.driver.execute_script(script, *args)

    def screen(self) -> str:
        """The terminal's screen, a line a row."""
        return str(self.js("return window.tonk ? window.tonk.screenText() : ''"))

    def wait_for(self, *texts: str, timeout: float = 30.0) -> str:
        """Wait until every one of `texts` is on the terminal's screen; returns the screen."""
        end = time.monotonic() + timeout
        while True:
            shown = self.screen()
            if all(text in shown for text in texts):
                return shown
            if time.monotonic() > end:
                missing = [t for t in texts if t not in shown]
                raise AssertionError(f"{missing!r} never shown; the screen:\n{shown}")
            time.sleep(0.1)

    def wait_for_any(self, *texts: str, timeout: float = 30.0) -> str:
        end = time.monotonic() + timeout
        while True:
            shown = self.screen()
            found = next((text for text in texts if text in shown), None)
            if found is not None:
                return found
            if time.monotonic() > end:
                raise AssertionError(f"none of {texts!r} shown; the screen:\n{shown}")
            time.sleep(0.1)

    def wait_gone(self, text: str, timeout: float = 30.0) -> None:
        end = time.monotonic() + timeout
        while text in (shown := self.screen()):
            if time.monotonic() > end:
                raise AssertionError(f"{text!r} never went; the screen:\n{shown}")
            time.sleep(0.1)

    def wait_steady(self, timeout: float = 10.0) -> str:
        """The screen once it has stayed the same for half a second (a window laid out
        again a moment after it first shows: a dialog centred once its height is known)."""
        end = time.monotonic() + timeout
        shown = self.screen()
        while True:
            time.sleep(0.5)
            again = self.screen()
            if again == shown:
                return shown
            if time.monotonic() > end:
                raise AssertionError(f"the screen never settled; it shows:\n{again}")
            shown = again

    def wait_for_row(self, row: int, text: str, timeout: float = 10.0) -> str:
        """Wait until row `row` of the screen shows `text` (a regular expression); returns
        the row."""
        end = time.monotonic() + timeout
        while True:
            rows = self.screen().split("\n")
            line = rows[row] if row < len(rows) else ""
            if re.search(text, line):
                return line
            if time.monotonic() > end:
                raise AssertionError(f"row {row} never showed {text!r}: {line!r}")
            time.sleep(0.1)

    def find_number_row(self) -> tuple[int, int]:
        """Where the first card of your hand is: the cell of its number, under the card."""
        for row, line in enumerate(self.screen().split("\n")):
            found = re.search(r"(\^1\^| 1[ *] )", line)
            if found is not None and re.search(r"(\^|\s)[2-6](\^|[ *])", line[found.end() :]):
                return found.start() + 1 + (found.group(0)[0] == "^"), row
        raise AssertionError(f"no hand on the screen:\n{self.screen()}")

    def wait_for_cursor_on(self, number: int, timeout: float = 10.0) -> None:
        self.wait_for(f"^{number}^", timeout=timeout)

    def keys(self, text: str) -> None:
        """Type `text` on the terminal (xterm.js reads the keyboard through its text area)."""
        from selenium.webdriver.common.by import By

        area = self.driver.find_element(By.CSS_SELECTOR, ".xterm-helper-textarea")
        area.send_keys(text)

    def terminal_size(self) -> tuple[int, int]:
        """The page's terminal, in cells (columns, rows)."""
        cols, rows = self.js("return [window.tonk.terminal.cols, window.tonk.terminal.rows]")
        return int(cols), int(rows)

    def font(self) -> tuple[float, float, float]:
        """The terminal's text as the page lays it out, in CSS pixels: the font's size (as
        the terminal draws it), and a cell's width and height (as its screen is laid out)."""
        size, width, height = self.js(
            "const t = window.tonk.terminal;"
            "const r = t.element.querySelector('.xterm-screen').getBoundingClientRect();"
            "return [t.options.fontSize, r.width / t.cols, r.height / t.rows];"
        )
        return float(size), float(width), float(height)

    def wait_fitted(self, timeout: float = 20.0) -> tuple[int, int]:
        """Wait until the terminal fills the window at its font (no fit left to do; on a
        television page, it is the picture's size) and the font's size is the one the page
        chose for this window; its size in cells."""
        end = time.monotonic() + timeout
        script = (
            "const s = window.tonk.session; const t = window.tonk.terminal;"
            "if (!s || !s.socket || s.socket.readyState !== 1) return null;"
            # (A television page shows its table's picture, of the size the door says.)
            "const p = (document.body.classList.contains('watch') && window.tonk.picture)"
            " || s.fitAddon.proposeDimensions();"
            "return p && p.cols === t.cols && p.rows === t.rows"
            " && t.options.fontSize === window.tonk.fontSize();"
        )
        while not self.js(script):
            if time.monotonic() > end:
                raise AssertionError(f"the terminal never fitted the window: {self.font()}")
            time.sleep(0.1)
        return self.terminal_size()

    def wait_drawn_whole(self, timeout: float = 30.0) -> str:
        """Wait until the app has drawn the table at the terminal's size: a panel's border in
        its last column, and a panel's foot in its last rows (above the key bar's buttons at
        most): the app was told the page's size, and drew at it."""
        end = time.monotonic() + timeout
        while True:
            cols, rows = self.terminal_size()
            lines = self.screen().split("\n")
            right = any(len(line) == cols and line[-1] in "│╮╯" for line in lines)
            if right and any("╰" in line for line in lines[-7:]):
                return "\n".join(lines)
            if time.monotonic() > end:
                raise AssertionError(f"never drawn whole at {cols}x{rows}:\n{self.screen()}")
            time.sleep(0.1)

    def cell_point(self, column: int, row: int) -> tuple[float, float]:
        """The middle of a terminal cell, in the page's pixels."""
        box = self.js(
            "const t = window.tonk.terminal;"
            "const r = t.element.querySelector('.xterm-screen').getBoundingClientRect();"
            "return [r.left, r.top, r.width / t.cols, r.height / t.rows];"
        )
        left, top, width, height = box
        return left + (column + 0.5) * width, top + (row + 0.5) * height

    def find(self, text: str, after: int = 0, timeout: float = 10.0) -> tuple[int, int]:
        """Where `text` is on the screen (its first cell), on row `after` or below (waiting
        for it to be shown)."""
        end = time.monotonic() + timeout
        while True:
            for row, line in enumerate(self.screen().split("\n")):
                column = line.find(text)
                if row >= after and column >= 0:
                    return column, row
            if time.monotonic() > end:
                raise AssertionError(f"{text!r} is not on the screen:\n{self.screen()}")
            time.sleep(0.1)

    def tap(self, column: int, row: int) -> None:
        """A finger's tap on a cell of the terminal."""
        x, y = self.cell_point(column, row)
        self.tap_at(x, y)

    def tap_text(self, text: str, after: int = 0) -> None:
        column, row = self.find(text, after)
        self.tap(column, row)

    def tap_at(self, x: float, y: float) -> None:
        point = [{"x": x, "y": y}]
        self.driver.execute_cdp_cmd(
            "Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": point}
        )
        self.driver.execute_cdp_cmd(
            "Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []}
        )

    def tap_element(self, element: Any) -> None:
        """A tap on the middle of a page's element (scrolled into sight first)."""
        x, y = self.js(
            "const e = arguments[0]; e.scrollIntoView({block: 'center'});"
            "const r = e.getBoundingClientRect();"
            "return [r.left + r.width / 2, r.top + r.height / 2];",
            element,
        )
        self.tap_at(x, y)


def create_a_table_by_taps(browser: Browser, house_rules: bool = False) -> None:
    """From the lobby, a table for the browser's player and a bot, made by taps on the key
    bar and the form (`house_rules`: the form's list of options opened and closed by taps
    on the way)."""
    # (The footer is made again as the app starts; a tap meanwhile is lost: tapped again
    # till the form is up. A tap that comes once it is falls on the form's backdrop, which
    # takes none.)
    end = time.monotonic() + 30
    while True:
        tap_button(browser, "New table")
        try:
            browser.wait_for("Create a table", timeout=2)
            break
        except AssertionError:
            assert time.monotonic() < end, browser.screen()
    browser.wait_for("Create a table", "Seats, bots")
    browser.wait_steady()  # (where its fields are: the form may move a row as it settles)
    if house_rules:
        browser.tap_text("House rules")
        browser.wait_for("House-rule options", "Takes")
        browser.tap_text(" Close ")
        browser.wait_gone("House-rule options")
    column, row = browser.find("Seats, bots")
    # (Upright, each label is above its field: the counts are on the row under it.)
    if "▼" not in browser.screen().split("\n")[row]:
        row, column = row + 1, column - 11
    seats_at = browser.screen().split("\n")[row].index("4", column + 11)
    # (An open drop-down has a border: its first choice is two rows down, a column in.)
    browser.tap(seats_at, row)
    browser.wait_for_row(row + 2, "2")
    browser.tap(seats_at + 2, row + 2)
    line = browser.wait_for_row(row, "2")
    bots_at = line.index("0", seats_at + 3)
    browser.tap(bots_at, row)
    browser.wait_for_row(row + 3, "1")
    browser.tap(bots_at + 2, row + 3)
    # (The form's note comes above the buttons: the form, centred, may move up a row.)
    browser.wait_for("fill all 2 seats")
    end = time.monotonic() + 10
    while not re.search(r"Seats, bots[\s█]*2\s+▼\s+1\s+▼", browser.screen()):
        assert time.monotonic() < end, browser.screen()
        time.sleep(0.1)
    # (A tap that comes while the form is laid out again, as its note comes, is lost, as
    # the key bar's first one above can be: once more while the form is still up.)
    browser.tap_text("Create", after=row)
    try:
        browser.wait_for("Your hand", timeout=10)
    except AssertionError:
        if "Create a table" in browser.screen():
            browser.tap_text("Create", after=row)
        browser.wait_for("Your hand", timeout=30)


def tap_button(browser: Browser, label: str, row: int = 0) -> None:
    """A tap on the key bar's button `label` (the bar is the last six rows at most: the lowest
    row that names it, not a line above the bar that does), on `row` of its three rows (-1 the
    top, 0 the middle where its words are, 1 the bottom): a button takes a tap anywhere on it."""
    bar = browser.terminal_size()[1] - 6
    column, middle = browser.find(f" {label} ", after=bar)
    lines = browser.screen().split("\n")
    lowest = max(n for n in range(middle, len(lines)) if f" {label} " in lines[n])
    if lowest != middle:
        column, middle = lines[lowest].index(f" {label} "), lowest
    browser.tap(column + 1, middle + row)


class SharedBrowser:
    """One headless Chromium for a module's tests, each given it as new (`fresh`); one that
    a test left unusable is ended and another started."""

    def __init__(self) -> None:
        self.browser: Browser | None = None

    def fresh(self, width: int = 1000, height: int = 700) -> Browser:
        if self.browser is not None:
            try:
                self.browser.as_new(width, height)
                return self.browser
            except Exception:
                self.browser.close()
                self.browser = None
        self.browser = Browser(width, height)
        return self.browser

    def close(self) -> None:
        if self.browser is not None:
            self.browser.close()
            self.browser = None

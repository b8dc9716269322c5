"""The web door's page in a real browser (Debian's headless Chromium, driven by Selenium), on
a phone-sized window: what a load fetches, and how long a player waits.

    python bench/web_page.py --runs 5 --size 844x390

- bytes: what the name form's page and the table's page took from the network on a first
  visit (a browser with nothing cached), and what a reload of the table's page took (the
  Resource Timing API's transferSize: 0 for what came from the browser's cache);
- open to lobby: from asking for the table's page (a name chosen already) to the lobby's
  text on its terminal, with nothing cached and again with the files cached (p50, max);
- tap to screen: from a finger's tap on the lobby's Help key to the help on the screen, and
  from a tap on its Close button to the lobby again (p50, max over the runs).

Times are read by polling the page's terminal every few milliseconds from outside (each poll
is one round trip to the browser): they include up to one poll's delay.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "kit"))

from webkit import Browser, web_server

#: How often the terminal is read while waiting (seconds).
POLL = 0.005


def fetched(browser: Browser) -> dict[str, int]:
    """Bytes the page's load took from the network, by file (the page itself as "/")."""
    entries = browser.js(
        "return performance.getEntries().filter(e => e.transferSize > 0)"
        ".map(e => [e.name, e.transferSize]);"
    )
    return {str(name).split("?")[0].rsplit("/", 1)[-1] or "/": int(size) for name, size in entries}


class Late(Exception):
    """What was waited for never came."""


def until(browser: Browser, text: str, gone: bool = False, timeout: float = 60.0) -> float:
    """Seconds until `text` is on the terminal's screen (`gone`: no longer)."""
    started = time.perf_counter()
    while (text in browser.screen()) == gone:
        if time.perf_counter() - started > timeout:
            raise Late(f"{text!r} never {'went' if gone else 'came'}:\n{browser.screen()}")
        time.sleep(POLL)
    return time.perf_counter() - started


#: Taps that came to nothing (the app was still making its key bar as it started, say): each
#: is tapped again, its time from the tap that was answered.
lost: list[str] = []


def tapped(browser: Browser, text: str, after: int, step: int, expect: str, gone: bool) -> float:
    """Seconds from a tap on `text` (its `step`-th cell, on row `after` or below) to `expect`
    shown (or `gone`), tapped again if nothing came of it in 10 s."""
    for _ in range(5):
        column, row = browser.find(text, after=after)
        x, y = browser.cell_point(column + step, row)
        started = time.perf_counter()
        browser.tap_at(x, y)
        try:
            until(browser, expect, gone=gone, timeout=10)
        except Late:
            lost.append(text)
            continue
        return time.perf_counter() - started
    raise SystemExit(f"five taps on {text!r} came to nothing:\n{browser.screen()}")


def open_to_lobby(browser: Browser, url: str) -> float:
    started = time.perf_counter()
    browser.open(url)
    until(browser, "lobby")
    return time.perf_counter() - started


def tap_to_screen(browser: Browser) -> tuple[float, float]:
    """A tap on the lobby's Help key until the help is drawn; a tap on its Close button
    until the lobby is back."""
    footer = browser.terminal_size()[1] - 3
    opened = tapped(browser, "Help", footer, 0, " Close ", gone=False)
    closed = tapped(browser, " Close ", 0, 1, " Close ", gone=True)
    return opened, closed


def summary(values: list[float]) -> str:
    ms = sorted(v * 1000 for v in values)
    return f"p50 {statistics.median(ms):.0f} ms, max {ms[-1]:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--size", default="844x390", help="the window, in CSS pixels")
    args = parser.parse_args()
    width, height = (int(n) for n in args.size.split("x"))
    cold, warm, taps, closes = [], [], [], []
    first_bytes: list[int] = []
    reload_bytes: list[int] = []
    with (
        tempfile.TemporaryDirectory() as folder,
        web_server(Path(folder)) as server,
        Browser(1000, 700) as browser,
    ):
        for run in range(args.runs):
            browser.as_new(1000, 700)
            browser.screen_as(width, height)
            browser.open(server.url + "/")
            browser.wait_for_page("Your name at the table")
            form = fetched(browser)
            browser.choose_name(f"Bench{run}")
            until(browser, "lobby")
            table = fetched(browser)
            first_bytes.append(sum(form.values()) + sum(table.values()))
            # With the name kept, and nothing cached: the table's page alone.
            browser.driver.execute_cdp_cmd("Network.clearBrowserCache", {})
            browser.open("about:blank")
            cold.append(open_to_lobby(browser, server.url + "/"))
            warm.append(open_to_lobby(browser, server.url + "/"))
            browser.driver.refresh()
            until(browser, "lobby")
            reload_bytes.append(sum(fetched(browser).values()))
            time.sleep(1)  # (the lobby's key bar is made again as the app starts)
            opened, closed = tap_to_screen(browser)
            taps.append(opened)
            closes.append(closed)
    print(f"window {width}x{height}, {args.runs} runs")
    print(f"first visit (form and table pages): {max(first_bytes) / 1024:.0f} KiB fetched")
    print(f"reload of the table's page: {max(reload_bytes) / 1024:.1f} KiB fetched")
    print(f"open to lobby, nothing cached: {summary(cold)}")
    print(f"open to lobby, files cached: {summary(warm)}")
    print(f"tap Help to the help drawn: {summary(taps)}")
    print(f"tap Close to the lobby again: {summary(closes)}")
    print(f"taps that came to nothing and were tapped again: {len(lost)}")


if __name__ == "__main__":
    main()

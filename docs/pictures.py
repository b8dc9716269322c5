"""README's pictures, made by the project's own code: the table in a terminal at 80x24 and at
160x50 (Textual's own SVG screenshot of the app, a practice table dealt from a stacked deck),
a phone's browser at the web door, and the television page (PNG screenshots from Debian's
headless Chromium, of a real `tonk-server --web-port 0`).

    python docs/pictures.py                 # into docs/pictures/
    python docs/pictures.py --out DIR       # elsewhere (the tests' way)
    python docs/pictures.py --terminal-only # no browser needed

The phone is held upright when the client has a layout for its width (about 40 columns),
sideways otherwise; its deal is the server's own, so its picture changes from run to run.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "kit"))

from clientkit import practice_app, table_state, wait_for  # noqa: E402
from textual.pilot import Pilot  # noqa: E402
from tonk.client.widgets import TooSmall  # noqa: E402

#: The terminal pictures: (file, columns, rows).
TERMINALS = (("table-80x24.svg", 80, 24), ("table-160x50.svg", 160, 50))
#: The phone's screen (CSS pixels, upright) and the television's.
PHONE = (390, 844)
TELEVISION = (1920, 1080)
#: The television's picture is taken at half its size (a README shows it smaller anyway).
TELEVISION_SCALE = 0.5


async def terminal_picture(path: Path, columns: int, rows: int) -> None:
    """The practice table mid-hand (the stock drawn from, a run spread, a card raised), as
    Textual draws it at `columns`x`rows`, saved as SVG."""
    app = practice_app(bots=2)
    async with app.run_test(size=(columns, rows)) as pilot:
        await wait_for(pilot, lambda: mine(app), "your first turn")
        await pilot.press("d")
        await wait_for(pilot, lambda: len(app.table_state.view.hand) == 6, "the draw")
        await pilot.press("1", "2", "3", "s")
        await wait_for(pilot, lambda: bool(app.table_state.view.spreads), "the spread")
        await pilot.press("right", "space")
        await settle(pilot)
        svg = app.export_screenshot(title=f"tonk at {columns}x{rows}")
    path.write_text(svg, encoding="utf-8")


def mine(app: Any) -> bool:
    state = table_state(app)
    return state is not None and state.view is not None and state.view.my_turn


async def settle(pilot: Pilot[Any]) -> None:
    """The screen drawn whole (no animation or notice half-way)."""
    pilot.app.clear_notifications()
    await pilot.pause(0.5)


def browser_pictures(phone_path: Path, television_path: Path) -> None:
    """A phone at the web door's table (made by taps, a card drawn), and the television
    page of that table."""
    from webkit import Browser, create_a_table_by_taps, tap_button, web_server

    with (
        tempfile.TemporaryDirectory() as folder,
        web_server(Path(folder)) as server,
        Browser(1000, 700) as browser,
    ):
        width, height = PHONE
        upright = TooSmall.MIN_WIDTH <= 40
        if not upright:
            width, height = height, width
        browser.screen_as(width, height)
        browser.open(server.url + "/")
        browser.choose_name("Ada")
        browser.wait_for("lobby")
        create_a_table_by_taps(browser)
        found = browser.wait_for_any("tap Draw", "back to the table", "to play")
        if found == "tap Draw":
            tap_button(browser, "Draw")
            browser.wait_for_any("then Discard", "back to the table")
        browser.wait_fitted()
        browser.wait_drawn_whole()
        screenshot(browser, phone_path, 1.0)
        browser.driver.switch_to.new_window("tab")  # (Ada stays at the table in hers)
        browser.screen_as(*TELEVISION, phone=False)
        browser.open(server.url + "/watch/1")
        browser.wait_for("Ada", "Players")
        browser.wait_fitted()
        browser.wait_drawn_whole()
        screenshot(browser, television_path, TELEVISION_SCALE)


def screenshot(browser: Any, path: Path, scale: float) -> None:
    """The page as shown, scaled by `scale`, saved as PNG."""
    width, height = browser.js(
        "return [document.documentElement.clientWidth, document.documentElement.clientHeight]"
    )
    taken = browser.driver.execute_cdp_cmd(
        "Page.captureScreenshot",
        {
            "format": "png",
            "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": scale},
        },
    )
    path.write_bytes(base64.b64decode(taken["data"]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE / "pictures")
    parser.add_argument("--terminal-only", action="store_true")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, columns, rows in TERMINALS:
        asyncio.run(terminal_picture(args.out / name, columns, rows))
        print(args.out / name)
    if not args.terminal_only:
        browser_pictures(args.out / "phone.png", args.out / "television.png")
        print(args.out / "phone.png")
        print(args.out / "television.png")


if __name__ == "__main__":
    main()

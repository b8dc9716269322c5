"""The web door's pages as HTML: the name form (with the open tables' television pages), the
table (the page's terminal, run by textual-serve's script), and a page that says why not. No
page loads anything from elsewhere; each names its files with their versions (web_static.py),
so that a browser keeps them."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from .web_static import static_url


def _font_face() -> str:
    """The terminal's font (textual-serve's), named with its version so a browser keeps it."""
    return (
        "<style>@font-face { font-family: 'Roboto Mono'; "
        f"src: url('{static_url('RobotoMono.ttf')}') format('truetype'); "
        "font-weight: 100 700; }</style>\n"
    )


def _page(title: str, body: str, *, head: str = "", page: str = "form") -> str:
    return (
        "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>\n"
        f"<title>{escape(title)}</title>\n"
        f"{_font_face()}<link rel='stylesheet' href='{static_url('tonk.css')}'>\n"
        f"{head}</head>\n<body class='{page}'>\n{body}\n</body>\n</html>\n"
    )


def tables_list(tables: Sequence[tuple[int, str]]) -> str:
    """The open tables, by number and name, each with its television page's link."""
    if not tables:
        return "<p class='note'>No table is open yet.</p>\n"
    items = "".join(
        f"<li><span class='number'>{number}</span> {escape(name)} "
        f"<a href='/watch/{number}'>on a television</a></li>\n"
        for number, name in tables
    )
    return f"<h2>Tables</h2>\n<ul class='tables'>\n{items}</ul>\n"


def name_page(
    server: str,
    limit: int,
    reason: str = "",
    name: str = "",
    tables: Sequence[tuple[int, str]] = (),
) -> str:
    """The first page: choose the name to play under (refused, with `reason`); below, the
    open `tables` (number, name) with their television pages."""
    said = f"<p class='refused' role='alert'>{escape(reason)}</p>\n" if reason else ""
    return _page(
        "tonk: your name",
        "<main>\n<h1>tonk at " + escape(server) + "</h1>\n"
        "<form method='post' action='/'>\n"
        "<label for='name'>Your name at the table</label>\n"
        f"<input id='name' name='name' value='{escape(name)}' maxlength='{limit}' required "
        "autofocus autocomplete='nickname' autocapitalize='words'>\n"
        f"{said}<button type='submit'>Play</button>\n</form>\n"
        "<p class='note'>This browser keeps the name: come back to this page and you are "
        "back in your seats. Nobody else can play under it here.</p>\n"
        f"{tables_list(tables)}</main>",
    )


def table_page(title: str, socket_path: str, *, watch: bool = False, corner: str = "") -> str:
    """The page's terminal: textual-serve's script connects it to `socket_path` (a player's
    page on a touch screen to `socket_path/touch`: its app says "tap"); `corner`, what the
    television page shows over it in a corner (`scan_corner`)."""
    closed = "The table is closed." if not watch else "The television page is closed."
    touch = "" if watch else f" data-touch-socket-path='{escape(socket_path)}/touch'"
    return _page(
        title,
        f"<div id='terminal' class='textual-terminal' data-socket-path='{escape(socket_path)}'"
        f"{touch} data-font-size='16'></div>\n"
        f"<div id='closed' role='status'><span>{closed}</span> "
        "<a href='' id='again'>Open it again</a></div>" + corner,
        head=f"<link rel='stylesheet' href='{static_url('xterm.css')}'>\n"
        f"<script src='{static_url('tonk.js')}'></script>\n"
        f"<script src='{static_url('textual.js')}'></script>\n",
        page="watch" if watch else "table",
    )


def scan_corner(url: str, svg: str) -> str:
    """The web door's address as a QR code (`svg`, made by `tonk.server.qr`) in a corner of
    the television page, for a phone at the party to join by its camera."""
    return (
        f"\n<aside id='scan' aria-label='scan to play: {escape(url)}'>{svg}"
        "<span>scan to play</span></aside>"
    )


def message_page(title: str, text: str) -> str:
    """A page that only says something (no such table, the door is full)."""
    return _page(title, f"<main>\n<h1>{escape(title)}</h1>\n<p>{escape(text)}</p>\n</main>")

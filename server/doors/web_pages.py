"""The web door's pages as HTML: the name form, the table (the page's terminal, run by
textual-serve's script), and a page that says why not. No page loads anything from elsewhere."""

from __future__ import annotations

from html import escape

#: The files a page may load, by the name it asks for: (package, path inside it, type).
STATIC_FILES = {
    "textual.js": ("textual_serve", "static/js/textual.js", "text/javascript"),
    "xterm.css": ("textual_serve", "static/css/xterm.css", "text/css"),
    "RobotoMono.ttf": (
        "textual_serve",
        "static/fonts/RobotoMono-VariableFont_wght.ttf",
        "font/ttf",
    ),
    "tonk.js": ("tonk.server.doors", "web/tonk.js", "text/javascript"),
    "tonk.css": ("tonk.server.doors", "web/tonk.css", "text/css"),
}


def _page(title: str, body: str, *, head: str = "", page: str = "form") -> str:
    return (
        "<!DOCTYPE html>\n<html lang='en'>\n<head>\n<meta charset='utf-8'>\n"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>\n"
        f"<title>{escape(title)}</title>\n"
        "<link rel='stylesheet' href='/static/tonk.css'>\n"
        f"{head}</head>\n<body class='{page}'>\n{body}\n</body>\n</html>\n"
    )


def name_page(server: str, limit: int, reason: str = "", name: str = "") -> str:
    """The first page: choose the name to play under (refused, with `reason`)."""
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
        "back in your seats. Nobody else can play under it here.</p>\n</main>",
    )


def table_page(title: str, socket_path: str, *, watch: bool = False, corner: str = "") -> str:
    """The page's terminal: textual-serve's script connects it to `socket_path`; `corner`,
    what the television page shows over it in a corner (`scan_corner`)."""
    closed = "The table is closed." if not watch else "The television page is closed."
    return _page(
        title,
        f"<div id='terminal' class='textual-terminal' data-socket-path='{escape(socket_path)}' "
        "data-font-size='16'></div>\n"
        f"<div id='closed' role='status'><span>{closed}</span> "
        "<a href='' id='again'>Open it again</a></div>" + corner,
        head="<link rel='stylesheet' href='/static/xterm.css'>\n"
        "<script src='/static/tonk.js'></script>\n"
        "<script src='/static/textual.js'></script>\n",
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

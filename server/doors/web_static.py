"""The web door's files (textual-serve's script and font, the page's own script and style):
read once, compressed once, and sent so that a browser keeps them. Each page names a file with
its version (`/static/textual.js?v=<digest>`): a file so named never changes, and the browser
keeps it a year without asking again; asked for without the right version, a file is sent to
be checked each time (its ETag answers 304 when the browser has it already)."""

from __future__ import annotations

import gzip
import hashlib
import importlib.resources
from functools import cache

from aiohttp import web
from tonk.shared.records import record

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
#: How long a browser keeps a file named with its version (a year: it never changes).
KEPT = "public, max-age=31536000, immutable"
#: A file asked for without its version: kept, but checked each time it is used.
CHECKED = "no-cache"


@record
class StaticFile:
    """One file as it is sent: its bytes, the same compressed, its type and its version."""

    data: bytes
    compressed: bytes
    kind: str
    version: str


@cache
def static_file(name: str) -> StaticFile | None:
    """The file a page asks for by `name` (None: no such file), read and compressed once."""
    found = STATIC_FILES.get(name)
    if found is None:
        return None
    package, path, kind = found
    data = importlib.resources.files(package).joinpath(path).read_bytes()
    version = hashlib.sha256(data).hexdigest()[:16]
    return StaticFile(data, gzip.compress(data, 9, mtime=0), kind, version)


def static_url(name: str) -> str:
    """The path a page names `name` by: with its version, so a browser may keep it."""
    found = static_file(name)
    if found is None:
        raise KeyError(name)
    return f"/static/{name}?v={found.version}"


def static_response(request: web.Request, found: StaticFile) -> web.Response:
    """`found` for `request`: compressed if the browser takes gzip, kept a year if asked for
    by its version, else checked by its ETag (304, no body, when the browser has it)."""
    etag = f'"{found.version}"'
    versioned = request.query.get("v") == found.version
    headers = {
        "Cache-Control": KEPT if versioned else CHECKED,
        "ETag": etag,
        "Vary": "Accept-Encoding",
    }
    if etag in request.headers.get("If-None-Match", ""):
        return web.Response(status=304, headers=headers)
    body = found.data
    if "gzip" in request.headers.get("Accept-Encoding", ""):
        body = found.compressed
        headers["Content-Encoding"] = "gzip"
    return web.Response(body=body, content_type=found.kind, headers=headers)

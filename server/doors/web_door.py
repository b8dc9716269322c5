"""The web door (`tonk-server --web-port`): a page on the LAN that runs the same table app as
the SSH door, in the browser (web_session.py), with textual-serve's terminal. This module is
the door itself: its few paths and nothing else, who is who (a name chosen in the first page,
kept by a token in a cookie the page's scripts cannot read, under the doors' names rules), its
limits, and the television page `/watch/TABLE`."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
import resource
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiohttp import WSMsgType, web
from tonk.shared.wire import protocol as p

from ..store import ports
from ..store import store as st
from .door import DoorServing, follow_releases, in_use_over_tcp
from .door_request import DoorCommand
from .door_template import SessionTemplate
from .web_guard import (
    Chosen,
    ChosenNames,
    ConnectionGuard,
    GuardedSite,
    KnownHosts,
    LogEvery,
    OneLine,
    host_names,
    in_hand,
)
from .web_pages import message_page, name_page, scan_corner, table_page
from .web_session import WebLink, WebSession, clamp_size
from .web_static import static_file, static_response

if TYPE_CHECKING:
    from ..app import TonkServer

log = logging.getLogger("tonk.server")

#: The cookie that holds a browser's token, by the door's port (a browser keeps cookies by
#: host, not port: two servers on one box must not take each other's).
COOKIE = "tonk_{port}"
#: How long a browser keeps it (seconds): until the name is released, in practice.
COOKIE_AGE = 10 * 365 * 24 * 3600
#: Seconds between the door's checks for idle sessions.
IDLE_CHECK = 5.0
#: The most a page sends in one message (a paste, say), in bytes.
MAX_MESSAGE = 64 * 1024
#: Seconds between the door's pings to a page (a page that stops answering is gone).
HEARTBEAT = 20.0
#: Every page says where it may load from, and that no other site may frame it.
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "font-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",  # (no-referrer would make a form's Origin "null")
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
#: The television page's name in hello (the server lets a door's watcher say it whoever has
#: claimed it: no player's name can stop a television page).
TV_NAME = "TV"


#: aiohttp's log of the door's requests: a request it cannot parse is one line (OneLine).
HTTP_LOG = logging.getLogger("tonk.server.http")
HTTP_LOG.addFilter(OneLine("web door: "))
#: asyncio's, about connections it could not accept (out of files): one line, a few a minute.
ACCEPT_TROUBLE = OneLine("", only="socket.accept() out of system resource")
#: The web door's HTTP connections are this share of the open files at most: the rest are
#: the game's (players' connections, the database, the door sessions' apps).
FILES_SHARE = 4


def web_connection_cap(wanted: int) -> int:
    """`web_connections`, or fewer under a low open-file limit (a quarter of it)."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(16, min(wanted, soft // FILES_SHARE))


def scan(host: str, port: int) -> str:
    """The television page's corner: the QR code of the address `tonk-server invite` tells
    for the web door listening on `host`:`port` (the same code as it prints)."""
    from ..announce import web_page_url
    from ..qr import qr_svg

    url = web_page_url(host, port)
    return scan_corner(url, qr_svg(url))


def token_hash(token: str) -> str:
    """What the database keeps of a browser's token (a copy of it gives nobody a seat)."""
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


@dataclass(slots=True)
class WebConfig:
    host: str = "0.0.0.0"
    port: int = 0  # 0: the port kept in the database, or a free one the first time
    names: tuple[str, ...] = ()  # more names the page is reached by (--web-name)


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def _secured(request: web.Request, handler: Handler) -> web.StreamResponse:
    response = await handler(request)
    if not response.prepared:
        for header, value in SECURITY_HEADERS.items():  # (a file says how long it is kept)
            response.headers.setdefault(header, value)
    return response


class WebDoor(DoorServing):
    """The door: `await start()`, `port`, `await close()`."""

    def __init__(
        self, server: TonkServer, config: WebConfig, template: SessionTemplate | None = None
    ) -> None:
        self.server = server
        self.config = config
        self.take_template(template)
        self.limits = server.config.limits
        self.sessions: set[WebSession] = set()
        # Each watched table's picture: one app, shown by all its television pages.
        self.pictures: dict[int, WebSession] = {}
        self.watching = 0  # television pages open
        # Sessions by address and kind (True: a television page's).
        self.per_address: dict[tuple[str, bool], int] = {}
        self.port = 0
        self._runner: web.AppRunner | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self.corner = ""  # the television page's QR code of this door's address (`scan`)
        self.hosts = KnownHosts(config.names)
        self.guard = ConnectionGuard(
            web_connection_cap(self.limits.web_connections),
            self.limits.web_connections_per_address,
            self.limits.web_request_timeout,
        )
        self.chosen = ChosenNames(self.limits.web_names_per_address)
        self._log_host = LogEvery()

    # -- life ---------------------------------------------------------------------------------

    def application(self) -> web.Application:
        app = web.Application(
            middlewares=[in_hand, _secured, self._known_host], client_max_size=4096
        )
        app.add_routes(
            [
                web.get("/", self.index),
                web.post("/", self.choose_name),
                web.get("/ws", self.play),
                web.get("/ws/touch", self.play),  # (a touch screen's page: see _session)
                web.get("/watch/{table}", self.watch_page),
                web.get("/watch/{table}/ws", self.watch),
                web.get("/static/{file}", self.static),
            ]
        )
        return app

    async def start(self) -> None:
        await self.start_template()
        self.hosts = KnownHosts([*await asyncio.to_thread(host_names), *self.config.names])
        self._runner = web.AppRunner(
            self.application(), access_log=None, handle_signals=False, shutdown_timeout=1.0
        )
        await self._runner.setup()
        store = self.server.store
        try:
            kept = (
                await ports.listen_kept(
                    store, ports.WEB_PORT, self.config.port, self._listen, "the web door"
                )
            )[1]
        except OSError:
            await self._runner.cleanup()
            raise
        if self.port != kept:
            await ports.keep(store, {ports.WEB_PORT: str(self.port)})
        self.guard.start()
        logging.getLogger("asyncio").addFilter(ACCEPT_TROUBLE)
        self._tasks = [
            asyncio.create_task(self._draw_corner(), name="web-scan"),
            asyncio.create_task(self._close_idle(), name="web-idle"),
            asyncio.create_task(follow_releases(self.server, "web door"), name="web-releases"),
        ]

    async def _draw_corner(self) -> None:
        """The television page's QR code, made in a thread (finding this machine's addresses
        may ask its resolver) while the door already serves: a page asked for sooner has none."""
        self.corner = await asyncio.to_thread(scan, self.config.host, self.port)

    async def _listen(self, port: int) -> None:
        assert self._runner is not None
        site = GuardedSite(
            self._runner,
            self.config.host,
            port,
            self.guard,
            access_log=None,
            logger=HTTP_LOG,
            keepalive_timeout=self.limits.web_request_timeout,
        )
        await site.start()
        self.port = site.port

    async def close(self) -> None:
        """No new sessions; every session's app ends; the listener is closed."""
        for task in self._tasks:
            task.cancel()
        self.guard.stop()
        logging.getLogger("asyncio").removeFilter(ACCEPT_TROUBLE)
        for session in list(self.sessions):
            session.end("tonk: the server is shutting down", 1)
        running = [s.task for s in self.sessions if s.task is not None]
        if running:
            await asyncio.wait(running, timeout=5)
        if self._runner is not None:
            await self._runner.cleanup()
        await self.close_template()

    async def _close_idle(self) -> None:
        loop = asyncio.get_running_loop()
        idle = self.limits.web_idle_timeout
        while True:
            await asyncio.sleep(min(IDLE_CHECK, idle / 4))
            now = loop.time()
            for session in list(self.sessions):
                if session.player and now - session.last_input > idle:
                    said = f"{idle / 60:g} minutes" if idle >= 120 else f"{idle:g} seconds"
                    session.end(f"tonk: no key pressed or card tapped for {said}: goodbye", 0)

    @web.middleware
    async def _known_host(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Only a request for one of the names the server answers to: a page of another site,
        whose name was made to point at this box, would otherwise be this server's own page
        to the browser (its `Origin` the same as its `Host`)."""
        if self.hosts.allows(request):
            return await handler(request)
        self._log_host(
            logging.INFO,
            f"web door: a request from {request.remote} for {request.host[:80]!r} refused "
            "(not a name this server answers to: --web-name adds one)",
        )
        text = (
            "This server does not answer to that name. Open it by its address, or by a name "
            "its host has given it (tonk-server --web-name)."
        )
        return _html(message_page("Not this server's name", text), 421)

    # -- who is who -----------------------------------------------------------------------------

    @property
    def cookie(self) -> str:
        return COOKIE.format(port=self.port)

    def token_of(self, request: web.Request) -> str | None:
        """The hash of this browser's token (its cookie's), if it has one."""
        token = request.cookies.get(self.cookie)
        if not token or len(token) > 200:
            return None
        return token_hash(token)

    def claim_of(self, request: web.Request) -> st.SavedName | None:
        """The name this browser claimed (by its cookie's token), if it has one still."""
        token = self.token_of(request)
        return None if token is None else self.server.door_names.by_token(token)

    def chosen_by(self, request: web.Request) -> Chosen | None:
        """The name this browser chose in the form and has not played under yet."""
        token = self.token_of(request)
        return None if token is None else self.chosen.of(token)

    def refusal(self, name: str) -> str | None:
        """Why a browser may not claim `name` (None: it may)."""
        limit = self.limits.max_name
        if not name or not p.is_printable_text(name) or len(name) > limit:
            return f"A name is 1 to {limit} letters, digits or signs you can see."
        claim = self.server.door_names.owner(name)
        if claim is not None:
            holder = "in another web browser" if claim.by_browser else "with an SSH key"
            return f"{claim.name} is taken here by a player who comes in {holder}: choose another."
        if in_use_over_tcp(self.server, name):
            return f"{name} is playing here from tonk-client: choose another name."
        return None

    # -- the pages ------------------------------------------------------------------------------

    def _server_label(self, request: web.Request) -> str:
        return request.host.rsplit(":", 1)[0] if request.host else self.config.host

    async def index(self, request: web.Request) -> web.Response:
        if self.claim_of(request) is None and self.chosen_by(request) is None:
            label = self._server_label(request)
            return _html(name_page(label, self.limits.max_name, tables=self.watchable()))
        return _html(table_page("tonk", "/ws"))

    def watchable(self) -> list[tuple[int, str]]:
        """The open tables (number, name), for their television pages' links."""
        tables = self.server.tables
        return [(n, tables[n].name) for n in sorted(tables) if self.open_table(n) is not None]

    async def choose_name(self, request: web.Request) -> web.Response:
        if not same_origin(request):
            return _html(message_page("Not from here", "This form is this server's own."), 403)
        try:
            async with asyncio.timeout(self.limits.web_body_timeout):
                form = await request.post()
        except ValueError:
            form = {}  # type: ignore[assignment]
        except TimeoutError:
            text = "The form took too long to come: send it again."
            return _html(message_page("Too slow", text), 408)
        value = form.get("name", "")
        name = value.strip() if isinstance(value, str) else ""
        reason = self.refusal(name)
        label = self._server_label(request)
        if reason is not None:
            return _html(name_page(label, self.limits.max_name, reason, name[:100]), 400)
        address = request.remote or ""
        if not self.chosen.may_claim(address, time.monotonic()):
            reason = (
                f"Your address has taken {self.limits.web_names_per_address} names here in the "
                "last hour: play under one of them, or try again later."
            )
            return _html(name_page(label, self.limits.max_name, reason, name), 429)
        token = secrets.token_urlsafe(32)
        self.chosen.choose(Chosen(name, token_hash(token), address))
        response = web.HTTPSeeOther("/")
        response.set_cookie(
            self.cookie, token, max_age=COOKIE_AGE, path="/", httponly=True, samesite="Strict"
        )
        return response

    async def claim_chosen(self, chosen: Chosen) -> str | None:
        """Claim the name a browser chose, as its first session opens (None: claimed; else
        why not, a line for its terminal)."""
        again = "reload the page to choose another name"
        if self.refusal(chosen.name) is not None:
            self.chosen.forget(chosen.token_hash)
            return f"tonk: {chosen.name} was taken since you chose it: {again}"
        now = time.monotonic()
        if not self.chosen.may_claim(chosen.address, now):
            self.chosen.forget(chosen.token_hash)
            return f"tonk: your address has taken as many names as it may in an hour: {again}"
        claim = st.SavedName(chosen.name, "", "", time.time(), chosen.token_hash)
        names = self.server.door_names
        try:
            await self.server.store.write([names.claim(claim)])
        except ValueError:  # another browser or key claimed it first
            self.chosen.forget(chosen.token_hash)
            return f"tonk: {chosen.name} was taken a moment ago: {again}"
        except st.StoreError as exc:
            names.unclaim(claim.name)
            log.error("web door: the name %s could not be saved: %s", chosen.name, exc)
            return "tonk: the server could not keep your name just now: try again later"
        names.saved(claim.name)
        self.chosen.forget(chosen.token_hash)
        self.chosen.claimed(chosen.address, now)
        log.info("web door: %s claimed by a browser at %s", chosen.name, chosen.address)
        return None

    async def watch_page(self, request: web.Request) -> web.Response:
        table = self._watched(request)
        if table is None:
            return _html(message_page("No such table", _no_table(request)), 404)
        return _html(
            table_page(
                f"tonk: {table.name}", f"/watch/{table.id}/ws", watch=True, corner=self.corner
            )
        )

    def _watched(self, request: web.Request) -> Any:
        text = request.match_info["table"]
        return (
            self.open_table(int(text))
            if text.isascii() and text.isdigit() and len(text) < 10
            else None
        )

    async def static(self, request: web.Request) -> web.StreamResponse:
        found = await asyncio.to_thread(static_file, request.match_info["file"])
        if found is None:
            raise web.HTTPNotFound()
        return static_response(request, found)

    # -- the sessions ---------------------------------------------------------------------------

    async def play(self, request: web.Request) -> web.StreamResponse:
        if not same_origin(request):
            log.info(
                "web door: a websocket from %s refused (Origin %r)",
                request.remote,
                request.headers.get("Origin"),
            )
            raise web.HTTPForbidden(text="tonk: this server's page only")
        claim = self.claim_of(request)
        chosen = self.chosen_by(request) if claim is None else None
        if claim is not None:
            return await self._session(request, claim.name)
        if chosen is None:
            raise web.HTTPForbidden(text="tonk: choose a name first")
        return await self._session(request, chosen.name, chosen)

    async def watch(self, request: web.Request) -> web.StreamResponse:
        if not same_origin(request):
            raise web.HTTPForbidden(text="tonk: this server's page only")
        table = self._watched(request)
        if table is None:
            raise web.HTTPNotFound(text=_no_table(request))
        return await self._watch_session(request, table.id)

    async def _watch_session(self, request: web.Request, table: int) -> web.WebSocketResponse:
        """A television page: one more page showing the table's picture (the app watching
        it, started for its first page, ended with its last)."""
        socket = web.WebSocketResponse(heartbeat=HEARTBEAT, max_msg_size=MAX_MESSAGE)
        await socket.prepare(request)
        address = request.remote or ""
        picture = self.pictures.get(table)
        if picture is not None and (picture.ended or picture.stopping or picture.gone):
            picture = None
        refusal = self._over_limits(address, True, picture is None)
        if refusal is not None:
            await socket.send_bytes(f"\r\n{refusal}\r\n".encode())
            await socket.close()
            return socket
        starting = picture is None
        if picture is None:
            size = clamp_size(request.query.get("width"), request.query.get("height"))
            link = WebLink(self, address, self._server_label(request))
            picture = WebSession(link, TV_NAME, size, table)
            self.pictures[table] = picture
            self.sessions.add(picture)
            picture.when_over = functools.partial(self._picture_over, table, picture)
        viewer = picture.attach(socket)
        if starting:
            picture.start(DoorCommand())  # that table, watched
        place = (address, True)
        self.per_address[place] = self.per_address.get(place, 0) + 1
        self.watching += 1
        log.info("web door: a television page in from %s watching table %d", address, table)
        try:
            async for message in socket:
                if message.type == WSMsgType.TEXT:
                    picture.received(message.data, viewer)
                    if viewer.closing:
                        # Closed for its flood: this loop stops reading, so that the page's
                        # sender alone closes the socket, after the goodbye, reading (and
                        # dropping) what the page still sends until it answers the close.
                        # (Closed while a read waits, the socket would be shut at once: a
                        # page still sending is reset, and loses the goodbye unread.)
                        break
                elif message.type == WSMsgType.ERROR:
                    break
        finally:
            if picture.channel is not None and viewer in picture.channel.viewers:
                picture.channel.leave(viewer)  # (the last page's leaving ends the picture)
            self.watching -= 1
            self._left(place)
            with contextlib.suppress(Exception):
                await asyncio.shield(viewer.sender)
        return socket

    def _picture_over(self, table: int, picture: WebSession) -> None:
        self.sessions.discard(picture)
        if self.pictures.get(table) is picture:
            del self.pictures[table]

    def _left(self, place: tuple[str, bool]) -> None:
        left = self.per_address.get(place, 1) - 1
        if left > 0:
            self.per_address[place] = left
        else:
            self.per_address.pop(place, None)

    async def _session(
        self, request: web.Request, name: str, chosen: Chosen | None = None
    ) -> web.WebSocketResponse:
        """A player's session for `name`; `chosen`: the name is claimed first."""
        socket = web.WebSocketResponse(heartbeat=HEARTBEAT, max_msg_size=MAX_MESSAGE)
        await socket.prepare(request)
        address = request.remote or ""
        refusal = self._over_limits(address, False)
        if refusal is None and chosen is not None:
            refusal = await self.claim_chosen(chosen)
        if refusal is not None:
            await socket.send_bytes(f"\r\n{refusal}\r\n".encode())
            await socket.close()
            return socket
        size = clamp_size(request.query.get("width"), request.query.get("height"))
        session = WebSession(WebLink(self, address, self._server_label(request)), name, size)
        session.touch = by_touch(request)
        viewer = session.attach(socket)
        self.sessions.add(session)
        place = (address, False)
        self.per_address[place] = self.per_address.get(place, 0) + 1
        log.info("web door: %s in from %s", name, address)
        try:
            session.start(DoorCommand())  # the lobby (or, watching, that table)
            async for message in socket:
                if message.type == WSMsgType.TEXT:
                    session.received(message.data)
                    if session.stopping or session.ended:
                        break  # (closed by the door: as a flooding television page above)
                elif message.type == WSMsgType.ERROR:
                    break
        finally:
            if session.stopping and session.task is not None:
                with contextlib.suppress(Exception):  # (its last line is said first)
                    await asyncio.shield(session.task)
            session.end(None, None)  # the browser is gone (or the session is over already)
            self.sessions.discard(session)
            self._left(place)
            with contextlib.suppress(Exception):
                await asyncio.shield(viewer.sender)
            if session.task is not None:
                with contextlib.suppress(Exception):
                    await asyncio.shield(session.task)
        return socket

    def _over_limits(self, address: str, watching: bool, new_picture: bool = False) -> str | None:
        """Why a session may not start (None: it may). Television pages have places of their
        own: however many watch, a player can get in; `new_picture`: the page's table is not
        shown yet, and its picture would be one more app."""
        limits = self.limits
        if watching:
            if self.watching >= limits.web_watchers:
                return "tonk: the server has as many television pages as it allows; try later"
            if self.per_address.get((address, True), 0) >= limits.web_watchers_per_address:
                return "tonk: too many television pages from your address"
            if new_picture and len(self.pictures) >= limits.web_watched_tables:
                return "tonk: the server shows as many tables on television as it allows; try later"
            return None
        if sum(1 for s in self.sessions if s.player) >= limits.web_sessions:
            return "tonk: the server has as many web sessions as it allows; try again later"
        if self.per_address.get((address, False), 0) >= limits.web_per_address:
            return "tonk: too many web sessions from your address"
        return None


def by_touch(request: web.Request) -> bool:
    """Was the websocket opened by a player's page on a touch screen (`/ws/touch`)? Its app
    says "tap" and shows buttons."""
    return request.path == "/ws/touch"


def same_origin(request: web.Request) -> bool:
    """Was this sent by this server's own page? A browser says where a websocket or a form
    comes from (`Origin`), and another site's page cannot make it say this one."""
    origin = request.headers.get("Origin")
    return origin is not None and origin == f"{request.scheme}://{request.host}"


def _html(text: str, status: int = 200) -> web.Response:
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8")


def _no_table(request: web.Request) -> str:
    text = request.match_info["table"][:20]
    return f"There is no open table {text} on this server (it may have ended)."

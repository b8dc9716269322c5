"""The start screen of `tonk-client` with no address: the practice table first (Enter takes it),
the tonk-servers found on the LAN as they come and go, the servers joined before, and a field
for an address. An App of its own, run before the table's: it ends with the choice made."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.filter import Monochrome, NoColor
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option
from tonk.shared.wire.protocol import PROTOCOL_VERSION

from .discovery import FoundServer, LanBrowser
from .recent import RecentServer, parse_address
from .terminal import AsciiOnly, NoColour
from .text.render import DOT, CardStyle, broken_at_dots

PRACTICE = "practice"
#: Seconds after which a LAN with no server found says so (a server answers within one).
QUIET_AFTER = 2.0


@dataclass(frozen=True, slots=True)
class Choice:
    """Where to play: a practice table (host None), or a server."""

    host: str | None = None
    port: int = 0
    name: str = ""  # the server's name as found on the LAN, or ""

    @property
    def practice(self) -> bool:
        return self.host is None


def server_label(server: FoundServer) -> str:
    """A found server on one line: name, address, its tables and who plays."""
    said = server.announced
    tables = f"{said.tables} table" + ("" if said.tables == 1 else "s")
    who = ", ".join(said.who) + (", ..." if said.more else "")
    playing = f": {who}" if who else (f", {said.players} playing" if said.players else "")
    other = (
        f"  (protocol {said.version}: another tonk's)"
        if said.version is not None and said.version != PROTOCOL_VERSION
        else ""
    )
    return f"{server.name}  {server.address}  {tables}{playing}{other}"


#: The keys of the start screen, said under it.
HELP = DOT.join(
    ("Enter: play the highlighted", "p: practice", "a: address", "Tab: move", "q: quit")
)


class StartApp(App[Choice]):
    """Where to play, chosen at the start."""

    TITLE = "tonk"
    ENABLE_COMMAND_PALETTE = False
    CSS = """
    Screen { align: center top; }
    #start { width: 100%; max-width: 100; height: auto; padding: 1 2; }
    #title { text-style: bold; padding-bottom: 1; }
    #choices { height: auto; max-height: 16; border: round $primary; }
    #address-label { padding-top: 1; }
    #address { width: 100%; }
    #said { color: $error; height: auto; }
    #help { color: $text-muted; padding-top: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("p", "practice", "Practice table", show=False),
        Binding("a", "address", "Type an address", show=False),
        Binding("q,escape", "quit", "Quit", show=False),
        Binding("ctrl+q", "quit", "Quit", show=False),
    ]

    def __init__(
        self,
        practice: str,
        recent: Sequence[RecentServer] = (),
        style: CardStyle | None = None,
        browser: LanBrowser | None = None,
        theme: str | None = None,
    ) -> None:
        super().__init__()
        self.practice_label = practice
        self.recent = list(recent)
        self.style = style or CardStyle()
        self.browser = browser if browser is not None else LanBrowser(self._found_changed)
        self.browser.on_change = self._found_changed
        self.looking = "looking..."  # what the LAN part says while it has nothing to list
        self.found: list[FoundServer] = []
        self._theme = theme

    def compose(self) -> ComposeResult:
        with Vertical(id="start"):
            yield Static("tonk: where to play", id="title")
            yield OptionList(*self._options(), id="choices")
            yield Static("Or a server's address (HOST[:PORT]), then Enter:", id="address-label")
            yield Input(placeholder="e.g. tonkbox, 10.0.0.5:7777", id="address")
            yield Static("", id="said")
            yield Static(HELP, id="help")

    def on_resize(self) -> None:
        """The keys' line broken between its keys, not inside one (`p:` and `practice` apart)
        where it takes two rows (upright, at 40 columns)."""
        width = min(self.size.width, 100) - 4  # (#start's width and padding)
        rows = broken_at_dots(Text(HELP), width)
        self.query_one("#help", Static).update("\n".join(row.plain for row in rows))

    async def on_mount(self) -> None:
        if self.no_color or not self.style.colour:
            self._filters = [f for f in self._filters if not isinstance(f, Monochrome | NoColor)]
            self._filters.append(NoColour())
        if self.style.ascii:
            self._filters.append(AsciiOnly())
        if self._theme:
            self.theme = self._theme
        choices = self.query_one("#choices", OptionList)
        choices.highlighted = 0
        choices.focus()
        self.run_worker(self._browse(), name="browse", exit_on_error=False)

    async def _browse(self) -> None:
        """Look for servers, once the screen is drawn: the multicast DNS package is imported
        in a thread (a few tenths of a second), so Enter takes the practice table meanwhile."""
        await asyncio.to_thread(importlib.import_module, "zeroconf.asyncio")
        try:
            await self.browser.start()
        except OSError as exc:
            self.looking = f"cannot look for servers: {exc}"
            self._found_changed()
            return
        self.set_timer(QUIET_AFTER, self._found_changed)  # ("none found yet", if so)

    async def on_unmount(self) -> None:
        await self.browser.close()

    def _options(self) -> list[Option]:
        options = [Option(self.practice_label, id=PRACTICE)]
        options.append(Option("On the network:", disabled=True))
        if self.found:
            options += [
                Option("  " + server_label(s), id=f"found:{n}") for n, s in enumerate(self.found)
            ]
        else:
            options.append(Option(f"  {self.looking}", disabled=True))
        if self.recent:
            options.append(Option("Joined before:", disabled=True))
            options += [
                Option("  " + (f"{r.name}  {r.address}" if r.name else r.address), id=f"recent:{n}")
                for n, r in enumerate(self.recent)
            ]
        return options

    def _found_changed(self) -> None:
        self.found = self.browser.sorted()
        if not self.found and self.looking == "looking...":
            self.looking = "none found yet (still looking)"
        try:
            choices = self.query_one("#choices", OptionList)
        except NoMatches:  # (not composed yet, or gone)
            return
        highlighted = choices.highlighted_option
        was = highlighted.id if highlighted is not None else None
        choices.clear_options()
        choices.add_options(self._options())
        ids = [choices.get_option_at_index(i).id for i in range(choices.option_count)]
        choices.highlighted = ids.index(was) if was in ids else 0

    @on(OptionList.OptionSelected, "#choices")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        chosen = event.option.id or ""
        kind, _, number = chosen.partition(":")
        if kind == PRACTICE:
            self.exit(Choice())
        elif kind == "found":
            server = self.found[int(number)]
            self.exit(Choice(server.host, server.port, server.name))
        elif kind == "recent":
            entry = self.recent[int(number)]
            self._go(entry.address, entry.name)

    @on(Input.Submitted, "#address")
    def _typed(self, event: Input.Submitted) -> None:
        self._go(event.value)

    def _go(self, address: str, name: str = "") -> None:
        try:
            host, port = parse_address(address)
        except ValueError as exc:
            self.query_one("#said", Static).update(f"Not an address: {exc}")
            return
        self.exit(Choice(host, port, name))

    def action_practice(self) -> None:
        self.exit(Choice())

    def action_address(self) -> None:
        self.query_one("#address", Input).focus()

    async def action_quit(self) -> None:
        self.exit(None)

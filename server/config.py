"""What `tonk-server` can be told: the server's options (`ServerConfig`) and what one client
may ask of it (`Limits`, PROTOCOL.md "Limits")."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from tonk.shared.game.rematch import REMATCH_WAIT
from tonk.shared.game.rules import PRESETS, HouseRules
from tonk.shared.wire import protocol as p

from .store.paths import default_db_path

#: The listening socket's queue is never shorter than this (asyncio's default is 100)...
MIN_BACKLOG = 128
#: ...nor longer than listen() takes (the system caps it further: net.core.somaxconn).
MAX_BACKLOG = 65535


def listen_backlog(max_connections: int) -> int:
    """How many connections the kernel may hold, handshake done, for the server to accept:
    as many as may be connected, so that a crowd arriving at once while the server is busy
    is let in whole instead of dropped (and left to the clients' retries, or reset)."""
    return max(MIN_BACKLOG, min(max_connections, MAX_BACKLOG))


@dataclass(frozen=True, slots=True)
class Limits:
    """What one client may ask of the server (PROTOCOL.md, "Limits")."""

    max_frame: int = p.MAX_CLIENT_FRAME  # bytes a client frame may hold
    max_connections: int = 5000  # connections in all
    max_per_address: int = 64  # connections from one IP address
    max_tables: int = 1000  # open (waiting or playing) tables
    max_tables_per_address: int = 32  # open tables created from one IP address
    messages_per_second: float = 20.0  # sustained rate per connection
    burst: float = 40.0  # messages a connection may send at once
    pages_per_second: float = 2.0  # `tables` pages sent to one connection, sustained
    page_burst: float = 20.0  # `tables` pages sent to one connection at once
    max_name: int = 24  # characters in a player's name
    max_table_name: int = 32  # characters in a table's name
    max_chat: int = 200  # characters in a chat line
    queue: int = 512  # frames waiting to go to one connection before it is dropped
    queue_bytes: int = 2 * 1024 * 1024  # bytes one connection has not taken yet, the same
    unread_timeout: float = 10.0  # seconds a connection may take none of what it is sent
    handshake_timeout: float = 10.0  # seconds to send hello
    heartbeat: float = 15.0  # seconds of silence before the server pings
    idle_timeout: float = 45.0  # seconds of silence before the server hangs up
    # The SSH door (tonk-server --ssh-port):
    ssh_sessions: int = 50  # logged-in SSH connections in all, one table session (a process) each
    ssh_per_address: int = 8  # logged-in SSH connections from one IP address
    ssh_unauthenticated: int = 16  # SSH connections not logged in yet, in all
    ssh_auth_timeout: float = 15.0  # seconds from connecting to being let in
    ssh_auth_attempts: int = 6  # keys refused on one SSH connection before it is closed
    ssh_login_timeout: float = 30.0  # seconds from being let in to asking for a session (ssh -N)
    ssh_idle_timeout: float = 1800.0  # seconds without a key pressed before a session ends
    ssh_names_per_key: int = 3  # names one SSH key may claim
    # What a door session (SSH or web) may send its table app: bytes a second, sustained, and
    # at once (a paste); past them, the session is closed with a line saying why.
    door_input_rate: float = 2048.0
    door_input_burst: float = 8192.0
    door_starting: int = 2  # door sessions' apps starting at once (the others wait their turn)
    # The web door (tonk-server --web-port):
    web_sessions: int = 50  # browser sessions playing, in all (not the television pages)
    web_per_address: int = 8  # browser sessions playing from one IP address
    web_names_per_address: int = 5  # names the browsers of one IP address claim in an hour
    web_watchers: int = 64  # television pages in all (a share of their table's picture)
    web_watchers_per_address: int = 2  # television pages from one IP address
    web_watched_tables: int = 8  # tables shown on television pages at once (an app each)
    web_idle_timeout: float = 1800.0  # seconds without a key or a tap before a session ends
    web_connections: int = 256  # HTTP connections in all (a page's websocket is one)
    web_connections_per_address: int = 32  # HTTP connections from one IP address
    web_request_timeout: float = 10.0  # seconds to send a request's head (idle: closed)
    web_body_timeout: float = 10.0  # seconds to send the name form's body

    def to_wire(self, grace: float, idle_turn: float) -> dict[str, int | float]:
        """The `limits` of `welcome`."""
        return {
            "max_frame": self.max_frame,
            "max_server_frame": p.MAX_SERVER_FRAME,
            "max_name": self.max_name,
            "max_chat": self.max_chat,
            "max_table_name": self.max_table_name,
            "messages_per_second": self.messages_per_second,
            "burst": self.burst,
            "pages_per_second": self.pages_per_second,
            "page_burst": self.page_burst,
            "heartbeat": self.heartbeat,
            "idle_timeout": self.idle_timeout,
            "grace": grace,
            "idle_turn": idle_turn,
        }

    def with_option(self, text: str) -> Limits:
        """This with one `NAME=VALUE` changed (the `--limit` option)."""
        name, sep, value = text.partition("=")
        kinds = {f.name: f.type for f in fields(self)}
        if not sep or name not in kinds:
            raise ValueError(f"--limit takes NAME=VALUE; the names are {', '.join(kinds)}")
        try:
            number: Any = int(value) if kinds[name] == "int" else float(value)
        except ValueError:
            raise ValueError(f"--limit {name} takes a number, not {value!r}") from None
        if number <= 0:
            raise ValueError(f"--limit {name} must be above 0")
        return replace(self, **{name: number})


@dataclass(slots=True)
class ServerConfig:
    """Everything `tonk-server` can be told. Defaults are a LAN server's."""

    host: str = "0.0.0.0"
    port: int = p.DEFAULT_PORT  # 0: where this database's server listened last, or any free port
    db_path: Path = field(default_factory=default_db_path)
    default_rules: HouseRules = PRESETS["classic"]
    dev: bool = False  # allow fixed seeds and deck orders (never on a real server)
    limits: Limits = field(default_factory=Limits)
    grace: float = 120.0  # seconds a disconnected player keeps their seat before autoplay
    # Seconds a turn may be left untouched at a table without a turn timer before its player
    # is marked away and played for, as when a turn timer runs out; 0: never. A table's own
    # turn timer is never shortened nor lengthened by it.
    idle_turn: float = 300.0
    bot_pause: float = 0.8  # default seconds a bot thinks before each action
    next_hand_delay: float = 3.0  # seconds between a hand's end and the next deal
    # Seconds, from a hand's end (or the session's start), the next deal waits at most for
    # the values of the players here (PROTOCOL.md, "A deal anyone can check"): alongside
    # next_hand_delay, not after it; the deal goes as soon as every player here gave one.
    deal_wait: float = 1.5
    autoplay_strategy: str = "easy"  # the bot that plays for an absent player
    ledger_hands: int = p.LEDGER_HANDS  # each table's newest settled hands kept in memory
    lobby_interval: float = 0.25  # seconds between two `lobby` messages to a connection
    # Seconds a session in play goes on with none of its players connected (everybody left
    # or lost the link) before it ends; no hand is dealt meanwhile.
    abandoned_after: float = 600.0
    # Meanwhile a spectator keeps the session playing, for them, at a watching pace: no move or
    # deal sooner than this many seconds after the last (however quick the table's bots are).
    watched_pace: float = 1.0
    # Seconds a rematch offer waits for the answers of a finished session's players.
    rematch_wait: float = REMATCH_WAIT
    # The coach's questions worked on at once, each in a process of its own (more are
    # refused until one is answered); 0 turns the coach off.
    coach: int = 1
    # The coach in a thread instead (the embedded server: the program it runs in, a terminal
    # app, may hold streams a new process cannot be handed; a practice table has one player).
    coach_in_thread: bool = False

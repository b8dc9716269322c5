"""`tonk-server`: parse the command line, run the server until SIGINT, SIGTERM or SIGHUP."""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import resource
import shlex
import signal
import socket
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tonk.shared.game.rematch import REMATCH_WAIT
from tonk.shared.game.rules import OPTIONS, PRESETS, HouseRules, RulesError, parse_options
from tonk.shared.wire.protocol import DEFAULT_PORT

from ..app import Limits, ServerConfig, TonkServer
from ..store import ports, standings
from ..store.paths import default_db_path
from ..store.store import DatabaseRefused
from . import audit, invite, names
from .helptext import HelpFormatter, add_db_option
from .reach import start_lines

if TYPE_CHECKING:  # (imported where a door is asked for: a server without one starts sooner)
    from ..announce import Announcer
    from ..doors.door import DoorConfig, SSHDoor
    from ..doors.door_template import SessionTemplate
    from ..doors.web_door import WebConfig, WebDoor

log = logging.getLogger("tonk.server")

#: The levels of --log-level.
LOG_LEVELS = ("debug", "info", "warning", "error")

#: The commands of tonk-server, each with its --help (the first word after tonk-server).
COMMANDS_HELP = """commands (each has --help; each reads the database, safe while a server runs):
  invite              what to tell the friends: addresses, the SSH door's
                      fingerprint, the ssh and tonk-client commands, the
                      web door's page
  ledger [TABLE ...]  every table's balances
  audit [TABLE ...]   check every ledger against its hands
  replay TABLE HAND   play one hand again, every card shown (TABLE: id or name)
  standings           the standings across nights: tonight, the week, the month,
                      all time (--period)
  names               the names claimed at the SSH door and the web door
  names release NAME  free a claimed name"""


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="tonk-server",
        usage="%(prog)s [OPTION ...]\n       %(prog)s COMMAND [ARGUMENT ...] (see commands)",
        description="Host Tonk tables on the LAN for tonk-client players (and, with "
        "--ssh-port, for guests with only ssh; with --web-port, for friends with only a "
        "browser).\n\n" + COMMANDS_HELP,
        formatter_class=HelpFormatter,
    )
    parser.add_argument(
        "--host",
        default="0.0.0.0",
        metavar="HOST",
        help="address to listen on (default 0.0.0.0: all of this machine's)",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        metavar="PORT",
        help=f"TCP port (default {DEFAULT_PORT}); 0: the port this --db was served on last, "
        "or a free one the first time",
    )
    add_db_option(parser)
    parser.add_argument(
        "--rules",
        default="classic",
        metavar="PRESET|FILE",
        help=f"default rules for new tables: a preset ({', '.join(PRESETS)}) or a TOML file "
        "(default classic)",
    )
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="change one house-rule option of --rules (repeatable), e.g. --option hit_lock=1; "
        f"the options: {', '.join(OPTIONS)} (RULES.md says what each takes)",
    )
    parser.add_argument(
        "--dev",
        action="store_true",
        help="allow tables with a fixed shuffle seed or deck order (tests and teaching only)",
    )
    parser.add_argument(
        "--log-level",
        default="info",
        choices=LOG_LEVELS,
        metavar="LEVEL",
        help=f"what the server logs on its standard error: {', '.join(LOG_LEVELS)} "
        "(default info: each connection, table and hand; warning: only what went wrong)",
    )
    parser.add_argument(
        "--grace",
        type=float,
        default=120.0,
        metavar="S",
        help="seconds a disconnected player's seat waits before it is played for them "
        "(default 120)",
    )
    parser.add_argument(
        "--bot-pause",
        type=float,
        default=0.8,
        metavar="S",
        help="seconds a bot thinks before each action (default 0.8)",
    )
    parser.add_argument(
        "--next-hand-delay",
        type=float,
        default=3.0,
        metavar="S",
        help="seconds between a hand's end and the next deal (default 3)",
    )
    parser.add_argument(
        "--deal-wait",
        type=float,
        default=1.5,
        metavar="S",
        help="seconds, from a hand's end, the next deal waits at most for the values of the "
        "players here, each deal drawn from them and the server's secret so that every player "
        "can check it; it runs alongside --next-hand-delay, and ends once all are in "
        "(default 1.5)",
    )
    parser.add_argument(
        "--coach",
        type=int,
        default=1,
        metavar="N",
        help="questions to the coach (the expert's view of a player's decision) worked on at "
        "once, each in a process of its own; more are refused until one is answered (0: no "
        "coach; default 1)",
    )
    door = parser.add_argument_group("the SSH door (ssh -t -p PORT NAME@HOST opens the table)")
    door.add_argument(
        "--ssh-port",
        type=int,
        default=None,
        metavar="PORT",
        help="open the SSH door on this port (off when not given); 0: the port this --db's "
        "door listened on last, or a free one the first time",
    )
    door.add_argument(
        "--ssh-host-key",
        type=Path,
        default=None,
        metavar="PATH",
        help="the door's host key (default: an ed25519 key made on first start beside the "
        "database)",
    )
    door.add_argument(
        "--ssh-authorized-keys",
        type=Path,
        default=None,
        metavar="PATH",
        help="admit only the public keys in this file (OpenSSH's authorized_keys format; "
        "read again when it changes)",
    )
    web = parser.add_argument_group(
        "the web door (a browser opens http://HOST:PORT/ for the table)"
    )
    web.add_argument(
        "--web-port",
        type=int,
        default=None,
        metavar="PORT",
        help="open the web door on this port (0: the port this --db's web door had last, or a "
        "free one the first time; off when not given)",
    )
    web.add_argument(
        "--web-name",
        action="append",
        default=[],
        metavar="NAME",
        help="a name the page is reached by, besides this machine's names and addresses "
        "(another is refused: a site's name pointed at this box); may be given more than once",
    )
    lan = parser.add_argument_group("the LAN (tonk-client lists the servers it finds there)")
    lan.add_argument(
        "--name",
        default=None,
        metavar="NAME",
        help="the server's name as tonk-client lists it (default: this machine's host name)",
    )
    lan.add_argument(
        "--no-announce",
        dest="announce",
        action="store_false",
        help="do not announce the server on the LAN (multicast DNS, _tonk._tcp): friends must "
        "be told its address",
    )
    parser.add_argument(
        "--lobby-interval",
        type=float,
        default=0.25,
        metavar="S",
        help="seconds between two messages of the lobby's changes to a connection (default 0.25)",
    )
    parser.add_argument(
        "--abandoned-after",
        type=float,
        default=600.0,
        metavar="S",
        help="seconds a session goes on with none of its players connected before it ends "
        "(no hand is dealt meanwhile, unless someone watches: see --watched-pace; default 600)",
    )
    parser.add_argument(
        "--watched-pace",
        type=float,
        default=1.0,
        metavar="S",
        help="while none of a session's players is connected, it plays on only for spectators, "
        "no move or deal sooner than S seconds after the last (default 1)",
    )
    parser.add_argument(
        "--rematch-wait",
        type=float,
        default=REMATCH_WAIT,
        metavar="S",
        help="seconds the offer of a rematch waits for the players' answers once a session is "
        f"over (default {REMATCH_WAIT:g})",
    )
    parser.add_argument(
        "--limit",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="change a limit (repeatable), e.g. --limit max_per_address=200 (docs/hosting.md's "
        "table of limits lists them all, with their defaults)",
    )
    return parser.parse_args(argv)


def build_config(args: argparse.Namespace) -> ServerConfig:
    """The server's config from parsed arguments; raises ValueError with a readable reason."""
    try:
        rules = HouseRules.load(args.rules)
    except RulesError as exc:
        raise ValueError(f"--rules: {exc}") from None
    try:
        for text in args.option:
            rules = rules.with_options(parse_options(text))
    except RulesError as exc:
        raise ValueError(f"--option: {exc}") from None
    if not args.lobby_interval > 0:
        raise ValueError("--lobby-interval must be above 0")
    if not args.abandoned_after > 0:
        raise ValueError(
            f"--abandoned-after takes a number of seconds above 0, not {args.abandoned_after}"
        )
    if not args.coach >= 0:
        raise ValueError(f"--coach takes a number of questions, 0 or more, not {args.coach}")
    if not args.watched_pace >= 0:
        raise ValueError(f"--watched-pace takes a number of seconds, not {args.watched_pace}")
    if not args.rematch_wait > 0:
        raise ValueError(
            f"--rematch-wait takes a number of seconds above 0, not {args.rematch_wait}"
        )
    limits = Limits()
    for text in args.limit:
        limits = limits.with_option(text)
    return ServerConfig(
        host=args.host,
        port=args.port,
        db_path=args.db if args.db is not None else default_db_path(),
        default_rules=rules,
        dev=args.dev,
        limits=limits,
        grace=args.grace,
        bot_pause=args.bot_pause,
        next_hand_delay=args.next_hand_delay,
        deal_wait=args.deal_wait,
        lobby_interval=args.lobby_interval,
        abandoned_after=args.abandoned_after,
        watched_pace=args.watched_pace,
        rematch_wait=args.rematch_wait,
        coach=args.coach,
    )


def raise_open_file_limit(config: ServerConfig) -> int:
    """Every connection is an open file: raise this process's soft limit (up to the hard
    limit) so that `max_connections` can be reached. Returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = config.limits.max_connections + 256  # the database, the listener, logs, ...
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < wanted:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass
    return soft


#: The collector's thresholds for tonk-server (CPython's default is 700, 10, 10).
GC_THRESHOLDS = (20_000, 5, 10)


def tune_garbage_collector() -> None:
    """A busy server holds hundreds of thousands of long-lived objects (each connection's
    streams and tasks, each table's hand): a full collection of them stops every table for
    hundreds of milliseconds, and with CPython's default thresholds one came every few seconds
    under load. Most of the server's garbage is short-lived and freed by reference counting;
    collecting the young generation less often lets it die young instead of being promoted,
    so full collections become rare.

    The objects of the start-up (modules, classes, functions: tens of thousands) are then
    frozen (`gc.freeze`), so that no collection goes through them again: without it, a full
    collection (about 200 ms at 1,000 tables) came about 11 s after the start in every paced
    and lobby benchmark run (BENCHMARKS.md, "Before and after the restructuring")."""
    gc.set_threshold(*GC_THRESHOLDS)
    gc.freeze()


async def open_door(door: SSHDoor | WebDoor, option: str, host: str, port: int) -> None:
    """Start a door; a port it cannot listen on is a ValueError that says so."""
    try:
        await door.start()
    except OSError as exc:
        reason = os.strerror(exc.errno).lower() if exc.errno else str(exc)
        raise ValueError(f"{option} {port}: cannot listen on {host}:{port}: {reason}") from None


async def run(
    config: ServerConfig,
    door_config: DoorConfig | None = None,
    web_config: WebConfig | None = None,
    lan_config: LanConfig | None = None,
) -> None:
    if door_config or web_config:
        from ..doors.door_template import SessionTemplate
    tune_garbage_collector()
    # The doors' sessions are forked from one template, started first: before the server has
    # a thread (it is a fresh interpreter, so none would be in it anyway).
    template = SessionTemplate() if door_config or web_config else None
    if template is not None:
        await template.start()
    try:
        await serve(config, door_config, web_config, template, lan_config)
    finally:
        if template is not None:
            await template.close()


@dataclass(frozen=True, slots=True)
class LanConfig:
    """How the server is announced on the LAN (--name, --no-announce)."""

    name: str = ""  # "" : this machine's host name
    announce: bool = True


async def announce(
    server: TonkServer, lan: LanConfig, ssh_port: int | None, web_port: int | None
) -> Announcer | None:
    """The server announced on the LAN, on the addresses it listens on; None (said in the
    log) where it is not: --no-announce, loopback only, no LAN address, no multicast."""
    from ..announce import Announcer, announced_addresses, is_loopback

    host = server.config.host
    if not lan.announce:
        log.info("not announced on the LAN (--no-announce)")
        return None
    if is_loopback(host):
        log.warning("not announced on the LAN: the server listens on loopback (%s) only", host)
        return None
    addresses = announced_addresses(host)
    if not addresses:
        log.warning("not announced on the LAN: no LAN address for %s", host)
        return None
    announcer = Announcer(
        server, lan.name or socket.gethostname(), addresses, ssh_port=ssh_port, web_port=web_port
    )
    try:
        await announcer.start()
    except Exception as exc:  # (no multicast here, an interface gone: the tables go on)
        log.warning("not announced on the LAN: %s", exc)
        return None
    return announcer


async def serve(
    config: ServerConfig,
    door_config: DoorConfig | None,
    web_config: WebConfig | None,
    template: SessionTemplate | None,
    lan_config: LanConfig | None = None,
) -> None:
    lan_config = lan_config or LanConfig()
    # The signals are taken from the start: one that comes while the server is still opening
    # its doors stops it as soon as they are open (not the default, which kills it unsaid).
    # SIGHUP too: the terminal it ran in has gone (an SSH session that dropped). Every client
    # is told goodbye as on SIGTERM, instead of the connections just breaking.
    loop = asyncio.get_running_loop()
    asked_to_stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, asked_to_stop.set)
    server = TonkServer(config)
    await server.start()
    print(f"tonk-server listening on {config.host}:{server.port}", flush=True)
    door: SSHDoor | None = None
    if door_config is not None:
        from ..doors.door import SSHDoor

        try:
            door = SSHDoor(server, door_config, template=template)
            await open_door(door, "--ssh-port", door_config.host, door_config.port)
        except BaseException:
            await server.close()
            raise
        print(
            f"tonk-server ssh on {door_config.host}:{door.port} (host key {door.fingerprint})",
            flush=True,
        )
    web: WebDoor | None = None
    if web_config is not None:
        from ..doors.web_door import WebDoor

        try:
            web = WebDoor(server, web_config, template)
            await open_door(web, "--web-port", web_config.host, web_config.port)
        except BaseException:
            if door is not None:
                await door.close()
            await server.close()
            raise
        print(f"tonk-server web on {web_config.host}:{web.port}", flush=True)
    # (For tonk-server invite: whether to tell the door's commands.)
    await ports.keep(
        server.store,
        {
            ports.SSH_DOOR: ports.ON if door is not None else ports.OFF,
            ports.WEB_DOOR: ports.ON if web is not None else ports.OFF,
        },
    )
    db = "" if config.db_path == default_db_path() else f" --db {shlex.quote(str(config.db_path))}"
    print(f"tonk-server invite{db} prints what to tell the friends", flush=True)
    for line in start_lines(config.host, server.port, web.port if web is not None else None):
        print(line, flush=True)
    announcer = await announce(
        server, lan_config, door.port if door is not None else None, web.port if web else None
    )

    async def stop_when_asked() -> None:
        await asked_to_stop.wait()
        if announcer is not None:
            await announcer.close()  # (its goodbye first: the clients drop the server at once)
        if web is not None:
            await web.close()
        if door is not None:
            await door.close()
        await server.close()

    stopping = asyncio.create_task(stop_when_asked(), name="stop-on-signal")
    try:
        await server.serve_forever()
    finally:
        if asked_to_stop.is_set():
            await stopping  # (its last step closed the server: it is all but done)
        else:
            stopping.cancel()
            if announcer is not None:
                await announcer.close()


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0] in audit.COMMANDS:
        return audit.main(argv)
    if argv and argv[0] == names.COMMAND:
        return names.main(argv)
    if argv and argv[0] == invite.COMMAND:
        return invite.main(argv)
    if argv and argv[0] == standings.COMMAND:
        return standings.main(argv)
    args = parse_args(argv)
    try:
        config = build_config(args)
    except ValueError as exc:
        print(f"tonk-server: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=getattr(logging, args.log_level.upper()),
        format="%(asctime)s %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    if args.log_level != "debug":  # asyncssh says a few lines per connection at info
        logging.getLogger("asyncssh").setLevel(logging.WARNING)
    files = raise_open_file_limit(config)
    if files < config.limits.max_connections + 16:
        logging.getLogger("tonk.server").warning(
            "only %d open files are allowed: fewer connections than max_connections (%d) "
            "can be served",
            files,
            config.limits.max_connections,
        )
    if config.dev:
        logging.getLogger("tonk.server").warning(
            "--dev: tables may use fixed seeds and deck orders; do not play for stakes"
        )
    door_config = None
    if args.ssh_port is not None:
        if not 0 <= args.ssh_port <= 65535:
            print("tonk-server: --ssh-port takes 0 to 65535", file=sys.stderr)
            return 2
        from ..doors.door import DoorConfig

        door_config = DoorConfig(
            host=config.host,
            port=args.ssh_port,
            host_key=args.ssh_host_key,
            authorized_keys=args.ssh_authorized_keys,
        )
    web_config = None
    if args.web_port is not None:
        if not 0 <= args.web_port <= 65535:
            print("tonk-server: --web-port takes 0 to 65535", file=sys.stderr)
            return 2
        from ..doors.web_door import WebConfig

        web_config = WebConfig(host=config.host, port=args.web_port, names=tuple(args.web_name))
    try:
        lan_config = LanConfig(name=(args.name or "").strip(), announce=args.announce)
        asyncio.run(run(config, door_config, web_config, lan_config))
    except (ValueError, DatabaseRefused) as exc:  # the door's keys or port; a database in use
        print(f"tonk-server: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"tonk-server: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`tonk-client [HOST:PORT [--table NAME]] [--name NAME] [--ascii] [--four-colour] [--theme T]
[--practice] [--bots N | --bots BOT,BOT,...] [--rules PRESET] [--hands N]`, `tonk-client --lan`:
join a server; with no address, choose on the start screen between a practice table against
bots (Enter), the servers found on the LAN and those joined before; --lan lists the servers
found and exits."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import signal
import sys
from collections.abc import Sequence

from tonk.shared.bots.bots import BOT_STRATEGIES
from tonk.shared.game.rules import PRESETS
from tonk.shared.wire.protocol import DEFAULT_PORT

from .app import ClientConfig, TonkApp
from .recent import parse_address
from .text.render import CardStyle


def parse_bots(text: str) -> tuple[int, tuple[str, ...]]:
    """`--bots`: a number of bots (each `easy`), or each bot's strategy, comma-separated.
    Returns (how many, the strategies named: none for a number); raises ValueError."""
    text = text.strip()
    if text.isdigit():
        count = int(text)
        strategies: tuple[str, ...] = ()
    else:
        strategies = tuple(name.strip() for name in text.split(","))
        for name in strategies:
            if name not in BOT_STRATEGIES:
                raise ValueError(
                    f"--bots: no bot {name!r}; give a number or bots from "
                    f"{', '.join(BOT_STRATEGIES)}, comma-separated"
                )
        count = len(strategies)
    if not 1 <= count <= 4:
        raise ValueError("--bots takes 1 to 4 bots")
    return count, strategies


#: Bots at a practice table when --bots is not given.
PRACTICE_BOTS = 2
#: Seconds `--lan` looks for servers.
LAN_WAIT = 3.0
#: The options that ask for a practice table, each with its default.
PRACTICE_OPTIONS = ("practice", "bots", "bot_pause", "hands", "seed", "deck", "dealer")


def login_name() -> str:
    try:
        name = getpass.getuser()
    except Exception:  # no login name in this environment (a container, say)
        name = ""
    return name or "player"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tonk-client",
        description=(
            "Play Tonk at a terminal. With HOST[:PORT], join that tonk-server; with no "
            "address, choose on the start screen: a practice table against bots on this "
            "machine (Enter), a tonk-server found on the LAN, or one joined before."
        ),
    )
    parser.add_argument(
        "address",
        nargs="?",
        metavar="HOST[:PORT]",
        help=f"the server to join (port {DEFAULT_PORT} when left out)",
    )
    parser.add_argument("--name", help="your name at the table (default: your login name)")
    parser.add_argument(
        "--table",
        metavar="NAME",
        help="go straight to the server's table of this name (any case): your seat there, a "
        "free seat, or watching when it is full; quote a name with spaces",
    )
    parser.add_argument(
        "--ascii", action="store_true", help="cards as 10S QH AC, no suit symbols or box lines"
    )
    parser.add_argument(
        "--four-colour",
        "--four-color",
        dest="four_colour",
        action="store_true",
        help="each suit in its own colour (NO_COLOR turns colour off)",
    )
    parser.add_argument("--theme", help="a Textual theme, e.g. textual-dark, nord, gruvbox")
    parser.add_argument(
        "--no-confirm-drop",
        dest="confirm_drop",
        action="store_false",
        help="drop at once on k, without asking first (the question's a key does the same)",
    )
    parser.add_argument(
        "--no-bell",
        dest="bell",
        action="store_false",
        help="never ring the terminal bell (it rings once when your turn has waited a while)",
    )
    lan = parser.add_argument_group("the LAN (no address)")
    lan.add_argument(
        "--lan",
        action="store_true",
        help="list the tonk-servers found on the LAN, one a line (name, address, tables, "
        "players, their names; tab-separated), and exit",
    )
    lan.add_argument(
        "--lan-wait",
        type=float,
        default=LAN_WAIT,
        metavar="S",
        help=f"seconds --lan looks for servers (default {LAN_WAIT:g})",
    )
    practice = parser.add_argument_group(
        "practice table (no address: any of these goes straight to it, without the start screen)"
    )
    practice.add_argument(
        "--practice",
        action="store_true",
        help="the practice table at once (with no option of this group, tonk-client with no "
        "address opens the start screen, the practice table highlighted)",
    )
    practice.add_argument(
        "--bots",
        default=None,
        metavar="N|BOT,...",
        help=f"bots at the table: how many (1 to 4, each easy), or each bot's strategy in "
        f"seat order ({', '.join(BOT_STRATEGIES)}; e.g. expert,sharp) (default 2)",
    )
    practice.add_argument(
        "--rules",
        default="classic",
        choices=list(PRESETS),
        metavar="PRESET",
        help=f"the rules preset: {', '.join(PRESETS)} (default classic)",
    )
    practice.add_argument(
        "--bot-pause", type=float, metavar="S", help="seconds a bot thinks before each move"
    )
    practice.add_argument(
        "--hands",
        type=int,
        metavar="N",
        help="a session of N hands, with its final standings and a rematch at the end "
        "(default: hands until you leave)",
    )
    practice.add_argument("--seed", type=int, help=argparse.SUPPRESS)
    practice.add_argument("--deck", help=argparse.SUPPRESS)
    practice.add_argument("--dealer", type=int, help=argparse.SUPPRESS)
    return parser


def config_from_args(args: argparse.Namespace, environ: dict[str, str]) -> ClientConfig:
    """The App's configuration; raises ValueError with a reason for a bad combination."""
    name = (args.name or login_name()).strip()
    style = CardStyle(
        ascii=args.ascii, four_colour=args.four_colour, colour="NO_COLOR" not in environ
    )
    config = ClientConfig(
        name=name,
        name_given=bool(args.name),
        style=style,
        theme=args.theme,
        confirm_drop=args.confirm_drop,
        bell=args.bell,
    )
    if args.address:
        if args.practice:
            raise ValueError("--practice plays on this machine: give no address with it")
        config.host, config.port = parse_address(args.address)
        if args.table is not None:
            if not args.table.strip():
                raise ValueError("--table takes a table's name")
            config.join = args.table.strip()
        return config
    if args.table is not None:
        raise ValueError("--table NAME joins a table on a server: give its HOST[:PORT] too")
    count, strategies = parse_bots(args.bots or str(PRACTICE_BOTS))
    max_players = PRESETS[args.rules].players
    if count + 1 > max_players:
        raise ValueError(
            f"the {args.rules} rules seat at most {max_players} players: "
            f"--bots {max_players - 1} at most"
        )
    config.bots = count
    config.bot_strategies = strategies
    config.rules = args.rules
    config.bot_pause = args.bot_pause
    if args.hands is not None and not 1 <= args.hands <= 100_000:
        raise ValueError("--hands takes 1 to 100000 hands")
    config.hands = args.hands
    config.seed, config.deck, config.dealer = args.seed, args.deck, args.dealer
    return config


def wants_start_screen(args: argparse.Namespace) -> bool:
    """No address and nothing that asks for the practice table (nor --rules other than the
    default): the start screen."""
    if args.address or args.rules != "classic":
        return False
    return not any(getattr(args, option) not in (None, False) for option in PRACTICE_OPTIONS)


def list_lan(wait: float) -> int:
    """`--lan`: the servers found in `wait` seconds, one a line; 1 (said) when none."""
    from .discovery import find_servers

    try:
        found = asyncio.run(find_servers(wait))
    except OSError as exc:
        print(f"tonk-client: cannot look for servers on the LAN: {exc}", file=sys.stderr)
        return 1
    for server in found:
        print(server.line())
    if not found:
        print(f"tonk-client: no tonk-server found on the LAN in {wait:g} s", file=sys.stderr)
        return 1
    return 0


def choose(config: ClientConfig) -> bool:
    """The start screen: `config` is set to the choice made; False when the player quit."""
    from .recent import read_recent
    from .start import StartApp

    bots = f"{config.bots} bot" + ("" if config.bots == 1 else "s")
    start = StartApp(
        f"Practice table against {bots}, on this machine",
        read_recent(config.state_dir),
        style=config.style,
        theme=config.theme,
    )
    choice = start.run()
    if choice is None:
        return False
    if not choice.practice:
        config.host, config.port, config.server_name = choice.host, choice.port, choice.name
    return True


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.lan:
        if args.address:
            parser.error("--lan lists the servers on the LAN: give no address with it")
        return list_lan(args.lan_wait)
    try:
        config = config_from_args(args, dict(os.environ))
    except ValueError as exc:
        parser.error(str(exc))
    themes = TonkApp(config).available_themes
    if args.theme and args.theme not in themes:
        parser.error(f"no theme {args.theme!r}; the themes are {', '.join(sorted(themes))}")
    if wants_start_screen(args) and not choose(config):
        return 0
    app = TonkApp(config)

    # A closed terminal (SIGHUP), or a polite kill (SIGTERM: `kill`, `timeout`, a script
    # ending its client), ends the client as q does, its practice table's files removed and
    # the terminal given back, rather than killing it with them left behind. A second such
    # signal ends the process outright, should the app be stuck.
    def end(signum: int, _frame: object) -> None:
        signal.signal(signum, signal.SIG_DFL)
        app.hang_up()

    for signum in (signal.SIGHUP, signal.SIGTERM):
        signal.signal(signum, end)
    app.run()
    if app.failure:
        print(app.failure, file=sys.stderr)
    return app.return_code or 0


if __name__ == "__main__":
    sys.exit(main())

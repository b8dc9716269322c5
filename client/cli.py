"""`tonk-client [HOST:PORT [--table NAME]] [--name NAME] [--ascii] [--four-colour] [--theme T]
[--bots N | --bots BOT,BOT,...] [--rules PRESET] [--hands N]`: join a server, or with no
address play a practice table against bots."""

from __future__ import annotations

import argparse
import getpass
import os
import sys
from collections.abc import Sequence

from tonk.shared.bots.bots import BOT_STRATEGIES
from tonk.shared.game.rules import PRESETS
from tonk.shared.wire.protocol import DEFAULT_PORT

from .app import ClientConfig, TonkApp
from .text.render import CardStyle


def parse_address(text: str) -> tuple[str, int]:
    """`host:port`, `host` (DEFAULT_PORT), `[::1]:port`; raises ValueError with a reason."""
    text = text.strip()
    if not text:
        raise ValueError("an empty address")
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port_text = rest.removeprefix(":")
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
    else:
        host, port_text = text, ""
    if not host:
        raise ValueError(f"no host in {text!r}")
    if not port_text:
        return host, DEFAULT_PORT
    if not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise ValueError(f"{port_text!r} is not a port number (1-65535)")
    return host, int(port_text)


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
            "address, play a practice table against bots on this machine."
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
    practice = parser.add_argument_group("practice table (no address)")
    practice.add_argument(
        "--bots",
        default="2",
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
        config.host, config.port = parse_address(args.address)
        if args.table is not None:
            if not args.table.strip():
                raise ValueError("--table takes a table's name")
            config.join = args.table.strip()
        return config
    if args.table is not None:
        raise ValueError("--table NAME joins a table on a server: give its HOST[:PORT] too")
    count, strategies = parse_bots(args.bots)
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        config = config_from_args(args, dict(os.environ))
    except ValueError as exc:
        parser.error(str(exc))
    app = TonkApp(config)
    if args.theme and args.theme not in app.available_themes:
        parser.error(
            f"no theme {args.theme!r}; the themes are {', '.join(sorted(app.available_themes))}"
        )
    app.run()
    if app.failure:
        print(app.failure, file=sys.stderr)
    return app.return_code or 0


if __name__ == "__main__":
    sys.exit(main())

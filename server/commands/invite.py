"""`tonk-server invite`: what to tell the friends: this machine's addresses, the SSH door's
host-key fingerprint, and the exact `ssh` and `tonk-client` commands, read from the database
(the ports kept there) and the door's host key file, while the server runs or not."""

from __future__ import annotations

import argparse
import fcntl
import os
import shlex
import socket
import sqlite3
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tonk.shared.wire.protocol import DEFAULT_PORT

from ..announce import EVERYWHERE, is_loopback, listened_addresses, web_url
from ..store import ports
from ..store.paths import default_db_path
from ..store.reading import AuditError, read_only
from .helptext import HelpFormatter, add_db_option
from .reach import loopback_warning, qr_lines

#: The subcommand of `tonk-server` this module answers.
COMMAND = "invite"
#: What stands for each friend's own name in the commands.
NAME = "YOUR-NAME"
#: What stands for a table's name when no table is open.
TABLE = "TABLE"


@dataclass(frozen=True, slots=True)
class Invitation:
    """What the database and the host key say, and whether a server runs on them now."""

    addresses: tuple[str, ...]
    hostname: str  # this machine's name, when the addresses are its own (else "")
    port: int | None
    ssh_port: int | None
    web_port: int | None
    fingerprint: str | None  # the door's host key (None: no key file yet)
    key_problem: str  # why the key could not be read, or ""
    running: bool
    door_off: bool  # the server last started without its door (a port kept from before)
    web_off: bool  # the same for the web door
    table: str | None  # the newest open table's name, for the join commands
    table_id: int | None  # and its number, for the television's page


def server_running(db: Path) -> bool:
    """Does a server hold this database now (its lock beside it)? Asked without waiting, and
    without ever keeping the lock."""
    try:
        fd = os.open(db.with_name(db.name + ".lock"), os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # (closing releases a lock taken)
    return False


def read_settings(conn: sqlite3.Connection) -> dict[str, str]:
    try:
        return dict(conn.execute("SELECT name, value FROM settings"))
    except sqlite3.OperationalError:  # a database from before the settings were kept
        return {}


def newest_open_table(conn: sqlite3.Connection) -> tuple[str, int] | None:
    """The newest open table's name and number."""
    row = conn.execute(
        "SELECT name, id FROM tables WHERE state IN ('waiting', 'playing') ORDER BY id DESC LIMIT 1"
    ).fetchone()
    return None if row is None else (str(row[0]), int(row[1]))


def host_key_fingerprint(path: Path) -> tuple[str | None, str]:
    """The door's host-key fingerprint as ssh shows it (SHA256:...), or None and why not."""
    import asyncssh

    try:
        key = asyncssh.read_private_key(str(path))
    except FileNotFoundError:
        return None, ""
    except (OSError, asyncssh.KeyImportError) as exc:
        return None, f"cannot read the SSH host key {path}: {exc}"
    return str(key.get_fingerprint("sha256")), ""


def invitation(db: Path, host_key: Path | None, host: str | None) -> Invitation:
    """Everything `invite` says, read from the database at `db` and the door's host key."""
    from ..doors.door import default_host_key_path

    with read_only(db) as conn:
        settings = read_settings(conn)
        table = newest_open_table(conn)
    fingerprint, problem = host_key_fingerprint(host_key or default_host_key_path(db))
    told = host or settings.get(ports.HOST)
    return Invitation(
        addresses=tuple(listened_addresses(told)),
        hostname=socket.gethostname() if told is None or told in EVERYWHERE else "",
        port=ports.port_of(settings.get(ports.PORT)),
        ssh_port=ports.port_of(settings.get(ports.SSH_PORT)),
        web_port=ports.port_of(settings.get(ports.WEB_PORT)),
        fingerprint=fingerprint,
        key_problem=problem,
        running=server_running(db),
        door_off=settings.get(ports.SSH_DOOR) == ports.OFF,
        web_off=settings.get(ports.WEB_DOOR) == ports.OFF,
        table=None if table is None else table[0],
        table_id=None if table is None else table[1],
    )


def client_address(address: str, port: int) -> str:
    """`HOST:PORT` as tonk-client takes it (an IPv6 address in brackets)."""
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def invite_lines(invite: Invitation, db: Path) -> list[str]:
    """What to tell the friends, line by line."""
    address = invite.addresses[0]
    table = shlex.quote(invite.table) if invite.table else TABLE
    lines = [
        f"tonk-server is running on {db} now."
        if invite.running
        else f"tonk-server is not running on {db}: these are the ports it used last, and "
        "it listens on them again when started with --port 0 and --ssh-port 0.",
        "",
        "This machine: "
        + ", ".join(invite.addresses)
        + (
            f" (its name: {invite.hostname}; --host {invite.hostname} tells that instead, "
            "where the LAN knows it)"
            if invite.hostname
            else ""
        ),
    ]
    if invite.ssh_port is not None and invite.door_off:
        said = (
            "The SSH door is not open: the server runs without --ssh-port"
            if invite.running
            else "The SSH door was not open when the server last ran"
        )
        lines += [
            "",
            f"{said} (it was on port {invite.ssh_port} before; --ssh-port 0 opens it there "
            "again, for these commands):",
        ]
    if invite.ssh_port is not None:
        lines += [
            "",
            "Through the SSH door (nothing to install; each friend's own SSH key lets them in):",
            f"  ssh -t -p {invite.ssh_port} {NAME}@{address}",
            f"  ssh -t -p {invite.ssh_port} {NAME}@{address} join {table}",
            f"{NAME} is the name each friend plays under: the first key to come in under a "
            "name keeps it.",
            "A friend with no SSH key yet makes one with `ssh-keygen -t ed25519` (Enter at "
            "each question; Windows 10 and later have it too).",
        ]
        if invite.fingerprint is not None:
            lines.append(
                "The first time, ssh asks whether to trust the server: its ED25519 key "
                f"fingerprint must be {invite.fingerprint}"
            )
        else:
            lines.append(invite.key_problem or "The door has no host key yet.")
    else:
        lines += [
            "",
            "No SSH door has been opened on this database: start tonk-server with "
            "--ssh-port 0 (a port kept from then on) for guests with only ssh.",
        ]
    lines += loopback_lines(invite)
    lines += web_lines(invite, address)
    lines += phone_lines(invite, address)
    if invite.port is not None:
        where = client_address(address, invite.port)
        if invite.port == DEFAULT_PORT:
            where = client_address(address, DEFAULT_PORT).rsplit(":", 1)[0]
        lines += [
            "",
            "With tonk-client installed:",
            f"  tonk-client {where}",
            f"  tonk-client {where} --table {table}",
        ]
    else:
        lines += ["", "No server has listened on this database yet: start tonk-server first."]
    join = (
        f"join {table} and --table {table} go straight to that table"
        if invite.table
        else f"join {TABLE} and --table {TABLE} go straight to the table of that name"
    )
    lines += [
        "",
        f"{join}: a free seat, or watching when there is none (any case; quotes around a "
        "name with spaces for --table, none needed after join).",
    ]
    return lines


def web_lines(invite: Invitation, address: str) -> list[str]:
    """The web door's part: its page, and the television's page of the newest open table."""
    if invite.web_port is None:
        return []  # (a host who never opened it is not told about it: the other doors do)
    page = f"http://{client_address(address, invite.web_port)}/"
    lines = [""]
    if invite.web_off:
        said = (
            "The web door is not open: the server runs without --web-port"
            if invite.running
            else "The web door was not open when the server last ran"
        )
        lines.append(f"{said} (it was on port {invite.web_port}; --web-port 0 opens it again):")
    lines += [
        "In a browser (nothing to install; a phone or a tablet too):",
        f"  {page}",
    ]
    if invite.table_id is not None:
        tv = f"{page}watch/{invite.table_id}"
        lines.append(f"  {tv}   (the table {invite.table} on a television, watching only)")
    return lines


def loopback_lines(invite: Invitation) -> list[str]:
    """The warning, when the server listens on loopback only, that no friend can join, with
    the LAN addresses it could listen on instead."""
    if not all(is_loopback(a) for a in invite.addresses):
        return []
    return ["", *loopback_warning(invite.addresses[0])]


def phone_lines(invite: Invitation, address: str) -> list[str]:
    """The web door's page as a QR code, for a phone's camera (the television page shows the
    same code)."""
    if invite.web_port is None:
        return []
    return qr_lines(web_url(address, invite.web_port))


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="tonk-server invite",
        description="Print what to tell the friends: this machine's addresses, the SSH "
        "door's fingerprint, the ssh and tonk-client commands and the web door's page. Safe "
        "while the server runs.",
        formatter_class=HelpFormatter,
    )
    add_db_option(parser)
    parser.add_argument(
        "--ssh-host-key",
        type=Path,
        default=None,
        metavar="PATH",
        help="the door's host key, if the server is given one (default: beside the database)",
    )
    parser.add_argument(
        "--host",
        default=None,
        metavar="HOST",
        help="the address to tell (default: the one the server listens on, or this "
        "machine's addresses when it listens on all)",
    )
    return parser.parse_args(argv[1:])


def main(argv: Sequence[str]) -> int:
    """Exit status 0, or 2 when the database cannot be read."""
    args = parse_args(argv)
    db: Path = args.db or default_db_path()
    try:
        invite = invitation(db, args.ssh_host_key, args.host)
    except AuditError as exc:
        print(f"tonk-server invite: {exc}", file=sys.stderr)
        return 2
    for line in invite_lines(invite, db):
        print(line)
    return 0

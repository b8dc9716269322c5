"""The servers this account has joined, newest first, for the start screen: `recent.json` in
the client's state folder (beside the seat tokens), a handful of entries, read and written
whole. A file that cannot be read or written is taken as empty and left alone: the list is a
convenience, never a reason not to play. And a server's address as typed (`host:port`)."""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from tonk.shared.wire.protocol import DEFAULT_PORT

from .tokens import default_state_dir

#: Entries kept.
KEPT = 8
FILE = "recent.json"


@dataclass(frozen=True, slots=True)
class RecentServer:
    address: str  # HOST:PORT as tonk-client takes it
    name: str  # the name it was found under on the LAN, or ""


def client_address(host: str, port: int) -> str:
    """`HOST:PORT` as tonk-client takes it (an IPv6 address in brackets)."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def recent_path(state_dir: Path | None) -> Path:
    return (state_dir or default_state_dir()) / FILE


def read_recent(state_dir: Path | None = None) -> list[RecentServer]:
    """The servers joined, newest first."""
    try:
        data = json.loads(recent_path(state_dir).read_text("utf-8"))
    except (OSError, ValueError):
        return []
    found: list[RecentServer] = []
    for entry in data.get("servers", []) if isinstance(data, dict) else []:
        if isinstance(entry, dict) and isinstance(entry.get("address"), str):
            name = entry.get("name")
            found.append(RecentServer(entry["address"], name if isinstance(name, str) else ""))
    return found[:KEPT]


def remember(address: str, name: str = "", state_dir: Path | None = None) -> None:
    """`address` joined just now: first in the list (its name kept from before if none is
    given now)."""
    before = read_recent(state_dir)
    known = next((r.name for r in before if r.address == address), "")
    servers = [RecentServer(address, name or known)]
    servers += [r for r in before if r.address != address]
    path = recent_path(state_dir)
    text = json.dumps(
        {"servers": [{"address": r.address, "name": r.name} for r in servers[:KEPT]]}, indent=1
    )
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f"{FILE}.{os.getpid()}")
        temporary.write_text(text, "utf-8")
        temporary.replace(path)


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

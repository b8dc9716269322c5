"""How a tonk-server is found on the LAN: the DNS-SD service type it announces over multicast
DNS, and what its TXT record says (PROTOCOL.md, "Finding a server on the LAN"). Pure: the
announcing and the browsing are the server's and the client's (`tonk.server.announce`,
`tonk.client.discovery`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .protocol import PROTOCOL_VERSION

#: The DNS-SD service type (RFC 6763) a tonk-server announces.
SERVICE_TYPE = "_tonk._tcp.local."

#: The TXT record's keys.
TXT_VERSION = "v"  # the protocol version the server speaks
TXT_SSH = "ssh"  # the SSH door's port (absent: no door)
TXT_WEB = "web"  # the web door's port (absent: no door)
TXT_TABLES = "tables"  # open tables (waiting or playing)
TXT_PLAYERS = "players"  # people seated at them
TXT_WHO = "who"  # their names, comma-separated, cut to fit (see WHO_BYTES)

#: At most this many bytes of names in `who` (a TXT string holds 255 with its key): names that
#: do not fit whole are left out, and the list ends with "..." to say so.
WHO_BYTES = 200
#: A DNS label (the instance name) holds at most 63 bytes.
NAME_BYTES = 63


@dataclass(frozen=True, slots=True)
class Announced:
    """What a server's TXT record says, as a client reads it."""

    version: int | None
    ssh_port: int | None
    web_port: int | None
    tables: int
    players: int
    who: tuple[str, ...]
    more: bool  # names were left out of `who`


def txt_record(
    *,
    ssh_port: int | None,
    web_port: int | None,
    tables: int,
    players: Iterable[str],
) -> dict[str, str]:
    """The TXT record of a server with these doors, open tables and seated players."""
    names = list(players)
    record = {
        TXT_VERSION: str(PROTOCOL_VERSION),
        TXT_TABLES: str(tables),
        TXT_PLAYERS: str(len(names)),
        TXT_WHO: who_text(names),
    }
    if ssh_port is not None:
        record[TXT_SSH] = str(ssh_port)
    if web_port is not None:
        record[TXT_WEB] = str(web_port)
    return record


def who_text(names: Iterable[str]) -> str:
    """The names, comma-separated (a comma in a name made a space), as many as fit in
    WHO_BYTES; "..." at the end when some did not."""
    kept: list[str] = []
    size = 0
    for name in names:
        clean = name.replace(",", " ").strip()
        cost = len(clean.encode()) + (1 if kept else 0)
        if size + cost > WHO_BYTES - 4:
            kept.append("...")
            break
        kept.append(clean)
        size += cost
    return ",".join(kept)


def read_txt(properties: Mapping[bytes, bytes | None] | Mapping[str, str | None]) -> Announced:
    """A TXT record as received (bytes or text); a missing or malformed value is read as
    nothing (0, None, no names), never an error: the record comes from anyone on the LAN."""
    text: dict[str, str] = {}
    for key, value in properties.items():
        k = key.decode("utf-8", "replace") if isinstance(key, bytes) else key
        v = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        text[k.lower()] = v or ""
    names = [n for n in text.get(TXT_WHO, "").split(",") if n]
    more = bool(names) and names[-1] == "..."
    if more:
        names.pop()
    return Announced(
        version=_number(text.get(TXT_VERSION)),
        ssh_port=_port(text.get(TXT_SSH)),
        web_port=_port(text.get(TXT_WEB)),
        tables=_number(text.get(TXT_TABLES)) or 0,
        players=_number(text.get(TXT_PLAYERS)) or 0,
        who=tuple(names),
        more=more,
    )


def instance_name(name: str) -> str:
    """A server's name as a DNS-SD instance label: at most NAME_BYTES bytes of UTF-8 (cut on
    a character), no dots (they would read as label breaks), never empty."""
    clean = " ".join(name.replace(".", " ").split()) or "tonk"
    while len(clean.encode()) > NAME_BYTES:
        clean = clean[:-1]
    return clean.rstrip() or "tonk"


def _number(text: str | None) -> int | None:
    if text is None or not text.isdigit() or len(text) > 9:
        return None
    return int(text)


def _port(text: str | None) -> int | None:
    number = _number(text)
    return number if number is not None and 1 <= number <= 65535 else None

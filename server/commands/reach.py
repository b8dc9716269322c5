"""Where friends reach the server, as the host is told it when the server starts and by
`tonk-server invite`: the machine's LAN addresses (never 0.0.0.0), a warning when the server
listens on loopback only, and the web door's page as a QR code for a phone."""

from __future__ import annotations

from ..announce import address_port, announced_addresses, is_loopback, web_url
from ..qr import qr_terminal


def loopback_warning(host: str) -> list[str]:
    """For a server on `host`: nothing, or when it is loopback the warning that no other
    machine can join, with the LAN addresses it could listen on instead."""
    if not is_loopback(host):
        return []
    lan = announced_addresses("0.0.0.0")
    instead = (
        f"--host 0.0.0.0 (this machine's LAN addresses: {', '.join(lan)})"
        if lan
        else "--host 0.0.0.0 (this machine has no LAN address now)"
    )
    return [
        f"Warning: the server listens on {host} only (loopback): no other machine can join, "
        f"and it is not announced on the LAN. Start it with {instead} to let friends in."
    ]


def start_lines(host: str, port: int, web_port: int | None) -> list[str]:
    """What `tonk-server` prints when it has started: the addresses friends can use, or the
    loopback warning."""
    warning = loopback_warning(host)
    if warning:
        return [f"tonk-server: {line}" for line in warning]
    lan = announced_addresses(host)
    if not lan:
        return [f"tonk-server: no LAN address found for {host}: friends cannot reach it yet"]
    lines = [
        "tonk-server for friends: tonk-client "
        + ", ".join(address_port(a, port) for a in lan)
        + " (or tonk-client alone, which finds it on the LAN)"
    ]
    if web_port is not None:
        lines.append(f"tonk-server for browsers: {web_url(lan[0], web_port)}")
    return lines


def qr_lines(url: str) -> list[str]:
    """The web door's page as a QR code to scan, with what it is."""
    return ["", f"A phone's camera opens {url} from this code:", *qr_terminal(url).splitlines()]

"""Two network namespaces joined by a virtual Ethernet pair, for discovery on a LAN of the test's
own: `ip netns` (Debian's iproute2), as root. Nothing in them reaches a real network: each
namespace has only its loopback and its end of the pair, with an address of 10.233.0.0/24 that
exists nowhere else. Where they cannot be made the test is skipped naming why (a failure where
TONK_TESTS_REQUIRE_TOOLS is set, as CI sets it)."""

from __future__ import annotations

import contextlib
import itertools
import os
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from termkit import require_tool

#: The pair's two addresses (the server's side, the client's side) and their prefix length.
SERVER_ADDRESS = "10.233.0.1"
CLIENT_ADDRESS = "10.233.0.2"
PREFIX = 24

_serial = itertools.count(1)


@dataclass(frozen=True, slots=True)
class Lan:
    """Two namespaces on one virtual link: `server` (at SERVER_ADDRESS), `client`
    (at CLIENT_ADDRESS)."""

    server: str
    client: str
    ip: str  # the `ip` command

    def run_in(self, namespace: str, argv: list[str]) -> list[str]:
        """`argv` to run inside `namespace`."""
        return [self.ip, "netns", "exec", namespace, *argv]


def cannot(reason: str) -> None:
    if os.environ.get("TONK_TESTS_REQUIRE_TOOLS"):
        pytest.fail(f"{reason}, and TONK_TESTS_REQUIRE_TOOLS is set")
    pytest.skip(reason)


class NoNamespaces(Exception):
    """Network namespaces cannot be made here; the message says why."""


@contextlib.contextmanager
def lan_pair() -> Iterator[Lan]:
    """`made_lan()` for a test: skipped (failed where TONK_TESTS_REQUIRE_TOOLS is set) where
    the namespaces cannot be made, saying why."""
    ip = require_tool("ip", "iproute2")
    try:
        with made_lan(ip) as lan:
            yield lan
    except NoNamespaces as exc:
        cannot(str(exc))


@contextlib.contextmanager
def made_lan(ip: str = "ip") -> Iterator[Lan]:
    """Make the namespaces and their link (raises NoNamespaces where they cannot be made);
    remove them after. `ip`: the path of iproute2's command."""
    if os.geteuid() != 0:
        raise NoNamespaces(
            "network namespaces need root (ip netns add), and the tests do not run as root"
        )
    tag = f"{os.getpid() % 100000}{next(_serial)}"
    server, client = f"tonk{tag}s", f"tonk{tag}c"
    server_end, client_end = f"tk{tag}s", f"tk{tag}c"
    made: list[str] = []

    def ip_run(*argv: str) -> None:
        try:
            done = subprocess.run([ip, *argv], capture_output=True, text=True, timeout=30)
        except OSError as exc:
            raise NoNamespaces(f"cannot run {ip}: {exc}") from None
        if done.returncode != 0:
            raise NoNamespaces(
                f"cannot make network namespaces here: ip {' '.join(argv)}: {done.stderr.strip()}"
            )

    try:
        for namespace in (server, client):
            ip_run("netns", "add", namespace)
            made.append(namespace)
            ip_run("-n", namespace, "link", "set", "lo", "up")
        ip_run("link", "add", server_end, "type", "veth", "peer", "name", client_end)
        for end, namespace, address in (
            (server_end, server, SERVER_ADDRESS),
            (client_end, client, CLIENT_ADDRESS),
        ):
            ip_run("link", "set", end, "netns", namespace)
            ip_run("-n", namespace, "addr", "add", f"{address}/{PREFIX}", "dev", end)
            ip_run("-n", namespace, "link", "set", end, "up")
        yield Lan(server, client, ip)
    finally:
        for namespace in made:  # (the pair goes with them)
            subprocess.run([ip, "netns", "del", namespace], capture_output=True, timeout=30)

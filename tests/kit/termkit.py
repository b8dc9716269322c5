"""What end-to-end tests run against: a `tonk-server` subprocess, and an `sshd` of the test's
own on loopback (skipped, naming the Debian package, where OpenSSH is not installed)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_MODE = re.compile(rb"\x1b\[\?([0-9;]+)([hl])")


def mouse_modes_left_on(raw: bytes) -> set[int]:
    """The terminal's mouse modes that `raw` (what a program wrote to it) turned on and did
    not turn off again: what the terminal still reports if the program is gone."""
    from tonk.client.driver import MOUSE_MODES

    on: set[int] = set()
    for match in _MODE.finditer(raw):
        for mode in (int(part) for part in match.group(1).split(b";") if part):
            if mode in MOUSE_MODES:
                (on.add if match.group(2) == b"h" else on.discard)(mode)
    return on


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def command_path(name: str) -> str:
    """The installed command `name`, beside this Python if it is not on PATH."""
    found = shutil.which(name) or shutil.which(name, path=str(Path(sys.executable).parent))
    if found is None:
        raise AssertionError(f"{name} is not installed: pip install -e . first")
    return found


def loopback_args(db: Path, port: int = 0) -> list[str]:
    """`tonk-server`'s options for a test's own server: loopback only, `port` (0: a free one),
    the database `db`."""
    return ["--host", "127.0.0.1", "--port", str(port), "--db", str(db)]


def stop_process(process: subprocess.Popen[Any], wait: float) -> None:
    """Ask `process` to stop (SIGTERM); kill it if it is still running after `wait` seconds."""
    process.terminate()
    try:
        process.wait(wait)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)


def require_tool(tool: str, package: str) -> str:
    """The path of the system tool `tool`; where it is missing the test is skipped with the
    Debian package that brings it, or fails where TONK_TESTS_REQUIRE_TOOLS is set (as CI,
    which installs every such package, sets it: a skip there would hide a missing step)."""
    found = shutil.which(tool) or next(
        (str(p) for p in (Path("/usr/sbin") / tool, Path("/usr/bin") / tool) if p.exists()), None
    )
    if found is not None:
        return found
    reason = f"{tool} is not installed (apt-get install {package})"
    if os.environ.get("TONK_TESTS_REQUIRE_TOOLS"):
        pytest.fail(f"{reason}, and TONK_TESTS_REQUIRE_TOOLS is set")
    pytest.skip(reason)


@contextlib.contextmanager
def tonk_server(tmp_path: Path, *extra: str, db: Path | None = None) -> Iterator[int]:
    """`tonk-server` as a subprocess on 127.0.0.1, a free port, a db in tmp_path (or `db`),
    --dev; yields its port, read from its first line."""
    process = subprocess.Popen(
        [
            command_path("tonk-server"),
            *loopback_args(db or tmp_path / "server.db"),
            "--dev",
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=open(tmp_path / "server.log", "w"),  # noqa: SIM115
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline().strip()
        if not first.startswith("tonk-server listening on "):
            raise AssertionError(f"tonk-server did not start: {first!r}; see server.log")
        port = int(first.rsplit(":", 1)[1])
        yield port
    finally:
        stop_process(process, 15)


@contextlib.contextmanager
def sshd(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """An sshd of the test's own on 127.0.0.1: its own host key, config and authorized key
    (for the user running the test). Yields (port, the client's private key). Fails with
    sshd's own words if it cannot run here."""
    daemon = require_tool("sshd", "openssh-server")
    for tool in ("ssh", "ssh-keygen"):
        require_tool(tool, "openssh-client")
    home = tmp_path / "ssh"
    home.mkdir()
    host_key, user_key = home / "host_ed25519", home / "user_ed25519"
    for key in (host_key, user_key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    authorized = home / "authorized_keys"
    authorized.write_text(Path(f"{user_key}.pub").read_text())
    authorized.chmod(0o600)
    port = free_port()
    config = home / "sshd_config"
    config.write_text(
        "\n".join(
            [
                f"ListenAddress 127.0.0.1:{port}",
                f"HostKey {host_key}",
                f"AuthorizedKeysFile {authorized}",
                f"PidFile {home / 'sshd.pid'}",
                "PermitRootLogin prohibit-password",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "UsePAM no",
                "StrictModes no",
                "PrintMotd no",
                "AcceptEnv LANG LC_* XDG_STATE_HOME",
                "LogLevel VERBOSE",
                "",
            ]
        )
    )
    # sshd insists on its privilege-separation directory.
    with contextlib.suppress(OSError):
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    check = subprocess.run([daemon, "-t", "-f", str(config)], capture_output=True, text=True)
    if check.returncode != 0:
        raise AssertionError(f"sshd refuses its test config: {check.stderr.strip()}")
    log = home / "sshd.log"
    process = subprocess.Popen(
        [daemon, "-D", "-e", "-f", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=open(log, "w"),  # noqa: SIM115
    )
    try:
        for _ in range(100):
            if process.poll() is not None:
                raise AssertionError(f"sshd could not run here: {log.read_text().strip()}")
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            subprocess.run(["sleep", "0.1"])
        else:
            raise AssertionError(f"sshd never listened: {log.read_text().strip()}")
        yield port, user_key
    finally:
        stop_process(process, 10)


def ssh_command(port: int, key: Path, remote: str) -> list[str]:
    """`ssh -t` to the test's sshd as the user running the test, running `remote`."""
    user = (
        os.environ.get("USER")
        or subprocess.run(["id", "-un"], capture_output=True, text=True, check=True).stdout.strip()
    )
    options = [
        "-t",
        "-p",
        str(port),
        "-i",
        str(key),
        "-o",
        "BatchMode=yes",
        "-o",
        "StrictHostKeyChecking=no",
        "-o",
        "UserKnownHostsFile=/dev/null",
        "-o",
        "LogLevel=ERROR",
        "-o",
        "SendEnv=LANG",
    ]
    return [require_tool("ssh", "openssh-client"), *options, f"{user}@127.0.0.1", remote]

"""The SSH door from outside: a `tonk-server --ssh-port 0` subprocess, OpenSSH's `ssh` on a
pseudo-terminal of its own whose screen is read with pyte, and keys made with ssh-keygen."""

from __future__ import annotations

import contextlib
import os
import re
import select
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from termkit import command_path, loopback_args, require_tool, stop_process


def make_key(directory: Path, name: str) -> Path:
    """A new ed25519 key pair without a passphrase; returns the private key's path."""
    require_tool("ssh-keygen", "openssh-client")
    path = directory / name
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(path)],
        check=True,
        timeout=30,
    )
    return path


class DoorServer:
    """`tonk-server` with the SSH door on free ports, in a directory of the test's own."""

    LINE = re.compile(r"^tonk-server ssh on (\S+):(\d+) \(host key (SHA256:\S+)\)$")

    def __init__(self, directory: Path, *extra: str) -> None:
        self.directory = directory
        self.db = directory / "door.sqlite3"
        self.log = open(directory / "server.log", "ab")  # noqa: SIM115 (closed in stop)
        self.log_start = 0  # where server_log reads from (log_from_here)
        self.proc = subprocess.Popen(
            [
                command_path("tonk-server"),
                *loopback_args(self.db),
                "--ssh-port",
                "0",
                "--bot-pause",
                "0.05",
                "--next-hand-delay",
                "0.5",
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=self.log,
            text=True,
        )
        assert self.proc.stdout is not None
        self.first_line = self.proc.stdout.readline().strip()
        self.second_line = self.proc.stdout.readline().strip()
        match = self.LINE.match(self.second_line)
        if match is None:
            self.stop()
            raise AssertionError(
                f"no ssh line from tonk-server: {self.second_line!r}\n{self.server_log()}"
            )
        self.port = int(match.group(2))
        self.tcp_port = int(self.first_line.rsplit(":", 1)[1])
        self.fingerprint = match.group(3)

    def server_log(self) -> str:
        """The server's log, from its start or from where `log_from_here` was called."""
        with open(self.directory / "server.log", "rb") as log:
            log.seek(self.log_start)
            return log.read().decode("utf-8", "replace")

    def log_from_here(self) -> None:
        """`server_log` reads from here on: a test's own part of the log of a server that a
        module's tests share."""
        self.log_start = (self.directory / "server.log").stat().st_size

    def stop(self) -> None:
        if self.proc.poll() is None:
            stop_process(self.proc, 15)
        self.log.close()


@contextlib.contextmanager
def door_server(directory: Path, *extra: str) -> Iterator[DoorServer]:
    """A `DoorServer`, stopped after (skipped, naming the package, where OpenSSH's client is
    missing)."""
    require_tool("ssh", "openssh-client")
    server = DoorServer(directory, *extra)
    try:
        yield server
    finally:
        server.stop()


class SSHTerminal:
    """`ssh -p PORT NAME@127.0.0.1 [COMMAND]` on a pseudo-terminal of `cols` x `rows`."""

    def __init__(
        self,
        port: int,
        key: Path,
        name: str,
        *command: str,
        cols: int = 100,
        rows: int = 30,
        known_hosts: Path | None = None,
        env: dict[str, str] | None = None,
        options: tuple[str, ...] = (),
        batch: bool = True,
    ) -> None:
        import ptyprocess
        import pyte

        ssh = require_tool("ssh", "openssh-client")
        known = known_hosts or key.parent / "known_hosts"
        args = [
            ssh,
            "-F",
            "/dev/null",
            "-p",
            str(port),
            "-i",
            str(key),
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "IdentityAgent=none",
            "-o",
            f"BatchMode={'yes' if batch else 'no'}",
            "-o",
            "StrictHostKeyChecking=accept-new",
            "-o",
            f"UserKnownHostsFile={known}",
            *options,
            "-tt" if command else "-t",
            f"{name}@127.0.0.1",
            *command,
        ]
        environ = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(key.parent),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            **(env or {}),
        }
        self.proc = ptyprocess.PtyProcess.spawn(args, dimensions=(rows, cols), env=environ)
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.ByteStream(self.screen)
        self.output = b""

    def pump(self, seconds: float) -> None:
        """Read what arrives for `seconds` (less if ssh exits)."""
        end = time.monotonic() + seconds
        while True:
            left = end - time.monotonic()
            if left <= 0:
                return
            ready, _, _ = select.select([self.proc.fd], [], [], min(left, 0.05))
            if not ready:
                if not self.proc.isalive():
                    return
                continue
            try:
                data = self.proc.read(65536)
            except EOFError:
                return
            self.output += data
            self.stream.feed(data)

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def wait_for(self, pattern: str, timeout: float = 20.0) -> re.Match[str]:
        """Read until the screen shows `pattern` (a regular expression)."""
        end = time.monotonic() + timeout
        regex = re.compile(pattern)
        while True:
            found = regex.search(self.text())
            if found is not None:
                return found
            if time.monotonic() > end or not self.proc.isalive():
                self.pump(0.2)
                found = regex.search(self.text())
                if found is not None:
                    return found
                raise AssertionError(
                    f"the screen never showed {pattern!r}; it shows:\n{self.text()}\n"
                    f"(ssh alive: {self.proc.isalive()})"
                )
            self.pump(0.1)

    def press(self, keys: bytes) -> None:
        self.proc.write(keys)

    def resize(self, cols: int, rows: int) -> None:
        self.proc.setwinsize(rows, cols)
        self.screen.resize(rows, cols)

    def wait_exit(self, timeout: float = 15.0) -> int:
        end = time.monotonic() + timeout
        while self.proc.isalive() and time.monotonic() < end:
            self.pump(0.1)
        if self.proc.isalive():
            raise AssertionError(f"ssh did not exit; the screen shows:\n{self.text()}")
        self.pump(0.1)
        self.proc.wait()
        return int(self.proc.exitstatus if self.proc.exitstatus is not None else -1)

    def kill(self) -> None:
        if self.proc.isalive():
            self.proc.kill(9)
        self.proc.wait()


def refused(port: int, key: Path, name: str, **options: Any) -> str:
    """All that ssh said (as text) when the door turned it away: it exits with status 255."""
    term = SSHTerminal(port, key, name, **options)
    try:
        assert term.wait_exit() == 255
        return term.output.decode("utf-8", "replace")
    finally:
        term.kill()


def claim_and_quit(port: int, key: Path, name: str) -> None:
    """Log in to the door as `name` with `key` (the first key under a name claims it), see the
    lobby, and quit it with q: the session ends with status 0."""
    term = SSHTerminal(port, key, name)
    try:
        term.wait_for(rf"playing as {re.escape(name)}")
        term.press(b"q")
        assert term.wait_exit() == 0
    finally:
        term.kill()

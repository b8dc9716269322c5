"""Real terminals for end-to-end tests: a tmux server of the test's own (send-keys and
capture-pane), a `tonk-server` subprocess, and an `sshd` of the test's own on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path


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


class Tmux:
    """One tmux session on a private socket, so nothing else's tmux is touched."""

    def __init__(self, width: int = 80, height: int = 24) -> None:
        if shutil.which("tmux") is None:
            raise AssertionError("tmux is not installed (apt-get install tmux)")
        self.socket = f"tonk-test-{uuid.uuid4().hex[:10]}"
        self.width, self.height = width, height
        self.target = "play"

    def _tmux(self, *args: str) -> str:
        result = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=30
        )
        if result.returncode != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {result.stderr.strip()}")
        return result.stdout

    def start(self, command: str, env: dict[str, str]) -> None:
        """Run `command` in a new session of width x height; `; sleep` keeps the pane
        open after it exits so its last words can be read."""
        env_args: list[str] = []
        for key, value in env.items():
            env_args += ["-e", f"{key}={value}"]
        self._tmux(
            "new-session",
            "-d",
            "-s",
            self.target,
            "-x",
            str(self.width),
            "-y",
            str(self.height),
            *env_args,
            f"{command}; echo; echo EXITED $?; sleep 600",
        )

    def keys(self, *keys: str) -> None:
        """Each key as tmux names it (`Enter`, `Left`, `q`, `?`)."""
        for key in keys:
            self._tmux("send-keys", "-t", self.target, key)

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.target)

    async def wait_for(self, text: str, limit: float = 30.0) -> str:
        """The screen once it shows `text`; fail with the screen if it never does. The
        limit only stops a hung test: nothing is asserted about how long it took."""
        loop = asyncio.get_running_loop()
        give_up = loop.time() + limit
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if loop.time() > give_up:
                raise AssertionError(f"the screen never showed {text!r}; it shows:\n{screen}")
            await asyncio.sleep(0.1)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._tmux("kill-server")


@contextlib.contextmanager
def tonk_server(tmp_path: Path, *extra: str) -> Iterator[int]:
    """`tonk-server` as a subprocess on 127.0.0.1, a free port, a db in tmp_path, --dev;
    yields its port, read from its first line."""
    process = subprocess.Popen(
        [
            command_path("tonk-server"),
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--db",
            str(tmp_path / "server.db"),
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
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


@contextlib.contextmanager
def sshd(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """An sshd of the test's own on 127.0.0.1: its own host key, config and authorized key
    (for the user running the test). Yields (port, the client's private key). Fails with
    sshd's own words if it cannot run here."""
    daemon = shutil.which("sshd") or "/usr/sbin/sshd"
    if not Path(daemon).exists():
        raise AssertionError("sshd is not installed (apt-get install openssh-server)")
    for tool in ("ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            raise AssertionError(f"{tool} is not installed (apt-get install openssh-client)")
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
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def ssh_command(port: int, key: Path, remote: str) -> str:
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
    return shlex.join(["ssh", *options, f"{user}@127.0.0.1", remote])

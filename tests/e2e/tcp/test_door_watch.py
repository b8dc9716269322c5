"""A door session ends with its server, even one whose app does not act on SIGTERM (the web
driver's app takes it as a request to its event loop, which a busy app may never get to): a
real process watching a real server process that is killed."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

pytestmark = pytest.mark.e2e

#: A session that ignores SIGTERM, watching the process given by its pid (the server).
SESSION = """
import os, signal, sys, time
from tonk.client.door.door_template import watch_the_server
signal.signal(signal.SIGTERM, lambda signum, frame: print("asked to stop", flush=True))
watch_the_server(os.pidfd_open(int(sys.argv[1])), grace=1.0)
print("watching", flush=True)
time.sleep(600)
"""


def test_a_session_that_ignores_sigterm_is_killed_once_its_server_is_gone() -> None:
    server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    session = subprocess.Popen(
        [sys.executable, "-c", SESSION, str(server.pid)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert session.stdout is not None
        assert session.stdout.readline().strip() == "watching"
        server.kill()
        server.wait()
        assert session.stdout.readline().strip() == "asked to stop"
        assert session.wait(timeout=120) == -signal.SIGKILL
    finally:
        for process in (session, server):
            if process.poll() is None:
                process.kill()
                process.wait()

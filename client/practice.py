"""The practice table's server: the real server code, started in this process on loopback with
a free port and a temporary database, and stopped with the client."""

from __future__ import annotations

import logging
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class PracticeServer:
    """A running embedded server and the temporary directory holding its database."""

    server: Any
    directory: Path
    port: int

    async def close(self) -> None:
        try:
            await self.server.close()
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)


def quiet_server_log(directory: Path) -> None:
    """The server logs a line per connection and hand; in the client's terminal those lines
    would scribble over the table, so they go to a file beside the practice database."""
    logger = logging.getLogger("tonk.server")
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    handler = logging.FileHandler(directory / "server.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


async def start_practice_server(dev: bool = False, **options: Any) -> PracticeServer:
    """Start `TonkServer` on 127.0.0.1, port 0 (a free one), with a temporary database.
    `dev` allows a fixed seed, deck or dealer for the practice table (tests and teaching);
    `options` are other ServerConfig fields (tests use them for timing)."""
    from tonk.server.app import ServerConfig, TonkServer

    directory = Path(tempfile.mkdtemp(prefix="tonk-practice-"))
    quiet_server_log(directory)
    config = ServerConfig(host="127.0.0.1", port=0, db_path=directory / "practice.sqlite3", dev=dev)
    server = TonkServer(config)
    try:
        await server.start()
    except BaseException:
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return PracticeServer(server, directory, int(server.port))

"""A tonk server run inside another program (the client's practice table): the real server on
127.0.0.1 with a free port and a temporary database, its log kept to a file beside that
database, and everything removed when it stops."""

from __future__ import annotations

import logging
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .app import ServerConfig, TonkServer


@dataclass
class EmbeddedServer:
    """A running embedded server and the temporary directory holding its database."""

    server: TonkServer
    directory: Path
    port: int
    restore_log: Callable[[], None] = field(default=lambda: None)

    def remove_files(self) -> None:
        """Remove the database and the log at once, without waiting for the server (the
        process is going: its terminal was closed). The server may carry on a moment with
        its files unlinked."""
        shutil.rmtree(self.directory, ignore_errors=True)

    async def close(self) -> None:
        try:
            await self.server.close()
        finally:
            self.restore_log()
            self.remove_files()


def quiet_server_log(directory: Path) -> Callable[[], None]:
    """The server logs a line per connection and hand; in the client's terminal those lines
    would scribble over the table, so they go to a file beside the practice database. Returns
    what puts the server's logger back as it was (its file closed), for when it stops."""
    logger = logging.getLogger("tonk.server")
    before = (list(logger.handlers), logger.level, logger.propagate)
    for handler in before[0]:
        logger.removeHandler(handler)
    handler = logging.FileHandler(directory / "server.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False

    def restore() -> None:
        logger.removeHandler(handler)
        handler.close()
        for old in before[0]:
            logger.addHandler(old)
        logger.setLevel(before[1])
        logger.propagate = before[2]

    return restore


async def start_embedded(dev: bool = False, **options: Any) -> EmbeddedServer:
    """Start `TonkServer` on 127.0.0.1, port 0 (a free one), with a temporary database.
    `dev` allows a fixed seed, deck or dealer for the practice table (tests and teaching);
    `options` are other `ServerConfig` fields (tests use them for timing): a name that is
    not one is a TypeError."""
    directory = Path(tempfile.mkdtemp(prefix="tonk-practice-"))
    restore_log = quiet_server_log(directory)
    try:
        config = replace(
            # (idle_turn 0: a practice table's one player is waited for however long)
            ServerConfig(
                host="127.0.0.1", port=0, db_path=directory / "practice.sqlite3", idle_turn=0.0
            ),
            dev=dev,
            coach_in_thread=True,
            **options,
        )
        server = TonkServer(config)
        await server.start()
    except BaseException:
        restore_log()
        shutil.rmtree(directory, ignore_errors=True)
        raise
    return EmbeddedServer(server, directory, int(server.port), restore_log)

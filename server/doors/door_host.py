"""What an SSH door session (door_session.py) asks of the door and of the server behind it:
narrow interfaces, so that the session does not import the door (door.py imports the session)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Protocol

import asyncssh

from ..config import Limits
from ..store import store as st
from .door_names import DoorNames
from .door_starts import AppStarts
from .door_template import SessionTemplate


class _DoorServer(Protocol):
    """What a session asks of the server behind the door."""

    @property
    def door_names(self) -> DoorNames: ...

    @property
    def app_starts(self) -> AppStarts: ...

    async def open_door_link(
        self, name: str, address: str, door: str, *, player: bool = True
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]: ...


class _Host(Protocol):
    @property
    def host(self) -> str: ...


class Door(Protocol):
    """What a session asks of the SSH door (door.SSHDoor is one)."""

    @property
    def server(self) -> _DoorServer: ...

    @property
    def port(self) -> int: ...

    @property
    def config(self) -> _Host: ...

    @property
    def limits(self) -> Limits: ...

    @property
    def template(self) -> SessionTemplate: ...

    @property
    def logs(self) -> Path: ...

    def open_table(self, table_id: int) -> Any: ...

    def write(self, ops: list[st.Op]) -> None: ...


class DoorLink(Protocol):
    """The SSH connection a session runs in (door.DoorConnection is one)."""

    @property
    def door(self) -> Door: ...

    @property
    def address(self) -> str: ...

    @property
    def conn(self) -> asyncssh.SSHServerConnection | None: ...

    def ssh_command(self, name: str = "NAME", *, tty: bool = False) -> str:
        """`ssh -p PORT NAME@HOST` as this guest would type it."""
        ...

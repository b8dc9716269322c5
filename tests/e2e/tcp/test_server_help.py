"""`tonk-server --help` and its commands' help as an operator reads it at 80 columns: every
default shown, one kind of metavar per kind of value, the commands listed, and no command or
path cut across lines."""

from __future__ import annotations

import os
import re
import subprocess

import pytest
from termkit import command_path
from tonk.server.store.paths import default_db_path

pytestmark = pytest.mark.e2e


def help_of(*command: str) -> str:
    said = subprocess.run(
        [command_path("tonk-server"), *command, "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "COLUMNS": "80"},
    )
    assert said.returncode == 0, said.stderr
    return said.stdout


def option_help(text: str, option: str) -> str:
    """What the help says of `option`, its lines joined."""
    found = re.search(rf"^  {re.escape(option)}\b(.*?)(?=^  -|^\S|\Z)", text, re.M | re.S)
    assert found is not None, option
    return " ".join(found.group(1).split())


def test_every_option_shows_its_default_and_log_level_has_help() -> None:
    text = help_of()
    for option, default in [
        ("--port PORT", "(default 7777)"),
        ("--grace S", "(default 120)"),
        ("--bot-pause S", "(default 0.8)"),
        ("--next-hand-delay S", "(default 3)"),
        ("--log-level LEVEL", "(default info"),
        ("--rules PRESET|FILE", "(default classic)"),
        ("--lobby-interval S", "(default 0.25)"),
        ("--abandoned-after S", "default 600"),
        ("--coach N", "default 1"),
    ]:
        assert default in option_help(text, option), option
    assert "debug, info, warning, error" in option_help(text, "--log-level LEVEL")


def test_metavars_are_one_kind_per_kind_of_value() -> None:
    text = help_of()
    usage = text.split("\n\n")[0]
    metavars = set(re.findall(r"^  --[a-z-]+ ([A-Z][A-Z=|]*)", text, re.M))
    kinds = {"HOST", "PORT", "PATH", "PRESET|FILE", "NAME=VALUE", "LEVEL", "S", "N", "NAME"}
    assert metavars == kinds
    for raw in ("GRACE", "BOT_PAUSE", "NEXT_HAND_DELAY", "LOBBY_INTERVAL", "DB", "RULES", "{"):
        assert not re.search(rf"--[a-z-]+ {re.escape(raw)}\b", text), raw
    assert "COMMAND" in usage


def test_the_commands_are_listed_in_a_section_of_their_own() -> None:
    text = help_of()
    section = text.split("commands (", 1)[1].split("\n\n", 1)[0]
    listed = re.findall(r"^  (\w+(?: release)?)\b", section, re.M)
    assert listed == ["invite", "ledger", "audit", "replay", "standings", "names", "names release"]


def test_no_command_or_path_is_cut_across_lines() -> None:
    path = str(default_db_path())
    for command in ((), ("names",), ("names", "release"), ("replay",), ("invite",), ("standings",)):
        text = help_of(*command)
        lines = text.splitlines()
        assert not [line for line in lines if line.rstrip().endswith("-")], command
        assert any(path in line for line in lines), command
    assert "`tonk-server names release NAME`" in " ".join(help_of("names").split())

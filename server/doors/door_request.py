"""What an SSH client asks of the door before a session starts: the command it gave (none
for the lobby, `practice [BOTS]` or `join TABLE`) and its terminal (type, size, character
set, colours)."""

from __future__ import annotations

import codecs
import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass

#: The door's commands (`ssh -t -p PORT NAME@HOST COMMAND`).
COMMANDS = "practice [BOTS], join TABLE"


def practice_table_name(name: str) -> str:
    """The name of the table `practice` makes for `name`."""
    return f"{name}'s practice"[:32]


#: The word, anywhere in a command, that turns the terminal bell off (`ssh ... nobell`, or
#: `ssh ... nobell practice 3`): the door's `tonk-client --no-bell`.
NO_BELL = "nobell"


def bell_choice(command: str | None) -> tuple[str | None, bool]:
    """The command without the word `nobell`, and whether the bell rings (it does unless
    the word was there)."""
    if command is None or NO_BELL not in command.split():
        return command, True
    return " ".join(word for word in command.split() if word != NO_BELL), False


@dataclass(frozen=True, slots=True)
class DoorCommand:
    """What a guest asked for after the host: a practice table with `bots` bots, or the
    table named `table` (`join Friday`); neither: the lobby."""

    bots: int | None = None
    table: str | None = None


def parse_command(command: str | None) -> tuple[DoorCommand, str | None]:
    """The command a guest gave, or (the lobby, a refusal) for one the door does not know.
    After `join`, every word is the table's name: ssh joins its arguments with spaces, so
    `join Friday night` and `join "Friday night"` name the same table."""
    if command is None or not command.strip():
        return DoorCommand(), None
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    if words and words[0] == "practice" and len(words) <= 2:
        if len(words) == 1:
            return DoorCommand(bots=2), None
        if words[1].isdigit() and 1 <= int(words[1]) <= 4:
            return DoorCommand(bots=int(words[1])), None
        return DoorCommand(), "tonk: practice takes 1 to 4 bots, e.g. `practice 3`"
    if words and words[0] == "join":
        table = " ".join(" ".join(words[1:]).split())
        if not table:
            return DoorCommand(), "tonk: join takes a table's name, e.g. `join Friday`"
        return DoorCommand(table=table), None
    return DoorCommand(), (
        f"tonk: this server runs the tonk table, not commands: {command.strip()[:60]!r} is not "
        f"one it knows (ssh with no command for the lobby, or {COMMANDS})"
    )


@dataclass(frozen=True, slots=True)
class TerminalInfo:
    """What the SSH client said about its terminal: `TERM`, its size, and its environment
    as sent (OpenSSH sends LANG and LC_* where its config says SendEnv)."""

    term: str
    width: int
    height: int
    environ: Mapping[str, str]

    @property
    def charset(self) -> str:
        """The terminal's character set: LC_ALL, LC_CTYPE or LANG's codeset (UTF-8 when
        none is said, which is what nearly every terminal is)."""
        for name in ("LC_ALL", "LC_CTYPE", "LANG"):
            value = self.environ.get(name, "")
            if value:
                if value in ("C", "POSIX"):
                    return "ascii"
                _, _, codeset = value.partition(".")
                codeset = codeset.partition("@")[0]
                if not codeset:
                    return "utf-8"
                try:
                    return codecs.lookup(codeset).name
                except LookupError:
                    return "ascii"
        return "utf-8"

    @property
    def utf8(self) -> bool:
        return self.charset == "utf-8"

    @property
    def colour(self) -> bool:
        return "NO_COLOR" not in self.environ and self.term not in ("dumb", "unknown")

    def child_environ(self) -> dict[str, str]:
        """The session app's environment: the terminal's TERM and what the client said of
        its colours; a UTF-8 locale (the app's output is UTF-8: a terminal with another
        character set gets cards in ASCII, and lines drawn as the terminal can)."""
        environ = {"TERM": self.term, **app_environ()}
        for name in ("COLORTERM", "NO_COLOR"):
            if name in self.environ:
                environ[name] = self.environ[name]
        if not self.colour:
            environ["NO_COLOR"] = "1"
        return environ


def app_environ() -> dict[str, str]:
    """What the environment of every session's app has (and of the door sessions' template):
    the server's PATH and HOME, a UTF-8 locale and UTF-8 standard streams."""
    return {
        "LANG": "C.UTF-8",
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/"),
        "PYTHONIOENCODING": "utf-8",
    }

"""The `--help` of tonk-server and its commands alike: text wrapped at spaces only (a command
such as `tonk-server names` or a path is never cut across lines), and the one `--db` option."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

from ..store.paths import default_db_path


def _wrap(text: str, width: int, indent: str = "") -> list[str]:
    return textwrap.wrap(
        " ".join(text.split()),
        width,
        initial_indent=indent,
        subsequent_indent=indent,
        break_on_hyphens=False,
        break_long_words=False,
    )


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, wrapped without breaking a word at a hyphen or in the middle. In a
    description or epilog, a blank line parts paragraphs, and a line that starts with two
    spaces is a line of a list, kept as it is (a command and what it does)."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return _wrap(text, width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out: list[str] = []
        paragraph: list[str] = []

        def flush() -> None:
            if paragraph:
                out.extend(_wrap(" ".join(paragraph), width, indent))
                paragraph.clear()

        for line in text.splitlines():
            if line.startswith("  "):
                flush()
                out.append(indent + line)
            elif not line.strip():
                flush()
                out.append("")
            else:
                paragraph.append(line)
        flush()
        return "\n".join(out)


def add_db_option(parser: argparse.ArgumentParser) -> None:
    """`--db PATH`, the server's database, as every command takes it."""
    parser.add_argument(
        "--db",
        type=Path,
        default=None,
        metavar="PATH",
        help=f"the server's SQLite database (default {default_db_path()})",
    )

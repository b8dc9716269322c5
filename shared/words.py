"""Words for people: a count with its noun in the right number."""

from __future__ import annotations


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 hand`, `2 hands`, `0 hands`; `nouns` for a plural not made with an s."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"

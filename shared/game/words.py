"""Words for people: a count with its noun in the right number."""

from __future__ import annotations


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 hand`, `2 hands`, `0 hands`; `nouns` for a plural not made with an s."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"


def amount_text(amount: int, unit: str) -> str:
    """`1 chip`, `3 chips`, `1 penny`, `5 $`: the unit as the table named it, plural by a
    trailing s (or ies)."""
    if not unit:
        return str(amount)
    if len(unit) <= 2 or not unit.isalpha():
        return f"{amount} {unit}"
    if abs(amount) == 1:
        return f"{amount} {_singular(unit)}"
    return f"{amount} {_plural(unit)}"


def _singular(unit: str) -> str:
    if unit.endswith("ies") and len(unit) > 3:
        return unit[:-3] + "y"
    return unit.removesuffix("s")


def _plural(unit: str) -> str:
    if unit.endswith("s"):
        return unit
    if unit.endswith("y") and len(unit) > 1 and unit[-2] not in "aeiou":
        return unit[:-1] + "ies"
    return unit + "s"

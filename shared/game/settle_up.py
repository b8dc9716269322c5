"""Settling up a session: the fewest payments that bring every balance of a ledger to zero."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .words import amount_text

#: One payment that squares part of a ledger: (payer, payee, amount), by player name.
Transfer = tuple[str, str, int]

# Beyond this many players with a balance the exact search (over every subset) is too slow, and
# the settling falls back to pairing the largest debt with the largest credit: at most one
# payment more than the fewest per group it misses. A table seats at most five, so a session's
# ledger reaches it only when many players came and went.
_EXACT_UP_TO = 16


def settle_up(balances: Mapping[str, int]) -> list[Transfer]:
    """The fewest payments that square `balances` (which sum to zero): each player who is
    behind pays players who are ahead, largest first, names breaking ties.

    The fewest is the number of players with a balance less the most groups they split into
    whose balances sum to zero (each group squares itself in one payment fewer than its size);
    the groups are found exactly for up to sixteen players."""
    owed = {name: amount for name, amount in balances.items() if amount}
    if sum(owed.values()):
        raise ValueError(f"balances do not sum to zero: {dict(balances)}")
    names = sorted(owed, key=lambda name: (-abs(owed[name]), name))
    groups = _zero_groups(names, owed) if len(names) <= _EXACT_UP_TO else [names]
    transfers: list[Transfer] = []
    for group in groups:
        transfers.extend(_square(group, owed))
    return sorted(transfers, key=lambda t: (-t[2], t[0], t[1]))


def _zero_groups(names: Sequence[str], owed: Mapping[str, int]) -> list[list[str]]:
    """`names` split into the most groups whose balances each sum to zero."""
    count = len(names)
    full = (1 << count) - 1
    sums = [0] * (1 << count)
    for mask in range(1, full + 1):
        low = (mask & -mask).bit_length() - 1
        sums[mask] = sums[mask & (mask - 1)] + owed[names[low]]
    # most[mask]: the most zero-sum groups that `mask` (itself summing to zero) splits into;
    # first[mask]: one group of such a split, holding the lowest name of `mask`.
    most = [0] * (1 << count)
    first = [0] * (1 << count)
    for mask in range(1, full + 1):
        if sums[mask]:
            continue
        low = mask & -mask
        rest = mask ^ low
        sub = rest
        while True:
            group = sub | low
            if not sums[group]:
                others = mask ^ group
                groups = 1 + most[others]
                if groups > most[mask]:
                    most[mask], first[mask] = groups, group
            if not sub:
                break
            sub = (sub - 1) & rest
    split: list[list[str]] = []
    mask = full
    while mask:
        group = first[mask]
        split.append([names[i] for i in range(count) if group >> i & 1])
        mask ^= group
    return split


def _square(group: Sequence[str], owed: Mapping[str, int]) -> list[Transfer]:
    """Payments that square one zero-sum group in one fewer than its size: the largest debt
    pays the largest credit, again and again."""
    left = {name: owed[name] for name in group}
    transfers: list[Transfer] = []
    while any(left.values()):
        payer = min(left, key=lambda name: (left[name], name))
        payee = min(left, key=lambda name: (-left[name], name))
        amount = min(-left[payer], left[payee])
        transfers.append((payer, payee, amount))
        left[payer] += amount
        left[payee] -= amount
    return transfers


def settle_up_text(transfers: Sequence[Transfer], unit: str) -> str:
    """The payments as a sentence: "Bob pays Ann 3 chips, Cy pays Ann 1 chip"; "All square"
    where nobody owes anything."""
    if not transfers:
        return "All square: nobody owes anybody."
    parts = [
        f"{payer} pays {payee} {amount_text(amount, unit)}" for payer, payee, amount in transfers
    ]
    return ", ".join(parts) + "."

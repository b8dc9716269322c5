"""How a change to the database is written: each change the tables make as one statement with
its parameters (an `Op`), and runs of the same plain insert merged into fewer statements."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import Any

from tonk.shared.game.settlement import Settlement
from tonk.shared.game.standings import NIGHT_STARTS_HOUR, hand_counts, name_key

from .saved import SavedDoorSeat, SavedName, SavedSeat

Op = tuple[str, tuple[Any, ...]]


def hash_token(token: str) -> str:
    """Seat tokens are kept only as a hash: a copy of the database gives nobody a seat."""
    return hashlib.sha256(token.encode()).hexdigest()


#: One encoder for every record (json.dumps with separators builds a new one per call).
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def dumps(data: Any) -> str:
    return _ENCODER.encode(data)


_PLAIN_INSERT = re.compile(r"INSERT INTO \w+ \([\w, ]+\) VALUES (\((?:\?, )*\?\))")
#: SQLite's smallest limit on parameters in one statement (older versions).
_MAX_PARAMS = 999


def merged(ops: Sequence[Op]) -> list[Op]:
    """The same changes in fewer statements: runs of the same plain one-row INSERT become
    multi-row INSERTs (rows in the same order; any failure fails the whole run)."""
    out: list[Op] = []
    i = 0
    while i < len(ops):
        sql, params = ops[i]
        match = _PLAIN_INSERT.fullmatch(sql)
        j = i + 1
        if match is not None and params:
            most = max(1, _MAX_PARAMS // len(params))
            while j < len(ops) and j - i < most and ops[j][0] == sql:
                j += 1
        if j - i == 1:
            out.append((sql, params))
        else:
            rows = ", ".join([match.group(1)] * (j - i)) if match else ""
            values = tuple(value for _, row in ops[i:j] for value in row)
            out.append((sql[: match.start(1)] + rows if match else sql, values))
        i = j
    return out


# -- the statements the tables use -----------------------------------------------------------


def insert_table(
    table_id: int, name: str, config: dict[str, Any], created: float, creator: int | None
) -> Op:
    return (
        "INSERT INTO tables (id, name, config, state, created, creator)"
        " VALUES (?, ?, ?, 'waiting', ?, ?)",
        (table_id, name, dumps(config), created, creator),
    )


def put_rematch(table_id: int, offer: dict[str, Any]) -> Op:
    """A finished table's rematch offer as it stands (tonk.shared.game.rematch's, with its deadline
    in wall-clock time and the session's end's reason)."""
    return (
        "INSERT OR REPLACE INTO rematches (table_id, offer) VALUES (?, ?)",
        (table_id, dumps(offer)),
    )


def put_setting(name: str, value: str) -> Op:
    return ("INSERT OR REPLACE INTO settings (name, value) VALUES (?, ?)", (name, value))


def update_table(table_id: int, **columns: Any) -> Op:
    names = sorted(columns)
    assignments = ", ".join(f"{name} = ?" for name in names)
    return (
        f"UPDATE tables SET {assignments} WHERE id = ?",
        (*(columns[name] for name in names), table_id),
    )


def put_seat(table_id: int, seat: SavedSeat) -> Op:
    return (
        "INSERT OR REPLACE INTO seats"
        " (table_id, seat, name, kind, strategy, token_hash, stake, away)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            table_id,
            seat.seat,
            seat.name,
            seat.kind,
            seat.strategy,
            seat.token_hash,
            seat.stake,
            int(seat.away),
        ),
    )


def set_away(table_id: int, seat: int, away: bool) -> Op:
    return (
        "UPDATE seats SET away = ? WHERE table_id = ? AND seat = ?",
        (int(away), table_id, seat),
    )


def set_token(table_id: int, seat: int, name: str, token_hash: str) -> Op:
    """A new token for a seat still held under `name` (nothing if it was given up since)."""
    return (
        "UPDATE seats SET token_hash = ? WHERE table_id = ? AND seat = ? AND name = ?",
        (token_hash, table_id, seat, name),
    )


def delete_seat(table_id: int, seat: int) -> Op:
    return ("DELETE FROM seats WHERE table_id = ? AND seat = ?", (table_id, seat))


def delete_seats(table_id: int) -> Op:
    return ("DELETE FROM seats WHERE table_id = ?", (table_id,))


def insert_hand(
    table_id: int, number: int, record: dict[str, Any], names: list[str], started: float
) -> Op:
    return (
        "INSERT INTO hands (table_id, number, record, names, started) VALUES (?, ?, ?, ?, ?)",
        (table_id, number, dumps(record), dumps(names), started),
    )


def insert_action(table_id: int, hand: int, index: int, action: dict[str, Any]) -> Op:
    return (
        "INSERT INTO actions (table_id, hand, idx, action) VALUES (?, ?, ?, ?)",
        (table_id, hand, index, dumps(action)),
    )


def seat_changed(table_id: int, hand: int, step: int, seat: int, name: str) -> Op:
    """Seat `seat` of hand `hand`, in play, changed hands: `name` holds it from step `step`
    on (its action and after). Of two changes before the same step, the later stands."""
    return (
        "INSERT OR REPLACE INTO occupants (table_id, hand, step, seat, name)"
        " VALUES (?, ?, ?, ?, ?)",
        (table_id, hand, step, seat, name),
    )


def settle_hand(
    table_id: int,
    number: int,
    record: dict[str, Any],
    settlement: dict[str, Any],
    ended: float,
    payments: Sequence[tuple[str, str, int]],
    balances: dict[str, int],
) -> list[Op]:
    """The settled hand, its payments and the new balances (run in one transaction)."""
    ops: list[Op] = [
        (
            "UPDATE hands SET record = ?, settlement = ?, ended = ?"
            " WHERE table_id = ? AND number = ?",
            (dumps(record), dumps(settlement), ended, table_id, number),
        )
    ]
    ops.extend(
        (
            "INSERT INTO payments (table_id, hand, payer, payee, amount) VALUES (?, ?, ?, ?, ?)",
            (table_id, number, payer, payee, amount),
        )
        for payer, payee, amount in payments
    )
    ops.extend(
        (
            "INSERT INTO balances (table_id, name, balance) VALUES (?, ?, ?)"
            " ON CONFLICT (table_id, name) DO UPDATE SET balance = excluded.balance",
            (table_id, name, balance),
        )
        for name, balance in balances.items()
    )
    return ops


#: The night (an ISO date, by the server's local time) of a hand started at `started`.
NIGHT_OF_STARTED = f"date(started, 'unixepoch', 'localtime', '-{NIGHT_STARTS_HOUR} hours')"

_COUNT_HAND = (
    "INSERT INTO night_totals (kind, folded, unit, night, name, last, hands, won, drops_won,"
    " drops_caught, tonk_outs, deal_tonks, net)"
    f" SELECT ?, ?, ?, {NIGHT_OF_STARTED}, ?, started, 1, ?, ?, ?, ?, ?, ?"
    " FROM hands WHERE table_id = ? AND number = ?"
    " ON CONFLICT (kind, folded, unit, night) DO UPDATE SET hands = hands + 1,"
    " won = won + excluded.won, drops_won = drops_won + excluded.drops_won,"
    " drops_caught = drops_caught + excluded.drops_caught,"
    " tonk_outs = tonk_outs + excluded.tonk_outs, deal_tonks = deal_tonks + excluded.deal_tonks,"
    " net = net + excluded.net,"
    " name = CASE WHEN excluded.last >= last THEN excluded.name ELSE name END,"
    " last = max(last, excluded.last)"
)


def count_hand(
    table_id: int,
    number: int,
    names: Sequence[str],
    kinds: Sequence[str],
    unit: str,
    settlement: Settlement,
) -> list[Op]:
    """The settled hand counted into each of its players' totals for the night it was dealt
    in (the standings across nights): one upsert a seat, run with the hand's settlement."""
    return [
        (
            _COUNT_HAND,
            (
                kind,
                name_key(name),
                unit,
                name,
                int(count.won),
                int(count.drop_won),
                int(count.drop_caught),
                int(count.tonk_out),
                int(count.deal_tonk),
                count.net,
                table_id,
                number,
            ),
        )
        for name, kind, count in zip(names, kinds, hand_counts(settlement, len(names)), strict=True)
    ]


def claim_name(folded: str, name: SavedName) -> Op:
    return (
        "INSERT INTO ssh_names (folded, name, public_key, fingerprint, claimed, token_hash)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (folded, name.name, name.public_key, name.fingerprint, name.claimed, name.token_hash),
    )


def put_door_seat(folded: str, seat: SavedDoorSeat) -> Op:
    return (
        "INSERT OR REPLACE INTO ssh_seats (folded, table_id, left_table, taken)"
        " VALUES (?, ?, ?, ?)",
        (folded, seat.table_id, int(seat.left), seat.taken),
    )


def delete_door_seat(folded: str, table_id: int) -> Op:
    return ("DELETE FROM ssh_seats WHERE folded = ? AND table_id = ?", (folded, table_id))

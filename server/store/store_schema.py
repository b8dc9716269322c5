"""What the database holds: its schema (and the upgrade of an older file), and the records a
server reads back from it when it starts (`load_tables`)."""

from __future__ import annotations

import contextlib
import json
import logging
import sqlite3
from typing import Any

from tonk.shared.game.history import Occupants
from tonk.shared.game.settlement import Settlement

from .saved import SavedHand, SavedSeat, SavedTable
from .store_ops import count_hand

log = logging.getLogger("tonk.server")

SCHEMA = """
CREATE TABLE IF NOT EXISTS tables (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    config TEXT NOT NULL,
    state TEXT NOT NULL,
    created REAL NOT NULL,
    started REAL,
    hands_played INTEGER NOT NULL DEFAULT 0,
    dealer INTEGER,
    multiplier INTEGER NOT NULL DEFAULT 1,
    creator INTEGER,
    rematch_of INTEGER
);
CREATE TABLE IF NOT EXISTS seats (
    table_id INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    strategy TEXT,
    token_hash TEXT,
    stake INTEGER NOT NULL,
    away INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (table_id, seat)
);
CREATE TABLE IF NOT EXISTS balances (
    table_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    balance INTEGER NOT NULL,
    PRIMARY KEY (table_id, name)
);
CREATE TABLE IF NOT EXISTS hands (
    table_id INTEGER NOT NULL,
    number INTEGER NOT NULL,
    record TEXT NOT NULL,
    names TEXT NOT NULL,
    settlement TEXT,
    started REAL NOT NULL,
    ended REAL,
    PRIMARY KEY (table_id, number)
);
CREATE TABLE IF NOT EXISTS actions (
    table_id INTEGER NOT NULL,
    hand INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    action TEXT NOT NULL,
    PRIMARY KEY (table_id, hand, idx)
);
CREATE TABLE IF NOT EXISTS payments (
    table_id INTEGER NOT NULL,
    hand INTEGER NOT NULL,
    payer TEXT NOT NULL,
    payee TEXT NOT NULL,
    amount INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS ssh_names (
    folded TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    public_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    claimed REAL NOT NULL,
    token_hash TEXT
);
CREATE TABLE IF NOT EXISTS ssh_seats (
    folded TEXT NOT NULL,
    table_id INTEGER NOT NULL,
    left_table INTEGER NOT NULL DEFAULT 0,
    taken REAL NOT NULL,
    PRIMARY KEY (folded, table_id)
);
CREATE TABLE IF NOT EXISTS rematches (
    table_id INTEGER PRIMARY KEY,
    offer TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS settings (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""

#: Each player's totals of each night in each unit (the standings across nights), counted with
#: every settled hand (`store_ops.count_hand`).
NIGHT_TOTALS_SCHEMA = """
CREATE TABLE IF NOT EXISTS night_totals (
    kind TEXT NOT NULL,
    folded TEXT NOT NULL,
    unit TEXT NOT NULL,
    night TEXT NOT NULL,
    name TEXT NOT NULL,
    last REAL NOT NULL,
    hands INTEGER NOT NULL,
    won INTEGER NOT NULL,
    drops_won INTEGER NOT NULL,
    drops_caught INTEGER NOT NULL,
    tonk_outs INTEGER NOT NULL,
    deal_tonks INTEGER NOT NULL,
    net INTEGER NOT NULL,
    PRIMARY KEY (kind, folded, unit, night)
);
CREATE INDEX IF NOT EXISTS night_totals_by_night ON night_totals (night);
"""
SCHEMA += NIGHT_TOTALS_SCHEMA

#: The seats of a hand that changed hands during it (the creator gave an absent player's seat
#: to a bot, a person took a bot's): from step `step` of hand `hand` on (that step's action and
#: after), `seat` was held by `name`. The hand's `names` are those who held the seats at its
#: deal; a hand with no row here kept its seats from deal to end. (Added for issue 30: a
#: database made before has the table made empty when a server opens it, and its readers
#: read a database without it as one with no seat changed.)
OCCUPANTS_SCHEMA = """
CREATE TABLE IF NOT EXISTS occupants (
    table_id INTEGER NOT NULL,
    hand INTEGER NOT NULL,
    step INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    name TEXT NOT NULL,
    PRIMARY KEY (table_id, hand, step, seat)
);
"""
SCHEMA += OCCUPANTS_SCHEMA

#: The setting that says every settled hand of the database is counted in `night_totals`
#: (a database made before the standings across nights has its hands counted once, here).
COUNTED = "night_totals"


def upgrade(conn: sqlite3.Connection) -> None:
    """Bring a database made by an older tonk-server to this schema (columns added since)."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(seats)")}
    if "away" not in columns:
        conn.execute("ALTER TABLE seats ADD COLUMN away INTEGER NOT NULL DEFAULT 0")
    columns = {row[1] for row in conn.execute("PRAGMA table_info(tables)")}
    if "rematch_of" not in columns:
        conn.execute("ALTER TABLE tables ADD COLUMN rematch_of INTEGER")
    # A name claimed from a web browser (the web door) has its token's hash, and no key.
    names = {row[1] for row in conn.execute("PRAGMA table_info(ssh_names)")}
    if "token_hash" not in names:
        conn.execute("ALTER TABLE ssh_names ADD COLUMN token_hash TEXT")
    if conn.execute("SELECT 1 FROM settings WHERE name = ?", (COUNTED,)).fetchone() is None:
        count_every_hand(conn)


def hand_occupants(
    conn: sqlite3.Connection, table_id: int, number: int, dealt: list[str]
) -> Occupants:
    """Who held each seat of hand `number` of `table_id` at each step: `dealt`, its stored
    `names`, and the seats that changed hands during it (none in a database made before the
    `occupants` table, opened read-only)."""
    if not has_occupants(conn):
        return Occupants(tuple(dealt))
    changes = conn.execute(
        "SELECT step, seat, name FROM occupants WHERE table_id = ? AND hand = ?"
        " ORDER BY step, seat",
        (table_id, number),
    ).fetchall()
    return Occupants(tuple(dealt), tuple((step, seat, name) for step, seat, name in changes))


def has_occupants(conn: sqlite3.Connection) -> bool:
    """Whether the database has the `occupants` table (one made before it, opened read-only
    by `tonk-server audit`, has not)."""
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'occupants'"
    ).fetchone()
    return row is not None


def count_every_hand(conn: sqlite3.Connection) -> None:
    """Count every settled hand into `night_totals`, once, in one transaction: a hand's
    players by its `names`, each seat's kind from the `seats` table where that seat (or that
    table's seat of the same name) still holds it, else by the name (a bot's ends in "(bot)")."""
    units: dict[int, str] = {}
    for table_id, config in conn.execute("SELECT id, config FROM tables"):
        with contextlib.suppress(ValueError, AttributeError):
            units[table_id] = json.loads(config).get("unit", "chips")
    by_seat: dict[tuple[int, int], tuple[str, str]] = {}
    by_name: dict[tuple[int, str], str] = {}
    for table_id, seat, name, kind in conn.execute("SELECT table_id, seat, name, kind FROM seats"):
        by_seat[(table_id, seat)] = (name, kind)
        by_name[(table_id, name)] = kind

    def kind_of(table_id: int, seat: int, name: str) -> str:
        held = by_seat.get((table_id, seat))
        if held is not None and held[0] == name:
            return held[1]
        return by_name.get((table_id, name)) or ("bot" if name.endswith("(bot)") else "human")

    conn.execute("BEGIN IMMEDIATE")
    try:
        for table_id, number, names_text, settlement_text in conn.execute(
            "SELECT table_id, number, names, settlement FROM hands"
            " WHERE settlement IS NOT NULL ORDER BY table_id, number"
        ).fetchall():
            try:
                names = json.loads(names_text)
                kinds = [kind_of(table_id, seat, name) for seat, name in enumerate(names)]
                settlement = Settlement.from_dict(json.loads(settlement_text))
                ops = count_hand(
                    table_id, number, names, kinds, units.get(table_id, "chips"), settlement
                )
            except (ValueError, KeyError, TypeError, IndexError) as exc:
                # (`tonk-server audit` says what is wrong with it; the rest still count.)
                log.warning(
                    "table %d hand %d cannot be read, not counted: %s", table_id, number, exc
                )
                continue
            for sql, params in ops:
                conn.execute(sql, params)
        conn.execute("INSERT OR REPLACE INTO settings (name, value) VALUES (?, ?)", (COUNTED, "1"))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def earlier_sessions(conn: sqlite3.Connection, rematch_of: int | None) -> list[dict[str, int]]:
    """The balances of each session a rematch follows, oldest first: `rematch_of`, the
    table it is a rematch of, and so back along the chain."""
    out: list[dict[str, int]] = []
    seen: set[int] = set()
    while rematch_of is not None and rematch_of not in seen:
        seen.add(rematch_of)
        out.append(
            dict(
                conn.execute("SELECT name, balance FROM balances WHERE table_id = ?", (rematch_of,))
            )
        )
        row = conn.execute("SELECT rematch_of FROM tables WHERE id = ?", (rematch_of,)).fetchone()
        rematch_of = None if row is None else row[0]
    return out[::-1]


def load_tables(conn: sqlite3.Connection, history: int) -> list[SavedTable]:
    """The tables still open (and those finished whose offer of a rematch still waits), each
    with its seats, balances, the newest `history` settled hands of its ledger and its last
    hand (with the actions taken in it)."""
    out: list[SavedTable] = []
    rows = conn.execute(
        "SELECT id, name, config, state, created, started, hands_played, dealer,"
        " multiplier, creator, rematch_of FROM tables WHERE state IN ('waiting', 'playing')"
        " OR id IN (SELECT table_id FROM rematches) ORDER BY id"
    ).fetchall()
    offers = {
        table_id: json.loads(offer)
        for table_id, offer in conn.execute("SELECT table_id, offer FROM rematches")
    }
    for row in rows:
        offer = offers.get(row[0])
        if row[3] == "finished" and (offer is None or offer.get("outcome") != "waiting"):
            continue
        table = SavedTable(
            id=row[0],
            name=row[1],
            config=json.loads(row[2]),
            state=row[3],
            created=row[4],
            started=row[5],
            hands_played=row[6],
            dealer=row[7],
            multiplier=row[8],
            creator=row[9],
            rematch_of=row[10],
            rematch=offer if row[3] == "finished" else None,
        )
        table.earlier = earlier_sessions(conn, table.rematch_of)
        for number, name, kind, strategy, token_hash, stake, away in conn.execute(
            "SELECT seat, name, kind, strategy, token_hash, stake, away FROM seats"
            " WHERE table_id = ? ORDER BY seat",
            (table.id,),
        ):
            table.seats.append(
                SavedSeat(number, name, kind, strategy, token_hash, stake, bool(away))
            )
        table.balances = dict(
            conn.execute("SELECT name, balance FROM balances WHERE table_id = ?", (table.id,))
        )
        # The newest `history` settled hands (what the table keeps of its ledger's hands),
        # and the last hand, settled or still being played.
        recent = conn.execute(
            "SELECT number, settlement FROM hands WHERE table_id = ?"
            " AND settlement IS NOT NULL ORDER BY number DESC LIMIT ?",
            (table.id, max(1, history)),
        ).fetchall()[::-1]
        payments: dict[int, list[tuple[str, str, int]]] = {}
        for hand, payer, payee, amount in conn.execute(
            "SELECT hand, payer, payee, amount FROM payments WHERE table_id = ? AND hand >= ?"
            " ORDER BY rowid",
            (table.id, recent[0][0] if recent else 0),
        ):
            payments.setdefault(hand, []).append((payer, payee, amount))
        for number, settlement in recent:
            ending = json.loads(settlement)["ending"]
            table.history.append((number, ending, payments.get(number, [])))
        last: tuple[Any, ...] | None = conn.execute(
            "SELECT number, record, names, settlement FROM hands WHERE table_id = ?"
            " ORDER BY number DESC LIMIT 1",
            (table.id,),
        ).fetchone()
        if last is not None:
            actions = [
                json.loads(a)
                for (a,) in conn.execute(
                    "SELECT action FROM actions WHERE table_id = ? AND hand = ? ORDER BY idx",
                    (table.id, last[0]),
                )
            ]
            names = json.loads(last[2])
            table.hand = SavedHand(
                number=last[0],
                record=json.loads(last[1]),
                names=names,
                settlement=None if last[3] is None else json.loads(last[3]),
                actions=actions,
                occupants=hand_occupants(conn, table.id, last[0], names),
            )
        out.append(table)
    return out

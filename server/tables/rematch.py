"""A rematch opened: the new table with the same rules, stakes, session length and seats (the
people who said yes and the bots, in their order), saved, and everybody at the old table moved
to it: the players seated with new tokens, the spectators watching."""

from __future__ import annotations

import dataclasses
import logging
import secrets
import time
from typing import TYPE_CHECKING

from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import Seated, Watching

from ..connection import Connection
from ..errors import RequestError
from ..store import store as st
from .table import Seat, Table
from .table_core import HUMAN

if TYPE_CHECKING:
    from ..requests import RequestHost

log = logging.getLogger("tonk.server")


async def open_rematch(host: RequestHost, old: Table, answer: Connection | None) -> Table:
    """Open `old`'s rematch (its offer has gone ahead); RequestError (storage_error) if it
    cannot be saved, with nothing changed. Called under `old`'s lock."""
    offer = old.rematch.offer
    assert offer is not None
    staying = offer.staying()
    # The dev options that fix the deals are the first session's: a rematch is dealt afresh.
    config = dataclasses.replace(old.config, seats=len(staying), seed=None, deck=None, dealer=None)
    table_id = host.new_table_id()
    created = time.time()
    seats: list[Seat] = []
    tokens: dict[int, str] = {}
    for number in staying:
        seat = old.seats[number]
        if seat.kind == HUMAN:
            token = secrets.token_urlsafe(18)
            tokens[len(seats)] = token
            seats.append(
                Seat(
                    name=seat.name,
                    kind=HUMAN,
                    token_hash=st.hash_token(token),
                    stake=seat.stake,
                    conn=seat.conn,
                )
            )
        else:
            seats.append(
                Seat(name=seat.name, kind=seat.kind, strategy=seat.strategy, stake=seat.stake)
            )
    creator = old.seats.creator if old.seats.creator in staying else None
    creator = staying.index(creator) if creator is not None else next(iter(tokens))
    ops: list[st.Op] = [
        st.insert_table(table_id, old.name, config.to_dict(), created, creator),
        st.update_table(table_id, rematch_of=old.id),
    ]
    ops.extend(st.put_seat(table_id, seat.saved(n)) for n, seat in enumerate(seats))
    ops.append(old.rematch.op())  # gone ahead: no longer waited for after a restart
    try:
        await host.store.write(ops)
    except st.StoreError:
        raise RequestError(p.STORAGE_ERROR, "the server could not save the rematch") from None
    table = Table(host, table_id, old.name, config, created)
    table.seats.replace(seats, creator)
    table.creator_address = old.creator_address
    table.rematch.follow(old.rematch, dict(old.session.ledger.balances))
    log.info(
        "table %d: the rematch of table %d opens with %s",
        table_id,
        old.id,
        ", ".join(seat.name or "" for seat in seats),
    )
    old.broadcast(old.rematch.status(table_id), answer)
    for number, seat in enumerate(seats):
        conn = seat.conn
        if conn is None:
            continue
        old.seats[staying[number]].conn = None
        host.seating.put(conn, table, number)
        conn.send(Seated(table_id, number, tokens[number]))
        host.door_seat(conn, table_id, left=False)
    for conn in list(old.seats.spectators):
        old.seats.spectators.discard(conn)
        table.seats.spectators.add(conn)
        host.seating.put(conn, table, None)
        conn.send(Watching(table_id))
    host.add_table(table)  # full: its loop starts the session at once
    if not old.seats.attached():
        host.forget_table(old)
    return table

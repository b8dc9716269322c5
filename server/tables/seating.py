"""Who is at which table: each connection's table and seat (None: watching), kept by the server
for its tables. A table writes here when a connection sits, watches or leaves; a connection only
reads its own place (`Connection.table`, `Connection.seat`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Generic, TypeVar

T = TypeVar("T")

#: What a connection may read of the seating: each connection's table and seat.
Places = Mapping[object, tuple[object, int | None]]


class Seating(Generic[T]):
    """The place of each connection at a table (of type T)."""

    __slots__ = ("_places",)

    def __init__(self) -> None:
        self._places: dict[object, tuple[T, int | None]] = {}

    @property
    def places(self) -> Mapping[object, tuple[T, int | None]]:
        """Each connection's table and seat, to read."""
        return self._places

    def put(self, conn: object, table: T, seat: int | None) -> None:
        """`conn` is at `table`, in `seat` (None: watching)."""
        self._places[conn] = (table, seat)

    def clear(self, conn: object) -> None:
        """`conn` is at no table (in the lobby, or gone)."""
        self._places.pop(conn, None)

    def table_of(self, conn: object) -> T | None:
        place = self._places.get(conn)
        return None if place is None else place[0]

    def seat_of(self, conn: object) -> int | None:
        place = self._places.get(conn)
        return None if place is None else place[1]

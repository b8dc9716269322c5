"""Who is who at the doors: each name belongs to the first public key that came under it at the
SSH door, or to the browser that chose it at the web door (by the token in its cookie), and the
tables where a name sat through a door are remembered, both in the database."""

from __future__ import annotations

from pathlib import Path

from tonk.shared.game.standings import name_key as fold

from ..store import store as st
from ..store.reading import read_only

__all__ = ["DoorNames", "fold"]


class DoorNames:
    """The claimed names and the door's seats, in memory (loaded at start); each change
    returns the database operation that keeps it."""

    def __init__(self) -> None:
        self._names: dict[str, st.SavedName] = {}
        self._seats: dict[str, dict[int, st.SavedDoorSeat]] = {}
        self._unsaved: set[str] = set()  # claims made here whose write is not done yet

    def load(self, names: list[st.SavedName], seats: dict[str, list[st.SavedDoorSeat]]) -> None:
        self._names = {fold(n.name): n for n in names}
        self._seats = {folded: {s.table_id: s for s in rows} for folded, rows in seats.items()}

    def __len__(self) -> int:
        return len(self._names)

    def owner(self, name: str) -> st.SavedName | None:
        """The claim on `name` (in any case), if there is one."""
        return self._names.get(fold(name))

    def of_key(self, public_key: str) -> list[str]:
        """The names `public_key` (an authorized_keys line without its comment) has claimed,
        the oldest first."""
        claims = [c for c in self._names.values() if c.public_key == public_key]
        return [c.name for c in sorted(claims, key=lambda c: c.claimed)]

    def by_token(self, token_hash: str) -> st.SavedName | None:
        """The name a browser claimed, by its token's hash (None: none, or released)."""
        for claim in self._names.values():
            if claim.token_hash == token_hash:
                return claim
        return None

    def claim(self, claim: st.SavedName) -> st.Op:
        folded = fold(claim.name)
        if folded in self._names:
            raise ValueError(f"{claim.name!r} is claimed already")
        self._names[folded] = claim
        self._unsaved.add(folded)
        return st.claim_name(folded, claim)

    def saved(self, name: str) -> None:
        """A claim's write is done: from now on the database is its record."""
        self._unsaved.discard(fold(name))

    def unclaim(self, name: str) -> None:
        """Undo a claim whose write failed (the database is the record)."""
        self._names.pop(fold(name), None)
        self._unsaved.discard(fold(name))

    def saved_claims(self) -> dict[str, st.SavedName]:
        """The claims the database has as well, by folded name (taken before reading it)."""
        return {f: c for f, c in self._names.items() if f not in self._unsaved}

    def refresh(self, known: dict[str, st.SavedName], on_disk: set[str]) -> list[st.SavedName]:
        """Let go of the claims the database no longer has (`tonk-server names release`,
        while the server runs): `known` is saved_claims() from before the database was read,
        `on_disk` its folded names. A claim made since is kept. Returns those let go."""
        gone = [
            claim
            for folded, claim in known.items()
            if folded not in on_disk and self._names.get(folded) is claim
        ]
        for claim in gone:
            del self._names[fold(claim.name)]
        return gone

    def seats(self, name: str) -> list[st.SavedDoorSeat]:
        """The tables where `name` took a seat through the door, the newest first."""
        rows = self._seats.get(fold(name), {}).values()
        return sorted(rows, key=lambda s: -s.taken)

    def remember_seat(self, name: str, seat: st.SavedDoorSeat) -> st.Op:
        folded = fold(name)
        self._seats.setdefault(folded, {})[seat.table_id] = seat
        return st.put_door_seat(folded, seat)

    def forget_seat(self, name: str, table_id: int) -> st.Op | None:
        folded = fold(name)
        rows = self._seats.get(folded, {})
        if rows.pop(table_id, None) is None:
            return None
        if not rows:
            self._seats.pop(folded, None)
        return st.delete_door_seat(folded, table_id)


def claimed_on_disk(path: Path) -> set[str]:
    """The folded names claimed in the database at `path`, as it stands now."""
    with read_only(path) as conn:
        return {folded for (folded,) in conn.execute("SELECT folded FROM ssh_names")}

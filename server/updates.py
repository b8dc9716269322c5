"""The `update` frames of one change to a hand, for every seat and the spectators at once: what
they are all sent alike is packed once per change, not once per connection.

A frame is the bytes `messages.encode(Table.update_message(seat, start))` gives, exactly (a
test holds the two together): a msgpack map is its header and then its keys and values packed
one after another, so the map can be put together from pieces packed apart. Only the events
(a private event is hidden from all but its seat), the view's `seat` and its `hand` differ
from seat to seat; the rest of the view is packed once, field by field as the view gives them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import msgpack
from tonk.shared import protocol as p
from tonk.shared.cards import format_cards
from tonk.shared.hand import Hand

_pack = msgpack.Packer(use_bin_type=True).pack  # (packb builds a new Packer per call)


def _map_header(size: int) -> bytes:
    return bytes((0x80 | size,)) if size < 16 else b"\xde" + size.to_bytes(2, "big")


def _array_header(size: int) -> bytes:
    return bytes((0x90 | size,)) if size < 16 else b"\xdc" + size.to_bytes(2, "big")


def _header_size(size: int) -> int:
    """The length of the header of a map of `size` pairs."""
    return 1 if size < 16 else 3


def _pairs(data: Mapping[str, object]) -> bytes:
    """The keys and values of `data` packed in order, without the map's header."""
    packed = _pack(data)
    return packed[1:] if len(data) < 16 else packed[3:]


_pack_map_pairs = msgpack.Packer(use_bin_type=True).pack_map_pairs  # (a map from its pairs)


_EVENTS, _VIEW, _RULES, _DEADLINE = (_pack(key) for key in ("events", "view", "rules", "deadline"))
#: A view's fields that differ from seat to seat, each packed as a key.
_OWN = {key: _pack(key) for key in ("seat", "hand")}
_SPECTATOR = _pack(None)  # a spectator's seat
_REPLY_TO = _pack("reply_to")
_SEATS = [_pack(seat) for seat in range(16)]  # more than any table has

#: The packed rules of each rule set seen (by identity; the rule set is kept so that its id
#: is not reused): every view carries them.
_RULES_PACKED: dict[int, tuple[object, bytes]] = {}


def _packed_rules(rules: object, as_dict: object) -> bytes:
    entry = _RULES_PACKED.get(id(rules))
    if entry is not None and entry[0] is rules:
        return entry[1]
    packed = _pack(as_dict)
    if len(_RULES_PACKED) < 256:
        _RULES_PACKED[id(rules)] = (rules, packed)
    return packed


@dataclass(frozen=True, slots=True)
class _Layout:
    """Where a view's fields fall, found by their names once for each order of them: the
    three runs of fields every seat is sent alike (before the seat's first own field, between
    its two, after them), each as (the slice of the view's items before `rules`, the length of
    the header of a map of its pairs, whether `rules` is in the run, the slice after it and its
    map's header length, the packed key that ends the run: the next own field's, or
    `deadline`); a slice is None where it holds no field. (A slice's pairs are packed as a
    map, its header cut off.) `start` is the packed `view` key and the view map's header."""

    parts: tuple[tuple[slice | None, int, bool, slice | None, int, bytes], ...]
    seat_first: bool
    start: bytes


#: The layout of each order of a view's fields seen (one, unless the view changes).
_LAYOUTS: dict[tuple[str, ...], _Layout] = {}


def _layout(keys: tuple[str, ...]) -> _Layout:
    own = [key for key in keys if key in _OWN]
    if sorted(own) != ["hand", "seat"]:
        raise AssertionError(f"a view's own fields are seat and hand, not {own}")
    bounds = [-1, keys.index(own[0]), keys.index(own[1]), len(keys)]
    ends = [_OWN[own[0]], _OWN[own[1]], _DEADLINE]
    parts = []
    for n in range(3):
        first, stop = bounds[n] + 1, bounds[n + 1]
        run = keys[first:stop]
        at = first + run.index("rules") if "rules" in run else stop
        before = slice(first, at) if at > first else None
        after = slice(at + 1, stop) if at + 1 < stop else None
        parts.append(
            (
                before,
                _header_size(at - first),
                at < stop,
                after,
                _header_size(stop - at - 1),
                ends[n],
            )
        )
    layout = _Layout(tuple(parts), own[0] == "seat", _VIEW + _map_header(len(keys)))
    _LAYOUTS[keys] = layout
    return layout


class UpdateFrames:
    """The frames of one change: `frame(seat)` for a seat, `frame(None)` for a spectator."""

    __slots__ = (
        "_between",
        "_common",
        "_events",
        "_fixed",
        "_hand",
        "_head",
        "_owners",
        "_private",
        "_seat_first",
        "_spectators",
        "_tail",
        "_view_start",
    )

    def __init__(
        self, table_id: int, hand_number: int, hand: Hand, start: int, deadline: float | None
    ) -> None:
        self._hand = hand
        # The outer map, as Update.to_wire orders it: type, table, hand, from, events, view,
        # deadline.
        self._head = _map_header(7) + _pairs(
            {"type": p.UPDATE, "table": table_id, "hand": hand_number, "from": start}
        )
        # Each event packed once, and a private one a second time as the others see it.
        events = hand.events[start:]
        self._events = [_pack(event.for_seat(None).to_dict()) for event in events]
        self._private = [
            (i, event.seat, _pack(event.to_dict()))
            for i, event in enumerate(events)
            if event.private
        ]
        # The view as a spectator sees it, packed in the order of its fields: every field but
        # the seat's own two (`seat` and `hand`, all that Hand.view fills from the seat) is
        # the same for every seat, packed once; the frame puts each seat's two in between.
        view = hand.view(None).to_dict()
        keys = tuple(view)
        layout = _LAYOUTS.get(keys) or _layout(keys)
        items = list(view.items())
        pieces = []
        for before, cut_before, rules, after, cut_after, end in layout.parts:
            piece = b"" if before is None else _pack_map_pairs(items[before])[cut_before:]
            if rules:  # the same rule set in every view: packed once for all
                piece += _RULES + _packed_rules(hand.rules, view["rules"])
            if after is not None:
                piece += _pack_map_pairs(items[after])[cut_after:]
            pieces.append(piece + end)
        self._seat_first = layout.seat_first
        self._view_start = layout.start + pieces[0]
        self._between, self._tail = pieces[1], pieces[2] + _pack(deadline)
        self._fixed = len(self._between) + len(self._tail)  # (the parts every seat is sent)
        # The frame's start up to the view's first own value, with the events as every seat
        # sees them that owns none of the private ones; `_owners`: as each owner sees them.
        self._common = self._start(None)
        self._owners: dict[int, bytes] = {}
        self._spectators: bytes | None = None

    def _start(self, shows: int | None) -> bytes:
        """The frame's start up to the view's first own value, with the private events of
        seat `shows` shown and every other private event hidden (as Event.for_seat does)."""
        events = list(self._events)
        for i, owner, public in self._private:
            if owner == shows:
                events[i] = public
        return b"".join(
            (self._head, _EVENTS, _array_header(len(events)), *events, self._view_start)
        )

    def frame(self, seat: int | None) -> bytes:
        if seat is None:
            if self._spectators is None:
                self._spectators = self._frame(self._common, _SPECTATOR, "")
            return self._spectators
        start = self._common
        for _, owner, _ in self._private:
            if owner == seat:
                start = self._owners.get(seat) or self._owners.setdefault(seat, self._start(seat))
                break
        # The seat's own cards: all that Hand.view(seat) shows it beyond what a spectator sees
        # (read here without building the whole view; a test holds every frame to the
        # update_message of the seat, made from Hand.view(seat)).
        return self._frame(start, _SEATS[seat], format_cards(self._hand.hands[seat]))

    def answer(self, seat: int, reply_to: int) -> bytes:
        """`frame(seat)` with `reply_to` last: the frame of the seat whose action this answers
        (its map of 7 keys made one of 8, the key and value put at its end)."""
        frame = self.frame(seat)
        assert frame[p.HEADER_SIZE] == 0x87  # a map of 7 keys
        tail = _REPLY_TO + _pack(reply_to)
        size = len(frame) - p.HEADER_SIZE + len(tail)
        if size > p.MAX_SERVER_FRAME:
            raise p.ProtocolError(
                p.FRAME_TOO_LARGE, f"an update frame of {size} bytes is too large"
            )
        return b"".join(
            (size.to_bytes(p.HEADER_SIZE, "big"), b"\x88", frame[p.HEADER_SIZE + 1 :], tail)
        )

    def _frame(self, start: bytes, packed_seat: bytes, cards: str) -> bytes:
        held = _pack(cards)
        size = len(start) + len(packed_seat) + len(held) + self._fixed
        if size > p.MAX_SERVER_FRAME:
            raise p.ProtocolError(
                p.FRAME_TOO_LARGE, f"an update frame of {size} bytes is too large"
            )
        header = size.to_bytes(p.HEADER_SIZE, "big")
        if self._seat_first:
            return b"".join((header, start, packed_seat, self._between, held, self._tail))
        return b"".join((header, start, held, self._between, packed_seat, self._tail))

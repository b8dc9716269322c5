"""The `update` frames of one change to a hand, for every seat and the spectators at once: what
they are all sent alike is packed once per change, not once per connection.

A frame is the bytes `protocol.encode(Table.update_message(seat, start))` gives, exactly (a
test holds the two together): a msgpack map is its header and then its keys and values packed
one after another, so the map can be put together from pieces packed apart. Only the events
(a private event is hidden from all but its seat), the view's `seat` and its `hand` differ
from seat to seat.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgpack
from tonk.shared import protocol as p
from tonk.shared.cards import Card, format_cards
from tonk.shared.hand import Hand

_pack = msgpack.Packer(use_bin_type=True).pack  # (packb builds a new Packer per call)


def _map_header(size: int) -> bytes:
    return bytes((0x80 | size,)) if size < 16 else b"\xde" + size.to_bytes(2, "big")


def _array_header(size: int) -> bytes:
    return bytes((0x90 | size,)) if size < 16 else b"\xdc" + size.to_bytes(2, "big")


def _pairs(data: Mapping[str, Any]) -> bytes:
    """The keys and values of `data` packed in order, without the map's header."""
    packed = _pack(data)
    return packed[1:] if len(data) < 16 else packed[3:]


_EVENTS, _VIEW, _SEAT, _RULES, _HAND, _DEADLINE = (
    _pack(key) for key in ("events", "view", "seat", "rules", "hand", "deadline")
)
_SPECTATOR = _pack(None)  # a spectator's seat
_SEATS = [_pack(seat) for seat in range(16)]  # more than any table has

#: The packed rules of each rule set seen (by identity; the rule set is kept so that its id
#: is not reused): every view carries them.
_RULES_PACKED: dict[int, tuple[object, bytes]] = {}


def _packed_rules(rules: object, as_dict: Mapping[str, Any]) -> bytes:
    entry = _RULES_PACKED.get(id(rules))
    if entry is not None and entry[0] is rules:
        return entry[1]
    packed = _pack(as_dict)
    if len(_RULES_PACKED) < 256:
        _RULES_PACKED[id(rules)] = (rules, packed)
    return packed


class UpdateFrames:
    """The frames of one change: `frame(seat)` for a seat, `frame(None)` for a spectator."""

    __slots__ = (
        "_events",
        "_frames",
        "_hand",
        "_head",
        "_middle",
        "_private",
        "_shown",
        "_tail",
        "_view_header",
    )

    def __init__(
        self, table_id: int, hand_number: int, hand: Hand, start: int, deadline: float | None
    ) -> None:
        self._hand = hand
        # The outer map: type, table, hand, from, events, view, deadline.
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
        # The view as a spectator sees it: every field but `seat` and `hand` is the same for
        # every seat (Hand.view fills only those two from the seat).
        view = hand.view(None).to_dict()
        keys = list(view)
        self._view_header = _map_header(len(keys))
        assert keys[:2] == ["seat", "rules"] and keys[6] == "hand", keys
        rules = view.pop("rules")
        middle = {key: view.pop(key) for key in keys[2:6]}
        del view["seat"], view["hand"]
        self._middle = _RULES + _packed_rules(hand.rules, rules) + _pairs(middle) + _HAND
        self._tail = _pairs(view) + _DEADLINE + _pack(deadline)
        # The events, the view's header and the `seat` key, by whose private events they show:
        # None, the events every seat but their owners sees.
        self._shown: dict[int | None, bytes] = {}
        self._frames: dict[int | None, bytes] = {}

    def _before_seat(self, seat: int | None) -> bytes:
        """The frame's start up to the view's `seat` value, with the events as `seat` sees
        them (a private event is shown only to its own seat, as Event.for_seat does)."""
        shows = None
        for _, owner, _ in self._private:
            if owner == seat:
                shows = seat
        packed = self._shown.get(shows)
        if packed is None:
            events = list(self._events)
            for i, owner, public in self._private:
                if owner == shows:
                    events[i] = public
            packed = self._shown[shows] = b"".join(
                (
                    self._head,
                    _EVENTS,
                    _array_header(len(events)),
                    *events,
                    _VIEW,
                    self._view_header,
                    _SEAT,
                )
            )
        return packed

    def frame(self, seat: int | None) -> bytes:
        frame = self._frames.get(seat)
        if frame is not None:
            return frame
        cards: tuple[Card, ...]
        if seat is None:
            packed_seat, cards = _SPECTATOR, ()
        else:
            packed_seat, cards = _SEATS[seat], self._hand.view(seat).hand
        payload = b"".join(
            (
                self._before_seat(seat),
                packed_seat,
                self._middle,
                _pack(format_cards(cards)),
                self._tail,
            )
        )
        if len(payload) > p.MAX_SERVER_FRAME:
            raise p.ProtocolError(
                p.FRAME_TOO_LARGE, f"an update frame of {len(payload)} bytes is too large"
            )
        frame = self._frames[seat] = len(payload).to_bytes(p.HEADER_SIZE, "big") + payload
        return frame

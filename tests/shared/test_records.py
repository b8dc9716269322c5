"""Records (shared/records.py): frozen slots values made without `dataclasses`, which must
behave as the frozen slots dataclasses they replace."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest
from tonk.shared.records import record, record_defaults, record_fields, replaced
from tonk.shared.wire import protocol as p
from tonk.shared.wire.wire import ClientMessage, field, message_type


@record
class Point:
    x: int
    y: int = 0
    label: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class DataPoint:
    x: int
    y: int = 0
    label: str | None = None


def test_a_record_is_built_and_compared_as_a_frozen_slots_dataclass_is() -> None:
    point, data = Point(1, label="a"), DataPoint(1, label="a")
    assert (point.x, point.y, point.label) == (data.x, data.y, data.label)
    assert point == Point(x=1, y=0, label="a") and point != Point(2) and point != data
    assert hash(point) == hash(Point(1, 0, "a")) and len({point, Point(1, 0, "a")}) == 1
    assert repr(point) == repr(data).replace("DataPoint", "Point")
    assert Point.__match_args__ == DataPoint.__match_args__ == ("x", "y", "label")
    assert Point.__slots__ == ("x", "y", "label") and not hasattr(point, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 2  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del point.y  # type: ignore[misc]
    with pytest.raises(TypeError):
        Point()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Point(1, 2, "a", 4)  # type: ignore[call-arg]


def test_a_record_is_copied_pickled_and_replaced() -> None:
    point = Point(1, 2, "a")
    assert pickle.loads(pickle.dumps(point)) == point
    assert copy.copy(point) == point and copy.deepcopy(point) == point
    assert replaced(point, y=5) == Point(1, 5, "a") and point.y == 2
    with pytest.raises(TypeError):
        replaced(point, z=1)
    assert record_fields(Point) == ("x", "y", "label")
    assert record_defaults(Point) == {"y": 0, "label": None}


def test_a_field_factory_is_refused_when_the_record_is_declared() -> None:
    with pytest.raises(TypeError, match="default_factory"):

        @record
        class Bad:
            tags: list[str] = dataclasses.field(default_factory=list)


def test_a_records_functions_are_written_by_whichever_is_used_first() -> None:
    def declared() -> type[Point]:
        @record
        class Fresh:
            x: int
            y: int = 0
            label: str | None = None

        return Fresh  # type: ignore[return-value]

    def unpickled(cls: type[Point], *state: object) -> Point:
        """A value of `cls` made without calling its __init__ (as pickle makes one)."""
        made = cls.__new__(cls)
        made.__setstate__(state)  # type: ignore[attr-defined]
        return made

    by_hash, by_eq, by_init = declared(), declared(), declared()
    made = unpickled(by_hash, 1, 0, None)
    assert hash(made) == hash((1, 0, None)) and made == by_hash(1)
    other = unpickled(by_eq, 2, 3, None)
    assert other == unpickled(by_eq, 2, 3, None) and other != unpickled(by_eq, 2, 4, None)
    assert by_eq(2, 3) == other and hash(by_eq(2, 3)) == hash(other)
    first = by_init(5, label="x")
    init = type(first).__init__
    assert by_init(5, label="x") == first and type(first).__init__ is init  # written once
    with pytest.raises(TypeError):
        by_init()


def test_a_stand_in_kept_from_before_the_functions_were_written_still_works() -> None:
    @message_type("kept")
    class Kept(ClientMessage):
        card: str = field(p.CARD_RANGE)
        id: int | None = None

    read = Kept._read  # taken before anything was written
    init = Kept.__init__
    assert read({"type": "kept", "card": "AS"}) == Kept("AS")  # (writes them)
    assert Kept.__init__ is not init and Kept._read is not read
    assert read({"type": "kept", "card": "2C", "id": 3}) == Kept("2C", 3)
    kept = Kept.__new__(Kept)
    init(kept, "KD")  # the old stand-in, after writing
    assert kept == Kept("KD") and hash(kept) == hash(Kept("KD"))

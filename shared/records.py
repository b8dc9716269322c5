"""`@record`: a frozen value class with slots, as `@dataclass(frozen=True, slots=True)` makes
one (keyword and positional construction, defaults, equality and hash by field, a readable
repr, no assignment, pickling), declared in a twentieth of the time.

Why: a program pays for its classes each time it starts, and an SSH door session starts a
client process per guest. In CPython 3.11 the dataclass decorator writes five functions per
class, each through its own `exec`, then builds the class a second time for its slots: about
0.45 ms a class, and a client declares some seventy value classes (its messages, the link's
outputs, its reports, the core's actions and events). A record's class is built once more for
its slots, as a dataclass's is; its `__init__`, `__eq__` and `__hash__` (and any more functions
the caller asks for, as the wire's readers) are written in one `exec` when the first of them is
called, so a program pays for the records it uses; repr, frozenness and pickling are written
once here, for every record. Once written, they are the functions a dataclass would have.

A speed trick, and the one place of the code that writes code at run time (`_write`'s
`exec`): fenced in this module rather than in `_speedups.py`, the others' fence, because that
module imports the core's values, which are records (an import circle). Measured again without
it, every record a frozen dataclass: importing the client takes 15% more CPU time (15 runs of
each, in turn) and 22.5% more instructions (BENCHMARKS.md, "The last three tricks").

What it does not do: `dataclasses.fields`, `replace` and `asdict` do not know a record (use
`record_fields` and `replaced`), and a default is a plain value (no `field(default_factory)`).
The classes whose readers rely on those stay dataclasses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import Field, FrozenInstanceError
from typing import Any, TypeVar, dataclass_transform

_T = TypeVar("_T")


def _repr(self: Any) -> str:
    shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._names)
    return f"{type(self).__qualname__}({shown})"


def _setattr(self: Any, name: str, value: object) -> None:
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _delattr(self: Any, name: str) -> None:
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _getstate(self: Any) -> tuple[Any, ...]:
    return tuple([getattr(self, name) for name in self._names])


def _setstate(self: Any, state: tuple[Any, ...]) -> None:
    for name, value in zip(self._names, state, strict=True):
        object.__setattr__(self, name, value)


def replaced(value: _T, **changes: Any) -> _T:
    """`value` (a record) with some fields changed, as `dataclasses.replace` does."""
    fields = {name: getattr(value, name) for name in value._names}  # type: ignore[attr-defined]
    fields.update(changes)
    return type(value)(**fields)


def record_fields(cls: type[Any]) -> tuple[str, ...]:
    """A record class's field names, in the order declared."""
    names: tuple[str, ...] = cls._names
    return names


def record_defaults(cls: type[Any]) -> dict[str, Any]:
    """A record class's defaults, by field name (a field without one is not there)."""
    defaults: dict[str, Any] = cls._defaults
    return defaults


_GENERIC: dict[str, object] = {
    "__repr__": _repr,
    "__setattr__": _setattr,
    "__delattr__": _delattr,
    "__getstate__": _getstate,
    "__setstate__": _setstate,
}


@dataclass_transform(frozen_default=True)
def record(cls: type[_T]) -> type[_T]:
    """Declare `cls` a record: its fields are its annotated attributes (not ClassVars), in the
    order written, each with its default if it has one."""
    return build(cls)


#: Writes more functions for a record class in the same `exec` as its `__init__`: given the
#: class, its field names and their defaults, the source and the names that source uses. Each
#: function it defines becomes the class's attribute of the same name.
More = Callable[[type[Any], tuple[str, ...], dict[str, Any]], tuple[str, dict[str, Any]]]


def build(
    cls: type[_T],
    more: More | None = None,
    more_names: tuple[str, ...] = (),
    **attributes: object,
) -> type[_T]:
    """The record made of `cls` (see `record`), with `attributes` set on the class, and
    `more`'s functions (named `more_names`).

    Its `__init__`, `__eq__` and `__hash__` (and `more`'s functions) are written when the first
    of them is called: until then each is a stand-in, shared by every record, that writes
    them all, puts them on the class, and calls the real one. A program starting pays for the
    few records it uses at once, not for the seventy a client declares (writing them is most
    of a record's cost)."""
    namespace = dict(cls.__dict__)
    annotations: dict[str, object] = namespace.get("__annotations__", {})
    names = tuple(
        name
        for name, annotation in annotations.items()
        if not str(annotation).startswith(("ClassVar", "typing.ClassVar"))
    )
    defaults = {name: namespace.pop(name) for name in names if name in namespace}
    for name, default in defaults.items():
        if isinstance(default, Field):
            raise TypeError(
                f"{cls.__name__}.{name}: a record's field takes a plain default, not a "
                "dataclasses.field (default_factory)"
            )
    namespace.pop("__dict__", None)
    namespace.pop("__weakref__", None)
    for attr, function in _GENERIC.items():
        namespace.setdefault(attr, function)
    namespace["__slots__"] = names
    namespace["__match_args__"] = names
    namespace["_names"] = names
    namespace["_defaults"] = defaults
    namespace.update(attributes)
    own = [name for name in ("__eq__", "__hash__") if name in namespace]
    written = [name for name in ("__init__", "__eq__", "__hash__", *more_names) if name not in own]
    for name in written:
        namespace[name] = _STAND_INS.get(name) or _class_stand_in(name)
    namespace["_pending"] = (names, defaults, more, written)
    # The class again, with its slots (as dataclasses does for slots=True).
    made: type[_T] = type(cls.__name__, cls.__bases__, namespace)
    made.__qualname__ = cls.__qualname__
    return made


# -- the stand-ins, shared by every record until its functions are written ----------------------


def _written(cls: type[Any], attr: str, stand_in: object) -> type[Any]:
    """The record (`cls` or the one it derives from) whose `attr` is `stand_in`, its
    functions written now if they were not yet (by a call meanwhile, or through a stand-in
    someone kept)."""
    owner = next((c for c in cls.__mro__ if c.__dict__.get(attr) is stand_in), None)
    if owner is None:  # written already
        return next(c for c in cls.__mro__ if attr in c.__dict__)
    pending = owner.__dict__["_pending"]
    if pending is not None:
        _write(owner, *pending)
        type.__setattr__(owner, "_pending", None)
    return owner


def _init_stand_in(self: Any, *args: Any, **kwargs: Any) -> None:
    _written(type(self), "__init__", _init_stand_in).__dict__["__init__"](self, *args, **kwargs)


def _eq_stand_in(self: Any, other: object) -> object:
    eq: Callable[[Any, object], object] = _written(type(self), "__eq__", _eq_stand_in).__dict__[
        "__eq__"
    ]
    return eq(self, other)


def _hash_stand_in(self: Any) -> int:
    hash_of: Callable[[Any], int] = _written(type(self), "__hash__", _hash_stand_in).__dict__[
        "__hash__"
    ]
    return hash_of(self)


_STAND_INS: dict[str, object] = {
    "__init__": _init_stand_in,
    "__eq__": _eq_stand_in,
    "__hash__": _hash_stand_in,
}


def _class_stand_in(attr: str) -> object:
    """A stand-in for `more`'s function `attr`, called on the class (`cls._read(data)`)."""

    def stand_in(cls: type[Any], *args: Any, **kwargs: Any) -> Any:
        return getattr(_written(cls, attr, made), attr)(*args, **kwargs)

    made = classmethod(stand_in)
    _STAND_INS[attr] = made
    return made


def _write(
    cls: type[Any],
    names: tuple[str, ...],
    defaults: dict[str, Any],
    more: More | None,
    written: list[str],
) -> None:
    """Write `cls.__init__` (`__init__(self, card, id=d1)` storing each field), `__eq__` and
    `__hash__` (on the tuple of the fields), as functions of its own as dataclasses does (the
    core compares actions and cards on every move), and `more`'s functions, in one `exec`, and
    put those named `written` on the class (a class's own `__eq__` or `__hash__` stays)."""
    namespace: dict[str, Any] = {"cls": cls, "_set": object.__setattr__}
    params = []
    for n, name in enumerate(names):
        if name in defaults:
            namespace[f"d{n}"] = defaults[name]
            params.append(f"{name}=d{n}")
        else:
            params.append(name)
    stores = "".join(f"    _set(self, {name!r}, {name})\n" for name in names) or "    pass\n"
    mine = "".join(f"self.{name}," for name in names)
    theirs = "".join(f"other.{name}," for name in names)
    source = (
        f"def __init__(self, {', '.join(params)}):\n{stores}"
        "def __eq__(self, other):\n"
        "    if other.__class__ is self.__class__:\n"
        f"        return ({mine}) == ({theirs})\n"
        "    return NotImplemented\n"
        f"def __hash__(self):\n    return hash(({mine}))\n"
    )
    if more is not None:
        extra, uses = more(cls, names, defaults)
        source += extra
        namespace.update(uses)
    exec(source, namespace)  # (made of the class's field names, and what `more` wrote)
    for name in written:
        function: Callable[..., Any] = namespace[name]
        function.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, function)

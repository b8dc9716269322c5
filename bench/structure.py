"""Counts of the code's shape, for before-and-after comparisons of a restructuring: not a timing.

    .venv/bin/python bench/structure.py            # a table of counts
    .venv/bin/python bench/structure.py --json     # the same as JSON
    .venv/bin/python bench/structure.py --at 6da6638   # the parts' reach in that commit too

What it counts, each from the source as it is (nothing here is typed in by hand):

- the lines of the largest files;
- the classes one table is made of (the server's `Table`, the parts it holds, and every class
  they inherit from in `tonk.server`), the files they span, the fields of each part (what
  each holds of the table's state) and the deepest inheritance among them;
- for each part of a table, the names it reaches of each other part (`self._seats.names()`,
  `seats = self._seats` then `seats[n]`; `self.table.play.hand` in older code) and of the
  table itself (`self._table.now`), read from the part's file; and how many names the types
  its constructor is given offer it (each counted as the part's its argument stands for, or
  the table's); `--at COMMIT` counts these in the code of that commit (`git show`), for a
  before-and-after;
- the places a client message is declared: for each message type, the files of `shared/` and
  `server/` that name its type constant (`p.DISCARD`, `DISCARD:`) or its class;
- the functions that turn a move from one form into another (`action_*`, `*_action`);
- code written at run time (`exec(`, `compile(`) and classes swapped at run time
  (`__class__ =`);
- the places that put a msgpack frame together from bytes (its length prefix written outside
  `protocol.encode`);
- the untyped wire maps (`dict[str, Any]`) in each folder;
- in the message modules (`shared/*_messages.py`): the `to_wire`/`from_wire` methods written
  by hand, on message classes and on the values they carry, the field names spelt a second
  time in them (a string in a method that is one of its class's fields or wire keys), and the
  message classes that declare `id` themselves.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import inspect
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FOLDERS = ("shared", "server", "client")


def sources() -> dict[str, str]:
    """Every module's text by its path from the top of the checkout."""
    found: dict[str, str] = {}
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            found[str(path.relative_to(ROOT))] = path.read_text("utf-8")
    return found


def largest(texts: dict[str, str], count: int = 5) -> list[tuple[str, int]]:
    lines = {path: text.count("\n") for path, text in texts.items()}
    return sorted(lines.items(), key=lambda item: -item[1])[:count]


def _slots(cls: type) -> list[str]:
    """The fields `cls` and its bases in tonk.server declare."""
    return [
        name
        for base in cls.__mro__
        if base.__module__.startswith("tonk.server")
        for name in base.__dict__.get("__slots__", ())
    ]


def _ours(cls: type) -> list[type]:
    """`cls` and its bases in tonk.server."""
    return [base for base in cls.__mro__ if base.__module__.startswith("tonk.server")]


def table_parts() -> dict[str, tuple[type, list[str]]]:
    """`Table` and every part it holds (a field whose value holds the table back), each as
    its class and its own fields (the parts, a part's link back to the table and the other
    parts it is given, left out).
    The table is built as the server builds one, outside a server: nothing asks it anything."""
    from tonk.server.tables.table import Table, TableConfig
    from tonk.shared.game.rules import PRESETS

    async def build() -> Table:
        return Table(None, 1, "t", TableConfig(rules=PRESETS["classic"]), 0.0)  # type: ignore[arg-type]

    table = asyncio.run(build())
    fields = _slots(Table)
    parts = {
        name: getattr(table, name) for name in fields if _link(getattr(table, name, None)) is table
    }
    out: dict[str, tuple[type, list[str]]] = {
        "Table": (Table, [name for name in fields if name not in parts])
    }
    held = {id(part) for part in parts.values()}
    for name, part in parts.items():
        out[name] = (
            type(part),
            [
                f
                for f in _slots(type(part))
                if f not in _TABLE_LINKS and id(getattr(part, f)) not in held
            ],
        )
    return out


#: A part's link back to its table: `_table` (private since the links were narrowed), or
#: `table` before.
_TABLE_LINKS = ("_table", "table")


def _link(part: object) -> object:
    """The table `part` holds a link back to, if it does."""
    return next((getattr(part, n) for n in _TABLE_LINKS if hasattr(part, n)), None)


def _is_table_module(path: str) -> bool:
    """One of a table's modules (server/tables/table*.py; server/table*.py before the
    sub-packages)."""
    folder, _, name = path.rpartition("/")
    return (
        folder in ("server", "server/tables") and name.startswith("table") and name.endswith(".py")
    )


def _table_path(texts: dict[str, str]) -> str:
    """Where table.py is in `texts`: server/tables/table.py, or server/table.py before."""
    return "server/tables/table.py" if "server/tables/table.py" in texts else "server/table.py"


def _part_modules(table_source: str, folder: str = "server/tables") -> dict[str, str]:
    """Each part `Table` holds, by its field's name, and the module of its class: read from
    table.py's text (`self.seats = TableSeats(...)` and `from .table_seats import TableSeats`)."""
    modules = {
        alias.name: node.module
        for node in ast.walk(ast.parse(table_source))
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 1
        for alias in node.names
    }
    out = {}
    for node in ast.walk(ast.parse(table_source)):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id in modules
            and node.value.func.id.startswith("Table")
        ):
            for target in node.targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                ):
                    out[target.attr] = f"{folder}/{modules[node.value.func.id]}.py"
    return out


def _reach(source: str, parts: set[str], own: str) -> dict[str, list[str]]:
    """The names a part's module reaches of each other part and of the table ("table"): an
    attribute of `self.table.<part>`, `table.<part>` (with `table = self.table`) or
    `self.<part>`, or of a local name set to one of those; and `self.table.<name>`."""
    reached: dict[str, set[str]] = {}

    def held(node: ast.expr, aliases: dict[str, str]) -> str | None:
        """Which part (or "table") `node` is, if it is one (a link held as `self._seats`
        or, before the links were private, `self.seats`)."""
        if isinstance(node, ast.Name):
            return aliases.get(node.id)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                if node.attr in _TABLE_LINKS:
                    return "table"
                part = node.attr.removeprefix("_")
                return part if part in parts and part != own else None
            if held(node.value, aliases) == "table" and node.attr in parts:
                return None if node.attr == own else node.attr
        return None

    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        aliases: dict[str, str] = {}
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target = node.targets[0]
                which = held(node.value, aliases)
                if isinstance(target, ast.Name) and which is not None:
                    aliases[target.id] = which
        for node in ast.walk(function):
            if not isinstance(node, ast.Attribute):
                if isinstance(node, ast.Subscript | ast.For | ast.comprehension):
                    # a part read as a sequence: `seats[n]`, `for seat in seats`
                    seq = node.value if isinstance(node, ast.Subscript) else node.iter
                    which = held(seq, aliases)
                    if which is not None and which != "table":
                        reached.setdefault(which, set()).add("[]")
                continue
            which = held(node.value, aliases)
            if which is None or (which == "table" and node.attr in parts):
                continue
            if node.attr == own and which == "table":
                continue
            reached.setdefault(which, set()).add(node.attr)
    return {which: sorted(names) for which, names in sorted(reached.items())}


def part_reach(texts: dict[str, str]) -> dict[str, dict[str, list[str]]]:
    """For each part of a table: the names it reaches of each other part and of the table."""
    table_path = _table_path(texts)
    modules = _part_modules(texts[table_path], table_path.rpartition("/")[0])
    parts = set(modules)
    return {part: _reach(texts[path], parts, part) for part, path in modules.items()}


def _classes(texts: dict[str, str]) -> dict[str, ast.ClassDef]:
    """Every class of the table's modules, by name."""
    return {
        node.name: node
        for path, text in texts.items()
        if _is_table_module(path)
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.ClassDef)
    }


def _offered(name: str, classes: dict[str, ast.ClassDef]) -> set[str]:
    """The names class `name` offers whoever holds one: its public methods and fields (a
    sequence's dunders as "[]"), and those of its bases among `classes`."""
    node = classes.get(name)
    if node is None:
        return set()
    names: set[str] = set()
    for item in node.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
            if item.name in ("__getitem__", "__iter__", "__len__", "__setitem__"):
                names.add("[]")
            elif not item.name.startswith("_"):
                names.add(item.name)
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            names.add(item.target.id)
        elif isinstance(item, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__slots__" for t in item.targets
        ):
            names.update(
                e.value
                for e in ast.walk(item.value)
                if isinstance(e, ast.Constant)
                and isinstance(e.value, str)
                and not e.value.startswith("_")
            )
    for base in node.bases:
        if isinstance(base, ast.Name):
            names |= _offered(base.id, classes)
    return names


def part_given(texts: dict[str, str]) -> dict[str, tuple[list[str], int]]:
    """For each part of a table: the types its constructor is given, and how many names it
    can reach through them, each counted once as its owner's (`table.now`, `seats.names`):
    what each type offers, and through a part held there, that part's names and its own
    table's (as its constructor types it)."""
    table_path = _table_path(texts)
    modules = _part_modules(texts[table_path], table_path.rpartition("/")[0])
    classes = _classes(texts)
    part_class = {
        part: next(
            n.name
            for n in ast.walk(ast.parse(texts[path]))
            if isinstance(n, ast.ClassDef) and n.name.startswith("Table")
        )
        for part, path in modules.items()
    }

    def given(cls: str) -> list[tuple[str, str]]:
        """(whose, type) of each argument of `cls`'s constructor typed with a class of the
        table's modules: whose, the part it stands for by its name (`seats: PlaySeats`), else
        the table's (`table: PlayFrame`)."""
        init = next(
            item
            for item in classes[cls].body
            if isinstance(item, ast.FunctionDef) and item.name == "__init__"
        )
        out = []
        for arg in init.args.args[1:]:
            kind = "" if arg.annotation is None else ast.unparse(arg.annotation).strip("'\"")
            if kind in classes:
                out.append((arg.arg if arg.arg in part_class else "table", kind))
        return out

    label = {cls: part for part, cls in part_class.items()}
    out: dict[str, tuple[list[str], int]] = {}
    for part, cls in part_class.items():
        reached: set[str] = set()
        seen: set[tuple[str, str]] = set()
        todo = given(cls)
        while todo:
            owner, kind = todo.pop()
            if (owner, kind) in seen:
                continue
            seen.add((owner, kind))
            for name in _offered(kind, classes):
                if name in part_class:
                    todo.append((name, part_class[name]))
                elif name == "table" and kind in label:
                    todo.append(given(kind)[0])  # (a part's first argument: its table)
                else:
                    reached.add(f"{owner}.{name}")
        out[part] = ([kind for _, kind in given(cls)], len(reached))
    return out


def sources_at(commit: str) -> dict[str, str]:
    """The table's modules as they are in `commit`."""
    names = subprocess.run(
        ["git", "-C", str(ROOT), "ls-tree", "-r", "--name-only", commit, "server/"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return {
        path: subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{commit}:{path}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for path in names
        if _is_table_module(path)
    }


def table_classes(parts: dict[str, tuple[type, list[str]]]) -> list[tuple[str, str, int]]:
    """(class, file, depth) for `Table`, each part it holds, and each of their bases in
    tonk.server (depth: how many classes of tonk.server the holder's inheritance chain has)."""
    out = []
    for holder, _ in parts.values():
        chain = _ours(holder)
        for cls in chain:
            path = Path(inspect.getsourcefile(cls) or "").resolve()
            out.append((cls.__name__, str(path.relative_to(ROOT)), len(chain)))
    return out


def message_declarations(texts: dict[str, str]) -> dict[str, int]:
    """For each client message type: the files of shared/ and server/ that name it."""
    from tonk.shared.wire import protocol as p
    from tonk.shared.wire.client_messages import CLIENT_TYPES

    constants = {
        value: name for name, value in vars(p).items() if name.isupper() and isinstance(value, str)
    }
    counts: dict[str, int] = {}
    for kind, cls in CLIENT_TYPES.items():
        words = [cls.__name__]
        if kind in constants:
            words.append(constants[kind])
        pattern = re.compile(r"\b(" + "|".join(map(re.escape, words)) + r")\b")
        counts[kind] = sum(
            1
            for path, text in texts.items()
            if path.startswith(("shared/", "server/")) and pattern.search(text)
        )
    return counts


#: The names of functions that turn a move into another form.
TRANSLATOR = re.compile(r"action_(of|to_\w+|from_\w+|message|request)")


def move_translators(texts: dict[str, str]) -> list[str]:
    """Functions named as turning a move into another form (Textual's `action_*` methods,
    which are key handlers, are not looked at: only shared/ and server/)."""
    found = []
    for path, text in texts.items():
        if path.startswith("client/"):
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and TRANSLATOR.fullmatch(
                node.name
            ):
                found.append(f"{path}:{node.name}")
    return sorted(found)


def run_time_code(texts: dict[str, str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"exec/compile": [], "__class__ swap": []}
    for path, text in texts.items():
        for node in ast.walk(ast.parse(text)):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("exec", "compile")
            ):
                out["exec/compile"].append(f"{path}:{node.lineno}")
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Attribute) and t.attr == "__class__" for t in node.targets
            ):
                out["__class__ swap"].append(f"{path}:{node.lineno}")
        if "__class__ =" in text and not any(
            p.startswith(path) for p in out["__class__ swap"]
        ):  # (written in generated source, as text)
            out["__class__ swap"].append(f"{path} (in generated source)")
    return out


#: A frame's length prefix written (`... .to_bytes(p.HEADER_SIZE, "big")`).
FRAME_PREFIX = re.compile(r"to_bytes\((?:p\.)?HEADER_SIZE\b")


def frames_from_bytes(texts: dict[str, str]) -> list[str]:
    """The places that put a msgpack frame together from bytes: a frame's length prefix
    written anywhere but `protocol.encode` (which packs the message whole)."""
    return [
        f"{path}:{number}"
        for path, text in texts.items()
        if path != "shared/wire/protocol.py"
        for number, line in enumerate(text.splitlines(), 1)
        if FRAME_PREFIX.search(line)
    ]


def untyped_maps(texts: dict[str, str]) -> dict[str, int]:
    return {
        folder: sum(
            text.count("dict[str, Any]") for path, text in texts.items() if path.startswith(folder)
        )
        for folder in FOLDERS
    }


#: The modules the messages are declared in.
MESSAGE_MODULES = ("shared/wire/client_messages.py", "shared/wire/server_messages.py")


def _is_message(node: ast.ClassDef) -> bool:
    """Declared with `@message_type(...)` (imported here as `_message`)."""
    return any(
        isinstance(d, ast.Call) and isinstance(d.func, ast.Name) and "message" in d.func.id
        for d in node.decorator_list
    )


def hand_written_wire(texts: dict[str, str]) -> dict[str, Any]:
    """The `to_wire`/`from_wire` methods written by hand in the message modules, on message
    classes and on the values they carry, the field names they spell again, and the message
    classes that declare `id` themselves."""
    out: dict[str, Any] = {"messages": [], "values": [], "keys spelt twice": 0, "own id": 0}
    for path in MESSAGE_MODULES:
        for node in ast.walk(ast.parse(texts[path])):
            if not isinstance(node, ast.ClassDef):
                continue
            names = set()
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.add(item.target.id)
                    if item.target.id == "id" and _is_message(node):
                        out["own id"] += 1
            keys = {
                kw.value.value
                for item in ast.walk(node)
                if isinstance(item, ast.Call)
                for kw in item.keywords
                if kw.arg == "key" and isinstance(kw.value, ast.Constant)
            }
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name in ("to_wire", "from_wire"):
                    kind = "messages" if _is_message(node) else "values"
                    out[kind].append(f"{node.name}.{item.name}")
                    out["keys spelt twice"] += sum(
                        1
                        for c in ast.walk(item)
                        if isinstance(c, ast.Constant) and c.value in names | keys
                    )
    return out


def counts(at: str | None = None) -> dict[str, Any]:
    texts = sources()
    parts = table_parts()
    tables = table_classes(parts)
    declared = message_declarations(texts)
    return {
        "modules": {folder: sum(p.startswith(folder) for p in texts) for folder in FOLDERS},
        "largest files": largest(texts),
        "table classes": tables,
        "files one table spans": len({path for _, path, _ in tables}),
        "table parts (class, fields)": {
            name: (cls.__name__, fields) for name, (cls, fields) in parts.items()
        },
        "fields per table part": {name: len(fields) for name, (_, fields) in parts.items()},
        "names each table part reaches, of the others": part_reach(texts),
        "types each table part is given, names reachable": part_given(texts),
        "table inheritance depth": max(depth for _, _, depth in tables),
        "files naming a client message (median, most)": [
            statistics.median(declared.values()),
            max(declared.values()),
        ],
        "move translators": move_translators(texts),
        "run-time code": run_time_code(texts),
        "frames put together from bytes": frames_from_bytes(texts),
        "dict[str, Any] by folder": untyped_maps(texts),
        **{
            name: wire[kind]
            for wire in [hand_written_wire(texts)]
            for name, kind in (
                ("message to_wire/from_wire by hand", "messages"),
                ("their values' to_wire/from_wire by hand", "values"),
                ("field names spelt again in them", "keys spelt twice"),
                ("message classes declaring id", "own id"),
            )
        },
    } | (
        {}
        if at is None
        else {
            f"names each table part reaches, of the others, at {at}": part_reach(sources_at(at)),
            f"types each table part is given, names reachable, at {at}": part_given(sources_at(at)),
        }
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    parser.add_argument(
        "--at", metavar="COMMIT", help="also count the parts' reach in the code of COMMIT"
    )
    args = parser.parse_args(argv)
    found = counts(args.at)
    if args.json:
        print(json.dumps(found, indent=2))
        return 0
    for name, value in found.items():
        if name.startswith("names each table part reaches"):
            print(f"{name}:")
            for part, reached in value.items():
                print(f"    {part}:", "; ".join(f"{o} {', '.join(n)}" for o, n in reached.items()))
        elif name.startswith("types each table part is given"):
            print(f"{name}:")
            for part, (kinds, count) in value.items():
                print(f"    {part}: {', '.join(kinds)}: {count}")
        elif isinstance(value, list) and value and isinstance(value[0], tuple | str):
            print(f"{name}: {len(value)}")
            for item in value:
                print("   ", " ".join(map(str, item)) if isinstance(item, tuple) else item)
        elif isinstance(value, dict) and any(isinstance(v, tuple) for v in value.values()):
            print(f"{name}: {len(value)}")
            for key, (cls, fields) in value.items():
                print(f"    {key}: {cls}, {len(fields)}: {', '.join(fields)}")
        elif isinstance(value, dict) and any(isinstance(v, list) for v in value.values()):
            for key, items in value.items():
                print(f"{name}, {key}: {len(items)}")
                for item in items:
                    print("   ", item)
        else:
            print(f"{name}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

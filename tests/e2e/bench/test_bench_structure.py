"""The structure counts (bench/structure.py) run from a checkout, and what they say can be
checked against the source: every place named holds what it is counted for."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from checkout import ROOT

pytestmark = pytest.mark.e2e


def test_the_structure_counts_point_at_what_they_count() -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "structure.py"), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    found = json.loads(run.stdout)
    tables = found["table classes"]
    assert tables[0][0] == "Table"
    assert found["files one table spans"] == len({path for _, path, _ in tables})
    for name, path, depth in tables:
        assert f"class {name}" in (ROOT / path).read_text()
        assert 1 <= depth <= found["table inheritance depth"]
    parts = found["table parts (class, fields)"]
    assert {name for name, _, _ in tables} >= {name for name, _ in parts.values()}
    for part, (name, fields) in parts.items():
        assert found["fields per table part"][part] == len(fields)
        path = next(path for held, path, _ in tables if held == name)
        for field in fields:  # each assigned in its class's file
            assert f"self.{field}" in (ROOT / path).read_text(), (part, field)
    for part, reached in found["names each table part reaches, of the others"].items():
        for owner, names in reached.items():  # each a name the other part offers
            if owner == "table":
                continue
            held = next(path for held, path, _ in tables if held == parts[owner][0])
            text = (ROOT / held).read_text()
            for name in names:
                declared = (f"def {name}(", f"self.{name} =", f"self.{name}: ")
                assert name == "[]" or any(d in text for d in declared), (part, owner, name)
    classes = {name for name, _ in parts.values()}
    for part, (kinds, reachable) in found[
        "types each table part is given, names reachable"
    ].items():
        assert part in parts and kinds and reachable > 0
        # given the other parts it calls themselves, and the table as its frame
        assert set(kinds) - {"TableFrame"} <= classes and "TableFrame" in kinds, (part, kinds)
        used = sum(
            len(names)
            for names in found["names each table part reaches, of the others"][part].values()
        )
        assert reachable >= used, (part, reachable, used)
    for place in found["run-time code"]["exec/compile"]:
        path, line = place.rsplit(":", 1)
        text = (ROOT / path).read_text().splitlines()[int(line) - 1]
        assert "exec(" in text or "compile(" in text, (place, text)
    for place in found["frames put together from bytes"]:
        path, line = place.rsplit(":", 1)
        text = (ROOT / path).read_text().splitlines()[int(line) - 1]
        assert "HEADER_SIZE" in text, (place, text)
    for place in found["move translators"]:
        path, name = place.rsplit(":", 1)
        assert f"def {name}(" in (ROOT / path).read_text()
    largest = found["largest files"]
    assert [lines for _, lines in largest] == sorted((lines for _, lines in largest), reverse=True)
    for path, lines in largest:
        assert (ROOT / path).read_text().count("\n") == lines
    median, most = found["files naming a client message (median, most)"]
    assert 1 <= median <= most
    modules = [
        (ROOT / "shared" / "wire" / f"{side}_messages.py").read_text()
        for side in ("client", "server")
    ]
    for kind in ("message to_wire/from_wire by hand", "their values' to_wire/from_wire by hand"):
        for place in found[kind]:
            name, method = place.split(".")
            text = next(
                text for text in modules if f"\nclass {name}(" in text or f"\nclass {name}:" in text
            )
            after = text.split(f"\nclass {name}", 1)[1].split("\nclass ", 1)[0]
            assert f"def {method}(" in after, place
    assert found["field names spelt again in them"] >= 0
    assert found["message classes declaring id"] == 0

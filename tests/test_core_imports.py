"""The game core's modules import each other without a circle, and import nothing of the
server or the client."""

from __future__ import annotations

import ast
from pathlib import Path

SHARED = Path(__file__).parent.parent / "shared"


def core_imports() -> dict[str, set[str]]:
    """Each module of shared/ and the modules of shared/ it imports (at any level)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(SHARED.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                if node.level == 1 and node.module:
                    found.add(node.module.split(".")[0])
                elif node.level == 1:
                    found.update(alias.name for alias in node.names)
                elif node.module and node.module.startswith("tonk."):
                    found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names if alias.name.startswith("tonk."))
        graph[path.stem] = found
    return graph


def test_the_core_imports_nothing_of_the_server_or_the_client() -> None:
    for module, imported in core_imports().items():
        outside = {name for name in imported if name.startswith("tonk.")}
        assert not outside, f"{module} imports {outside}"


def test_no_module_of_the_core_imports_itself_through_others() -> None:
    graph = core_imports()
    for start in graph:
        seen: set[str] = set()
        todo = [name for name in graph[start] if name in graph]
        while todo:
            name = todo.pop()
            assert name != start, f"{start} imports itself through {sorted(seen)}"
            if name not in seen:
                seen.add(name)
                todo.extend(n for n in graph[name] if n in graph)


def test_the_graph_holds_the_imports_it_checks() -> None:
    graph = core_imports()
    assert "legality" in graph["view"] and "view" not in graph["legality"]
    assert "expert" in graph["bots"] and "bots" not in graph["expert"]

"""No import circle in tonk: no module of shared/, server/ or client/ imports itself through
others, and no sub-package (an area: `game`, `wire`, `store`, `doors`, `model`, ...) imports
itself through the other areas of its folder, nor a folder through the others. Every import
counts, wherever it stands: at the top, inside a function, or for the type checker only."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from checkout import ROOT
from importkit import imports

FOLDERS = {"shared": "tonk.shared", "server": "tonk.server", "client": "tonk.client"}


def module_name(path: Path) -> str:
    folder = path.relative_to(ROOT).parts[0]
    parts = [*FOLDERS[folder].split("."), *path.relative_to(ROOT / folder).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for folder in FOLDERS for p in sorted((ROOT / folder).rglob("*.py"))}


def imports_of(name: str, path: Path, known: Iterable[str]) -> set[str]:
    """The modules of tonk the module imports: for `from x import y` the module `x.y` when there
    is one, else `x`."""
    known = set(known)
    found: set[str] = set()
    for source, names in imports(name, path):
        found.update(f"{source}.{n}" if f"{source}.{n}" in known else source for n in names)
        if not names:
            found.add(source)
    return (found & known) - {name}


def module_graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports_of(name, path, found) for name, path in found.items()}


def area(module: str, path: Path) -> str:
    """A module's area: its folder's sub-package (`tonk.server.store`), or its folder for a
    module at the top of one (`tonk.server`)."""
    parts = module.split(".")
    if path.stem == "__init__":
        parts.append("__init__")
    return ".".join(parts[:3]) if len(parts) > 3 else ".".join(parts[:2])


def collapsed(graph: Mapping[str, set[str]], group: Mapping[str, str]) -> dict[str, set[str]]:
    """The graph of the groups: one group imports another when any of its modules does."""
    out: dict[str, set[str]] = {}
    for name, imported in graph.items():
        out.setdefault(group[name], set()).update(
            group[other] for other in imported if group[other] != group[name]
        )
    return out


def circles(graph: Mapping[str, set[str]]) -> list[frozenset[str]]:
    """Each set of nodes that reach one another (more than one), by Tarjan's algorithm."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            members = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                members.add(member)
                if member == node:
                    break
            if len(members) > 1:
                found.append(frozenset(members))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def areas_graph(graph: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """The graph of the sub-packages (a folder's top modules, `app.py` and its like, stand over
    its areas and are left out)."""
    paths = modules()
    areas = collapsed(graph, {name: area(name, path) for name, path in paths.items()})
    subs = {a for a in areas if a.count(".") == 2}
    return {a: areas[a] & subs for a in subs}


def test_no_module_imports_itself_through_others() -> None:
    found = circles(module_graph())
    assert not found, f"import circles: {[sorted(c) for c in found]}"


def test_no_area_of_a_folder_imports_itself_through_the_others() -> None:
    found = circles(areas_graph(module_graph()))
    assert not found, f"circles between areas: {[sorted(c) for c in found]}"


def test_no_folder_imports_itself_through_the_others() -> None:
    graph = module_graph()
    folders = collapsed(graph, {name: ".".join(name.split(".")[:2]) for name in graph})
    assert not circles(folders), folders


def test_the_probe_finds_circles() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset({"a", "b", "c"})]
    graph = module_graph()
    assert "tonk.shared.game.legality" in graph["tonk.shared.game.view"]
    assert "tonk.shared.terms" in graph["tonk.shared.game.session"]  # (a `from .. import x`)
    assert "tonk.server.store.saved" in graph["tonk.server.store.store_ops"]
    areas = areas_graph(graph)
    assert "tonk.shared.game" in areas["tonk.shared.wire"]
    assert "tonk.server.store" in areas["tonk.server.tables"]
    assert "tonk.client.text" in areas["tonk.client.model"]

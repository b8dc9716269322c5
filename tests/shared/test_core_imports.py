"""The game core's modules import each other without a circle, import nothing of the server or
the client, and its sub-packages keep their order: the game and the wire below the bots, the
bots below the simulator. Only the simulator's command line (`tonk-sim`, the one edge in
shared/, and what it prints) reaches the terminal, the clock or other processes."""

from __future__ import annotations

from pathlib import Path

from checkout import ROOT
from importkit import imports

SHARED = ROOT / "shared"

#: What each sub-package of shared/ may import of the others (besides itself and the modules
#: at the top of shared/). The game and the wire share the words at the top (terms.py: the
#: error codes, seat kinds): the wire reads the game, never the other way.
MAY_IMPORT = {
    "game": set(),
    "wire": {"game"},
    "bots": {"game", "wire"},
    "sim": {"game", "wire", "bots"},
}
#: Modules of the standard library and packages that mean I/O: the terminal, the clock,
#: processes, the network.
EDGES = {
    "asyncio",
    "socket",
    "time",
    "multiprocessing",
    "concurrent",
    "subprocess",
    "rich",
    "textual",
    "plotext",
    "os",
    "sys",
    "threading",
}
#: The modules of shared/ that may use them: `tonk-sim`'s command line and what it prints.
THE_EDGE = {"tonk.shared.sim.command", "tonk.shared.sim.text"}


def module_name(path: Path) -> str:
    parts = ["tonk", "shared", *path.relative_to(SHARED).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def core_imports() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Each module of shared/ (at any depth) with the modules of tonk it imports, at any level
    of its code, and the other top-level modules it imports."""
    graph: dict[str, set[str]] = {}
    others: dict[str, set[str]] = {}
    for path in sorted(SHARED.rglob("*.py")):
        name = module_name(path)
        found: set[str] = set()
        outside: set[str] = set()
        for source, names in imports(name, path):
            if source.startswith("tonk."):
                found.add(source)
                found.update(f"{source}.{n}" for n in names)
            else:
                outside.add(source.split(".")[0])
        graph[name] = found
        others[name] = outside
    modules = set(graph)
    outside_tonk = {
        name: {t for t in found if not t.startswith("tonk.shared")} for name, found in graph.items()
    }
    graph = {
        name: ({t for t in found if t in modules} - {name}) | outside_tonk[name]
        for name, found in graph.items()
    }
    return graph, others


def area(module: str) -> str | None:
    """The sub-package of shared/ a module is in (None: the top of shared/)."""
    parts = module.split(".")
    return parts[2] if len(parts) > 3 else None


def test_the_core_imports_nothing_of_the_server_or_the_client() -> None:
    graph, _ = core_imports()
    for module, imported in graph.items():
        outside = {name for name in imported if not name.startswith("tonk.shared")}
        assert not outside, f"{module} imports {outside}"


def test_no_module_of_the_core_imports_itself_through_others() -> None:
    graph, _ = core_imports()
    for start in graph:
        seen: set[str] = set()
        todo = [name for name in graph[start] if name in graph]
        while todo:
            name = todo.pop()
            assert name != start, f"{start} imports itself through {sorted(seen)}"
            if name not in seen:
                seen.add(name)
                todo.extend(n for n in graph[name] if n in graph)


def test_each_area_of_the_core_imports_only_the_areas_below_it() -> None:
    graph, _ = core_imports()
    for module, imported in graph.items():
        here = area(module)
        if here is None:
            continue
        for name in imported:
            there = area(name)
            if there is not None and there != here:
                assert there in MAY_IMPORT[here], f"{module} ({here}) imports {name} ({there})"


def test_only_the_simulators_command_reaches_the_terminal_the_clock_or_processes() -> None:
    _, others = core_imports()
    assert all(EDGES & others[edge] for edge in THE_EDGE), "the probe finds the edge's imports"
    for module, imported in others.items():
        if module not in THE_EDGE:
            assert not EDGES & imported, f"{module} imports {EDGES & imported}"


def test_the_graph_holds_the_imports_it_checks() -> None:
    graph, _ = core_imports()
    assert "tonk.shared.game.legality" in graph["tonk.shared.game.view"]
    assert "tonk.shared.game.view" not in graph["tonk.shared.game.legality"]
    assert "tonk.shared.bots.expert" in graph["tonk.shared.bots.bots"]
    assert "tonk.shared.bots.bots" not in graph["tonk.shared.bots.expert"]
    assert set(MAY_IMPORT) == {area(name) for name in graph} - {None}

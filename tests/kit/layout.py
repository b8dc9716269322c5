"""Where each test file belongs, by one rule, and a check that each is there.

    python tests/kit/layout.py           # names each test file not where it belongs; exit 1 if any
    python tests/kit/layout.py --move    # moves them there (git mv), with their snapshots

The tests are laid out like the code:

- `tests/e2e/<door>/`: a module marked e2e as a whole (`pytestmark = pytest.mark.e2e`), by the
  way it reaches tonk: `bench` (a script of bench/ run as a process), `lan` (two network
  namespaces), `web` (the web door or a browser), `ssh` (the SSH door, sshd or an SSH client),
  `tcp` (anything else: tonk-server, tonk-client, tonk-sim as processes, over TCP or in a
  pseudo-terminal), the first that fits in that order;
- otherwise by the highest of the three packages it needs: `tests/client/` (it imports
  tonk.client or clientkit), `tests/server/` (tonk.server, or a kit that starts a server:
  netclient, reliakit, historykit, standingskit), `tests/shared/` (the pure core alone), a
  file named `test_client_*` or `test_server_*` going with that package at the least;
  `tests/bench/` for the tests of bench/'s modules themselves;
- the kits the tests share in `tests/kit/` (on the import path of every test, as
  pyproject.toml's `pythonpath` says, so `from netclient import NetClient` works from any
  folder), fixtures in `tests/conftest.py`.

A test file with only some tests marked e2e stays with its area (`-m "not e2e"` leaves those
tests out). RULES names a file whose place the rule gets wrong, with the reason.
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
import tomllib
from pathlib import Path

KIT = Path(__file__).resolve().parent
TESTS = KIT.parent
ROOT = TESTS.parent

#: Files placed by hand where the rule would place them elsewhere, with the reason.
RULES: dict[str, tuple[str, str]] = {
    "test_history_core.py": (
        "shared",
        "the core's history: historykit's scripted hands, no server",
    ),
}

#: The kits a module may import, and the package each stands for.
KIT_LEVEL = {
    "clientkit": "client",
    "netclient": "server",
    "reliakit": "server",
    "historykit": "server",
    "standingskit": "server",
}

LEVELS = ("shared", "server", "client")


def _imports(tree: ast.Module) -> set[str]:
    """The top-level names of the modules a test file imports at its top, tonk's packages by
    name (`tonk.server`), and the names it imports from a module."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules = [node.module]
            names.update(alias.name for alias in node.names)
        else:
            continue
        for module in modules:
            parts = module.split(".")
            names.add(parts[0])
            if parts[0] == "tonk" and len(parts) > 1:
                names.add(f"tonk.{parts[1]}")
    return names


def _reads_bench(tree: ast.Module) -> bool:
    """Whether the module names bench/'s folder (`ROOT / "bench"`)."""
    return any(
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Div)
        and isinstance(node.right, ast.Constant)
        and node.right.value == "bench"
        for node in ast.walk(tree)
    )


def _marked_e2e(tree: ast.Module) -> bool:
    """Whether the module as a whole is marked e2e (`pytestmark = ...e2e...`)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytestmark" for target in node.targets
        ):
            return "e2e" in ast.unparse(node.value)
    return False


def _door(imports: set[str]) -> str:
    """The way an end-to-end module that runs no script of bench/ reaches tonk (see the
    module's text)."""
    if "netnskit" in imports:
        return "lan"
    if "webkit" in imports or "test_web_door" in imports:
        return "web"
    if {"sshkit", "asyncssh", "test_ssh_door", "sshd"} & imports:
        return "ssh"
    return "tcp"


@functools.cache
def _source(path: Path, modified: int) -> tuple[str, ast.Module]:
    """The test file at `path` (read once for each time it was `modified`): its text, and its
    head parsed (what comes before its first function or class: its imports and marks).
    Parsing only the head keeps the check quick; what is looked for further down is looked
    for in the text first."""
    text = path.read_text(encoding="utf-8")
    head = re.split(r"^(?:def |async def |class |@)", text, maxsplit=1, flags=re.M)[0]
    try:
        return text, ast.parse(head)
    except SyntaxError:  # (the head cut inside a string that holds a `def`)
        return text, ast.parse(text)


def _whole(path: Path) -> ast.Module:
    """The whole test file at `path` parsed."""
    return ast.parse(path.read_text(encoding="utf-8"))


def place(path: Path) -> str:
    """The folder, relative to tests/, where the test file at `path` belongs."""
    if path.name in RULES:
        return RULES[path.name][0]
    text, head = _source(path, path.stat().st_mtime_ns)
    imports = _imports(head)
    bench = '"bench"' in text and _reads_bench(_whole(path))
    if _marked_e2e(head):
        return f"e2e/{'bench' if bench else _door(imports)}"
    if bench:
        return "bench"
    # A file named for the client or the server goes with it at the least.
    level = next((i for i, p in enumerate(LEVELS) if path.name.startswith(f"test_{p}_")), 0)
    for name in imports:
        package = name.removeprefix("tonk.") if name.startswith("tonk.") else KIT_LEVEL.get(name)
        if package in LEVELS:
            level = max(level, LEVELS.index(package))
    return LEVELS[level]


def test_files(tests: Path = TESTS) -> list[Path]:
    """Every test file under `tests`."""
    return sorted(p for p in tests.rglob("test_*.py") if "__snapshots__" not in p.parts)


def misplaced(tests: Path = TESTS) -> list[tuple[Path, str]]:
    """Each test file under `tests` not in its folder, with the folder (relative to `tests`)
    it belongs in."""
    found = []
    for path in test_files(tests):
        wanted = place(path)
        if path.parent != tests / wanted:
            found.append((path, wanted))
    return found


def _by_its_place(tree: ast.Module) -> bool:
    """Whether the module finds the checkout from its own place (`Path(__file__).parent.parent`
    or `.parents[n]`), which moving the file breaks."""
    for node in ast.walk(tree):
        up = (
            isinstance(node, ast.Attribute)
            and node.attr == "parent"
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "parent"
        ) or (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "parents"
        )
        if up and "__file__" in ast.unparse(node):
            return True
    return False


def located_by_place(tests: Path = TESTS) -> list[Path]:
    """The test files under `tests` that find the checkout's files from their own place, where
    `from checkout import ROOT` finds them from anywhere."""
    return [
        p
        for p in test_files(tests)
        if "__file__" in p.read_text(encoding="utf-8") and _by_its_place(_whole(p))
    ]


def import_path_gaps() -> list[str]:
    """The folders holding test files or kits that pyproject.toml's `pythonpath` leaves out
    (a test imports a kit, or another test module, by its name from any folder)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["pytest"]["ini_options"].get("pythonpath", []))
    folders = {path.parent for path in test_files()} | {KIT}
    return sorted(
        str(folder.relative_to(ROOT))
        for folder in folders
        if str(folder.relative_to(ROOT)) not in listed and folder != TESTS
    )


def snapshots_of(path: Path) -> Path:
    """The folder of the snapshots pytest-textual-snapshot keeps for the test file `path`."""
    return path.parent / "__snapshots__" / path.stem


def move(path: Path, wanted: str) -> None:
    """git mv the test file (and its snapshots) into tests/<wanted>/."""
    target = TESTS / wanted
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "mv", str(path), str(target / path.name)], check=True, cwd=ROOT)
    shots = snapshots_of(path)
    if shots.is_dir():
        (target / "__snapshots__").mkdir(exist_ok=True)
        subprocess.run(
            ["git", "mv", str(shots), str(target / "__snapshots__" / path.stem)],
            check=True,
            cwd=ROOT,
        )


def report(tests: Path = TESTS) -> list[str]:
    """What is out of place under `tests`, a line each (nothing when all is in order)."""
    lines = [
        f"{path.relative_to(tests.parent)} belongs in {tests.name}/{wanted}/"
        for path, wanted in misplaced(tests)
    ]
    lines += [
        f"{path.relative_to(tests.parent)} finds the checkout from its own place: "
        "use `from checkout import ROOT`"
        for path in located_by_place(tests)
    ]
    if tests == TESTS:
        lines += [
            f"{folder} is missing from pyproject.toml's [tool.pytest.ini_options] pythonpath"
            for folder in import_path_gaps()
        ]
    return lines


def main(argv: list[str]) -> int:
    if "--move" in argv:
        for path, wanted in misplaced():
            print(f"{path.relative_to(ROOT)} -> tests/{wanted}/")
            move(path, wanted)
    lines = report()
    print("\n".join(lines) or "every test file is where it belongs")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

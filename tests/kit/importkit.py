"""What a module of tonk imports, read from its source with `ast`: every import statement at
any level of its code (at the top, inside a function, for the type checker only)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path


def imports(name: str, path: Path) -> Iterator[tuple[str, tuple[str, ...]]]:
    """For each import in the module `name` (its source at `path`): the module imported, made
    absolute, and the names taken from it (none for `import x`)."""
    package = name.split(".") if path.stem == "__init__" else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            yield source, tuple(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ()

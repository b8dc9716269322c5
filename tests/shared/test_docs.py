"""The documents hold together: README is a front door (at most 250 lines), the manual in docs/
lists every section of its parts, every link between the documents lands on a file and a
heading that exist, and every file and module the documents name exists."""

import importlib
import importlib.util
import re
from pathlib import Path

import pytest
from checkout import ROOT

DOCUMENTS = sorted([*ROOT.glob("*.md"), *(ROOT / "docs").glob("*.md")])
MANUAL = ("playing.md", "hosting.md", "tools.md", "simulating.md", "workbench.md")
LINK = re.compile(r"\]\(([^)\s]+)\)")
PATH = re.compile(r"\b((?:bench|tests|server|client|shared|docs|\.ci)/[\w/.-]*\w)")
MODULE = re.compile(r"\btonk\.(?:shared|server|client)(?:\.\w+)*")


def slug(heading: str) -> str:
    """The anchor a Markdown heading gets (GitHub's way: lower case, punctuation dropped)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text("utf-8"), flags=re.S)
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.*)$", text, re.M)}


def test_the_readme_is_a_front_door() -> None:
    lines = (ROOT / "README.md").read_text("utf-8").splitlines()
    assert len(lines) <= 250, len(lines)
    for part in MANUAL:
        assert f"(docs/{part})" in "\n".join(lines), part


def test_the_manuals_index_lists_every_section() -> None:
    index = (ROOT / "docs" / "README.md").read_text("utf-8")
    for part in MANUAL:
        text = (ROOT / "docs" / part).read_text("utf-8")
        for heading in re.findall(r"^## (.*)$", text, re.M):
            assert f"]({part}#{slug(heading)})" in index, (part, heading)


def test_every_link_between_the_documents_lands() -> None:
    broken = []
    for doc in DOCUMENTS:
        for target in LINK.findall(doc.read_text("utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            name, _, anchor = target.partition("#")
            path = (doc.parent / name).resolve() if name else doc
            lands = path.exists() and (
                not anchor or path.suffix != ".md" or anchor in anchors(path)
            )
            if not lands:
                broken.append((doc.name, target))
    assert broken == []


@pytest.mark.slow  # (it imports the modules the documents name)
def test_every_file_and_module_the_documents_name_exists() -> None:
    missing = []
    for doc in DOCUMENTS:
        if doc.name == "benchmarks-journal.md":
            continue  # the dated journal names files as they were on its day
        text = doc.read_text("utf-8")
        for name in set(PATH.findall(text)):
            # (a folder may be named before it holds anything, as tests/e2e/lan/ is)
            if "." in Path(name).name and not (ROOT / name).exists():
                missing.append((doc.name, name))
        for dotted in set(MODULE.findall(text)):
            if not names_something(dotted):
                missing.append((doc.name, dotted))
    assert missing == []


def names_something(dotted: str) -> bool:
    """`tonk.a.b` is a module, or a module's attribute (`tonk.shared.bots.bots.Bot`)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 1, -1):
        module = ".".join(parts[:cut])
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if found:
            thing: object = importlib.import_module(module)
            for attribute in parts[cut:]:
                if not hasattr(thing, attribute):
                    return False
                thing = getattr(thing, attribute)
            return True
    return False


def test_every_file_the_code_names_exists() -> None:
    # (test_layout.py names a made-up tree; a name cut by a line break, with no suffix, is not
    # read)
    missing = []
    for folder in ("bench", "server", "client", "shared", "tests", "docs"):
        for source in (ROOT / folder).rglob("*.py"):
            if source.name == "test_layout.py":
                continue
            for name in set(PATH.findall(source.read_text("utf-8"))):
                if "." in Path(name).name and not (ROOT / name).exists():
                    missing.append((str(source.relative_to(ROOT)), name))
    assert missing == []

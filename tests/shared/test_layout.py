"""The tests are laid out like the code (tests/kit/layout.py says the rule): each test file in
the folder the rule gives it, and a file left elsewhere, as a test written for the old flat
folder would be, named with the folder it belongs in."""

from __future__ import annotations

import re
from pathlib import Path

import layout
import pytest

E2E = "import pytest\n\npytestmark = pytest.mark.e2e\n"

#: A test file's text, and the folder of tests/ it belongs in.
CASES = {
    "test_a_card.py": ("from tonk.shared.game.cards import Card\n", "shared"),
    "test_a_request.py": ("from netclient import NetClient, start_server\n", "server"),
    "test_the_store.py": ("from tonk.server.store.store import Store\n", "server"),
    "test_a_screen.py": ("from clientkit import wait_for\n", "client"),
    "test_client_words.py": ("from tonk.shared.game.words import plural\n", "client"),
    "test_one_process.py": (
        "import pytest\nfrom termkit import tonk_server\n\n@pytest.mark.e2e\ndef test_x(): ...\n",
        "shared",
    ),
    "test_a_process.py": (E2E + "from termkit import tonk_server\n", "e2e/tcp"),
    "test_over_ssh.py": (E2E + "from sshkit import DoorServer\n", "e2e/ssh"),
    "test_the_web_door.py": (
        E2E + "from sshkit import make_key\nfrom webkit import Browser\n",
        "e2e/web",
    ),
    "test_two_hosts.py": (E2E + "from netnskit import lan_pair\n", "e2e/lan"),
    "test_a_bench.py": (E2E + 'SCRIPT = ROOT / "bench" / "load.py"\n', "e2e/bench"),
    "test_bench_players.py": ('sys.path.insert(0, str(ROOT / "bench"))\n', "bench"),
}


def test_every_test_file_is_where_it_belongs() -> None:
    assert layout.report() == []


def test_every_folder_of_tests_is_on_the_import_path() -> None:
    folders = {path.parent for path in layout.test_files()}
    assert {layout.TESTS / name for name in ("shared", "server", "client")} <= folders
    assert layout.import_path_gaps() == []


def test_a_file_left_in_the_tests_folder_is_named_with_the_folder_it_belongs_in(
    tmp_path: Path,
) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    for name, (text, _) in CASES.items():
        (tests / name).write_text(text)
    assert sorted(layout.report(tests)) == sorted(
        f"tests/{name} belongs in tests/{folder}/" for name, (_, folder) in CASES.items()
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_file_in_its_folder_is_left_alone_and_elsewhere_is_not(tmp_path: Path, name: str) -> None:
    text, folder = CASES[name]
    tests = tmp_path / "tests"
    (tests / folder).mkdir(parents=True)
    (tests / folder / name).write_text(text)
    assert layout.report(tests) == []
    elsewhere = "client" if folder != "client" else "server"
    (tests / elsewhere).mkdir(exist_ok=True)
    (tests / folder / name).rename(tests / elsewhere / name)
    assert layout.report(tests) == [f"tests/{elsewhere}/{name} belongs in tests/{folder}/"]


def test_a_file_finding_the_checkout_from_its_own_place_is_named(tmp_path: Path) -> None:
    shared = tmp_path / "tests" / "shared"
    shared.mkdir(parents=True)
    (shared / "test_rules_doc.py").write_text(
        'from pathlib import Path\n\nDOC = Path(__file__).parent.parent / "RULES.md"\n'
    )
    (shared / "test_rules_doc_too.py").write_text(
        'from checkout import ROOT\n\nDOC = ROOT / "RULES.md"\n'
    )
    assert layout.report(tmp_path / "tests") == [
        "tests/shared/test_rules_doc.py finds the checkout from its own place: "
        "use `from checkout import ROOT`"
    ]


def test_every_test_file_a_document_names_is_there() -> None:
    # The dated journal is history: it names files as they were then.
    documents = [
        *layout.ROOT.glob("*.md"),
        *(p for p in (layout.ROOT / "docs").glob("*.md") if "journal" not in p.name),
    ]
    named = {
        (document.name, name)
        for document in documents
        for name in re.findall(r"\btests/[\w/]+\.py\b", document.read_text(encoding="utf-8"))
    }
    assert named, "no document names a test file"
    assert sorted(n for n in named if not (layout.ROOT / n[1]).is_file()) == []

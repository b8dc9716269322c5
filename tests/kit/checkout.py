"""Where the checkout's files are, for the tests that read them (the documents, bench/'s
scripts) wherever under tests/ the test file lies."""

from __future__ import annotations

from pathlib import Path

#: The checkout's top folder.
ROOT = Path(__file__).resolve().parents[2]
#: The kits' folder (tests/kit), for a process of a test's own that imports one.
KIT = Path(__file__).resolve().parent

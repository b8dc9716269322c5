"""README's pictures are made again by one command, `python docs/pictures.py` (the table in
a terminal at 80x24 and 160x50 by Textual's SVG screenshot, a phone and the television page
by headless Chromium): run here into a folder of the test's own, and each picture read back."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest
from checkout import ROOT
from webkit import require_browser

pytestmark = pytest.mark.e2e

#: The most a picture may weigh (README's pictures are kept small), in bytes.
LARGEST = 150_000


def png_size(path: Path) -> tuple[int, int]:
    """A PNG's width and height, from its header (IHDR)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", path
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_one_command_makes_readmes_pictures_again(tmp_path: Path) -> None:
    require_browser()
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "pictures.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    made = {path.name: path for path in tmp_path.iterdir()}
    assert set(made) == {"table-80x24.svg", "table-160x50.svg", "phone.png", "television.png"}
    for name, columns in (("table-80x24.svg", 80), ("table-160x50.svg", 160)):
        svg = made[name].read_text("utf-8")
        assert svg.startswith("<svg") and f"tonk&#160;at&#160;{columns}x" in svg, name
        # Mid-hand: your turn, your hand, the run you spread.
        for words in ("Your&#160;turn", "Your&#160;hand", "Your&#160;run"):
            assert words in svg, (name, words)
    assert png_size(made["phone.png"]) in {(390, 844), (844, 390)}
    assert png_size(made["television.png"]) == (960, 540)
    for path in made.values():
        assert path.stat().st_size < LARGEST, (path.name, path.stat().st_size)
    # README shows the pictures the command makes.
    readme = (ROOT / "README.md").read_text("utf-8")
    for name in made:
        assert f"docs/pictures/{name}" in readme, name

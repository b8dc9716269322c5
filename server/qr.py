"""The web door's address as a QR code (by the `segno` package), for a phone's camera: drawn in
the terminal by `tonk-server invite`, and in a corner of the television page."""

from __future__ import annotations

import io

import segno

#: The error correction: M (15% of the code may be lost), enough for a screen across a room.
ERROR = "m"


def qr_terminal(url: str) -> str:
    """The code in text, two rows of modules to a line (half blocks), with its quiet zone."""
    out = io.StringIO()
    segno.make(url, error=ERROR).terminal(out=out, compact=True, border=2)
    return out.getvalue().rstrip("\n")


def qr_svg(url: str, scale: int = 6) -> str:
    """The code as an inline SVG element, dark modules on the light quiet zone, `scale` pixels
    a module (about 200 pixels across for a web door's address: a phone's camera finds it
    on a television across the room)."""
    return str(segno.make(url, error=ERROR).svg_inline(scale=scale, light="#fff"))

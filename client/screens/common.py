"""What every full screen shares."""

from __future__ import annotations

from textual.screen import Screen


def too_small(screen: Screen[None]) -> bool:
    # The App's mark, set from the resize event's own size as the terminal changes: while it
    # handles that event `app.size` may still be the old size (the key line stayed greyed
    # after the terminal grew back until something else redrew it).
    return screen.app.has_class("-too-small")

"""The end-of-hand window's words for each player, on its own (the whole hand's path runs in
tests/client/test_client_pilot.py and on a real terminal in tests/e2e)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text
from textual.app import App
from textual.widgets import Static
from tonk.client.dialogs import EndOfHandModal
from tonk.client.text.render import CardStyle
from tonk.shared.game.cards import parse_cards
from tonk.shared.game.settlement import Ending, Payment, Settlement


class Window(App[None]):
    """The window alone."""

    def __init__(self, window: EndOfHandModal) -> None:
        super().__init__()
        self.window = window

    def on_mount(self) -> None:
        self.push_screen(self.window)


def words(app: Window) -> list[str]:
    """Every line the window's texts and tables show."""
    console = Console(width=76, record=True, file=io.StringIO())
    for widget in app.window.query(Static):
        content = widget.content
        console.print(content if isinstance(content, Table | Text | Group) else str(content))
    return [line.rstrip() for line in console.export_text().splitlines()]


@pytest.mark.parametrize("size", [(80, 24), (40, 36)], ids=str)
async def test_a_player_who_caught_a_drop_without_winning_is_said_to_have_caught_the_dropper(
    size: tuple[int, int],
) -> None:
    """Ann drops with 37; Cy (27) wins and Ada (29) caught her too: Ada's row says whom she
    caught, not "caught", which reads as the dropper's lot."""
    settlement = Settlement(
        Ending.DROP_CAUGHT,
        (2,),
        (Payment(0, 1, 2), Payment(0, 2, 2)),
        (37, 29, 27),
        (
            parse_cards("As 6h 10h Qh Qd"),
            parse_cards("4h 5h 5d 7d 8d"),
            parse_cards("Ah 3h 9d 4c Kc"),
        ),
        dropper=0,
    )
    window = EndOfHandModal(2, settlement, ["Ann", "Ada (bot)", "Cy"], "chips", CardStyle())
    app = Window(window)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        shown = words(app)
        ada = next(i for i, line in enumerate(shown) if line.lstrip().startswith("Ada (bot)"))
        # (Upright, each player's result is under their name, after their cards.)
        ada_lines = " ".join(shown[ada : ada + (2 if size[0] < 80 else 1)])
        assert "caught Ann" in ada_lines, shown
        assert not any(line.endswith("caught") for line in shown), shown

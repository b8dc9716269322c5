"""The full screens: connecting, the lobby, and the table. Screens render the state the App
hands them and post `Request` messages up for what the player wants done."""

from .connecting import ConnectingScreen
from .lobby import LobbyScreen
from .nights import NightsScreen
from .table import TableScreen

__all__ = [
    "ConnectingScreen",
    "LobbyScreen",
    "NightsScreen",
    "TableScreen",
]

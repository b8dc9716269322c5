"""The table's widgets, by area. Each renders values its screen sets on it (attributes down);
none of them decides anything about the game."""

from .keybar import KeyBar, KeyEntry
from .lines import LineWidget, changed_to
from .seats import TableArea
from .sidebar import LedgerPanel, LogPanel
from .status import Status, StatusBar, turn_message, waiting_message
from .table import CentrePanel, HandView, PlayersPanel, hand_title, player_lines
from .toosmall import PORTRAIT, TooSmall

__all__ = [
    "PORTRAIT",
    "CentrePanel",
    "HandView",
    "KeyBar",
    "KeyEntry",
    "LedgerPanel",
    "LineWidget",
    "LogPanel",
    "PlayersPanel",
    "Status",
    "StatusBar",
    "TableArea",
    "TooSmall",
    "changed_to",
    "hand_title",
    "player_lines",
    "turn_message",
    "waiting_message",
]

"""Modal screens, one a file: confirm, help, choose a spread to hit, the end of a hand, the
end of a session, the create-table form, and the history (its list, and one hand replayed)."""

from .confirm import ChoiceModal, ConfirmModal, DropModal
from .createtable import CreateTableScreen
from .endofhand import EndOfHandModal
from .handreplay import HandReplayScreen
from .help import HelpScreen
from .history import HistoryScreen
from .hit import HitChooser
from .standings import StandingsScreen

__all__ = [
    "ChoiceModal",
    "ConfirmModal",
    "CreateTableScreen",
    "DropModal",
    "EndOfHandModal",
    "HandReplayScreen",
    "HelpScreen",
    "HistoryScreen",
    "HitChooser",
    "StandingsScreen",
]

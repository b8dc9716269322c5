"""Modal screens, one a file: confirm, help, choose a spread to hit, the end of a hand, the
end of a session, and the create-table form."""

from .confirm import ConfirmModal, DropModal
from .createtable import CreateTableScreen
from .endofhand import EndOfHandModal
from .help import HelpScreen
from .hit import HitChooser
from .standings import StandingsScreen

__all__ = [
    "ConfirmModal",
    "CreateTableScreen",
    "DropModal",
    "EndOfHandModal",
    "HelpScreen",
    "HitChooser",
    "StandingsScreen",
]

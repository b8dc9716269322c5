"""What the table says when people come and go: a log line for each seat whose player sat
down, left, lost the connection, was marked away (played for) or came back, whose seat was
given to a bot or who took a bot's seat, read from two table maps the server sent one after
the other."""

from __future__ import annotations

from collections.abc import Sequence

from tonk.shared.wire.messages import PlayerSummary, SeatKind, SeatStatus


def _who(player: PlayerSummary) -> tuple[str, SeatStatus] | None:
    """(name, status) of a taken seat; None for an empty one. A bot's status is `bot`."""
    name = player.name
    if not name or player.kind is SeatKind.EMPTY or player.status is SeatStatus.EMPTY:
        return None
    return name, player.status


def seat_news(
    old: Sequence[PlayerSummary], new: Sequence[PlayerSummary], mine: int | None
) -> list[str]:
    """The lines to log for the change from `old` players to `new` (the table map's
    `players`), seat by seat; the player's own seat (`mine`) has its own notices."""
    lines: list[str] = []
    for number in range(max(len(old), len(new))):
        if number == mine:
            continue
        before = _who(old[number]) if number < len(old) else None
        after = _who(new[number]) if number < len(new) else None
        if before == after:
            continue
        if after is None:
            assert before is not None
            lines.append(f"{before[0]} left the table.")
            continue
        name, status = after
        bot = status is SeatStatus.BOT
        if before is not None and before[0] != name and (before[1] is SeatStatus.BOT) != bot:
            # During a session a seat changes hands only so: the creator gives an absent
            # player's seat to a bot, or somebody takes a bot's seat.
            if bot:
                lines.append(f"{before[0]}'s seat was given to a bot: {name} plays it.")
            elif number < len(old) and old[number].holds_for == name:
                lines.append(f"{name} takes their own seat back from {before[0]}.")
            else:
                lines.append(f"{name} takes {before[0]}'s seat.")
            continue
        if before is None or before[0] != name:
            if before is not None:
                lines.append(f"{before[0]} left the table.")
            if not bot:  # bots are seated by the table's creator, who knows
                lines.append(f"{name} sat down.")
            continue
        was = before[1]
        if status is SeatStatus.AWAY:
            lines.append(f"{name} is away: their turns are played for them.")
        elif status is SeatStatus.DISCONNECTED:
            lines.append(f"{name} lost the connection; their seat waits for them.")
        elif status is SeatStatus.CONNECTED and was is SeatStatus.AWAY:
            lines.append(f"{name} is back and plays their own turns again.")
        elif status is SeatStatus.CONNECTED and was is SeatStatus.DISCONNECTED:
            lines.append(f"{name} is back.")
    return lines

"""A hand looked back at, drawn as text: each step's table (the players' counts, the stock and
the top discard, the spreads, your cards, and at the end what the rules revealed) and the log
of the moves up to it, from the steps the server sent (no Textual here)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from tonk.shared.game.history import HandSummary, HistoryStep, Occupants
from tonk.shared.game.settle_up import Transfer, settle_up_text
from tonk.shared.game.view import SeatView
from tonk.shared.game.words import plural

from ..text.render import CardStyle, cards_text, ending_line, payment_lines, signed, spread_line
from .tablelog import TableLog


def seen_names(names: Sequence[str], seat: int | None) -> list[str]:
    """The players' names as the one who sat in `seat` saw them: "You" in their own."""
    shown = list(names)
    if seat is not None and seat < len(shown):
        shown[seat] = "You"
    return shown


def names_by_step(seating: Occupants, steps: Sequence[HistoryStep]) -> list[tuple[str, ...]]:
    """The players' names at each step as its viewer saw them: who held each seat then, and
    "You" in the seat the step is seen from (none where it is seen as a spectator: a seat
    that changed hands was yours only while you held it)."""
    return [
        tuple(seen_names(seating.names_at(number), step.view.seat))
        for number, step in enumerate(steps)
    ]


def step_logs(
    number: int,
    steps: Sequence[HistoryStep],
    names: Sequence[Sequence[str]],
    style: CardStyle,
) -> list[tuple[Text, ...]]:
    """The log of the moves after each step, as the table's own log wrote them (`names`: at
    each step, `names_by_step`)."""
    log = TableLog(style)
    out: list[tuple[Text, ...]] = []
    before: Sequence[str] = names[0] if names else ()
    for step, held in zip(steps, names, strict=True):
        view = step.view
        for was, now in zip(before, held, strict=False):
            if was != now:  # the seat changed hands before this step's moves
                log.add(Text(seat_taken(was, now), style="bold"))
        before = held

        def owner(spread_id: int, view: SeatView = view) -> tuple[int, str] | None:
            for spread in view.spreads:
                if spread.id == spread_id:
                    return spread.owner, spread.kind.value
            return None

        for event in step.events:
            log.event(view, number, event, list(held), lambda _: False, owner)
        out.append(tuple(line.text for line in log.lines))
    return out


def seat_taken(was: str, now: str) -> str:
    """A seat changing hands mid-hand, in the replay's log: `Bix (bot) takes Cy's seat.`
    (`You` either way as the viewer saw it)."""
    whose = "your" if was == "You" else f"{was}'s"
    return f"{'You take' if now == 'You' else f'{now} takes'} {whose} seat."


def step_title(index: int, steps: Sequence[HistoryStep], names: Sequence[str]) -> str:
    """`Step 4 of 23: Ben's turn` (`names`: at that step)."""
    view = steps[index].view
    where = f"Step {index + 1} of {len(steps)}"
    if view.settlement is not None:
        return f"{where}: the hand is over"
    who = names[view.turn] if view.turn < len(names) else f"seat {view.turn + 1}"
    turn = "your turn" if who == "You" else f"{who}'s turn"
    return f"{where}{', the deal' if index == 0 else ''}: {turn}"


def board(view: SeatView, names: Sequence[str], unit: str, style: CardStyle) -> Text:
    """The table at one step, as its seat saw it."""
    out = Text()
    for seat, name in enumerate(names):
        if seat:
            out.append("  ")
        count = view.card_counts[seat] if seat < len(view.card_counts) else 0
        marks = " (deals)" if seat == view.dealer else ""
        turn = seat == view.turn and view.settlement is None
        out.append(f"{name}{marks}: {plural(count, 'card')}", style="bold" if turn else "")
    out.append(f"\nStock: {plural(view.stock_size, 'card')}   Discard: ")
    if view.discard_top is None:
        out.append("none")
    else:
        out.append_text(cards_text((view.discard_top,), style))
        if view.discard_size > 1:
            out.append(f" ({view.discard_size - 1} under it)", style="dim")
    if view.spreads:
        for number, spread in enumerate(view.spreads, start=1):
            out.append("\n")
            out.append_text(spread_line(number, spread, names, style))
    else:
        out.append("\nNo spreads.")
    out.append("\n")
    if view.seat is None:
        out.append("Seen as a spectator sees it: no hand is shown.", style="dim")
    else:
        out.append("Your hand: ")
        out.append_text(cards_text(view.hand, style) if view.hand else Text("none"))
    settlement = view.settlement
    if settlement is not None:
        out.append("\n")
        out.append(ending_line(settlement, names), style="bold")
        for seat, cards in enumerate(settlement.revealed):
            if cards and seat < len(names):
                counted = settlement.counts[seat]
                out.append(f"\n  {names[seat]}: ")
                out.append_text(cards_text(cards, style))
                if counted is not None:
                    out.append(f" (count {counted})", style="dim")
        out.append("\n" + "; ".join(payment_lines(settlement, names, unit)) + ".")
    return out


def hand_entry(hand: HandSummary, unit: str) -> Text:
    """One hand of the history's list: its number, dealer and ending on a line, who paid whom
    on the next."""
    names = hand.names  # as the hand ended: who paid whom
    line = Text(f"Hand {hand.number}", style="bold")
    line.append(f"  {hand.dealer_name} dealt", style="dim")
    if hand.multiplier > 1:
        line.append(f", stakes x{hand.multiplier}", style="dim")
    line.append(f"  {ending_line(hand.settlement, names)}")
    line.append("\n    " + "; ".join(payment_lines(hand.settlement, names, unit)), style="dim")
    return line


def ledger_foot(balances: dict[str, int], transfers: Sequence[Transfer], unit: str) -> Text:
    """The session's balances now, and how they would settle up."""
    out = Text("Balances: ", style="bold")
    if balances:
        out.append("  ".join(f"{name} {signed(balance)}" for name, balance in balances.items()))
    else:
        out.append("no hand settled yet")
    out.append("\nSettle up now: ", style="bold")
    out.append(settle_up_text(transfers, unit))
    return out

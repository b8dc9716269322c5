"""The table tells its players when someone sits down, leaves, loses the connection, is
played for, or comes back: a line in the log for each, read from the table maps."""

from __future__ import annotations

from pathlib import Path

from clientkit import at_the_table, joined_app, log_text, table_request, table_state, wait_for
from netclient import NetClient, start_server
from tonk.client.model.seatnews import seat_news
from tonk.shared.records import replaced
from tonk.shared.wire import messages as m


def seat(name: str | None, status: str, kind: str = "human") -> m.PlayerSummary:
    if name is None:
        return m.PlayerSummary(0, None, m.SeatKind.EMPTY, None, m.SeatStatus.EMPTY, 1, 0)
    strategy = "easy" if kind == "bot" else None
    return m.PlayerSummary(0, name, m.SeatKind(kind), strategy, m.SeatStatus(status), 1, 0)


def test_each_change_of_another_seat_is_one_line_and_your_own_is_left_to_its_notices() -> None:
    empty, you = seat(None, "empty"), seat("Ann", "connected")
    assert seat_news([you, empty], [you, seat("Bob", "connected")], 0) == ["Bob sat down."]
    assert seat_news([you, seat("Bob", "connected")], [you, empty], 0) == ["Bob left the table."]
    assert seat_news([you, seat("Bob", "connected")], [you, seat("Bob", "disconnected")], 0) == [
        "Bob lost the connection; their seat waits for them."
    ]
    assert seat_news([you, seat("Bob", "disconnected")], [you, seat("Bob", "away")], 0) == [
        "Bob is away: their turns are played for them."
    ]
    assert seat_news([you, seat("Bob", "away")], [you, seat("Bob", "connected")], 0) == [
        "Bob is back and plays their own turns again."
    ]
    assert seat_news([you, seat("Bob", "disconnected")], [you, seat("Bob", "connected")], 0) == [
        "Bob is back."
    ]
    # A seat that changes hands: who left and who sat.
    assert seat_news([you, seat("Bob", "away")], [you, seat("Cy", "connected")], 0) == [
        "Bob left the table.",
        "Cy sat down.",
    ]
    # A bot the creator seats is not news; a bot leaving is.
    assert seat_news([you, empty], [you, seat("Ada (bot)", "bot", "bot")], 0) == []
    assert seat_news([you, seat("Ada (bot)", "bot", "bot")], [you, empty], 0) == [
        "Ada (bot) left the table."
    ]
    # A seat handed to a bot, and taken back by its player, or taken by somebody else.
    bo = seat("Bo", "connected")
    bix = m.PlayerSummary(0, "Bix (bot)", m.SeatKind.BOT, "easy", m.SeatStatus.BOT, 1, 0)
    held = replaced(bix, holds_for="Bo")
    assert seat_news([you, bo], [you, held], 0) == [
        "Bo's seat was given to a bot: Bix (bot) plays it."
    ]
    assert seat_news([you, held], [you, bo], 0) == ["Bo takes their own seat back from Bix (bot)."]
    assert seat_news([you, bix], [you, bo], 0) == ["Bo takes Bix (bot)'s seat."]
    assert seat_news([you, held], [you, seat("Cy", "connected")], 0) == [
        "Cy takes Bix (bot)'s seat."
    ]
    # Nothing changed, or only your own seat: nothing to say.
    assert seat_news([you, empty], [you, empty], 0) == []
    assert seat_news([you, empty], [seat("Ann", "away"), empty], 0) == []


async def test_the_log_says_who_sat_down_and_who_lost_the_connection(tmp_path: Path) -> None:
    async with start_server(tmp_path) as server:
        request = table_request(bots=0, seats=3)
        app = joined_app(server.port, tmp_path / "state", table=request)
        bob = await NetClient.connect(server.port, "Bob")
        try:
            async with at_the_table(app) as pilot:
                table_id = int(table_state(app).table_id)  # type: ignore[union-attr]
                assert "sat down" not in log_text(app)
                await bob.request({"type": "sit", "table": table_id}, "seated")
                await wait_for(pilot, lambda: "Bob sat down." in log_text(app), "Bob's seat")
                await bob.close()
                await wait_for(
                    pilot,
                    lambda: (
                        "Bob lost the connection" in log_text(app)
                        or "Bob left the table." in log_text(app)
                    ),
                    "Bob gone",
                )
        finally:
            await bob.close()

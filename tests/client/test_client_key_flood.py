"""Keys that come far faster than they are handled wait their turn up to MAX_WAITING_KEYS;
the rest are dropped and the player told once, and the keys after them are played (a door
session's app, sent keys within its budget faster than it draws, held every one: tens of MiB
a minute). The real client App at a practice table (its embedded server)."""

from __future__ import annotations

import pytest
from clientkit import at_my_turn, keys_handled, log_text, my_turn, practice_app, wait_for
from textual import events
from textual.widgets._toast import Toast
from tonk.client.app import TonkApp
from tonk.client.dialogs import ConfirmModal
from tonk.client.keys import MAX_WAITING_KEYS, KeyedApp


@pytest.mark.slow  # (a second and more of CPU: a thousand keys through the App)
async def test_keys_far_faster_than_they_are_handled_are_dropped_and_the_player_told() -> None:
    app = practice_app()
    async with at_my_turn(app) as pilot:
        arrived = app.keys_arrived
        for _ in range(1000):  # in one go: each is let in only once the one before is done
            app.post_message(events.Key("right", None))
        await wait_for(pilot, lambda: app.keys_arrived + app.keys_dropped >= arrived + 1000, "keys")
        assert 0 < app.keys_arrived - arrived <= MAX_WAITING_KEYS + 1
        assert app.keys_dropped == 1000 - (app.keys_arrived - arrived)
        told = [n.message for n in app._notifications]
        assert told.count(KeyedApp.KEYS_DROPPED) == 1, told
        # The keys after them are played: d draws (typed once the waiting keys have left it
        # room, not dropped as the flood's last ones were).
        await wait_for(pilot, lambda: len(app._keys) < MAX_WAITING_KEYS, "room for a key")
        await pilot.press("d")
        await wait_for(pilot, lambda: "You drew" in log_text(app), "the draw")


async def test_notices_replaced_one_by_another_leave_no_widgets_behind() -> None:
    """Each key that means nothing here replaces the notice before it: the screen keeps the
    one notice, not an empty box for each one replaced (Textual's clearing removes a notice
    but not the box it sat in: a door session sent such keys added a widget each, for good)."""
    app = practice_app()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_for(pilot, lambda: my_turn(app), "your first turn")
        screen = app.screen
        await pilot.press("z")
        await wait_for(pilot, lambda: noticed(app, app.keys_arrived), "the first notice")
        await pilot.pause()  # (settled, with the one notice)
        before = len(list(screen.walk_children()))
        arrived = app.keys_arrived
        for n in range(1, 61):
            # One at a time, as typed: the next once this one is handled and its notice is
            # in its box on the screen (Pilot.press waits for an idle process instead).
            app.post_message(events.Key("z", "z"))
            await wait_for(pilot, lambda n=n: noticed(app, arrived + n), f"key {n}'s notice")
        # (a removed box goes on the next turns of the loop: waited for, never in a leak)
        await wait_for(pilot, lambda: len(list(screen.walk_children())) <= before, "no more boxes")
        told = [n.message for n in app._notifications]
        assert told == ["z is not a key here: ? shows the keys."], told


def noticed(app: TonkApp, keys: int) -> bool:
    """`keys` keys have arrived, each handled to its end, and the newest notice is on the
    screen in a box of its own."""
    if app.keys_arrived != keys or not keys_handled(app) or not app._notifications:
        return False
    box = f"--textual-toast-{list(app._notifications)[-1].identity}"
    return any(
        toast.is_mounted and toast.parent is not None and toast.parent.id == box
        for toast in app.screen.query(Toast)
    )


async def test_an_error_stays_through_the_next_notice_and_the_next_window() -> None:
    """A notice replaces the one before, and a window opening takes the notices away, but an
    error (the deck that did not check) stays for its time: shown first, then a key that
    means nothing here and the help opened after it, it is still there beside the new one."""
    app = practice_app()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_for(pilot, lambda: my_turn(app), "your first turn")
        app.notify("Hand 1: the deck did NOT check", severity="error", timeout=120)
        await wait_for(pilot, lambda: len(app._notifications) == 1, "the error shown")
        app.notify("Something else.")
        await pilot.press("z")

        def told() -> list[str]:
            return [n.message for n in app._notifications]

        await wait_for(
            pilot,
            lambda: (
                told()
                == ["Hand 1: the deck did NOT check", "z is not a key here: ? shows the keys."]
            ),
            lambda: f"the error beside the newest notice: {told()}",
        )
        app.push_screen(ConfirmModal("A window?"))
        await wait_for(
            pilot,
            lambda: told() == ["Hand 1: the deck did NOT check"],
            lambda: f"the error alone over the window: {told()}",
        )
        error = next(iter(app._notifications))
        assert 110 < error.time_left <= 120  # (its own time left, not a new one)

"""The door sessions' apps starting: at most `door_starting` at once (from their process's
start to their first screen: Python's start and the app's imports, about a second of CPU
each), the others waiting their turn in the order they came. Shared by the SSH and web doors,
whose apps start on the same CPU as the games."""

from __future__ import annotations

import asyncio
from collections import deque


class AppStarts:
    """Turns to start an app: `await turn()`, then `done()` once it has drawn (or failed)."""

    def __init__(self, at_once: int) -> None:
        self.at_once = at_once
        self.starting = 0
        self.waiting: deque[asyncio.Future[None]] = deque()

    def ahead(self) -> int:
        """How many apps a newcomer would wait for (0: its turn is now)."""
        if self.starting < self.at_once and not self.waiting:
            return 0
        return self.starting + len(self.waiting)

    async def turn(self) -> None:
        if self.starting < self.at_once and not self.waiting:
            self.starting += 1
            return
        turn = asyncio.get_running_loop().create_future()
        self.waiting.append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn in self.waiting:
                self.waiting.remove(turn)
            elif not turn.cancelled():  # given the turn as it was cancelled: pass it on
                self.done()
            raise

    def done(self) -> None:
        """One app has started (or will not): the next waiting one's turn."""
        while self.waiting:
            turn = self.waiting.popleft()
            if not turn.done():
                turn.set_result(None)  # its turn, in the place this one leaves
                return
        self.starting -= 1

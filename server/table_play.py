"""A table's hands: a player's action, the bots' and the absent players' turns (a slow bot
deciding off the event loop), each hand settled into the session, the deal, the session's end."""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from dataclasses import dataclass
from typing import Any

from tonk.shared import messages as m
from tonk.shared import protocol as p
from tonk.shared.actions import (
    Action,
    Discard,
    DrawStock,
    Drop,
    Hit,
    IllegalAction,
    LaySpread,
    TakeDiscard,
    action_to_dict,
)
from tonk.shared.bots import Bot, fallback, make_bot
from tonk.shared.cards import CardError, parse_card, parse_cards
from tonk.shared.hand import Hand
from tonk.shared.ledger import Payments
from tonk.shared.messages import Combined, Cut, HandEnd, SessionEnd, SessionEndReason
from tonk.shared.rematch import RematchOffer, combined_standings
from tonk.shared.session import Settled, without_last_action
from tonk.shared.settle_up import settle_up
from tonk.shared.settlement import Settlement
from tonk.shared.view import SeatView
from tonk.shared.words import plural

from . import store as st
from .connection import Connection
from .table_away import TableAway
from .table_core import BOT, FINISHED, HUMAN, PLAYING, RequestError, Seat

log = logging.getLogger("tonk.server")


def action_of(message: m.Action, seat: int) -> Action:
    """The action a client's message asks for, played in `seat`; IllegalAction (code
    bad_action) if a card in it is not a card."""
    try:
        if isinstance(message, m.Discard):
            return Discard(seat, parse_card(message.card))
        if isinstance(message, m.DrawStock):
            return DrawStock(seat)
        if isinstance(message, m.TakeDiscard):
            return TakeDiscard(seat)
        if isinstance(message, m.Spread):
            return LaySpread(seat, parse_cards(message.cards))
        if isinstance(message, m.Hit):
            return Hit(seat, parse_card(message.card), message.spread)
        return Drop(seat)
    except CardError as exc:
        raise IllegalAction(f"malformed action: {exc}", "bad_action") from None


@dataclass(slots=True)
class Settle:
    """A hand's settlement, ready to be written and then applied."""

    ops: list[st.Op]
    settled: Settled

    @property
    def settlement(self) -> Settlement:
        return self.settled.settlement

    @property
    def names(self) -> tuple[str, ...]:
        return self.settled.names

    @property
    def payments(self) -> Payments:
        return self.settled.payments

    @property
    def session_over(self) -> str | None:
        return self.settled.over


@dataclass(slots=True)
class Pending:
    """A slow bot's decision (`Bot.slow`), made in a worker thread while the event loop serves
    everybody else, with the table's lock free: acted on only if the table is still where it
    was when the bot was asked (`Table.still_due`)."""

    number: int  # the seat to act
    seat: Seat
    hand: Hand
    events: int  # how many events the hand had when the bot was asked
    bot: Bot  # the seat's bot then: never touched by the thread
    thinker: Bot  # a copy of it that decides, and replaces it if the decision is acted on
    view: SeatView
    announce: bool  # the seat was just marked away: the table goes out after the move


class TablePlay(TableAway):
    """Actions applied to the hand in play, saved, then told to everybody."""

    __slots__ = ()

    async def act(self, conn: Connection, message: m.Action) -> None:
        if self.paused is not None:  # at once: the lock may be held by a write that waits
            self.refuse_paused()
        async with self.lock:
            number = self.seat_of(conn)
            hand = self.hand
            if self.state != PLAYING or hand is None or hand.ended:
                raise RequestError(p.NO_HAND, "no hand is being played at this table")
            if self.paused is not None:
                self.refuse_paused()
            try:
                action = action_of(message, number)
            except IllegalAction as exc:
                raise RequestError(p.ILLEGAL_ACTION, exc.reason, exc.code) from None
            if self.seats[number].away:  # (not awaited on every action: a coroutine each)
                await self.welcome_back(number)
            try:
                await self.apply(action, answer=conn)
            except IllegalAction as exc:
                # The reason as this player sees it: "your run", "Ada's book of jacks".
                reason = exc.text(self.names(), number)
                raise RequestError(p.ILLEGAL_ACTION, reason, exc.code) from None

    async def apply(self, action: Action, answer: Connection | None = None) -> None:
        """Apply one action to the hand, write it durably, then tell everyone (`answer`, the
        connection that asked for it, with its request's `reply_to`)."""
        hand = self.hand
        assert hand is not None
        start = len(hand.events)
        hand.apply(action)  # IllegalAction: nothing changed
        index = len(hand.actions) - 1
        ops = [st.insert_action(self.id, self.session.hand_number, index, action_to_dict(action))]
        settle = self.settle(hand) if hand.ended else None
        if settle is not None:
            ops.extend(settle.ops)
        try:
            await self.write(ops)
        except RequestError:
            self.hand = without_last_action(hand)
            raise
        self.after_change(start, settle, answer)

    def settle(self, hand: Hand) -> Settle:
        """The ended `hand`'s settlement as the session takes it, and its writes."""
        settlement = hand.settlement
        assert settlement is not None
        now = time.time()
        settled = self.session.settle(settlement, self.names(), now)
        ops = st.settle_hand(
            self.id,
            self.hand_number,
            hand.record().to_dict(),
            settlement.to_dict(),
            now,
            list(settled.payments),
            settled.balances,
        )
        kinds = [str(seat.kind) for seat in self.seats]
        ops += st.count_hand(
            self.id, self.hand_number, settled.names, kinds, self.config.unit, settlement
        )
        columns: dict[str, Any] = {
            "hands_played": settled.played,
            "multiplier": settled.next_multiplier,
        }
        if settled.over:
            columns["state"] = FINISHED
        ops.append(st.update_table(self.id, **columns))
        return Settle(ops, settled)

    def after_change(
        self, start: int, settle: Settle | None, answer: Connection | None = None
    ) -> None:
        """The hand changed (and the change is on disk): bots see it, everyone gets a view."""
        hand = self.hand
        assert hand is not None
        now = self.now
        self.last_change = now
        if not hand.ended and hand.turn != self.turn_seat:
            self.turn_seat = hand.turn
            self.turn_started = now
        elif any(event.kind == "turn" for event in hand.events[start:]):
            self.turn_started = now
        for number, bot in self.bots.items():
            try:
                bot.observe(hand.events_for(number, start))
            except Exception:
                log.exception("table %d: bot in seat %d failed to observe", self.id, number)
        self.send_updates(start, answer)
        if settle is not None:
            self.apply_settlement(settle)
        seat = None if hand.ended else self.seats[hand.turn]
        if (
            seat is not None
            and seat.kind == HUMAN
            and seat.conn is not None
            and not seat.away
            and not self.config.turn_timer
            and self.paused is None
        ):
            # A connected player is to act, with no clock running: nothing falls due that
            # the table's loop does not already wait for (it is kicked by every disconnect,
            # resume and seat change), so it need not wake for every action.
            return
        self.kick()

    def apply_settlement(self, settle: Settle) -> None:
        self.session.settled(settle.settled, self.server.config.ledger_hands)
        self.server.lobby.changed(self.id)  # the hands played and the balances
        self.hand_settled = True
        self.turn_seat = None
        names = settle.names
        winner = " and ".join(names[n] for n in settle.settlement.winners) or None
        for seat in self.seats:
            if seat.tally is not None:
                seat.tally.hand_ended(self.hand_number, winner)
        log.info(
            "table %d: hand %d ends (%s): %s",
            self.id,
            self.hand_number,
            settle.settlement.ending.value,
            ", ".join(f"{a} pays {b} {c}" for a, b, c in settle.payments) or "no payments",
        )
        self.broadcast(
            HandEnd(
                self.id,
                self.hand_number,
                settle.settlement,
                settle.names,
                settle.payments,
                dict(self.ledger.balances),
            )
        )
        if settle.session_over:
            self.state = FINISHED
            log.info("table %d: session over after %s", self.id, plural(self.hands_played, "hand"))
            reason = SessionEndReason(settle.session_over)
            self.offer_rematch(reason)
            self.broadcast(self.session_end(reason))
            self.broadcast_table()
        else:
            self.next_hand_at = self.now + self.server.config.next_hand_delay

    def session_end(self, reason: SessionEndReason) -> SessionEnd:
        """The final standings with their settling up, across the chain of rematches too, and
        how long a rematch offer waits."""
        balances = dict(self.ledger.balances)
        combined = None
        if self.earlier:
            sessions = [*self.earlier, balances]
            total = combined_standings(sessions)
            combined = Combined(len(sessions), tuple(total), tuple(settle_up(dict(total))))
        offer = self.rematch
        return SessionEnd(
            self.id,
            self.hands_played,
            tuple(self.ledger.standings()),
            reason,
            tuple(settle_up(balances)),
            combined,
            None if offer is None else offer.seconds_left(self.now),
        )

    def offer_rematch(self, reason: SessionEndReason) -> None:
        """The session is over: the same table again is offered to the people at it (one
        who had left it, or lost the link and is past the grace period, is out; one played for
        while the grace runs is awaited: they may come back; the bots stay). Kept on disk so
        that a restart of the server during the wait loses nothing; the session's end itself
        is on disk already."""
        config = self.server.config
        wait = config.rematch_wait

        def gone(seat: Seat) -> bool:
            lost = seat.disconnected_at
            in_grace = lost is not None and self.now < lost + config.grace
            return seat.kind == HUMAN and seat.conn is None and seat.away and not in_grace

        self.rematch = RematchOffer.offered(
            self.names(),
            [seat.kind == BOT for seat in self.seats],
            [gone(seat) for seat in self.seats],
            self.now + wait,
        )
        self.rematch_reason = reason
        self.save_offer()
        self.kick()  # the offer's wait runs in the table's loop

    def save_offer(self) -> None:
        """The offer written without waiting for it (a failure is logged)."""
        self.server.store.write([self.rematch_op()]).add_done_callback(_log_failed_offer)

    def rematch_op(self) -> st.Op:
        """The offer as it stands, to keep (its deadline in wall-clock time)."""
        offer = self.rematch
        assert offer is not None
        deadline = time.time() + (offer.deadline - self.now)
        data = {**offer.to_dict(), "deadline": deadline, "reason": self.rematch_reason}
        return st.put_rematch(self.id, data)

    async def end_session(self, reason: SessionEndReason) -> None:
        """End the session between hands: the final standings to everybody still here, and
        the table leaves the lobby once nobody is at it."""
        await self.write([st.update_table(self.id, state=FINISHED)])
        self.state = FINISHED
        log.info(
            "table %d: session over (%s) after %s",
            self.id,
            reason,
            plural(self.hands_played, "hand"),
        )
        self.broadcast(self.session_end(reason))
        self.broadcast_table()
        if not self.attached():
            self.server.forget_table(self)

    async def deal(self) -> None:
        session = self.session
        players = len(self.seats)
        deal = session.next_deal(players, lambda: self.rng("cut"))
        number, dealer, cut = deal.number, deal.dealer, deal.cut
        deck = parse_cards(self.config.deck) if number == 1 and self.config.deck else None
        hand = Hand(
            self.rules,
            players,
            dealer,
            session.hand_stakes([seat.stake for seat in self.seats]),
            deck=deck,
            rng=self.rng(f"hand{number}"),
            multiplier=session.multiplier,
        )
        names = self.names()
        ops = [
            st.insert_hand(self.id, number, hand.record().to_dict(), names, time.time()),
            st.update_table(self.id, dealer=dealer),
        ]
        previous = (self.hand, self.hand_number)
        self.hand, self.hand_number = hand, number
        settle = self.settle(hand) if hand.ended else None
        if settle is not None:
            ops.extend(settle.ops)
        try:
            await self.write(ops)
        except RequestError:
            self.hand, self.hand_number = previous
            raise
        session.dealt(deal)
        self.server.lobby.changed(self.id)
        self.hand_settled = False
        self.next_hand_at = None
        self.turn_seat = None
        if cut is not None:
            rounds = tuple(tuple(None if c is None else str(c) for c in r) for r in cut.rounds)
            self.broadcast(Cut(self.id, rounds, cut.dealer))
        log.info("table %d: hand %d dealt by %s", self.id, number, names[dealer])
        self.after_change(0, settle)

    # -- bots and absent players ---------------------------------------------------------------

    def bot_for(self, number: int) -> Bot:
        bot = self.bots.get(number)
        if bot is None:
            bot = make_bot(self.server.config.autoplay_strategy, self.rng(f"auto{number}"))
            if self.hand is not None:
                bot.observe(self.hand.events_for(number, 0))
            self.bots[number] = bot
        return bot

    async def autoplay(self, number: int, announce: bool = False) -> Pending | None:
        """Play for seat `number` (a bot, or a player away): a quick bot's move is made now; a
        slow bot's decision is handed back, to be made off the event loop (`decide`)."""
        hand = self.hand
        assert hand is not None
        view = hand.view(number)
        bot = self.bot_for(number)
        if bot.slow:
            # The thread decides on a copy: the seat's bot goes on observing the table meanwhile
            # (a decision the table moved past is dropped), and its random numbers are drawn
            # only by decisions acted on, so play stays the same for the same seed.
            thinker = copy.deepcopy(bot)
            seat = self.seats[number]
            return Pending(number, seat, hand, len(hand.events), bot, thinker, view, announce)
        try:
            action = bot.choose(view)
        except Exception:
            log.exception("table %d: bot in seat %d failed to choose", self.id, number)
            action = fallback(number, hand.legal_actions(number))
        await self.play_for(number, hand, action)
        return None

    async def decide(self, pending: Pending) -> None:
        """Make a slow bot's decision in the server's worker thread (`TonkServer.thinking`),
        the lock free meanwhile (players act, the table pauses or stops), then act on it only
        if `still_due`; else drop it, and the table's loop asks again if the seat is still to
        be played for. Stopping the table cancels the wait at once; a decision already running
        finishes unheeded."""
        action: Action | None = None
        thinker = pending.thinker
        try:
            action = await self.loop.run_in_executor(
                self.server.thinking, thinker.choose, pending.view
            )
        except Exception:
            log.exception("table %d: bot in seat %d failed to choose", self.id, pending.number)
        async with self.lock:
            try:
                if not self.still_due(pending):
                    log.debug("table %d: seat %d's decision dropped", self.id, pending.number)
                    return
                self.bots[pending.number] = pending.thinker
                if action is None:
                    action = fallback(pending.number, pending.hand.legal_actions(pending.number))
                await self.play_for(pending.number, pending.hand, action)
            finally:
                if pending.announce:
                    self.broadcast_table()

    def still_due(self, pending: Pending) -> bool:
        """Whether the table is where it was when `pending`'s bot was asked: playing, not
        paused, the same hand with as many events, the same seat to act, still played for."""
        hand = self.hand
        number = pending.number
        seat = pending.seat
        return (
            self.state == PLAYING
            and self.paused is None
            and hand is pending.hand
            and not hand.ended
            and hand.turn == number
            and len(hand.events) == pending.events
            and number < len(self.seats)
            and self.seats[number] is seat
            and (seat.kind == BOT or seat.away)
            and self.bots.get(number) is pending.bot
        )

    async def play_for(self, number: int, hand: Hand, action: Action) -> None:
        """Apply the move a bot chose for seat `number`; a fallback move if it is illegal. A
        move made for a player away is counted for them (`tell_away`)."""
        start = len(hand.events)
        try:
            await self.apply(action)
        except IllegalAction as exc:
            log.error("table %d: bot in seat %d chose %s: %s", self.id, number, action, exc.reason)
            await self.apply(fallback(number, hand.legal_actions(number)))
        tally = self.seats[number].tally
        if tally is not None:
            turn = sum(1 for event in hand.events[:start] if event.kind == "turn")
            tally.played(self.hand_number, turn, range(start, len(hand.events)))


def _log_failed_offer(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("a rematch offer was not saved: %s", future.exception())

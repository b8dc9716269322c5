"""A table's play: its session and the hand in play, with the turn's clock; a player's action,
the bots' and the absent players' turns (a slow bot deciding off the event loop), each hand
settled into the session, the deal, the session's end."""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from typing import TYPE_CHECKING, Any

from tonk.shared.bots.bots import Bot, fallback, make_bot
from tonk.shared.game.actions import Action, IllegalAction, action_to_dict
from tonk.shared.game.cards import parse_cards
from tonk.shared.game.dealcheck import cut_of
from tonk.shared.game.fairdeal import Seal, deck_of
from tonk.shared.game.hand import Hand, HandRecord
from tonk.shared.game.ledger import Ledger, LedgerEntry
from tonk.shared.game.session import played_for_at, without_last_action
from tonk.shared.game.words import amount_text, plural
from tonk.shared.wire import messages as m
from tonk.shared.wire import protocol as p
from tonk.shared.wire.messages import (
    Cut,
    DealCommit,
    HandEnd,
    SessionEndReason,
    Update,
)

from ..connection import Connection, encode_message
from ..errors import RequestError
from ..store import store as st
from .table_core import BOT, FINISHED, HUMAN, PLAYING, Pending, Settle, TableFrame, ledger_message
from .table_deal import ValueRound, open_round, reveal_of, seal_of, take_value
from .table_rematch import TableRematch
from .table_seats import TableSeats
from .table_store import TableStore

if TYPE_CHECKING:
    pass

log = logging.getLogger("tonk.server")
_INF = float("inf")


class TablePlay:
    """A table's session and its hand in play, with the turn's clock: actions applied to the
    hand, saved, then told to everybody; the bots' and absent players' turns; the deal. Of the
    other parts it asks the seats who sits where (and to count what was done for a player
    away), the store to write, and the rematch to be offered once the session is over."""

    __slots__ = (
        "_rematch",
        "_seats",
        "_store",
        "_table",
        "bots",
        "hand",
        "hand_settled",
        "holders",
        "last_change",
        "next_hand_at",
        "seal",
        "session",
        "test_deck",
        "told",
        "turn_seat",
        "turn_started",
        "value_round",
    )

    def __init__(
        self, table: TableFrame, seats: TableSeats, store: TableStore, rematch: TableRematch
    ) -> None:
        self._table = table
        self._seats = seats
        self._store = store
        self._rematch = rematch
        self.session = table.session  # the table's, played here
        self.hand: Hand | None = None
        self.hand_settled = True
        # The seats of the hand in play that changed hands: every holder of each, as
        # (seat, the index of the first event theirs, name); sent to a newcomer with the hand
        # (an update's `holders`), so that each event is named by who made it. Rebuilt from the
        # store's occupants after a restart (`restore`).
        self.holders: list[tuple[int, int, str]] = []
        self.bots: dict[int, Bot] = {}
        self.turn_started = 0.0
        self.last_change = 0.0
        self.next_hand_at: float | None = None
        self.turn_seat: int | None = None
        # (hand number, events) of the hand in play that everybody at the table has been sent:
        # behind the hand while a change to it waits to be saved.
        self.told: tuple[int, int] = (0, 0)
        # The round of values for the next deal (open from the last hand's end until the
        # deal), and what the hand in play was dealt from: its seal, or a test deck.
        self.value_round: ValueRound | None = None
        self.seal: Seal | None = None
        self.test_deck = False

    # -- the clock of the seat to act ---------------------------------------------------------

    def due(self, number: int, idle: bool = True) -> float:
        """When the seat to act, `number`, is played for if it does not act itself (the
        session's rule: `played_for_at`); `idle`: the server's limit on a turn left untouched
        at a table without a turn timer counts too."""
        table = self._table
        seat = self._seats[number]
        disconnected_at = seat.disconnected_at
        config = table.config
        return played_for_at(
            seat,
            seat.conn is not None,
            disconnected_at,
            last_change=self.last_change,
            turn_started=self.turn_started,
            bot_pause=config.bot_pause,
            turn_timer=config.turn_timer,
            # (the server's options only read when they count: a table built for a test of
            # its messages has no server)
            grace=0.0 if disconnected_at is None else table.server.config.grace,
            idle_turn=table.server.config.idle_turn if idle and not config.turn_timer else None,
        )

    def deadline(self) -> float | None:
        """Seconds until the seat to act is played for (a person's turn timer or grace; not
        the server's limit on a turn left untouched, which no table shows as a timer)."""
        hand = self.hand
        if hand is None or hand.ended:
            return None
        seat = self._seats[hand.turn]
        if seat.kind != HUMAN or seat.away:
            return None
        due = self.due(hand.turn, idle=False)
        return None if due == _INF else round(max(0.0, due - self._table.now), 3)

    def back_in_turn(self, number: int) -> None:
        """The player of seat `number` is back: if it is their turn, its clock starts again
        (or a timer that ran out would make the seat away again at once and play the rest of
        the turn for it)."""
        hand = self.hand
        if hand is not None and not hand.ended and hand.turn == number:
            self.turn_started = self._table.now

    def changed_hands(self, number: int, name: str) -> list[st.Op]:
        """Seat `number` goes to `name` (a bot, or a person): during a hand not yet settled,
        the write that says the hand's seat is `name`'s from its next step on (the history,
        the audit, the replay and the coach read each step's occupant from it)."""
        hand = self.hand
        if hand is None or self.hand_settled:
            return []
        step = len(hand.actions) + 1
        return [st.seat_changed(self._table.id, self.session.hand_number, step, number, name)]

    def handed(self, number: int, before: str, name: str) -> None:
        """Seat `number` has gone from `before` to `name` (written): during a hand not yet
        settled, its events from the next on are `name`'s."""
        hand = self.hand
        if hand is None or self.hand_settled:
            return
        if not any(seat == number for seat, _, _ in self.holders):
            self.holders.append((number, 0, before))
        self.holders.append((number, len(hand.events), name))

    def seat_taken(self, number: int, name: str) -> None:
        """A person, `name`, takes seat `number` from its bot: the bot goes, and the person
        joins the ledger if the session is on."""
        self.bots.pop(number, None)
        if self._table.state == PLAYING:
            self.session.ledger.join(name)

    def bot_seated(self, number: int, strategy: str) -> None:
        """A bot (`strategy`) takes seat `number` during the session: it sees the hand in
        play so far, as the seat saw it."""
        bot = make_bot(strategy, self._table.rng(f"bot{number}"))
        if self.hand is not None:
            bot.observe(self.hand.events_for(number, 0))
        self.bots[number] = bot

    def unpaused(self, now: float, lost: float) -> None:
        """Play carries on at loop time `now` after a pause of `lost` seconds: a fresh turn
        clock; a table nobody sat at is not charged the pause."""
        self.turn_started = self.last_change = now
        session = self.session
        if session.unseated_since is not None:
            session.unseated_since += lost

    def shift(self, lost: float) -> None:
        """The server did not run for `lost` seconds: every deadline moves on by as much."""
        self.turn_started += lost
        self.last_change += lost
        if self.next_hand_at is not None:
            self.next_hand_at += lost
        if self.value_round is not None:
            self.value_round.closes += lost  # (the players' time to give values, too)
        session = self.session
        if session.unseated_since is not None:
            session.unseated_since += lost
        if session.deserted_since is not None:
            session.deserted_since += lost

    def refresh_deadline(self) -> None:
        """Everybody at the table is sent the running deadline again, in an `update` with no
        events: the one they have is wrong once the server lost time or play was paused."""
        hand = self.hand
        table = self._table
        if table.state != PLAYING or self._store.paused is not None or hand is None or hand.ended:
            return
        if self.told != (self.session.hand_number, len(hand.events)):
            return  # a change waits to be saved: its own update, once it is, has the deadline
        if self.deadline() is not None:
            self.send_updates(len(hand.events))

    # -- what everybody is told ---------------------------------------------------------------

    def update_message(self, seat: int | None, start: int, reply_to: int | None = None) -> Update:
        return self._update(seat, start, reply_to, self.deadline())

    def _update(
        self, seat: int | None, start: int, reply_to: int | None, deadline: float | None
    ) -> Update:
        """The hand's events from `start` on and the view after them, as `seat` sees them."""
        hand = self.hand
        assert hand is not None
        events = tuple(hand.events_for(seat, start))
        number = self.session.hand_number
        holders = tuple(self.holders) if start == 0 else ()
        view = hand.view(seat)
        return Update(self._table.id, number, start, events, view, deadline, reply_to, holders)

    def send_updates(self, start: int, answer: Connection | None = None) -> None:
        """Every connection at the table gets its `update_message(seat, start)`, the
        spectators one frame between them; `answer`, the connection whose action this is, gets
        its frame with the action's `reply_to`."""
        hand = self.hand
        assert hand is not None
        seats = self._seats
        deadline = self.deadline()  # (one for every seat's frame)
        self.told = (self.session.hand_number, len(hand.events))
        for number, seat in enumerate(seats):
            conn = seat.conn
            if conn is not None:
                reply_to = conn.request_id if conn is answer else None
                conn.send_frame(encode_message(self._update(number, start, reply_to, deadline)))
        if seats.spectators:
            frame = encode_message(self._update(None, start, None, deadline))
            for conn in seats.spectators:
                conn.send_frame(frame)

    def send_hand(self, conn: Connection, seat: int | None) -> None:
        """A newcomer to the table in `seat` (None: watching) is sent the hand in play, if any,
        after the commitment it was dealt from (so that it can check the deal too), and the
        commitment of a round of values under way."""
        table = self._table
        if self.hand is not None:
            number = self.session.hand_number
            seal = self.seal
            if seal is not None and seal.hand == number:
                conn.send(DealCommit(table.id, number, seal.commitment, 0.0, False))
            elif self.test_deck:
                conn.send(DealCommit(table.id, number, None, 0.0, True))
            conn.send(self.update_message(seat, 0))
        if self.value_round is not None:
            conn.send(self.value_round.commit(table.id, table.now))

    def send_ledger(self, conn: Connection) -> None:
        """The ledger as far as a newcomer to the table is shown it."""
        table = self._table
        conn.send(ledger_message(table.id, self.session.ledger, table.server.config.ledger_hands))

    # -- play -----------------------------------------------------------------------------------

    def start(self, started: float) -> None:
        """The session starts (at wall-clock time `started`) with the seats as they are now:
        the bots take their seats, and the first hand is due at once."""
        table = self._table
        for number, seat in enumerate(self._seats):
            if seat.kind == BOT:
                assert seat.strategy is not None
                self.bots[number] = make_bot(seat.strategy, table.rng(f"bot{number}"))
        self.session.start(self._seats.names(), started)
        self.next_hand_at = table.now

    async def act(self, conn: Connection, message: m.ActionRequest) -> None:
        table = self._table
        store = self._store
        if store.paused is not None:  # at once: the lock may be held by a write that waits
            store.refuse_paused()
        async with table.lock:
            seats = self._seats
            number = seats.seat_of(conn)
            hand = self.hand
            if table.state != PLAYING or hand is None or hand.ended:
                raise RequestError(p.NO_HAND, "no hand is being played at this table")
            if store.paused is not None:
                store.refuse_paused()
            try:
                action = m.action_of(message, number)
            except IllegalAction as exc:
                raise RequestError(p.ILLEGAL_ACTION, exc.reason, exc.code) from None
            if seats[number].away:  # (not awaited on every action: a coroutine each)
                await seats.welcome_back(number)
            try:
                await self.apply(action, answer=conn)
            except IllegalAction as exc:
                # The reason as this player sees it: "your run", "Ada's book of jacks".
                reason = exc.text(seats.names(), number)
                raise RequestError(p.ILLEGAL_ACTION, reason, exc.code) from None

    async def apply(self, action: Action, answer: Connection | None = None) -> None:
        """Apply one action to the hand, write it durably, then tell everyone (`answer`, the
        connection that asked for it, with its request's `reply_to`)."""
        hand = self.hand
        assert hand is not None
        table = self._table
        start = len(hand.events)
        hand.apply(action)  # IllegalAction: nothing changed
        index = len(hand.actions) - 1
        ops = [st.insert_action(table.id, self.session.hand_number, index, action_to_dict(action))]
        settle = self.settle(hand) if hand.ended else None
        if settle is not None:
            ops.extend(settle.ops)
        try:
            await self._store.write(ops)
        except RequestError:
            self.hand = without_last_action(hand)
            raise
        self.after_change(start, settle, answer)

    def settle(self, hand: Hand) -> Settle:
        """The ended `hand`'s settlement as the session takes it, and its writes."""
        settlement = hand.settlement
        assert settlement is not None
        table = self._table
        now = time.time()
        names = self._seats.names()
        settled = self.session.settle(settlement, names, now)
        number = self.session.hand_number
        ops = st.settle_hand(
            table.id,
            number,
            self.record_of(hand),
            settlement.to_dict(),
            now,
            list(settled.payments),
            settled.balances,
        )
        kinds = [str(seat.kind) for seat in self._seats]
        ops += st.count_hand(table.id, number, settled.names, kinds, table.config.unit, settlement)
        columns: dict[str, Any] = {
            "hands_played": settled.played,
            "multiplier": settled.next_multiplier,
        }
        if settled.over:
            columns["state"] = FINISHED
        ops.append(st.update_table(table.id, **columns))
        return Settle(ops, settled)

    def after_change(
        self, start: int, settle: Settle | None, answer: Connection | None = None
    ) -> None:
        """The hand changed (and the change is on disk): bots see it, everyone gets a view."""
        hand = self.hand
        assert hand is not None
        table = self._table
        now = table.now
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
                log.exception("table %d: bot in seat %d failed to observe", table.id, number)
        self.send_updates(start, answer)
        if settle is not None:
            self.apply_settlement(settle)
        seat = None if hand.ended else self._seats[hand.turn]
        if (
            seat is not None
            and seat.kind == HUMAN
            and seat.conn is not None
            and not seat.away
            and not table.config.turn_timer
            and self._store.paused is None
        ):
            # A connected player is to act, with no turn timer running: nothing falls due
            # that the table's loop does not already wait for (it is kicked by every
            # disconnect, resume and seat change), so it need not wake for every action. The
            # server's limit on a turn left untouched (`idle_turn`) falls due no sooner than
            # the one the loop waits for already: a turn's clock only starts later.
            return
        table.kick()

    def apply_settlement(self, settle: Settle) -> None:
        table = self._table
        self.session.settled(settle.settled, table.server.config.ledger_hands)
        table.server.lobby.changed(table.id)  # the hands played and the balances
        self.hand_settled = True
        self.turn_seat = None
        names = settle.names
        number = self.session.hand_number
        winner = " and ".join(names[n] for n in settle.settlement.winners) or None
        self._seats.hand_ended(number, winner)
        seal = self.seal
        if seal is not None and seal.hand == number:
            # The secret, only now that the hand is over: every card it could hide is shown
            # or out of play (PROTOCOL.md, "A deal anyone can check").
            self._seats.broadcast(reveal_of(seal))
        log.info(
            "table %d: hand %d ends (%s): %s",
            table.id,
            number,
            settle.settlement.ending.words,
            ", ".join(
                f"{a} pays {b} {amount_text(c, table.config.unit)}" for a, b, c in settle.payments
            )
            or "no payments",
        )
        self._seats.broadcast(
            HandEnd(
                table.id,
                number,
                settle.settlement,
                settle.names,
                settle.payments,
                dict(self.session.ledger.balances),
            )
        )
        if settle.session_over:
            table.state = FINISHED
            log.info(
                "table %d: session over after %s",
                table.id,
                plural(self.session.hands_played, "hand"),
            )
            reason = SessionEndReason(settle.session_over)
            self._rematch.offer_after(reason)
            self._seats.broadcast(self._rematch.session_end(reason))
            table.broadcast_table()
        else:
            self.next_hand_at = table.now + table.server.config.next_hand_delay

    async def end_session(self, reason: SessionEndReason) -> None:
        """End the session between hands: the final standings to everybody still here, and
        the table leaves the lobby once nobody is at it."""
        table = self._table
        await self._store.write([st.update_table(table.id, state=FINISHED)])
        table.state = FINISHED
        log.info(
            "table %d: session over (%s) after %s",
            table.id,
            reason,
            plural(self.session.hands_played, "hand"),
        )
        self._seats.broadcast(self._rematch.session_end(reason))
        table.broadcast_table()
        if not self._seats.attached():
            table.forget()

    # -- the deal --------------------------------------------------------------------------

    def open_deal(self) -> None:
        """Open the round of values for the next hand, once: its commitment to everybody at
        the table, waiting for the players here (not a bot's seat, nor an away one) until the
        server's `deal_wait` is over. A test deck (a seed or a deck order given to a --dev
        server) has a round that commits to nothing and waits for nobody."""
        number = self.session.hand_number + 1
        if self.value_round is not None and self.value_round.hand == number:
            return
        table = self._table
        config = table.config
        dev = config.seed is not None or (number == 1 and config.deck is not None)
        waited = frozenset(
            n
            for n, seat in enumerate(self._seats)
            if seat.kind == HUMAN and seat.conn is not None and not seat.away
        )
        now = table.now
        self.value_round = open_round(number, waited, now, table.server.config.deal_wait, dev)
        self._seats.broadcast(self.value_round.commit(table.id, now))

    def deal_at(self) -> float:
        """When the next hand is dealt: once it is due and every player waited for has given
        a value, or the round's wait is over."""
        due = self.next_hand_at
        assert due is not None
        value_round = self.value_round
        if value_round is None or value_round.dev or value_round.complete():
            return due
        return max(due, value_round.closes)

    def take_value(self, conn: Connection, message: m.DealValue) -> None:
        """A player's value for the next deal; the deal goes at once when it was the last
        waited for (and the deal is due)."""
        seat = self._seats.seat_of(conn)
        value_round = self.value_round
        take_value(value_round, self.session.hand_number, seat, message.hand, message.value)
        if value_round is not None and value_round.complete():
            self._table.kick()

    def record_of(self, hand: Hand) -> dict[str, Any]:
        """The hand's record as stored: with the seal it was dealt from, or marked a test
        deck (a hand of an older server has neither)."""
        record = hand.record().to_dict()
        if self.seal is not None:
            record["seal"] = self.seal.to_dict()
        elif self.test_deck:
            record["test_deck"] = True
        return record

    async def deal(self) -> None:
        table = self._table
        session = self.session
        seats = self._seats
        players = len(seats)
        number = session.hand_number + 1
        self.open_deal()  # (opened already, unless the deal came first)
        value_round = self.value_round
        assert value_round is not None
        self.value_round = None
        config = table.config
        seal: Seal | None = None
        if value_round.dev:
            deal = session.next_deal(players, lambda: table.rng("cut"))
            deck = parse_cards(config.deck) if number == 1 and config.deck else None
        else:
            seal = seal_of(value_round, table.id)
            seed = seal.seed()
            deal = session.next_deal(
                players, lambda: table.rng("cut"), lambda cutting: cut_of(seed, cutting)
            )
            deck = deck_of(seed)
        dealer, cut = deal.dealer, deal.cut
        hand = Hand(
            config.rules,
            players,
            dealer,
            session.hand_stakes([seat.stake for seat in seats]),
            deck=deck,
            rng=table.rng(f"hand{number}") if deck is None else None,
            multiplier=session.multiplier,
        )
        names = seats.names()
        previous = (self.hand, session.hand_number, self.seal, self.test_deck)
        self.seal, self.test_deck = seal, seal is None
        ops = [
            st.insert_hand(table.id, number, self.record_of(hand), names, time.time()),
            st.update_table(table.id, dealer=dealer),
        ]
        self.hand, session.hand_number = hand, number
        settle = self.settle(hand) if hand.ended else None
        if settle is not None:
            ops.extend(settle.ops)
        try:
            await self._store.write(ops)
        except RequestError:
            # Dealt again from the same round once the store writes: the commitment sent
            # stands, and so do the values given for it.
            self.hand, session.hand_number, self.seal, self.test_deck = previous
            self.value_round = value_round
            raise
        session.dealt(deal)
        table.server.lobby.changed(table.id)
        self.hand_settled = False
        self.holders = []
        self.next_hand_at = None
        self.turn_seat = None
        if cut is not None:
            rounds = tuple(tuple(None if c is None else str(c) for c in r) for r in cut.rounds)
            seats.broadcast(Cut(table.id, rounds, cut.dealer))
        log.info("table %d: hand %d dealt by %s", table.id, number, names[dealer])
        self.after_change(0, settle)

    # -- bots and absent players ---------------------------------------------------------------

    def bot_for(self, number: int) -> Bot:
        bot = self.bots.get(number)
        if bot is None:
            table = self._table
            bot = make_bot(table.server.config.autoplay_strategy, table.rng(f"auto{number}"))
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
            seat = self._seats[number]
            return Pending(number, seat, hand, len(hand.events), bot, thinker, view, announce)
        try:
            action = bot.choose(view)
        except Exception:
            log.exception("table %d: bot in seat %d failed to choose", self._table.id, number)
            action = fallback(number, hand.legal_actions(number))
        await self.play_for(number, hand, action)
        return None

    async def decide(self, pending: Pending) -> None:
        """Make a slow bot's decision in the server's worker thread (`TonkServer.thinking`),
        the lock free meanwhile (players act, the table pauses or stops), then act on it only
        if `still_due`; else drop it, and the table's loop asks again if the seat is still to
        be played for. Stopping the table cancels the wait at once; a decision already running
        finishes unheeded."""
        table = self._table
        action: Action | None = None
        thinker = pending.thinker
        try:
            action = await asyncio.get_running_loop().run_in_executor(
                table.server.thinking, thinker.choose, pending.view
            )
        except Exception:
            log.exception("table %d: bot in seat %d failed to choose", table.id, pending.number)
        async with table.lock:
            try:
                if not self.still_due(pending):
                    log.debug("table %d: seat %d's decision dropped", table.id, pending.number)
                    return
                self.bots[pending.number] = pending.thinker
                if action is None:
                    action = fallback(pending.number, pending.hand.legal_actions(pending.number))
                await self.play_for(pending.number, pending.hand, action)
            finally:
                if pending.announce:
                    table.broadcast_table()

    def still_due(self, pending: Pending) -> bool:
        """Whether the table is where it was when `pending`'s bot was asked: playing, not
        paused, the same hand with as many events, the same seat to act, still played for."""
        table = self._table
        hand = self.hand
        number = pending.number
        seat = pending.seat
        seats = self._seats
        return (
            table.state == PLAYING
            and self._store.paused is None
            and hand is pending.hand
            and not hand.ended
            and hand.turn == number
            and len(hand.events) == pending.events
            and number < len(seats)
            and seats[number] is seat
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
            log.error(
                "table %d: bot in seat %d chose %s: %s", self._table.id, number, action, exc.reason
            )
            await self.apply(fallback(number, hand.legal_actions(number)))
        self._seats.played_for(number, self.session.hand_number, hand.events, start)

    # -- after a restart ----------------------------------------------------------------------

    def restore(self, saved: st.SavedTable, playing: bool, now: float) -> None:
        """The session, its ledger, the bots and the hand in play as the database has them
        (the seats restored first)."""
        table = self._table
        session = self.session
        session.started = saved.started
        session.hands_played = saved.hands_played
        session.dealer = saved.dealer
        session.multiplier = saved.multiplier
        session.ledger = Ledger(
            balances=dict(saved.balances),
            history=[
                LedgerEntry(number, ending, tuple(payments))
                for number, ending, payments in saved.history
            ],
        )
        if playing:
            for seat in self._seats:
                if seat.name is not None:
                    session.ledger.join(seat.name)
            for number, seat in enumerate(self._seats):
                if seat.kind == BOT:
                    assert seat.strategy is not None
                    self.bots[number] = make_bot(seat.strategy, table.rng(f"bot{number}"))
        if saved.hand is not None:
            stored = saved.hand.record
            record = HandRecord.from_dict({**stored, "actions": saved.hand.actions})
            hand, firsts = record.replay_steps()
            self.holders = saved.hand.occupants.holders(firsts)
            self.seal = Seal.from_dict(stored["seal"]) if "seal" in stored else None
            self.test_deck = bool(stored.get("test_deck"))
            self.hand = hand
            session.hand_number = saved.hand.number
            self.hand_settled = saved.hand.settlement is not None
            for number, bot in self.bots.items():
                bot.observe(hand.events_for(number, 0))
            self.turn_seat = None if hand.ended else hand.turn
            self.told = (session.hand_number, len(hand.events))  # (a newcomer is sent it all)
        self.turn_started = self.last_change = now

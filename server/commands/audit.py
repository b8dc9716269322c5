"""`tonk-server ledger|audit|replay`: read a server's database, while it runs or not: the
ledger of every table, a check that every settled hand replays to what was paid, and any hand
played again move by move. The database is opened read-only; nothing is ever written."""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tonk.shared.game.actions import Event, IllegalAction
from tonk.shared.game.cards import format_cards
from tonk.shared.game.fairdeal import seal_problem
from tonk.shared.game.hand import HandRecord
from tonk.shared.game.rematch import combined_standings
from tonk.shared.game.rules import HouseRules
from tonk.shared.game.settle_up import settle_up, settle_up_text
from tonk.shared.game.settlement import Settlement
from tonk.shared.game.words import amount_text, plural

from ..store.paths import default_db_path
from ..store.reading import AuditError, read_only
from ..store.store_schema import earlier_sessions, hand_occupants
from .helptext import HelpFormatter, add_db_option

#: The subcommands of `tonk-server` this module answers.
COMMANDS = ("ledger", "audit", "replay")


@dataclass
class TableLedger:
    """One table as its ledger stands on disk."""

    id: int
    name: str
    state: str
    hands_played: int
    unit: str
    rules: str
    balances: dict[str, int] = field(default_factory=dict)
    rematch_of: int | None = None  # the table this one is a rematch of
    # The balances of every earlier session of its chain of rematches, oldest first.
    earlier: list[dict[str, int]] = field(default_factory=list)


def ledgers(conn: sqlite3.Connection, tables: Sequence[int] = ()) -> list[TableLedger]:
    """Every table (or those in `tables`), oldest first, with its balances, highest first."""
    out = []
    # (A database of an older server, opened read-only, has no rematches.)
    chained = "rematch_of" in {row[1] for row in conn.execute("PRAGMA table_info(tables)")}
    column = "rematch_of" if chained else "NULL"
    for id_, name, config_text, state, played, rematch_of in conn.execute(
        f"SELECT id, name, config, state, hands_played, {column} FROM tables ORDER BY id"
    ):
        if tables and id_ not in tables:
            continue
        config = json.loads(config_text)
        ledger = TableLedger(
            id=id_,
            name=name,
            state=state,
            hands_played=played,
            unit=config.get("unit", ""),
            rules=HouseRules.from_dict(config["rules"]).name,
        )
        rows = conn.execute(
            "SELECT name, balance FROM balances WHERE table_id = ? ORDER BY balance DESC, name",
            (id_,),
        )
        ledger.balances = dict(rows)
        ledger.rematch_of = rematch_of
        ledger.earlier = earlier_sessions(conn, rematch_of)
        out.append(ledger)
    missing = sorted(set(tables) - {ledger.id for ledger in out})
    if missing:
        raise AuditError(f"no table {', '.join(map(str, missing))} in this database")
    return out


@dataclass
class Deals:
    """How a table's settled hands were dealt: from a seal the audit checked, from a test
    deck (--dev), or by a server older than the seals (nothing to check)."""

    sealed: int = 0
    test: int = 0
    older: int = 0

    def text(self) -> str:
        whose = "its" if self.sealed == 1 else "their"
        parts = [f"{plural(self.sealed, 'deal')} checked against {whose} commitment"]
        if self.test:
            parts.append(f"{self.test} from a test deck")
        if self.older:
            parts.append(f"{self.older} from before commitments")
        return ", ".join(parts)


def table_problems(conn: sqlite3.Connection, table: int, deals: Deals | None = None) -> list[str]:
    """Everything wrong with one table's ledger: balances that do not sum to zero or are not
    the sum of the payments, a settled hand whose record does not replay to its settlement or
    whose payments are not the settlement's, or whose deck is not the one its seal draws (the
    secret not the one committed to: `fairdeal.seal_problem`), a count of hands that
    disagrees. `deals` counts how the settled hands were dealt."""
    deals = Deals() if deals is None else deals
    out: list[str] = []
    balances = dict(conn.execute("SELECT name, balance FROM balances WHERE table_id = ?", (table,)))
    payments: dict[int, list[list[Any]]] = {}
    for hand, payer, payee, amount in conn.execute(
        "SELECT hand, payer, payee, amount FROM payments WHERE table_id = ? ORDER BY rowid",
        (table,),
    ):
        payments.setdefault(hand, []).append([payer, payee, amount])
    if sum(balances.values()) != 0:
        out.append(f"the balances sum to {sum(balances.values())}, not 0: {balances}")
    net: dict[str, int] = {}
    for rows in payments.values():
        for payer, payee, amount in rows:
            net[payer] = net.get(payer, 0) - amount
            net[payee] = net.get(payee, 0) + amount
    if {k: v for k, v in net.items() if v} != {k: v for k, v in balances.items() if v}:
        out.append(f"the payments add up to {net} but the balances are {balances}")
    settled = 0
    for number, record, names_text, settlement_text in conn.execute(
        "SELECT number, record, names, settlement FROM hands WHERE table_id = ? ORDER BY number",
        (table,),
    ):
        if settlement_text is None:
            continue
        settled += 1
        # Who paid whom: those who held the seats as the hand ended (a seat may have changed
        # hands during it), as its settlement named them.
        names = hand_occupants(conn, table, number, json.loads(names_text)).final
        stored = Settlement.from_dict(json.loads(settlement_text))
        try:
            data = json.loads(record)
            hand_record = HandRecord.from_dict(data)
            replayed = hand_record.replay().settlement
        except (IllegalAction, KeyError, ValueError, TypeError) as exc:
            out.append(f"hand {number}: its record does not replay: {exc}")
            continue
        if "seal" in data:
            deals.sealed += 1
            problem = seal_problem(data["seal"], table, number, hand_record.deck)
            if problem is not None:
                out.append(f"hand {number}: {problem}")
        elif data.get("test_deck"):
            deals.test += 1
        else:
            deals.older += 1
        if replayed != stored:
            out.append(f"hand {number}: its record does not replay to the settlement stored")
        expected = [[names[x.payer], names[x.payee], x.amount] for x in stored.payments]
        if payments.get(number, []) != expected:
            out.append(
                f"hand {number}: payments {payments.get(number, [])} but the settlement says "
                f"{expected}"
            )
    played = conn.execute("SELECT hands_played FROM tables WHERE id = ?", (table,)).fetchone()
    if played is None:
        out.append(f"no table {table}")
    elif settled != played[0]:
        are = "is" if settled == 1 else "are"
        out.append(f"{plural(settled, 'hand')} {are} settled but the table counts {played[0]}")
    return out


def find_table(conn: sqlite3.Connection, wanted: str) -> tuple[int, str]:
    """The table an operator means: its id, or its name (any case; of several tables of that
    name, the newest). Returns its id and, when other tables share the name, a note saying
    which one this is; AuditError when there is none."""
    text = wanted.strip()
    if text.isdigit():
        return int(text), ""
    folded = " ".join(text.split()).casefold()
    ids = [
        id_
        for id_, name in conn.execute("SELECT id, name FROM tables ORDER BY id DESC")
        if " ".join(name.split()).casefold() == folded
    ]
    if not ids:
        raise AuditError(
            f"no table named {text!r} in this database (tonk-server ledger lists them)"
        )
    if len(ids) == 1:
        return ids[0], ""
    others = ", ".join(map(str, sorted(ids[1:])))
    return ids[0], (
        f"{len(ids)} tables are named {text!r}: this is table {ids[0]}, the newest "
        f"(the others: {others}; give a table's id for another)"
    )


def replay_lines(conn: sqlite3.Connection, table: int, number: int) -> list[str]:
    """The hand played again from its record, every card shown: the deal, each action with
    what it did, and the settlement (or where the hand stands, if it is still being played)."""
    row = conn.execute(
        "SELECT record, names, settlement FROM hands WHERE table_id = ? AND number = ?",
        (table, number),
    ).fetchone()
    if row is None:
        raise AuditError(f"table {table} has no hand {number}")
    data = json.loads(row[0])
    seating = hand_occupants(conn, table, number, json.loads(row[1]))
    names = seating.dealt
    (config,) = conn.execute("SELECT config FROM tables WHERE id = ?", (table,)).fetchone()
    unit = json.loads(config).get("unit", "")
    if row[2] is None:  # still being played: its actions so far are stored one by one
        data["actions"] = [
            json.loads(a)
            for (a,) in conn.execute(
                "SELECT action FROM actions WHERE table_id = ? AND hand = ? ORDER BY idx",
                (table, number),
            )
        ]
    record = HandRecord.from_dict(data)
    hand = record.deal()

    def sentence(events: Sequence[Event]) -> str:
        """What an action did, as one sentence: its events joined, the first word capital
        unless it is a player's name (written as the player typed it: "cy draws")."""
        text = "; ".join(event_text(event, names) for event in events)
        if events and events[0].seat is not None:
            return text
        return text[:1].upper() + text[1:]

    lines = [
        f"Hand {number} at table {table}: {record.rules.name} rules, {record.players} players, "
        f"{names[record.dealer]} deals"
        + (f", stakes x{record.multiplier}" if record.multiplier > 1 else ""),
        f"Deck order: {format_cards(record.deck)}",
    ]
    lines += [sentence([event]) for event in hand.events if event.kind != "turn"]
    lines.append(dealt_from(data, table, number, names))
    for i, action in enumerate(record.actions, 1):
        lines += seat_changes(names, names := seating.names_at(i))
        try:
            events = hand.apply(action)
        except IllegalAction as exc:
            raise AuditError(f"hand {number}: action {i} does not replay: {exc}") from None
        lines.append(f"{i}. " + sentence([e for e in events if e.kind != "turn"]))
    lines += seat_changes(names, names := seating.final)
    settlement = hand.settlement
    if settlement is None:
        lines.append(f"Still being played: {names[hand.turn]} to play.")
        return lines
    lines.append(f"Ending: {settlement.ending.value.replace('_', ' ')}")
    for seat, (count, cards) in enumerate(zip(settlement.counts, settlement.revealed, strict=True)):
        if cards is not None:
            lines.append(f"  {names[seat]} shows {format_cards(cards)} (count {count})")
    for payment in settlement.payments:
        lines.append(
            f"  {names[payment.payer]} pays {names[payment.payee]} "
            + amount_text(payment.amount, unit)
        )
    if not settlement.payments:
        lines.append("  Nobody pays.")
    return lines


def dealt_from(data: dict[str, Any], table: int, number: int, names: Sequence[str]) -> str:
    """What a stored hand's deck was drawn from, and whether it is the deck its seal draws."""
    seal = data.get("seal")
    if seal is None:
        if data.get("test_deck"):
            return "Dealt from a test deck (--dev): no commitment to check"
        return "Dealt by a server older than commitments: nothing to check"
    try:
        givers = [names[seat] for seat, _ in seal["values"]]
        commitment = str(seal["commitment"])
    except (KeyError, IndexError, TypeError, ValueError):
        givers, commitment = [], "?"
    problem = seal_problem(seal, table, number, HandRecord.from_dict(data).deck)
    given = f"the values of {', '.join(givers)}" if givers else "no player's value"
    said = "the deck is the one they draw" if problem is None else f"NOT SOUND: {problem}"
    return f"Dealt from the secret committed to ({commitment[:16]}...) and {given}: {said}"


def seat_changes(before: Sequence[str], after: Sequence[str]) -> list[str]:
    """A line for each seat that changed hands between two steps (its new occupant plays
    it from the next move on)."""
    return [
        f"{name} takes {was}'s seat" for was, name in zip(before, after, strict=True) if name != was
    ]


def event_text(event: Event, names: Sequence[str]) -> str:
    """One event in plain words, with every card shown."""
    who = names[event.seat] if event.seat is not None else ""
    cards = format_cards(event.cards)
    kind = event.kind
    if kind == "deal":
        return f"{who} is dealt {cards}"
    if kind == "up_card":
        return f"up card {cards}"
    if kind == "draw_stock":
        return f"{who} draws {cards}"
    if kind == "take_discard":
        return f"{who} takes {cards} from the pile"
    if kind == "spread":
        return f"{who} spreads {cards} (spread {event.spread})"
    if kind == "hit":
        return f"{who} hits {cards} on spread {event.spread}"
    if kind == "discard":
        return f"{who} discards {cards}"
    if kind == "drop":
        return f"{who} drops with {event.count}"
    if kind == "deal_tonk":
        return f"{who} tonks on the deal with {event.count}: {cards}"
    if kind == "tonk_out":
        return f"{who} tonks out"
    if kind == "out_on_discard":
        return f"{who} goes out on the discard"
    if kind == "stock_out":
        return f"{who} would draw: the stock is empty"
    if kind == "hand_end":
        return "the hand ends"
    return f"{who} {kind}".strip()


def hand_number(text: str) -> int:
    """A hand's number on the command line (argparse says the reason it raises)."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(
            f"a hand is numbered from 1 (ledger counts them), not {text!r}"
        )
    return int(text)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="tonk-server",
        description="Read a tonk-server database (safe while the server runs).",
        formatter_class=HelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    ledger = commands.add_parser(
        "ledger", help="every table's balances", formatter_class=HelpFormatter
    )
    ledger.add_argument("tables", nargs="*", type=int, metavar="TABLE", help="only these tables")
    add_db_option(ledger)
    audit = commands.add_parser(
        "audit",
        help="check every ledger against its hands, replaying each settled hand, and each "
        "deal against the commitment it was dealt from",
        formatter_class=HelpFormatter,
    )
    audit.add_argument("tables", nargs="*", type=int, metavar="TABLE", help="only these tables")
    add_db_option(audit)
    replay = commands.add_parser(
        "replay", help="play one hand again, every card shown", formatter_class=HelpFormatter
    )
    replay.add_argument("table", metavar="TABLE", help="the table's id or name (as ledger shows)")
    replay.add_argument("hand", type=hand_number, metavar="HAND", help="the hand's number")
    add_db_option(replay)
    return parser.parse_args(argv)


def main(argv: Sequence[str]) -> int:
    """Exit status: 0 done (audit: every ledger is sound), 1 an audit found problems, 2 the
    database or the table asked for cannot be read."""
    args = parse_args(argv)
    path: Path = args.db or default_db_path()
    try:
        with read_only(path) as conn:
            if args.command == "ledger":
                return print_quietly([ledger_text(ledger) for ledger in ledgers(conn, args.tables)])
            if args.command == "audit":
                return audit(conn, args.tables)
            table, note = find_table(conn, args.table)
            if note:
                print(f"tonk-server replay: {note}", file=sys.stderr)
            lines = replay_lines(conn, table, args.hand)
    except AuditError as exc:
        print(f"tonk-server {args.command}: {exc}", file=sys.stderr)
        return 2
    return print_quietly(lines)


def print_quietly(lines: Sequence[str]) -> int:
    """Write `lines` to the standard output; a reader that stops early (`| head`) ends the
    command quietly, as it ends any other, rather than with a BrokenPipeError's traceback."""
    try:
        for line in lines:
            print(line)
        sys.stdout.flush()
    except BrokenPipeError:
        # Python's own flush at exit would fail again: point stdout at nothing first.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def ledger_text(ledger: TableLedger) -> str:
    """A table's balances and how to settle them up; for a rematch, the totals across its
    chain of sessions too, and their settling up."""
    head = (
        f"table {ledger.id} {ledger.name!r} ({ledger.rules}, {ledger.state}, "
        f"{plural(ledger.hands_played, 'hand')})"
    )
    if ledger.rematch_of is not None:
        head += f", a rematch of table {ledger.rematch_of}"
    if not ledger.balances and not ledger.earlier:
        return f"{head}: no hand settled"
    lines = [head, *_balance_lines(ledger.balances, ledger.unit)]
    lines.append(f"  settle up: {settle_up_text(settle_up(ledger.balances), ledger.unit)}")
    if ledger.earlier:
        total = dict(combined_standings([*ledger.earlier, ledger.balances]))
        lines.append(f"  the {len(ledger.earlier) + 1} sessions together:")
        lines += ["  " + line for line in _balance_lines(total, ledger.unit)]
        lines.append(f"    settle up: {settle_up_text(settle_up(total), ledger.unit)}")
    return "\n".join(lines)


def _balance_lines(balances: dict[str, int], unit: str) -> list[str]:
    unit = f" {unit}" if unit else ""
    return [f"  {name:<24} {balance:+d}{unit}" for name, balance in balances.items()]


def audit(conn: sqlite3.Connection, tables: Sequence[int]) -> int:
    bad = 0
    found = ledgers(conn, tables)
    for ledger in found:
        deals = Deals()
        problems = table_problems(conn, ledger.id, deals)
        if problems:
            bad += 1
            print(f"table {ledger.id} {ledger.name!r}: {plural(len(problems), 'problem')}")
            for problem in problems:
                print(f"  {problem}")
        else:
            hands = plural(ledger.hands_played, "hand")
            print(
                f"table {ledger.id} {ledger.name!r}: {hands} replayed, ledger sound; "
                + deals.text()
            )
    print(f"{plural(len(found), 'table')} audited, {bad} with problems")
    return 1 if bad else 0

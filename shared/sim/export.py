"""`tonk-sim --export`: every hand as one line of JSON or one CSV row, and a CSV row read back."""

from __future__ import annotations

import csv
import json
from typing import IO, Any


def csv_columns(players: int) -> list[str]:
    seats = range(players)
    return [
        "variant", "hand", "dealer", "multiplier",
        *(f"deal_{s}" for s in seats), "up_card", "ending", "tonk", "winners", "dropper",
        "caught", *(f"count_{s}" for s in seats), "payments", *(f"net_{s}" for s in seats),
        "turns", "drop_turn", "actions", "stock_left",
    ]  # fmt: skip


def csv_row(record: dict[str, Any]) -> dict[str, str]:
    """A hand's record as a CSV row: lists of seats space-separated, payments as
    `payer>payee:amount`, nothing for None."""

    def cell(value: Any) -> str:
        return "" if value is None else str(value)

    row = {
        key: cell(record[key])
        for key in (
            "variant", "hand", "dealer", "multiplier", "up_card", "ending", "tonk", "dropper",
            "caught", "turns", "drop_turn", "actions", "stock_left",
        )
    }  # fmt: skip
    row["winners"] = " ".join(map(str, record["winners"]))
    row["payments"] = " ".join(f"{a}>{b}:{n}" for a, b, n in record["payments"])
    for seat, (cards, count, net) in enumerate(
        zip(record["deal"], record["counts"], record["net"], strict=True)
    ):
        row[f"deal_{seat}"] = cards
        row[f"count_{seat}"] = cell(count)
        row[f"net_{seat}"] = str(net)
    return row


def record_from_csv(row: dict[str, str]) -> dict[str, Any]:
    """A CSV row read back as the hand's record."""

    def number(text: str) -> int | None:
        return None if text == "" else int(text)

    players = sum(1 for key in row if key.startswith("deal_"))
    payments = []
    for item in row["payments"].split():
        seats, _, amount = item.partition(":")
        payer, _, payee = seats.partition(">")
        payments.append([int(payer), int(payee), int(amount)])
    return {
        "variant": row["variant"],
        "hand": int(row["hand"]),
        "dealer": int(row["dealer"]),
        "multiplier": int(row["multiplier"]),
        "deal": [row[f"deal_{s}"] for s in range(players)],
        "up_card": row["up_card"],
        "ending": row["ending"],
        "tonk": row["tonk"] or None,
        "winners": [int(w) for w in row["winners"].split()],
        "dropper": number(row["dropper"]),
        "caught": number(row["caught"]),
        "counts": [number(row[f"count_{s}"]) for s in range(players)],
        "payments": payments,
        "net": [int(row[f"net_{s}"]) for s in range(players)],
        "turns": int(row["turns"]),
        "drop_turn": number(row["drop_turn"]),
        "actions": int(row["actions"]),
        "stock_left": int(row["stock_left"]),
    }


class Exporter:
    """Writes each hand as it is played, as JSON Lines or CSV."""

    def __init__(self, out: IO[str], kind: str, players: int) -> None:
        self.out = out
        self.kind = kind
        self.writer: csv.DictWriter[str] | None = None
        if kind == "csv":
            self.writer = csv.DictWriter(out, fieldnames=csv_columns(players))
            self.writer.writeheader()

    def write(self, record: dict[str, Any]) -> None:
        if self.writer is not None:
            self.writer.writerow(csv_row(record))
        else:
            self.out.write(json.dumps(record, separators=(",", ":")) + "\n")

"""The panel of people-like players (bench/panel_players.py) and its benchmark (bench/panel.py):
every player plays only legal actions from its own seat's view, each style shows in what it
does, and the benchmark runs end to end on a tiny grid and writes a table with intervals."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest
from checkout import ROOT
from rulekit import card, deal
from tonk.shared.bots.bots import Bot, BotError
from tonk.shared.game.actions import Action, Discard, DrawStock, Drop, Event, LaySpread, TakeDiscard
from tonk.shared.game.cards import Card, count
from tonk.shared.game.hand import Hand
from tonk.shared.game.rules import PRESETS
from tonk.shared.game.view import Phase, SeatView
from tonk.shared.sim.play import play_hand

sys.path.insert(0, str(ROOT / "bench"))

from panel_players import (
    HELD_OUT,
    PANEL,
    PEOPLE,
    TUNING,
    Cautious,
    Eager,
    Hoarder,
    Middling,
    NeverDrops,
    TonkOut,
)


class Watched:
    """A panel player with every view it is given, every action it returns and every event it
    is shown checked against what its seat may see and do, and its actions kept."""

    def __init__(self, bot: Bot, log: list[tuple[str, SeatView, Action]]) -> None:
        self.bot = bot
        self.strategy = bot.strategy
        self.slow = bot.slow
        self.log = log
        self.seat: int | None = None

    def observe(self, events: Sequence[Event]) -> None:
        for event in events:
            if event.kind == "deal" and event.cards:
                self.seat = event.seat
            if event.private and event.cards:
                assert event.seat == self.seat, "shown another seat's cards"
        self.bot.observe(events)

    def choose(self, view: SeatView) -> Action:
        assert view.seat == self.seat and view.my_turn
        action = self.bot.choose(view)
        assert action in view.legal().actions(view.seat), (self.strategy, action)
        self.log.append((self.strategy, view, action))
        return action


def play_panel(hands: int, seed: int) -> list[tuple[str, SeatView, Action]]:
    """`hands` hands through the real core, 2 to 4 seats under every preset, each line-up
    drawn from the whole panel; every decision of the six people, checked (see Watched)."""
    rng = random.Random(seed)
    names = sorted(PANEL)
    presets = list(PRESETS)
    log: list[tuple[str, SeatView, Action]] = []
    for number in range(hands):
        players = 2 + number % 3
        lineup = rng.sample(names, players)
        bots: list[Bot] = []
        for name in lineup:
            bot = PANEL[name](random.Random(rng.getrandbits(32)))
            bots.append(Watched(bot, log) if name in PEOPLE else bot)
        rules = PRESETS[presets[number % len(presets)]]
        hand = Hand(rules, players, number % players, (1,) * players, rng=rng)
        play_hand(hand, bots, max_actions=2000)
        assert hand.settlement is not None
    return log


@pytest.fixture(scope="module")
def decisions() -> list[tuple[str, SeatView, Action]]:
    return play_panel(600, 24)


@pytest.mark.slow
def test_every_person_plays_legal_actions_from_its_own_seat(
    decisions: list[tuple[str, SeatView, Action]],
) -> None:
    seen = Counter(name for name, _, _ in decisions)
    assert set(seen) == set(PEOPLE)
    assert min(seen.values()) > 500


def test_the_drops_show_each_style(decisions: list[tuple[str, SeatView, Action]]) -> None:
    drops: dict[str, list[int]] = {name: [] for name in PEOPLE}
    starts: Counter[str] = Counter()
    for name, view, action in decisions:
        if view.phase is Phase.START and view.legal().drop:
            starts[name] += 1
            if isinstance(action, Drop):
                drops[name].append(count(view.hand))
    assert drops["never-drops"] == [] and starts["never-drops"] > 100
    assert drops["cautious"] and max(drops["cautious"]) <= Cautious.DROP_AT
    assert drops["tonk-out"] and max(drops["tonk-out"]) <= TonkOut.DROP_AT
    assert drops["hoarder"] and max(drops["hoarder"]) <= Hoarder.DROP_AT
    # The eager dropper drops higher than anyone, up to its early limit and a misjudged point.
    assert max(drops["eager"]) > Cautious.DROP_AT + 5
    assert max(drops["eager"]) <= Eager.EARLY + Eager.MISJUDGE
    rate = {name: len(drops[name]) / starts[name] for name in PEOPLE}
    assert rate["eager"] > rate["middling"] > rate["cautious"] > rate["tonk-out"] > 0


def position(hands: Sequence[str], up: str, stock: str, moves: int = 0) -> Hand:
    """A two-seat classic hand, seat 0 first to act; then `moves` rounds in which each seat
    draws from the stock and throws back what it drew."""
    hand = deal("classic", hands, up=up, stock=stock)
    for _ in range(moves):
        for seat in (0, 1):
            hand.apply(DrawStock(seat))
            hand.apply(Discard(seat, drawn(hand, seat)))
    return hand


def drawn(hand: Hand, seat: int) -> Card:
    """The card `seat` drew last (the last private card event of its own)."""
    for event in reversed(hand.events_for(seat)):
        if event.kind == "draw_stock" and event.cards:
            return event.cards[0]
    raise AssertionError("no draw")


class Seated:
    """A bot in seat 0 of `hand`, shown what its seat saw since it was last asked."""

    def __init__(self, bot: Bot, hand: Hand) -> None:
        self.bot, self.hand, self.shown = bot, hand, 0

    def move(self) -> Action:
        hand = self.hand
        self.bot.observe(hand.events_for(0, self.shown))
        self.shown = len(hand.events)
        return self.bot.choose(hand.view(0))

    def play(self) -> Action:
        action = self.move()
        self.hand.apply(action)
        return action


def move(bot: Bot, hand: Hand) -> Action:
    """`bot`, in seat 0, shown everything its seat saw so far, asked for its action."""
    return Seated(bot, hand).move()


def test_each_person_refuses_to_see_another_seats_cards() -> None:
    for maker in PEOPLE.values():
        bot = maker(random.Random(1))
        mine = Event("deal", 0, (card("Ac"),), private=True)
        theirs = Event("deal", 1, (card("2c"),), private=True)
        with pytest.raises(BotError):
            bot.observe([mine, theirs])


def test_the_cautious_player_drops_at_five_and_not_at_six() -> None:
    # Its first turn lays three aces; at its second it holds two cards.
    for last, drops in (("3d", True), ("4d", False)):
        hand = deal("classic", ["Ac Ad Ah 2c " + last, "9c 9d 9h 8s Kc"], up="Ks", stock="Qc Jh Qh")
        seat = Seated(Cautious(random.Random(1)), hand)
        assert seat.play() == DrawStock(0)
        assert isinstance(seat.play(), LaySpread)
        assert seat.play() == Discard(0, card("Qc"))
        hand.apply(DrawStock(1))
        hand.apply(Discard(1, card("Jh")))
        assert count(hand.hands[0]) == (5 if drops else 6)
        assert isinstance(seat.move(), Drop) is drops


def test_the_eager_player_drops_at_fourteen_early_but_not_later() -> None:
    at_14, at_17 = "Ac 2d 3h 4s 4c", "Ac 2d 3h 4s 7c"
    other = "9c 9d 9h 8s Kc"
    stock = "Qc Jh Qh Kh Js Qs"
    assert isinstance(move(Eager(random.Random(1)), position([at_14, other], "Ks", stock)), Drop)
    assert not isinstance(
        move(Eager(random.Random(1)), position([at_17, other], "Ks", stock)), Drop
    )
    # Its third turn, the count the same: 14 no longer feels low enough.
    later = position([at_14, other], "Ks", stock, moves=2)
    assert count(later.hands[0]) == 14
    assert not isinstance(move(Eager(random.Random(1)), later), Drop)
    assert not isinstance(
        move(Cautious(random.Random(1)), position([at_14, other], "Ks", stock)), Drop
    )


def test_the_never_dropper_goes_on_at_the_lowest_count() -> None:
    hand = position(["Ac Ad Ah As 2c", "9c 9d 9h 8s Kc"], "Ks", "Qc Jh")
    assert count(hand.hands[0]) == 6
    assert not isinstance(move(NeverDrops(random.Random(1)), hand), Drop)
    assert isinstance(move(Eager(random.Random(1)), hand), Drop)


def test_the_hoarder_takes_a_discard_that_pairs_its_hand() -> None:
    hand_text = ["Kc 9d 7h 5s 3c", "9c 9s 9h 8s Qc"]
    pairs = position(hand_text, "Kd", "Jh")  # pairs the king, makes no spread
    assert move(Hoarder(random.Random(1)), pairs) == TakeDiscard(0)
    assert move(NeverDrops(random.Random(1)), pairs) == TakeDiscard(0)
    assert move(Cautious(random.Random(1)), pairs) == DrawStock(0)
    assert move(Eager(random.Random(1)), pairs) == DrawStock(0)
    beside = position(hand_text, "8d", "Jh")  # next to the nine of diamonds
    assert move(Hoarder(random.Random(1)), beside) == TakeDiscard(0)
    assert move(Cautious(random.Random(1)), beside) == DrawStock(0)
    # Having taken the king, it keeps the pair and throws another card.
    seat = Seated(Hoarder(random.Random(1)), pairs)
    assert seat.play() == TakeDiscard(0)
    thrown = seat.move()
    assert isinstance(thrown, Discard) and thrown.card.rank != 13


def test_the_tonk_out_player_holds_its_spread_until_it_can_go_out() -> None:
    hands = ["9c 9d 9h Kc Qd", "2c 3s 4h 5s 6c"]
    for maker, lays in ((TonkOut, False), (Cautious, True), (Middling, True)):
        seat = Seated(maker(random.Random(1)), deal("classic", hands, up="8s", stock="Jh"))
        assert seat.play() == DrawStock(0)
        action = seat.move()
        assert isinstance(action, LaySpread) is lays, maker.strategy
        if not lays:
            assert isinstance(action, Discard) and action.card.rank != 9
    goes_out = deal("classic", ["9c 9d 9h 5s 6s", "2c 3c 4h 8d Kc"], up="2s", stock="7s")
    seat = Seated(TonkOut(random.Random(1)), goes_out)
    assert seat.play() == DrawStock(0)
    while goes_out.settlement is None:
        assert isinstance(seat.play(), LaySpread)
    assert goes_out.settlement.winners == (0,) and goes_out.settlement.ending.value == "tonk_out"


def test_the_people_draw_on_their_own_random_sources_only() -> None:
    def actions(global_seed: int) -> list[Action]:
        random.seed(global_seed)
        return [action for _, _, action in play_panel(60, 7)]

    first = actions(1)
    assert first == actions(2)
    assert any(name == "middling" for name, _, _ in play_panel(60, 7))


def test_the_held_out_players_are_part_of_the_panel_and_not_of_the_tuning_half() -> None:
    assert set(HELD_OUT) | set(TUNING) == set(PANEL) and not set(HELD_OUT) & set(TUNING)
    assert {"easy", "sharp"} <= set(TUNING) and len(PEOPLE) >= 6


def run_panel(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """bench/panel.py run from a checkout, in `folder`."""
    return subprocess.run(
        [sys.executable, str(ROOT / "bench" / "panel.py"), *args],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=folder,
    )


@pytest.mark.e2e
def test_the_panel_benchmark_writes_a_table_with_intervals(tmp_path: Path) -> None:
    report_file = tmp_path / "BENCHMARKS.md"
    saved = tmp_path / "run.json"
    run = run_panel(
        tmp_path,
        *("--deals", "4", "--cells", "classic:2,speno:3", "--seed", "5", "--jobs", "2"),
        *("--json", str(saved), "--write", str(report_file)),
    )
    assert run.returncode == 0, run.stderr[-3000:]
    written = report_file.read_text()
    assert "## Bots against the panel: the figures" in written
    rows = [line for line in written.splitlines() if line.startswith(("| classic |", "| speno |"))]
    assert len(rows) == 2
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[2] == "4"
        # easy, sharp, expert, expert - sharp, sharp - easy: a mean and its interval each
        for figure in cells[3:8]:
            mean, interval = figure.split(" ", 1)
            low, high = (float(x) for x in interval.strip("[]").split(", "))
            assert low <= float(mean) <= high
    data = json.loads(saved.read_text())
    assert {(c["rules"], c["players"]) for c in data["cells"]} == {("classic", 2), ("speno", 3)}
    for item in data["cells"]:
        assert set(item["bots"]) == {"easy", "sharp", "expert"}
        assert all(len(deals) == 4 for deals in item["bots"].values())
    # The same table again from the saved deals, without playing.
    again = tmp_path / "AGAIN.md"
    rerun = run_panel(tmp_path, "--from-json", str(saved), "--write", str(again))
    assert rerun.returncode == 0, rerun.stderr
    assert again.read_text().split("CPU in all")[1] == written.split("CPU in all")[1]


@pytest.mark.e2e
def test_the_panel_benchmark_refuses_an_unknown_bot_or_number(tmp_path: Path) -> None:
    run = run_panel(tmp_path, "--bots", "shark", "--deals", "2")
    assert run.returncode == 2 and "unknown bot 'shark'" in run.stderr
    run = run_panel(tmp_path, "--bots", "sharp:DROP_HIGH=3", "--deals", "2")
    assert run.returncode == 2 and "sharp has no number 'DROP_HIGH'" in run.stderr
    # The held-out panel (two players) cannot fill a table of four.
    run = run_panel(tmp_path, "--panel", "held-out", "--cells", "classic:4", "--deals", "2")
    assert run.returncode == 2 and "held-out panel has 2 players: too few" in run.stderr


def test_a_variant_changes_only_the_numbers_it_names() -> None:
    from panel import measured

    variant = measured("expert:DROP_WORTH=0.9+DEALS=40")(random.Random(1))
    assert variant.strategy == "expert" and variant.slow
    assert (variant.DROP_WORTH, variant.DEALS, variant.PLAYOUTS) == (0.9, 40, 320)  # type: ignore[attr-defined]

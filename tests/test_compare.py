"""``wizard-arena compare``: the plan, the statistics, in-process and refereed
games, and the verdicts end to end.

The end-to-end tests play short games (five rounds of 1 to 5 cards) against
the heuristic and random bots, so they stay quick; set
``WIZARD_ARENA_TEST_SIZE=full`` to play whole games against the default
opponents (the example bots, Monte Carlo among them: minutes, not seconds).
"""

from __future__ import annotations

import collections
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from wizard_arena.local import play_local
from wizard_arena.rules import Bid, BidMade, CardPlayed, ChooseTrump, Play, Rules, TrumpChosen
from wizard_bots.random_bot import RandomBot
from wizard_referee.compare.local_play import play_planned
from wizard_referee.compare.plan import ComparePlan, parse_bot
from wizard_referee.compare.stats import Bounds, PairedStats, Verdict, t_quantile
from wizard_referee.referee.record import verify_record
from wizard_referee.tournament.cmd_replay import render
from wizard_referee.tournament.store import ResultsStore

from .cli_here import cli_here
from .conftest import ROOT

FULL = os.environ.get("WIZARD_ARENA_TEST_SIZE") == "full"
#: The test-size setting: short games against fast opponents, or whole games
#: against the default opponents.
SIZE_ARGS: tuple[str, ...] = (
    ()
    if FULL
    else (
        "--round-sizes",
        "1,2,3,4,5",
        "--opponent",
        "wizard_bots.heuristic:HeuristicBot",
        "--opponent",
        "wizard_bots.random_bot:RandomBot",
    )
)
HEURISTIC = "wizard_bots.heuristic:HeuristicBot"
RANDOM = "wizard_bots.random_bot:RandomBot"


def _cli(*args: str, cwd: Path, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-m", "wizard_arena.cli", "compare", *args],
        capture_output=True,
        text=True,
        timeout=timeout if not FULL else 3600,
        cwd=cwd,
        env=env,
        check=False,
    )


def _plan(**kw: object) -> ComparePlan:
    base: dict[str, object] = dict(
        a=parse_bot(HEURISTIC),
        b=parse_bot(RANDOM),
        opponents=(parse_bot(RANDOM), parse_bot(HEURISTIC), parse_bot(RANDOM)),
        rules=Rules(players=4, hand_sizes=(1, 2, 3)),
        seed=5,
        secret="test",
    )
    base.update(kw)
    return ComparePlan(**base)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- statistics


def _sprt(mu: float, sd: float, bounds: Bounds, rng: random.Random) -> tuple[Verdict, int]:
    s = PairedStats()
    while True:
        s.add(rng.gauss(mu, sd))
        v = s.verdict(bounds)
        if v is not None:
            return v, s.n


def test_the_sprt_keeps_its_error_rates() -> None:
    """1000 simulated tests at mu = mu0 and at mu = mu1 (normal differences,
    sd 100, bounds 0 and 20 points). The wrong verdict must come at most
    alpha = beta = 5% of the time, plus 2.2 standard errors of a rate of 5%
    over 1000 runs (0.69 percentage points): 6.5%. The test errs about 5.0%
    of the time (12,000 runs); an LLR of the wrong scale or sign, or bounds
    swapped, errs far more often."""
    bounds = Bounds(0.0, 20.0, 0.05, 0.05)
    rng = random.Random(12)
    at_h0 = [_sprt(0.0, 100.0, bounds, rng) for _ in range(1000)]
    at_h1 = [_sprt(20.0, 100.0, bounds, rng) for _ in range(1000)]
    wrong_h0 = sum(v is Verdict.STRONGER for v, _ in at_h0) / 1000
    wrong_h1 = sum(v is Verdict.NO_DIFFERENCE for v, _ in at_h1) / 1000
    assert wrong_h0 <= 0.065, wrong_h0
    assert wrong_h1 <= 0.065, wrong_h1
    # and it stops: a few hundred differences on average (Wald: about 130)
    assert 60 < sum(n for _, n in at_h0) / 1000 < 250


def test_a_large_difference_is_seen_at_once() -> None:
    """A difference of two standard deviations: about 12 deals (the minimum
    is 10; the generalized likelihood ratio needed about 36)."""
    rng = random.Random(4)
    runs = [_sprt(200.0, 100.0, Bounds(0.0, 20.0), rng) for _ in range(100)]
    assert all(v is Verdict.STRONGER for v, _ in runs)
    assert sum(n for _, n in runs) / 100 < 14


def test_identical_differences_stop_with_no_difference() -> None:
    s = PairedStats()
    for _ in range(9):
        s.add(0.0)
    assert s.verdict(Bounds()) is None  # not before MIN_PAIRS
    s.add(0.0)
    assert s.verdict(Bounds()) is Verdict.NO_DIFFERENCE


def test_t_quantiles_match_tables() -> None:
    table = {1: 12.7062, 2: 4.3027, 3: 3.1824, 4: 2.7764, 5: 2.5706, 9: 2.2622, 20: 2.0860}
    for df, value in table.items():
        assert t_quantile(df) == pytest.approx(value, abs=1e-4)
    assert t_quantile(10, 0.995) == pytest.approx(3.1693, abs=1e-4)
    assert t_quantile(7, 0.025) == pytest.approx(-2.3646, abs=1e-4)


def test_bounds_refuse_what_cannot_be_tested() -> None:
    with pytest.raises(ValueError, match="mu1 > mu0"):
        Bounds(10, 10)
    with pytest.raises(ValueError, match="alpha"):
        Bounds(0, 10, alpha=0.7)


# --------------------------------------------------------------------------- plan


def test_both_games_of_a_deal_share_cards_seat_and_opponent_seeds() -> None:
    plan = _plan()
    for deal in range(8):
        a, b = plan.game(deal, "A"), plan.game(deal, "B")
        assert a.spec.seed == b.spec.seed
        assert a.candidate_seat == b.candidate_seat == deal % 4
        assert a.spec.duplicate_set == b.spec.duplicate_set
        seat = a.candidate_seat
        for s in range(4):
            if s == seat:
                assert a.spec.seats[s] == "A" and b.spec.seats[s] == "B"
                assert a.bot_seeds[s] != b.bot_seeds[s]  # copies are seeded differently
            else:
                assert a.spec.seats[s] == b.spec.seats[s]
                assert a.bot_seeds[s] == b.bot_seeds[s]
    # without duplicates B's game has its own deal and opponent seeds
    a, b = _plan(duplicate=False).game(3, "A"), _plan(duplicate=False).game(3, "B")
    assert a.spec.seed != b.spec.seed
    assert all(x != y for x, y in zip(a.bot_seeds, b.bot_seeds, strict=True))
    assert a == plan.game(3, "A")  # A's games do not depend on the mode


@pytest.mark.parametrize("players", [3, 4, 5])
def test_seating_balances_seats_and_neighbours(players: int) -> None:
    """Over players * (players - 1)! deals the candidate takes every seat
    equally often and every opponent sits at every distance from it equally
    often."""
    opponents = tuple(parse_bot(f"m{k}:Bot") for k in range(players - 1))
    plan = _plan(opponents=opponents, rules=Rules(players=players))
    cycle = players
    for k in range(2, players):
        cycle *= k
    seats: collections.Counter[int] = collections.Counter()
    offsets: collections.Counter[tuple[str, int]] = collections.Counter()
    for deal in range(cycle):
        g = plan.game(deal, "A")
        seats[g.candidate_seat] += 1
        for s, name in enumerate(g.spec.seats):
            if name != "A":
                offsets[(name, (s - g.candidate_seat) % players)] += 1
    assert set(seats.values()) == {cycle // players}
    assert len(offsets) == (players - 1) ** 2
    assert set(offsets.values()) == {cycle // (players - 1)}


def test_bot_specs() -> None:
    spec = parse_bot("wizard_bots.montecarlo:MonteCarloBot(samples=4, seed=None)")
    assert spec.target == "wizard_bots.montecarlo:MonteCarloBot"
    assert spec.kwargs == {"samples": 4, "seed": None}
    assert parse_bot("bots/my_bot.py:Fox").target == "bots/my_bot.py:Fox"
    assert parse_bot("./fox --fast").command == ("./fox", "--fast")
    with pytest.raises(ValueError, match="key=value"):
        parse_bot("m:Bot(4)")
    with pytest.raises(ValueError, match="players need"):
        _plan(opponents=(parse_bot(RANDOM),))


# --------------------------------------------------------------------------- games


def test_play_local_records_the_game_and_takes_seat_seeds() -> None:
    seen: list[int | None] = []

    class Seeded(RandomBot):
        def on_game_start(self, info):  # type: ignore[no-untyped-def]
            seen.append(info.seed)
            super().on_game_start(info)

    rules = Rules(players=3, hand_sizes=(1, 2, 3))
    result = play_local(
        [Seeded() for _ in range(3)], rules, seed=4, bot_seeds=[11, 12, 13], record=True
    )
    assert seen == [11, 12, 13]
    assert [d.round for d in result.deals] == [1, 2, 3]
    decisions = [e for e in result.events if isinstance(e, BidMade | CardPlayed | TrumpChosen)]
    assert [(m.seat, m.action) for m in result.moves] == [
        (
            e.seat,
            Bid(e.bid)
            if isinstance(e, BidMade)
            else Play(e.card)
            if isinstance(e, CardPlayed)
            else ChooseTrump(e.suit),
        )
        for e in decisions
    ]
    plain = play_local([Seeded() for _ in range(3)], rules, seed=4, bot_seeds=[11, 12, 13])
    assert plain.totals == result.totals and plain.moves == [] and plain.deals == []


def test_an_in_process_game_record_replays_through_the_rules() -> None:
    plan = _plan(rules=Rules(players=4, hand_sizes=(1, 2, 3), tricksy=True))
    for side in ("A", "B"):
        game = plan.game(2, side)
        record = play_planned(plan, game)
        assert verify_record(record) == []
        assert record.names == list(game.spec.seats)
        assert record.tags["side"] == side
        assert "trick 1" in render(record)


# --------------------------------------------------------------------------- end to end


def test_heuristic_against_random_is_stronger(tmp_path: Path) -> None:
    proc = _cli(HEURISTIC, RANDOM, *SIZE_ARGS, "--bot-seed-secret", "t", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("A is stronger"), proc.stdout
    assert "LLR" in proc.stderr and "[-2.94, +2.94]" in proc.stderr  # the progress
    with ResultsStore(tmp_path / "compare.sqlite", create=False) as store:
        assert store.counts()["finished"] >= 20
    replay = subprocess.run(
        [
            sys.executable,
            "-m",
            "wizard_arena.cli",
            "replay",
            "d0-B",
            "--verify",
            "-d",
            "compare.sqlite",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert "d0-B: verified, no difference" in replay.stdout, replay.stderr


def test_two_differently_seeded_copies_show_no_difference(tmp_path: Path) -> None:
    """Two copies of the random bot: in each deal they hold the same cards
    against the same opponents, with seeds of their own."""
    proc = _cli(RANDOM, RANDOM, *SIZE_ARGS, "--bot-seed-secret", "c", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["verdict"] == "no_difference", out
    assert out["llr"] <= out["lower"] == pytest.approx(-2.944, abs=1e-3)
    assert out["sd"] > 0  # not identical games: the copies played differently
    assert out["low"] < 0 < out["high"]


@pytest.mark.slow(seconds=8)
def test_fixed_games_and_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base = (HEURISTIC, RANDOM, *SIZE_ARGS, "--bot-seed-secret", "r", "--quiet")
    first = _cli(*base, "--games", "8", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("mean difference A - B:")
    assert "(4 deals, 8 games)" in first.stdout
    # the refusals in this process (they come before any game is played)
    again = cli_here(["compare", *base, "--games", "8"], capsys, monkeypatch, cwd=tmp_path)
    assert again.returncode == 2 and "--resume" in again.stderr
    more = _cli(*base, "--games", "12", "--resume", cwd=tmp_path)
    assert more.returncode == 0, more.stderr
    whole = _cli(*base, "--games", "12", "--database", "whole.sqlite", cwd=tmp_path)
    assert more.stdout.splitlines()[0] == whole.stdout.splitlines()[0]  # same games, same numbers
    other = cli_here(
        ["compare", RANDOM, RANDOM, *base[2:], "--games", "12", "--resume"],
        capsys,
        monkeypatch,
        cwd=tmp_path,
    )
    assert other.returncode == 2 and "does not match" in other.stderr


@pytest.mark.slow(seconds=8)
def test_over_the_referee_with_a_command_gives_the_in_process_answer(tmp_path: Path) -> None:
    """B is a command (the random bot connected by ``wizard-arena bot``): the
    comparison runs over a referee of its own, and plays the very games the
    in-process comparison plays."""
    command = (
        f"{sys.executable} -m wizard_arena.cli bot {RANDOM} --server {{server}} "
        "--token {token} --quiet"
    )
    small = (
        "--round-sizes",
        "1,2,3",
        "--opponent",
        HEURISTIC,
        "--opponent",
        RANDOM,
        "--bot-seed-secret",
        "s",
        "--parallel",
        "2",
        "--json",
        "--quiet",
    )
    refereed = _cli(HEURISTIC, command, *small, cwd=tmp_path)
    assert refereed.returncode == 0, refereed.stderr
    local = _cli(HEURISTIC, RANDOM, *small, "--database", "local.sqlite", cwd=tmp_path)
    assert local.returncode == 0, local.stderr

    def outcome(proc: subprocess.CompletedProcess[str]) -> dict[str, object]:
        out = json.loads(proc.stdout)
        del out["database"]
        return dict(out)

    assert outcome(refereed) == outcome(local)
    assert (tmp_path / "compare.sqlite.logs" / "B-0.log").exists()


def test_a_bot_that_ends_its_process_in_process_is_an_error_not_a_hang(tmp_path: Path) -> None:
    crash = f"tests.bots.crash_bot:CrashOnceBot(marker={str(tmp_path / 'crashed')!r})"
    proc = _cli(crash, RANDOM, *SIZE_ARGS, "--quiet", "--parallel", "1", cwd=tmp_path, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "worker process died" in proc.stderr and "over the referee" in proc.stderr

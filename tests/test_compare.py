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
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from wizard_arena.local import play_local
from wizard_arena.rules import Bid, BidMade, CardPlayed, ChooseTrump, Play, Rules, TrumpChosen
from wizard_bots.random_bot import RandomBot
from wizard_referee.compare.local_play import play_planned
from wizard_referee.compare.plan import ComparePlan, parse_bot
from wizard_referee.compare.stats import ConfidenceSequence, Design, Verdict, difference_bound
from wizard_referee.referee.record import verify_record
from wizard_referee.tournament.cmd_replay import render
from wizard_referee.tournament.store import ResultsStore

from .cli_here import cli_here
from .conftest import NEEDS_POSTGRES, ROOT
from .support import finished_games, load_bench, scaled, wait_for

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
        timeout=scaled(timeout) if not FULL else 3600,
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


def _run(cs: ConfidenceSequence, draw: Callable[[], float], most: int) -> tuple[Verdict, int]:
    while cs.n < most:
        cs.add(draw())
        verdict = cs.decide()
        if verdict is not None:
            return verdict, cs.n
    return Verdict.UNDECIDED, cs.n


def test_zero_inflated_differences_keep_the_error_rate() -> None:
    """10% of deals differ (around +300 points), the rest are exactly 0: the
    true mean is +30, above h1 = 20, so "A is not stronger than B by 20 or
    more" is an error. The former SPRT made it 20-62% of the time on such
    data (its variance, estimated from mostly zeros, made it sure early);
    the confidence sequence makes it at most beta = 5% of the time
    whatever the shape (measured: 0.0% in 10,000 runs, bench_compare_oc).
    200 runs: the bound 0.09 is 5% plus 2.6 standard errors of a 5% rate."""
    rng = random.Random(3)

    def draw() -> float:
        return rng.gauss(300.0, 200.0) if rng.random() < 0.1 else 0.0

    verdicts = [_run(ConfidenceSequence(2700, Design()), draw, 3000)[0] for _ in range(200)]
    wrong = sum(v is Verdict.BELOW_H1 for v in verdicts) / len(verdicts)
    assert wrong <= 0.09, wrong
    assert sum(v is Verdict.ABOVE_H0 for v in verdicts) >= 150  # and it does find the difference


def test_ten_identical_deals_decide_nothing() -> None:
    """Two bots that play the first ten deals alike (every difference exactly
    0) have shown nothing yet: the former test said "no difference" with
    certainty (its variance floor); a real difference that comes later is
    found."""
    cs = ConfidenceSequence(2700, Design())
    for _ in range(10):
        cs.add(0.0)
    assert cs.decide() is None
    assert cs.lower() < -100 and cs.upper() > 100  # nothing is known to within 100 points
    rng = random.Random(1)
    verdict, n = _run(cs, lambda: rng.gauss(300.0, 100.0), 400)
    assert verdict is Verdict.ABOVE_H0 and n < 100


def test_a_much_weaker_a_is_said_to_be_weaker() -> None:
    """A 583 points per game worse than B: the verdict is the upper one, and
    the statements say that A scores less than B."""
    rng = random.Random(2)
    cs = ConfidenceSequence(2700, Design())
    verdict, _ = _run(cs, lambda: max(-2700.0, rng.gauss(-583.0, 300.0)), 500)
    assert verdict is Verdict.BELOW_H1
    texts = [s.text for s in cs.statements()]
    assert "A scores less than B" in texts
    assert cs.upper() < 0 < -cs.lower()


def test_the_vectorised_simulation_is_the_module_test() -> None:
    """bench_compare_oc's numpy form of the test reaches the same verdict at
    the same deal as ConfidenceSequence, on zero-inflated, heavy-tailed and
    normal differences (its figures stand for the command's test)."""
    np = pytest.importorskip("numpy")
    bench = load_bench("bench_compare_oc")
    rng = np.random.default_rng(5)
    for design, bound in ((Design(), 2700.0), (Design.non_inferiority(30, 0.1, 0.05), 400.0)):
        for shape, mean in (("zero10", 30.0), ("t3", 10.0), ("normal", -20.0), ("skewed", 40.0)):
            xs = bench.drawer(shape, mean, 150.0, bound, rng)(0, np.arange(24 * 700)).reshape(
                24, 700
            )
            result = bench.simulate(lambda t, runs, xs=xs: xs[runs, t], design, bound, 24, 700)
            for run in range(24):
                cs = ConfidenceSequence(bound, design)
                values = iter(xs[run])
                verdict, n = _run(cs, lambda values=values: float(next(values)), 700)
                code = {Verdict.ABOVE_H0: 1, Verdict.BELOW_H1: -1, Verdict.UNDECIDED: 0}
                assert (code[verdict], n) == (result.verdicts[run], result.deals[run])
    deals = Design(0.0, 0.1, question="deals")
    signs = bench.deals_drawer("ties10", 0.05, 150.0, rng)(0, np.arange(24 * 700)).reshape(24, 700)
    assert set(np.unique(signs)) == {-1.0, 0.0, 1.0}
    result = bench.simulate(lambda t, runs: signs[runs, t], deals, 1.0, 24, 700)
    for run in range(24):
        cs = ConfidenceSequence(1.0, deals)
        values = iter(signs[run])
        verdict, n = _run(cs, lambda values=values: float(next(values)), 700)
        assert (code[verdict], n) == (result.verdicts[run], result.deals[run])


def test_error_rates_by_simulation_stay_within_nominal() -> None:
    """2,000 simulated comparisons per case (the vectorised test): at a true
    mean of h0 "A is stronger" and at h1 "not stronger by h1" come at most
    alpha = beta = 5% of the time on normal, zero-inflated and heavy-tailed
    differences. The bound 0.062 is 5% plus 2.5 standard errors; the test
    errs about 3.5% (normal) and 0-3% (the others) in 10,000 runs each."""
    np = pytest.importorskip("numpy")
    bench = load_bench("bench_compare_oc")
    rng = np.random.default_rng(8)
    design = Design()
    for shape in ("normal", "zero10", "t3"):
        for mean, wrong in ((0.0, 1), (20.0, -1)):
            draw = bench.drawer(shape, mean, 200.0, 2700.0, rng)
            result = bench.simulate(draw, design, 2700.0, 2000, 3000)
            rate = float((result.verdicts == wrong).mean())
            assert rate <= 0.062, (shape, mean, rate)
            assert float((result.verdicts == 0).mean()) <= 0.05


def test_the_deals_question_counts_who_outscored_whom() -> None:
    """A wins three deals of four by 10 points and loses the fourth by 500:
    B scores more on average (-117.5 points per game), A outscores B on more
    deals (net +50%). Each question gets its own answer from the same deals."""
    planted = [10.0, 10.0, 10.0, -500.0] * 100
    deals = Design(0.0, 0.1, question="deals")
    values = iter(planted)
    cs = ConfidenceSequence(1.0, deals)
    verdict, n = _run(cs, lambda: deals.outcome(next(values)), len(planted))
    assert verdict is Verdict.ABOVE_H0 and n < 100, n
    assert deals.verdict_text(verdict) == "A outscores B on more deals than B outscores A"
    assert abs(cs.mean - 0.5) < 0.1 and 0 < cs.lower() < 0.5 < cs.upper()
    values = iter(planted)
    points = ConfidenceSequence(2700.0, Design())
    verdict, _ = _run(points, lambda: float(next(values)), len(planted))
    assert verdict is Verdict.BELOW_H1 and points.mean < 0


def test_a_tie_counts_for_neither_side() -> None:
    """Ties (equal totals, as deals played identically give) add 0: two
    ties and a win is a net +1/3, not the -1/3 of two losses and a win;
    ties alone show that A does not outscore B by 10% of the deals, never
    that it outscores B."""
    design = Design(0.0, 0.1, question="deals")
    assert [design.outcome(x) for x in (0, 0, 30)] == [0.0, 0.0, 1.0]
    for cycle, mean, want in (((0, 0, 30), 1 / 3, Verdict.ABOVE_H0),
                              ((-40, -10, 30), -1 / 3, Verdict.BELOW_H1)):  # fmt: skip
        cs = ConfidenceSequence(1.0, design)
        values = iter(cycle * 100)
        verdict, _ = _run(cs, lambda values=values: design.outcome(next(values)), 300)
        assert verdict is want and abs(cs.mean - mean) < 0.05
    cs = ConfidenceSequence(1.0, design)
    verdict, n = _run(cs, lambda: design.outcome(0), 1000)
    assert verdict is Verdict.BELOW_H1 and 10 < n < 60
    assert cs.lower() < 0 < cs.upper() < 0.1 and not cs.above(0.0)
    with pytest.raises(ValueError, match="shares of the deals"):
        Design(0.0, 20.0, question="deals")


def test_the_deals_question_keeps_its_error_rates_by_simulation() -> None:
    """The deals question on point differences shaped like real play: 2,000
    simulated comparisons where the net share is exactly h0 on skewed
    differences (their mean in points is +61: the questions disagree) and
    exactly h1 with 40% ties. The bound 0.062 is 5% plus 2.5 standard errors."""
    np = pytest.importorskip("numpy")
    bench = load_bench("bench_compare_oc")
    rng = np.random.default_rng(9)
    design = Design(0.0, 0.1, question="deals")
    for shape, net, wrong in (("skewed", 0.0, 1), ("ties40", 0.1, -1)):
        result = bench.simulate(bench.deals_drawer(shape, net, 200.0, rng), design, 1.0, 2000, 3000)
        rate = float((result.verdicts == wrong).mean())
        assert rate <= 0.062, (shape, net, rate)
        assert float((result.verdicts == 0).mean()) <= 0.05


def test_non_inferiority() -> None:
    """``--margin D``: A as good as B (differences around 0) is shown not
    weaker by D; A clearly weaker by more than D is shown weaker."""
    rng = random.Random(4)
    design = Design.non_inferiority(40)
    verdict, _ = _run(ConfidenceSequence(2700, design), lambda: rng.gauss(0.0, 150.0), 4000)
    assert verdict is Verdict.ABOVE_H0
    assert design.verdict_text(verdict) == "A is not weaker than B by 40 points per game or more"
    verdict, _ = _run(ConfidenceSequence(2700, design), lambda: rng.gauss(-80.0, 150.0), 4000)
    assert verdict is Verdict.BELOW_H1 and design.verdict_name(verdict) == "weaker"


def test_the_sequence_refuses_what_cannot_be() -> None:
    with pytest.raises(ValueError, match="h1 > h0"):
        Design(10, 10)
    with pytest.raises(ValueError, match="alpha"):
        Design(0, 10, alpha=0.7)
    with pytest.raises(ValueError, match="outside the possible differences"):
        ConfidenceSequence(100, Design(0, 200))
    cs = ConfidenceSequence(400, Design())
    with pytest.raises(ValueError, match="outside the rules' bound"):
        cs.add(401)
    assert cs.lower() == -400 and cs.upper() == 400  # no deal: nothing known


def test_the_bound_comes_from_the_rules() -> None:
    assert difference_bound(Rules(players=4)) == 2700
    assert difference_bound(Rules(players=4, hand_sizes=(1, 2, 3))) == 180
    assert difference_bound(Rules(players=5, maximus=True)) == 5 * (20 + 10 * 12 + 10 * 12)


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
    assert proc.stdout.startswith("A is stronger than B after"), proc.stdout
    assert "A scores more than B (wrong with chance at most 0.05)" in proc.stdout
    assert "0 of " in proc.stdout and "deals played identically" in proc.stdout
    assert "sequence +" in proc.stderr and "identical)" in proc.stderr  # the progress
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
    assert out["verdict"] == "not_stronger", out
    assert out["text"] == "A is not stronger than B by 20 points per game or more"
    assert out["sd"] > 0 and out["identical_deals"] < out["deals"]  # the copies differ
    assert out["low"] < 0 < out["high"] < 20
    assert out["test"]["h1"] == 20 and out["test"]["sequential"] is True


def test_identical_bots_are_counted_not_taken_for_certainty(tmp_path: Path) -> None:
    """Two copies of the deterministic heuristic bot play every deal alike:
    every difference is exactly 0. The former test said "no difference"
    after the first ten deals with an LLR of -2000000000 (a variance floor);
    the sequence needs as many deals as the bound on a deal's difference
    takes to rule out h1, and says that every deal was played identically."""
    proc = _cli(HEURISTIC, HEURISTIC, *SIZE_ARGS, "--bot-seed-secret", "i", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("A is not stronger than B by 20 points per game or more after")
    deals = int(lines[0].split(" after ")[1].split()[0]) // 2
    assert deals > 10
    assert f"{deals} of {deals} deals played identically (A and B made the same move" in (
        proc.stdout
    )
    assert "LLR" not in proc.stdout + proc.stderr and "2000000000" not in proc.stdout
    # said early, on the progress, once
    notes = re.findall(r"note: all (\d+) deals so far were played identically", proc.stderr)
    assert len(notes) == 1 and 10 <= int(notes[0]) <= deals, proc.stderr
    # each game's digest is kept with its record, so a resume reads it back
    # without decoding the records
    with ResultsStore(tmp_path / "compare.sqlite", create=False) as store:
        digests = store.record_tags("play_digest")
        assert len(digests) == store.counts()["finished"] >= 2 * deals
    again = _cli(
        HEURISTIC, HEURISTIC, *SIZE_ARGS, "--bot-seed-secret", "i", "--resume", cwd=tmp_path
    )
    assert again.returncode == 0, again.stderr
    assert f"{deals} of {deals} deals played identically" in again.stdout


def test_margin_says_not_weaker(tmp_path: Path) -> None:
    proc = _cli(
        HEURISTIC, HEURISTIC, *SIZE_ARGS, "--margin", "30", "--json", "--quiet", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["verdict"] == "not_inferior"
    assert out["text"] == "A is not weaker than B by 30 points per game or more"
    assert out["low"] > -30 and out["test"]["margin"] == 30


@pytest.mark.slow(seconds=8)
def test_fixed_games_and_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base = (HEURISTIC, RANDOM, *SIZE_ARGS, "--bot-seed-secret", "r", "--quiet")
    first = _cli(*base, "--games", "8", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("mean difference A - B:")
    assert "4 deals, 8 games)" in first.stdout and "Student's t 95% interval" in first.stdout
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


def test_resume_with_another_test_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The thresholds, error rates and margin are part of the stored plan: a
    resume with other ones would judge the stored games by another test.
    Another --max-games is allowed."""
    base = (HEURISTIC, RANDOM, *SIZE_ARGS, "--bot-seed-secret", "b", "--quiet")
    first = _cli(*base, "--max-games", "8", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("undecided after 8 games"), first.stdout
    assert "raise --max-games and add --resume" in first.stdout
    for other, said in (
        (("--h1", "30"), "stored --h1 20.0, given --h1 30.0"),
        (("--alpha", "0.01"), "stored --alpha 0.05, given --alpha 0.01"),
        (("--margin", "10"), "stored no margin, given --margin 10.0"),
        (("--games", "8"), "stored a sequential test, given a fixed number of games"),
        (("--question", "deals"), "stored --question 'points', given --question 'deals'"),
    ):
        refused = cli_here(
            ["compare", *base, *other, "--resume"], capsys, monkeypatch, cwd=tmp_path
        )
        assert refused.returncode == 2, refused.stdout
        assert refused.stderr.count("\n") == 1 and said in refused.stderr, refused.stderr
        assert "the test does not match" in refused.stderr
    # a comparison stored before the question was kept asked about points
    with ResultsStore(tmp_path / "compare.sqlite", create=False) as store:
        config = store.tournament_config()
        assert config is not None and config["test"].pop("question") == "points"
        store.update_config(config)
    refused = cli_here(
        ["compare", *base, "--question", "deals", "--resume"],
        capsys,
        monkeypatch,
        cwd=tmp_path,
    )
    assert refused.returncode == 2 and "given --question 'deals'" in refused.stderr
    more = _cli(*base, "--max-games", "400", "--resume", cwd=tmp_path)
    assert more.returncode == 0, more.stderr
    assert more.stdout.startswith("A is stronger than B after"), more.stdout


def test_the_deals_question_end_to_end(tmp_path: Path) -> None:
    """``--question deals``: the report says what was asked, the verdict is
    about deals, the tally counts every deal once (A ahead, B ahead or tied),
    and the question is stored with the test."""
    base = (HEURISTIC, RANDOM, *SIZE_ARGS, "--bot-seed-secret", "q", "--question", "deals")
    proc = _cli(*base, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("asked: does A outscore B on more deals than B outscores A?")
    assert lines[1].startswith("A outscores B on more deals than B outscores A after"), lines
    assert "net deals > +0% of the deals" in lines[1]
    assert "question: does A outscore B on more deals" in proc.stderr
    assert "net deals +" in proc.stderr and "A ahead" in proc.stderr  # the progress
    out = json.loads(_cli(*base, "--resume", "--json", "--quiet", cwd=tmp_path).stdout)
    assert out["verdict"] == "stronger" and out["test"]["question"] == "deals"
    assert out["test"]["h1"] == 0.1 and 0 < out["low"] <= out["mean"] <= out["high"] <= 1
    assert out["deals_a_ahead"] + out["deals_b_ahead"] + out["deals_tied"] == out["deals"]
    assert out["mean"] == pytest.approx(
        (out["deals_a_ahead"] - out["deals_b_ahead"]) / out["deals"]
    )
    assert out["points_mean"] > 0


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
    # a generous deadline: a move timed out on a loaded machine would be
    # played by the default action and the games would differ
    refereed = _cli(HEURISTIC, command, *small, "--move-time", "30", cwd=tmp_path)
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
    proc = _cli(
        crash, RANDOM, *SIZE_ARGS, "--quiet", "--parallel", "1", cwd=tmp_path, timeout=scaled(60)
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "worker process died" in proc.stderr and "over the referee" in proc.stderr


def test_a_comparison_that_cannot_start_leaves_nothing_behind(tmp_path: Path) -> None:
    """A bot whose program is not installed is named before anything is
    created, in compare's words (it has no file to take an entrant out of);
    one that starts and dies before it connects stops the comparison with
    its log's last lines, and the database that holds no game is removed,
    so the corrected command runs again as it is."""
    missing = _cli(HEURISTIC, "no-such-program {server} {token}", *SIZE_ARGS, cwd=tmp_path)
    assert missing.returncode == 2
    assert "program 'no-such-program' not found on PATH" in missing.stderr
    assert "or compare another bot" in missing.stderr and "out of the file" not in missing.stderr
    assert not (tmp_path / "compare.sqlite").exists()
    dies = f"{sys.executable} -c 'raise SystemExit(3)' {{server}} {{token}}"
    died = _cli(HEURISTIC, dies, *SIZE_ARGS, "--quiet", cwd=tmp_path, timeout=scaled(120))
    assert died.returncode == 2, died.stdout
    assert "cannot start" in died.stderr and "was not kept" in died.stderr, died.stderr
    assert not (tmp_path / "compare.sqlite").exists()


@NEEDS_POSTGRES
def test_a_comparison_stored_in_postgresql_answers_as_in_sqlite(
    tmp_path: Path,
    postgres_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--database postgresql://...``: the same games, the same answer, and
    a resume that adds games to it (its logs: DBNAME.logs, here)."""
    base = (HEURISTIC, RANDOM, *SIZE_ARGS, "--bot-seed-secret", "p", "--quiet")

    def compare(*args: str) -> str:
        ran = cli_here(["compare", *base, *args], capsys, monkeypatch, cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr
        return ran.stdout.splitlines()[0]

    assert compare("--games", "8", "--database", postgres_url) == compare(
        "--games", "8", "--database", "c.sqlite"
    )
    refused = cli_here(
        ["compare", *base, "--games", "8", "--database", postgres_url],
        capsys,
        monkeypatch,
        cwd=tmp_path,
    )
    assert refused.returncode == 2
    assert refused.stderr.startswith(f"error: {postgres_url} holds a comparison: continue")
    more = compare("--games", "12", "--database", postgres_url, "--resume")
    assert more == compare("--games", "12", "--database", "c.sqlite", "--resume")


@pytest.mark.e2e
@pytest.mark.slow(seconds=6)
def test_sigterm_stops_a_comparison_as_ctrl_c_does(tmp_path: Path) -> None:
    """Its workers stopped and the games kept: no warning of leaked
    semaphores from Python's resource tracker, the advice to --resume."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    err = tmp_path / "stderr"
    with err.open("w") as stderr:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "wizard_arena.cli",
                "compare",
                RANDOM,
                RANDOM,
                *SIZE_ARGS,
                "--games",
                "100000",
            ],
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            cwd=tmp_path,
            env=env,
        )
        try:
            db = tmp_path / "compare.sqlite"
            wait_for(lambda: finished_games(db) > 0 or proc.poll() is not None, 120)
            proc.send_signal(signal.SIGTERM)
            proc.wait(scaled(60))
        finally:
            proc.kill()
    text = err.read_text()
    assert proc.returncode == 130, text[-2000:]
    assert "leaked" not in text and "resource_tracker" not in text, text[-2000:]
    assert "interrupted: the finished games are kept in compare.sqlite" in text


def test_the_verb_puts_back_the_sigterm_handler_it_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """compare turns SIGTERM into Ctrl-C while it plays, and only then: run
    inside another program (here pytest), it leaves that program's handler."""
    before = signal.getsignal(signal.SIGTERM)
    ran = cli_here(
        ["compare", RANDOM, RANDOM, *SIZE_ARGS, "--games", "4", "--quiet"],
        capsys,
        monkeypatch,
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr
    assert signal.getsignal(signal.SIGTERM) == before

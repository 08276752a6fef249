"""Smoke tests of the benchmark scripts: they run and report (no figure is
checked: speed is measured by the benchmarks themselves, never by tests)."""

from __future__ import annotations

import importlib
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import NEEDS_POSTGRES, ROOT
from .support import load_bench, scaled

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@pytest.mark.e2e
@pytest.mark.parametrize(
    "kind",
    ["arena-lean", "arena", "floor-bridge", "floor-table", "floor-table-lean", "floor-bridge-lean"],
)
def test_bench_server_kinds_serve_tables(kind: str, tmp_path: Path) -> None:
    bench = load_bench("bench_server")
    gc_log = tmp_path / "gc.json"
    server = bench.ServerProcess(bench.server_argv(kind, str(gc_log)))
    try:
        out = subprocess.run(
            [
                sys.executable,
                str(ROOT / "bench" / "bench_server.py"),
                "bots",
                *["--address", server.address, "--server-pid", str(server.proc.pid)],
                *["--bots", "8", "--warmup", "0.2", "--window", "0.5"],
                *["--events", "lean" if kind.endswith("-lean") else "all"],
            ],
            capture_output=True,
            text=True,
            timeout=scaled(60),
        )
    finally:
        assert server.stop() == 0, "\n".join(server.lines)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["welcomed"] == 8 and result["errors"] == []
    assert result["decisions"] > 0 and result["server_cpu_us_per_decision"] > 0
    assert len(result["spans"]) == result["decisions"]
    if kind == "arena-lean":
        assert result["messages_per_decision"] < 1.5
    elif kind.endswith("-lean"):  # the lean floors: the next request alone
        assert result["messages_per_decision"] == 1
    else:  # every event too
        assert result["messages_per_decision"] > 4
    # the server's collections were logged on the bots' clock (traced_serve.py)
    collections = json.loads(gc_log.read_text())
    report = importlib.import_module("server_report")
    tail = report.tail(result["spans"], collections, result["window"], result["added_p99_ms"])
    assert tail["tail_decisions"] >= 1


def test_bench_server_summary_prints_the_lean_floors(capsys: pytest.CaptureFixture[str]) -> None:
    """The SUMMARY gives the target's ratio and, when the lean floors ran,
    where its bound lies (the architecture's own floor)."""
    load_bench("bench_server")  # puts bench/ on sys.path
    report = importlib.import_module("server_report")

    def row(kind: str, rate: float) -> dict[str, object]:
        return {"scenario": "fast", "kind": kind, "decisions_per_s": rate, "loadavg_1m": 1.0,
                "added_p99_ms": 1.0, "messages_per_decision": 1.0}  # fmt: skip

    kinds = {"arena-lean": 3000, "floor-bridge-lean": 4000, "floor-table-lean": 5000,
             "floor-pingpong": 8000}  # fmt: skip
    report.summary([[row(k, v) for k, v in kinds.items()]])
    out = capsys.readouterr().out
    for label, value in [
        (r"lean throughput / floor-pingpong", r"0\.38  \(target >= 0\.5: NOT met\)"),
        (r"floor-bridge-lean / floor-pingpong", r"0\.50"),
        (r"floor-table-lean / floor-pingpong", r"0\.62"),
        (r"lean throughput / floor-bridge-lean", r"0\.75"),
    ]:
        assert re.search(rf"fast: {label} +median +{value}", out), (label, out)


def test_bench_strength_takes_bot_specs(capsys: pytest.CaptureFixture[str]) -> None:
    """--bots takes a student's bot (any spec ``compare`` takes), not only the names."""
    strength = load_bench("bench_strength")
    spec = "wizard_bots.montecarlo:MonteCarloBot(samples=1, seed=2)"
    assert strength.split_bots(f"heuristic,{spec}, random") == ["heuristic", spec, "random"]
    argv = ["--bots", f"{spec},heuristic,random", "--deals", "1", "--jobs", "1", "--quiet"]
    assert strength.main(argv) == 0
    table = capsys.readouterr().out
    assert f"\n{spec} " in table and f"score difference {spec} - heuristic" in table
    for bad in ("wizard_bots.montecarlo:MonteCarloBot(samples=0)", "no_such:Bot"):
        with pytest.raises(SystemExit):
            strength.main(["--bots", f"{bad},heuristic,random", "--deals", "1"])
        assert "--bots" in capsys.readouterr().err


def test_bench_oracle_gives_the_true_deal_only_where_asked() -> None:
    """bench_oracle.py's bot searches the real hidden cards in the phases it
    is told to, and samples as the Monte Carlo bot does elsewhere."""
    from collections import Counter

    from wizard_arena.rules import Game, Phase, Rules
    from wizard_bots.sampling import consistency_problem

    oracle = load_bench("bench_oracle")
    game = Game(Rules(players=4), seed=3)
    for _ in range(2):  # two rounds played: round 3 deals 3 cards a hand, and a stock
        game.deal()
        while game.phase is not Phase.DEAL:
            seat = game.acting[0]
            game.apply(seat, game.legal_actions(seat)[0])
    game.deal()
    view = game.view(game.acting[0])
    seeing = oracle.OracleBot(game, oracle.SEES["oracle-bid"], think_time=None, samples=1, seed=1)
    [(deal, count)] = seeing._deals(view, 5)
    assert count == 5 and [list(h) for h in deal.hands] == game.hands
    dealt = Counter(c for h in game.hands for c in h) + Counter([game.turned_card])
    assert dealt + Counter(deal.stock) == Counter(game.rules.deck)
    assert consistency_problem(view, deal) is None
    blind = oracle.OracleBot(game, oracle.SEES["oracle-play"], think_time=None, samples=1, seed=1)
    sampled = blind._deals(view, 8)
    assert sum(n for _, n in sampled) == 8
    assert all(consistency_problem(view, d) is None for d, _ in sampled)
    assert any([list(h) for h in d.hands] != game.hands for d, _ in sampled)
    # mid-trick: the hands as they are now (a card played), not as dealt
    while game.phase is not Phase.PLAY:
        seat = game.acting[0]
        game.apply(seat, game.legal_actions(seat)[0])
    seat = game.acting[0]
    game.apply(seat, game.legal_actions(seat)[0])
    view = game.view(game.acting[0])
    [(deal, count)] = blind._deals(view, 3)
    assert count == 3 and [list(h) for h in deal.hands] == game.hands
    assert [list(h) for h in deal.hands] != [list(h) for h in game.dealt_hands]
    assert consistency_problem(view, deal) is None
    sampled = seeing._deals(view, 8)  # (oracle-bid samples in play)
    assert all(consistency_problem(view, d) is None for d, _ in sampled)
    assert any([list(h) for h in d.hands] != game.hands for d, _ in sampled)


@pytest.mark.parametrize(
    "argv",
    [
        ["bench_rules.py", "--seconds", "0.2"],
        ["bench_openspiel.py", "--seconds", "0.2", "--pairs", "2"],
        ["bench_wire.py", "--games", "2", "--repeat", "1"],
        ["bench_ratings.py", "--bots", "5", "--games", "200", "--bootstrap", "20"],
        pytest.param(
            [
                "bench_soak.py",
                *["--bots", "12", "--seconds", "1", "--workers", "1", "--settle", "0.3"],
            ],
            marks=pytest.mark.e2e,
        ),
        pytest.param(
            ["bench_refused.py", *["--connections", "40", "--step", "20", "--settle", "0"]],
            marks=pytest.mark.e2e,
        ),
        pytest.param(
            [
                "bench_front_door.py",
                *["--tables", "1", "--baseline", "0.5", "--attack-seconds", "1"],
                *["--streams", "20", "--tokens", "10", "--idle", "0", "--settle", "0"],
                *["--warm-up", "0.5"],
            ],
            marks=pytest.mark.e2e,
        ),
        pytest.param(
            [
                "bench_compare.py",
                *["--a", "wizard_bots.heuristic:HeuristicBot"],
                *["--b", "wizard_bots.random_bot:RandomBot"],
                *["--opponent", "wizard_bots.random_bot:RandomBot", "--deals", "4"],
                *["--simulations", "20", "--parallel", "1"],
            ],
            marks=pytest.mark.e2e,
        ),
        [
            "bench_strength.py",
            *["--bots", "heuristic,random,learned", "--deals", "1", "--jobs", "1", "--quiet"],
        ],
        [
            "bench_strength.py",
            *["--bots", "ismcts,heuristic,heuristic", "--deals", "1", "--samples", "2"],
            *["--mc", "bid_effort=2", "--ismcts", "reuse=2", "--jobs", "1", "--quiet"],
        ],
        ["bench_env.py", "--seconds", "0.05", "--pairs", "1"],
        ["bench_learned.py", "--games", "1", "--limit", "5"],
        ["bench_analyse.py", "--games", "1", "--bots", "random,heuristic", "--jobs", "1"],
        pytest.param(
            [
                "bench_web.py",
                *["--only", "leaderboard", "--phase", "0.6", "--connections", "2"],
            ],
            marks=pytest.mark.e2e,
        ),
        ["bench_table.py", "--tables", "2", "--repeat", "1"],
        [
            "bench_compare_oc.py",
            *["--question", "deals", "--runs", "20", "--shapes", "skewed,ties40"],
            *["--max-games", "200"],
        ],
        [
            "bench_oracle.py",
            *["--modes", "oracle,oracle-play", "--games", "1", "--samples", "1"],
            *["--bid-effort", "1", "--jobs", "1"],
        ],
    ],
    ids=lambda argv: argv[0],
)
def test_bench_scripts_run(argv: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "bench" / argv[0]), *argv[1:]],
        capture_output=True,
        text=True,
        timeout=scaled(120),
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert proc.stdout.strip()


@pytest.mark.e2e
def test_bench_sandbox_measures_starts() -> None:
    """bench_sandbox.py's start part runs and reports (as root, with bubblewrap)."""
    import os

    from wizard_referee import sandbox

    if os.geteuid() != 0 or sandbox.problems():
        pytest.skip("confinement is measured as root, with bubblewrap")
    script = str(ROOT / "bench" / "bench_sandbox.py")
    out = subprocess.run(
        [sys.executable, script, "--only", "starts", "--starts", "1"],
        capture_output=True,
        text=True,
        timeout=scaled(60),
    )
    assert out.returncode == 0, out.stderr
    starts = json.loads(out.stdout.splitlines()[0])
    assert starts["part"] == "starts" and starts["true"]["confined_ms"] > 0


@NEEDS_POSTGRES
@pytest.mark.parametrize(("store", "games"), [("tournament", 6), ("ladder", 24)])
def test_bench_store_measures_both_backends(postgres_url: str, store: str, games: int) -> None:
    """bench_store.py writes and reads a store of each backend (on the
    test's own database: the bench's own cluster is the same code): a
    tournament's, or a ladder's with its claims."""
    script = str(ROOT / "bench" / "bench_store.py")
    argv = ["--games", str(games), "--repeat", "2", "--sample", "1", "--store", store,
            "--postgres-url", postgres_url]  # fmt: skip
    out = subprocess.run(
        [sys.executable, script, *argv], capture_output=True, text=True, timeout=scaled(120)
    )
    assert out.returncode == 0, out.stderr
    figures = json.loads(out.stdout.splitlines()[-1])
    assert figures["games"] == games and figures["record_bytes"] > 1000
    assert figures["store"] == store
    for backend in ("sqlite", "postgresql"):
        runs = figures["runs"][backend]
        assert len(runs) == 2 and all(r["write_ms_median"] > 0 for r in runs)
        if store == "ladder":
            assert all(r["claim_new_ms_median"] > 0 < r["claim_suspended_ms_median"] for r in runs)


def test_bench_ladder_writes_a_season_as_the_ladder_does_and_fits_it() -> None:
    """The standings bench, small: its store is one the ladder reads (the
    official fit of every game of every set, one group)."""
    import argparse

    bench = load_bench("bench_ladder")
    out = bench.standings(argparse.Namespace(entries=12, games=480, bootstrap=10))
    assert out["games"] == 480 and out["sets"] == 40
    assert out["groups_bootstrap_0"] == 1 and out["official_s_bootstrap_10"] > 0

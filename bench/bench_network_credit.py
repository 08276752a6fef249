"""What the network credit changes: two copies of one bot, one near the
referee and one far from it, through the real tournament runner.

Three entrants at tables of three: ``near`` and ``far``, the same Monte
Carlo bot thinking for a time (up to ``--think-share`` of each move, as a
bot that uses most of its move time does), and a heuristic bot in the
third seat. ``far`` reaches the referee through a delay relay on loopback
(:class:`wizard_arena.testing.relay.DelayRelay`: ``--delay`` seconds each
way, ``--jitter``; this kernel has no netem), ``near`` directly. The
tournament is played twice on the same deals: without a credit
(``lag_credit_cap = 0``: the referee as it was) and with one (the default
cap); the runner's referee sees the relay as a proxy
(``lag_credit_behind_proxy``). For each it prints the paired score
difference near - far per duplicate set (the mean over the set's games of
the two copies' difference, with a 95% t interval over the sets:
:mod:`wizard_referee.tournament.paired`), the far bot's timeouts and the
credit its moves had.

Without the credit the interval must exclude 0 (or the run is too small to
show anything); with it, two copies of one bot should be level (the
interval covers 0).

    python bench/bench_network_credit.py --sets 8
    python bench/bench_network_credit.py --sets 3 --round-sizes 1,2 --json
"""

from __future__ import annotations

import argparse
import json
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wizard_arena.testing.relay import DelayRelay
from wizard_referee.referee.record import GameRecord
from wizard_referee.tournament.paired import paired_difference_of
from wizard_referee.tournament.store import ResultsStore

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _bot(args: argparse.Namespace, server: str) -> str:
    return (
        f"{sys.executable} -m wizard_arena.cli bot wizard_bots.montecarlo:MonteCarloBot "
        f"--arg think_time={args.move_time} --arg time_share={args.think_share} "
        f"--server {server} --name {{name}} --quiet"
    )


def tournament_file(
    args: argparse.Namespace, folder: Path, port: int, relay: str, cap: float
) -> Path:
    """The tournament of one run: the referee on ``port``, ``far`` through ``relay``."""
    sizes = ", ".join(str(n) for n in args.round_sizes)
    heuristic = (
        f"{sys.executable} -m wizard_arena.cli bot wizard_bots.heuristic:HeuristicBot "
        "--server {server} --name {name} --quiet"
    )
    text = f"""
[tournament]
name = "network-credit-{cap:g}"
players = 3
deal_sets = {args.sets}
move_time = {args.move_time}
lag_credit_cap = {cap}
lag_credit_behind_proxy = true
round_sizes = [{sizes}]
seed = {args.seed}
bot_seed_secret = "bench-network-credit"
parallel = {args.parallel}
port = {port}
database = "results-{cap:g}.sqlite"

[[entrant]]
name = "near"
command = {json.dumps(_bot(args, "{server}"))}

[[entrant]]
name = "far"
command = {json.dumps(_bot(args, relay))}

[[entrant]]
name = "third"
command = {json.dumps(heuristic)}
"""
    path = folder / f"credit-{cap:g}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def run(args: argparse.Namespace, folder: Path, cap: float) -> dict[str, Any]:
    """Play the tournament with ``cap``; its paired difference and the far
    bot's timeouts and credits."""
    port = free_port()
    with DelayRelay(("127.0.0.1", port), args.delay, args.jitter, seed=args.seed) as relay:
        toml = tournament_file(args, folder, port, relay.address, cap)
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "wizard_arena.cli", "tournament", str(toml)],
            capture_output=True,
            text=True,
            cwd=folder,
        )
        took = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"the tournament failed ({done.returncode}):\n{done.stderr[-3000:]}")
    store = ResultsStore(folder / f"results-{cap:g}.sqlite", create=False, read_only=True)
    diff = paired_difference_of(store.finished_games(), "near", "far")
    moves: dict[str, list[Any]] = {"near": [], "far": []}
    for spec, _seats, _faulted in store.finished_games():
        record = store.record(spec.id)
        assert record is not None
        for who in moves:
            moves[who] += _moves(record, who)
    return {
        "lag_credit_cap": cap,
        "seconds": round(took, 1),
        "sets": diff.sets,
        "per_set": [round(x, 2) for x in diff.per_set],
        "mean": round(diff.mean, 2),
        "low": round(diff.low, 2),
        "high": round(diff.high, 2),
        "covers_0": diff.covers(0.0),
        "describe": diff.describe(),
        **{f"{who}_{k}": v for who, mv in moves.items() for k, v in _move_stats(mv).items()},
    }


def _moves(record: GameRecord, who: str) -> list[Any]:
    seat = record.names.index(who)
    return [mv for rr in record.rounds for mv in rr.moves if mv.seat == seat]


def _move_stats(moves: Sequence[Any]) -> dict[str, Any]:
    credits = [mv.credit_ms for mv in moves]
    return {
        "decisions": len(moves),
        "timeouts": sum(mv.fault == "timeout" for mv in moves),
        "credit_ms_median": statistics.median(credits) if credits else None,
        "credit_ms_min": min(credits) if credits else None,
        "credit_ms_max": max(credits) if credits else None,
    }


def commit() -> str:
    out = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    )
    return out.stdout.strip() or "?"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", type=int, default=8, help="duplicate sets (deals) per run")
    parser.add_argument("--delay", type=float, default=0.15, help="seconds each way to 'far'")
    parser.add_argument("--jitter", type=float, default=0.005, help="+- seconds per chunk")
    parser.add_argument("--move-time", type=float, default=1.0)
    parser.add_argument(
        "--think-share", type=float, default=0.8, help="share of each move the bots think"
    )
    parser.add_argument(
        "--round-sizes",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[1, 3, 5],
        help="cards per round (a short game)",
    )
    parser.add_argument("--parallel", type=int, default=2, help="games at once")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--caps", default="0,0.5", help="the runs' lag_credit_cap values")
    parser.add_argument("--json", action="store_true", help="one JSON line per run only")
    args = parser.parse_args(argv)
    header = {
        "commit": commit(),
        "python": platform.python_version(),
        "cpus": __import__("os").cpu_count(),
        "sets": args.sets,
        "delay": args.delay,
        "jitter": args.jitter,
        "move_time": args.move_time,
        "think_share": args.think_share,
        "round_sizes": args.round_sizes,
        "parallel": args.parallel,
    }
    if not args.json:
        print(json.dumps(header))
    with tempfile.TemporaryDirectory(prefix="bench-credit-") as tmp:
        for cap in (float(c) for c in args.caps.split(",")):
            result = run(args, Path(tmp), cap)
            if args.json:
                print(json.dumps({**header, **result}), flush=True)
            else:
                what = "without a credit" if cap == 0 else f"with the credit (cap {cap:g} s)"
                print(
                    f"{what}: {result['describe']}; far: {result['far_timeouts']} of "
                    f"{result['far_decisions']} decisions timed out, credit median "
                    f"{result['far_credit_ms_median']} ms; near: {result['near_timeouts']} "
                    f"timeouts, credit median {result['near_credit_ms_median']} ms; "
                    f"{result['seconds']} s",
                    flush=True,
                )
                print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

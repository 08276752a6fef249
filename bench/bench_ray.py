"""Games per minute of a tournament with the ``local`` executor and with
``ray``, and what the coordinator spends per game.

The tournament is like the example's: two heuristic and two random bots
(``wizard-arena bot`` processes), a table of 4, fast moves, ``--deal-sets``
deals of 12 games. Three runs:

1. ``local``, ``parallel = 2``: one referee, two instances of each bot;
2. ``ray`` on a Ray instance started here with the machine's cores:
   2 workers of ``parallel = 1`` (each its own referee and bots);
3. ``ray`` on a two-node cluster simulated here
   (``ray.cluster_utils.Cluster``, two nodes of 1 CPU): games per node.

For each: the wall time (start-up included), the rate between the first
and the last game's end (the steady rate, start-up excluded), and the
start-up: the wall time the steady rate does not account for (``wall - games
/ steady rate``: starting Ray, its workers, the referees and the bots). Runs 1
and 2 are repeated ``--repeats`` times (default 5), alternated, and their
medians give the tournament size from which Ray pays on this machine (where
its steady rate is the higher: ``(start-up of ray - start-up of local) /
(1 / local rate - 1 / ray rate)`` games). Then the coordinator's own cost
per game, measured on run 3's records: storing a record (one SQLite
transaction, ``synchronous=FULL``) plus the provisional Elo update, i.e. all
the coordinator does per game, and the final leaderboard once. Everything
that starts Ray runs in a loopback-only network namespace
(``scripts/in_netns.py``; this script re-executes itself there).

    python bench/bench_ray.py [--deal-sets 4] [--repeats 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import trio

from wizard_referee.referee.logs import configure_logging
from wizard_referee.referee.record import GameRecord
from wizard_referee.tournament.dispatch import Progress
from wizard_referee.tournament.leaderboard import leaderboard
from wizard_referee.tournament.runner import TournamentConfig, plan_games, run_tournament
from wizard_referee.tournament.store import ResultsStore

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("in_netns", ROOT / "scripts" / "in_netns.py")
assert _spec is not None and _spec.loader is not None
netns = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(netns)

BOTS = {
    "heuristic-1": "wizard_bots.heuristic:HeuristicBot",
    "heuristic-2": "wizard_bots.heuristic:HeuristicBot",
    "random-1": "wizard_bots.random_bot:RandomBot",
    "random-2": "wizard_bots.random_bot:RandomBot",
}


def config(db: Path, deal_sets: int, **kw: Any) -> TournamentConfig:
    bot = [sys.executable, "-m", "wizard_arena.cli", "bot"]
    entrants = [
        {
            "name": name,
            "command": [*bot, target, "--server", "{server}", "--quiet"],
        }
        for name, target in BOTS.items()
    ]
    section = {
        "name": "bench",
        "players": 4,
        "deal_sets": deal_sets,
        "move_time": 1.0,
        "seed": 1,
        "bot_seed_secret": "bench",
        "database": str(db),
        **kw,
    }
    return TournamentConfig.from_dict({"tournament": section, "entrant": entrants})


def run(label: str, cfg: TournamentConfig) -> tuple[list[GameRecord], float, float]:
    """Play the tournament; its records, steady rate (games/min) and start-up (s)."""
    ends: list[float] = []
    records: list[GameRecord] = []

    def on_record(record: GameRecord) -> None:
        ends.append(time.monotonic())
        records.append(record)

    start = time.monotonic()
    trio.run(lambda: run_tournament(cfg, on_record=on_record)).close()
    wall = time.monotonic() - start
    n = len(records)
    steady = (n - 1) / (ends[-1] - ends[0]) * 60 if n > 1 and ends[-1] > ends[0] else 0.0
    faults = sum(1 for r in records if any(r.faults))
    startup = wall - n / steady * 60 if steady else wall
    print(
        f"{label:<44} {n:4d} games  wall {wall:6.1f} s ({n / wall * 60:6.1f}/min)  "
        f"steady {steady:6.1f}/min  start-up {startup:5.1f} s  faulted games {faults}",
        flush=True,
    )
    return records, steady, startup


def break_even(local: tuple[float, float], ray: tuple[float, float]) -> str:
    """From how many games Ray's wall time is the shorter, given each
    executor's (steady rate per minute, start-up seconds).

    >>> break_even((100.0, 2.0), (120.0, 6.0))
    '40 games (Ray costs 4.0 s more to start and gains 0.10 s a game)'
    >>> break_even((100.0, 2.0), (90.0, 6.0))
    "never on this machine: Ray's steady rate is not the higher"
    """
    (rate_l, start_l), (rate_r, start_r) = local, ray
    gain = 60 / rate_l - 60 / rate_r
    if gain <= 0:
        return "never on this machine: Ray's steady rate is not the higher"
    games = max(0.0, (start_r - start_l) / gain)
    return (
        f"{games:.0f} games (Ray costs {start_r - start_l:.1f} s more to start and gains "
        f"{gain:.2f} s a game)"
    )


def coordinator_cost(cfg: TournamentConfig, records: list[GameRecord], folder: Path) -> None:
    """Store every record again in a fresh store, timing what the
    coordinator does per game; then the final leaderboard."""
    from wizard_referee.tournament.plan import open_plan

    specs = {s.id: s for s in plan_games(cfg)}
    with ResultsStore(folder / "again.sqlite") as store:
        open_plan(store, cfg, list(specs.values()))
        progress = Progress(len(specs))
        log = _NoLog()
        start = time.perf_counter()
        for r in records:
            store.save_game(specs[r.game_id], r)
            progress.count(specs[r.game_id], r, log)
        per_game = (time.perf_counter() - start) / len(records)
        start = time.perf_counter()
        leaderboard(store)
        board = time.perf_counter() - start
    print(
        f"coordinator per game (store write + Elo update): {per_game * 1000:.2f} ms "
        f"= {60 / per_game:,.0f} games/min at most; final leaderboard of "
        f"{len(records)} games: {board:.2f} s"
    )


class _NoLog:
    def error(self, *args: Any, **kw: Any) -> None:
        pass


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deal-sets", type=int, default=4, help="deals of 12 games (default 4)")
    parser.add_argument(
        "--repeats", type=int, default=5, help="alternated runs of local and ray (default 5)"
    )
    args = parser.parse_args()
    if not netns.inside():
        why = netns.problem()
        if why is not None:
            print(f"error: Ray must run in a loopback-only namespace: {why}", file=sys.stderr)
            return 2
        os.execvp("unshare", netns.command([sys.executable, *sys.argv]))
    configure_logging("warning", "console", sys.stderr)
    os.environ["PYTHONPATH"] = str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}; cores: {os.cpu_count()}")
    import ray
    from ray.cluster_utils import Cluster

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        d = args.deal_sets
        local: list[tuple[float, float]] = []
        here: list[tuple[float, float]] = []
        for k in range(args.repeats):
            _, rate, startup = run(
                f"local, parallel 2 (#{k + 1})", config(folder / f"l{k}.sqlite", d, parallel=2)
            )
            local.append((rate, startup))
            _, rate, startup = run(
                f"ray here, 2 workers x parallel 1 (#{k + 1})",
                config(folder / f"r{k}.sqlite", d, executor="ray", workers=2),
            )
            here.append((rate, startup))
        med_l = (statistics.median(x for x, _ in local), statistics.median(y for _, y in local))
        med_r = (statistics.median(x for x, _ in here), statistics.median(y for _, y in here))
        print(
            f"medians of {args.repeats}: local {med_l[0]:.1f}/min, start-up {med_l[1]:.1f} s; "
            f"ray here {med_r[0]:.1f}/min, start-up {med_r[1]:.1f} s; steady ray/local "
            f"{med_r[0] / med_l[0]:.2f}"
        )
        print(f"Ray's wall time is the shorter on this machine from: {break_even(med_l, med_r)}")
        head = {"num_cpus": 1, "node_ip_address": "127.0.0.1", "include_dashboard": False}
        cluster = Cluster(initialize_head=True, head_node_args=head)
        cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, _node_ip_address="127.0.0.1", log_to_driver=False)
        try:
            cfg = config(folder / "two.sqlite", d, executor="ray")
            records, _, _ = run("ray, two nodes of 1 CPU (workers: auto)", cfg)
        finally:
            ray.shutdown()
            cluster.shutdown()  # type: ignore[no-untyped-call]
        by_node: dict[str, int] = {}
        for r in records:
            by_node[r.tags["node"]] = by_node.get(r.tags["node"], 0) + 1
        print(f"games per node: {sorted(by_node.values(), reverse=True)}")
        coordinator_cost(cfg, records, folder)
    print(f"load after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

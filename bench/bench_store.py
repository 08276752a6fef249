"""The results store's write per game, on SQLite and on PostgreSQL; and the
ladder's (``--store ladder``), with the claim of a table.

A tournament stores each game as it ends, in one transaction
(``ResultsStore.save_game``: the game's row with its whole record as JSON,
and a row per seat). This bench plays ``--sample`` real games in this
process (4 heuristic bots, the full 15 rounds: records as a tournament
writes them), then stores ``--games`` games (the sample's records under
each planned game's id) in a new store of each backend, timing every
``save_game``; then reads the store back as the leaderboard does
(``finished_games``, every seat result with its rounds). Reported per
backend: the write per game (median, 90th and 99th percentile, wall
time), games stored per second, this process's CPU per game (the client's
share; the rest is the database's), and the read of the whole store.

- SQLite: a file in a temporary folder, as a tournament opens it (WAL,
  ``synchronous=FULL``: every commit is synced to disk).
- PostgreSQL: a throwaway cluster of our own (tests/postgres.py: the
  newest ``/usr/lib/postgresql/*/bin``, as the ``postgres`` user when run
  as root), with the server's defaults (``fsync``, ``synchronous_commit``
  and ``full_page_writes`` on: every commit is synced), over its Unix
  socket; or ``--postgres-url`` for a server of yours (an empty database).

``--store ladder`` measures the ladder's store the same way
(``LadderStore.save_game``: the game's row and its seats', after the set's
row is locked as this runner's claim), in sets of 12 games among 4
entries; and per table: the claim of a new set (its row, with the
database's clock), the claim of a suspended set (``FOR UPDATE SKIP
LOCKED``, then its row taken), and a set's finish (its place in the order
of finishing, the members' last live ratings, the new ones: one
transaction).

The backends alternate, ``--repeat`` rounds of each, so that a change of
the machine's load hits both alike.

    python bench/bench_store.py                   # 500 games, 3 rounds of each backend
    python bench/bench_store.py --games 2000 --repeat 1 --backends postgresql
    python bench/bench_store.py --postgres-url postgresql://arena@/bench?host=/run/postgresql
    python bench/bench_store.py --store ladder     # the ladder's store, 500 games
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PLAYERS = ("alice", "bob", "carol", "dave")


def sample_records(count: int) -> list[Any]:
    """``count`` real games of 4 heuristic bots (15 rounds), as recorded."""
    sys.path.insert(0, str(ROOT))
    from tests.web_support import play_record
    from wizard_arena.rules import Rules
    from wizard_bots.heuristic import HeuristicBot
    from wizard_referee.tournament.store import GameSpec

    rules = Rules(players=4)
    bots = dict.fromkeys(PLAYERS, HeuristicBot)
    return [
        play_record(GameSpec(f"s{k}", k, 0, k, 0, f"bench:{k}", PLAYERS), rules, bots)
        for k in range(count)
    ]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(target: str, records: list[Any], games: int) -> dict[str, Any]:
    """Store ``games`` games in a new store at ``target``; the figures."""
    from wizard_referee.tournament.store import GameSpec, ResultsStore

    specs = [GameSpec(f"t0-d{k}-r0", k, 0, k, 0, f"bench:{k}", PLAYERS) for k in range(games)]
    with ResultsStore(target) as store:
        store.create("bench", {}, [(n, "command", "bot") for n in PLAYERS], specs, records[0].rules)
        walls: list[float] = []
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for spec in specs:
            record = dataclasses.replace(records[spec.seq % len(records)], game_id=spec.id)
            t = time.perf_counter()
            store.save_game(spec, record)
            walls.append(time.perf_counter() - t)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        t = time.perf_counter()
        read = list(store.finished_games())
        read_s = time.perf_counter() - t
    assert len(read) == games
    return {
        "write_ms_median": round(statistics.median(walls) * 1000, 3),
        "write_ms_p90": round(percentile(walls, 0.9) * 1000, 3),
        "write_ms_p99": round(percentile(walls, 0.99) * 1000, 3),
        "games_per_s": round(games / wall, 1),
        "client_cpu_ms_per_game": round(cpu / games * 1000, 3),
        "read_all_s": round(read_s, 3),
    }


def measure_ladder(target: str, records: list[Any], games: int) -> dict[str, Any]:
    """Store ``games`` games (sets of 12) in a new ladder store at ``target``;
    the figures, with the claims' and finishes' per table."""
    from wizard_arena.rules import Rules
    from wizard_referee.ladder.plackett_luce import LiveModel
    from wizard_referee.ladder.season import Season
    from wizard_referee.ladder.store import LadderStore, new_token

    sets = max(1, games // 12)
    model = LiveModel()
    walls: list[float] = []
    claims: list[float] = []
    reclaims: list[float] = []
    finishes: list[float] = []
    with LadderStore.create(target, Season("bench", players=4, rules=Rules(players=4))) as store:
        for name in PLAYERS:
            store.add_entrant(name, token=new_token())
        store.start_runner("bench", "here", 0, 600.0)
        members = [v.id for v in store.versions()]
        cpu0, wall0 = time.process_time(), time.perf_counter()
        n = 0
        for _ in range(sets):
            t = time.perf_counter()
            set_id, _ = store.new_set(members, "bench", 600.0, "k" * 64)
            claims.append(time.perf_counter() - t)
            for r in range(12):
                record = dataclasses.replace(records[n % len(records)], game_id=f"s{set_id}-r{r}")
                n += 1
                t = time.perf_counter()
                store.save_game(set_id, r, members, record, runner="bench")
                walls.append(time.perf_counter() - t)
                if r == 5:  # interrupted half-way: suspended, then claimed again
                    store.suspend(set_id, "bench", "bench")
                    t = time.perf_counter()
                    assert store.claim(set_id, "bench", 600.0)
                    reclaims.append(time.perf_counter() - t)
            t = time.perf_counter()
            store.finish_set(set_id, members, model.rate, runner="bench")
            finishes.append(time.perf_counter() - t)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        t = time.perf_counter()
        read = store.rated_games({v.id: v.label for v in store.versions()})
        read_s = time.perf_counter() - t
    assert len(read) == 12 * sets
    return {
        "write_ms_median": round(statistics.median(walls) * 1000, 3),
        "write_ms_p90": round(percentile(walls, 0.9) * 1000, 3),
        "write_ms_p99": round(percentile(walls, 0.99) * 1000, 3),
        "claim_new_ms_median": round(statistics.median(claims) * 1000, 3),
        "claim_suspended_ms_median": round(statistics.median(reclaims) * 1000, 3),
        "finish_ms_median": round(statistics.median(finishes) * 1000, 3),
        "games_per_s": round(12 * sets / wall, 1),
        "client_cpu_ms_per_game": round(cpu / (12 * sets) * 1000, 3),
        "read_all_s": round(read_s, 3),
    }


def postgres_target(url: str | None) -> tuple[str, Any]:
    """A database on the server at ``url`` (an empty one), or on a durable
    throwaway cluster of our own; the cluster to stop (None for ``url``)."""
    if url:
        return url, None
    sys.path.insert(0, str(ROOT))
    from tests.postgres import Cluster, problem

    why = problem()
    if why is not None:
        raise SystemExit(f"no PostgreSQL to measure: {why} (or give --postgres-url)")
    cluster = Cluster(durable=True).start()
    return cluster.url(), cluster


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=500, help="games stored per round")
    parser.add_argument("--sample", type=int, default=8, help="real games played for records")
    parser.add_argument("--repeat", type=int, default=3, help="rounds of each backend")
    parser.add_argument("--backends", default="sqlite,postgresql", help="comma-separated")
    parser.add_argument("--postgres-url", help="an empty database of your server")
    parser.add_argument(
        "--store", choices=["tournament", "ladder"], default="tournament", help="whose store"
    )
    args = parser.parse_args(argv)
    run = measure_ladder if args.store == "ladder" else measure
    backends = [b for b in args.backends.split(",") if b]
    records = sample_records(args.sample)
    size = statistics.mean(len(r.to_json()) for r in records)
    cluster, pg_url = None, ""
    runs: dict[str, list[dict[str, Any]]] = {b: [] for b in backends}
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        try:
            if "postgresql" in backends:
                pg_url, cluster = postgres_target(args.postgres_url)
            for n in range(args.repeat):
                for backend in backends:
                    if backend == "sqlite":
                        target = str(Path(tmp) / f"run{n}.sqlite")
                    else:
                        target = _fresh_database(pg_url, cluster, n)
                    runs[backend].append(run(target, records, args.games))
        finally:
            if cluster is not None:
                cluster.stop()
            elif "postgresql" in backends:
                _fresh_database(pg_url, None, args.repeat)  # the last round's store removed
    print(
        f"{args.store} store: {args.games} games a round, records of {size / 1000:.1f} kB "
        "(4 seats, 15 rounds)"
    )
    keys = list(next(iter(runs.values()))[0])
    print(f"{'':22}" + "".join(f"{b:>24}" for b in backends))
    for key in keys:
        cells = [", ".join(f"{r[key]:g}" for r in runs[b]) for b in backends]
        print(f"{key:22}" + "".join(f"{c:>24}" for c in cells))
    print(
        json.dumps(
            {"store": args.store, "games": args.games, "record_bytes": round(size), "runs": runs}
        )
    )
    return 0


def _fresh_database(url: str, cluster: Any, n: int) -> str:
    """A new database for round ``n`` on our cluster; or the given URL with
    the previous round's store removed from it."""
    if cluster is not None:
        return str(cluster.create_database()[1])
    from wizard_referee.ladder.sql import LADDER_SCHEMA
    from wizard_referee.storage import open_database, remove_store
    from wizard_referee.tournament.store import TOURNAMENT_SCHEMA

    for schema in (TOURNAMENT_SCHEMA, LADDER_SCHEMA):
        db = open_database(url)
        if schema.marks <= db.tables():
            remove_store(db, schema)  # the previous round's
        else:
            db.close()
    return url


if __name__ == "__main__":
    raise SystemExit(main())

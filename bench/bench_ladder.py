"""The ladder, measured (docs/performance.md, "The ladder"; docs/ladder.md).

    python bench/bench_ladder.py                          # 64 dial-in bots, 10 minutes
    python bench/bench_ladder.py --bots 64 --minutes 2    # shorter
    python bench/bench_ladder.py --postgres --processes 2 # two processes sharing PostgreSQL
    python bench/bench_ladder.py --standings              # the official fit at 100,000 games
    python bench/bench_ladder.py --simulate               # matchmaking and coverage, simulated

**Live** (the default): a season of tables of 4 (duplicate sets of 12 games)
with ``--bots`` dial-in entrants; ``--processes`` ``wizard-arena ladder run``
subprocesses (their figures from ``--report``, summed), on an SQLite store
or a PostgreSQL one (``--postgres``: a durable throwaway cluster, as
tests/postgres.py makes; or ``--postgres-url``), and ``--workers``
subprocesses sharing the bots (the example random bot under
``serve_bot``, on loopback; worker ``w`` dials process ``w`` modulo their
number), so the bots' CPU does not take the ladder's GIL. After ``--minutes`` the ladder is
stopped first (its sets in progress left suspended), then the bots. Reported:
sets and games per minute, the share of an online entry's time spent
waiting for a table, matchmaking, the claim of a table and finishing (the
live ratings' update and its transaction) per set, the store's write per game (time, record
bytes, and the store's growth on disk), the ladder process's CPU and
memory. Linux only (reads /proc).

**Standings** (``--standings``): a store of 100,000 games of 300 entries
(a simulated season, written as the ladder writes it: sets, games, seats'
results, live ratings), and the time of the official point fit
(:func:`wizard_referee.ladder.standings.official`, reading the store
included) and of intervals from ``--bootstrap`` redraws.

**Simulated** (``--simulate``): :mod:`wizard_referee.ladder.simulate`: the
comparison graph's groups and the fewest sets of an entry over a season
with late entrants, and the official intervals' coverage under the
ladder's adaptive matchmaking (``--seasons`` per field).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def _cli() -> list[str]:
    return [sys.executable, "-m", "wizard_arena.cli"]


def _env() -> dict[str, str]:
    paths = [str(ROOT / p) for p in ("sdk", "server", "example_bots")]
    old = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, *([old] if old else [])])}


# -- live ----------------------------------------------------------------------------------------


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def live(args: argparse.Namespace) -> dict[str, Any]:
    from wizard_referee.ladder.store import LadderStore, new_token

    work = Path(tempfile.mkdtemp(prefix="bench-ladder-"))
    cluster = None
    if args.postgres or args.postgres_url:
        db, cluster = _postgres(args.postgres_url)
    else:
        db = str(work / "season.sqlite")
    create = [*_cli(), "ladder", "create", "-d", db, "--players", str(args.players)]
    if args.round_sizes:
        create += ["--round-sizes", args.round_sizes]
    subprocess.run(create, env=_env(), check=True, capture_output=True, cwd=work)
    tokens = {}
    with LadderStore.open(db) as store:
        for k in range(args.bots):
            tokens[f"bot{k:02d}"] = new_token()
            store.add_entrant(f"bot{k:02d}", token=tokens[f"bot{k:02d}"])
    postgres = cluster is not None or bool(args.postgres_url)
    size0 = _pg_size(db) if postgres else 0
    ports = [_free_port() for _ in range(args.processes)]
    reports = [work / f"report{i}.json" for i in range(args.processes)]

    def run(i: int) -> subprocess.Popen[str]:
        argv = [
            *_cli(), "ladder", "run", "-d", db, "--port", str(ports[i]), "--quiet",
            "--report", str(reports[i]), "--bootstrap", str(args.bootstrap),
            "--log-file", str(work / f"ladder{i}.log"),
        ]  # fmt: skip
        return subprocess.Popen(argv, env=_env(), stderr=subprocess.PIPE, text=True, cwd=work)

    ladders = [run(i) for i in range(args.processes)]
    time.sleep(3)
    names = list(tokens)
    workers = []
    for w in range(args.workers):
        mine = {n: tokens[n] for n in names[w :: args.workers]}
        path = work / f"tokens-{w}.json"
        path.write_text(json.dumps(mine))
        server = f"127.0.0.1:{ports[w % len(ports)]}"  # (each process its share of the bots)
        workers.append(
            subprocess.Popen(
                [sys.executable, __file__, "bots", "--server", server, "--tokens", str(path)],
                env=_env(),
            )
        )
    cpu0 = [_cpu_seconds(p.pid) for p in ladders]
    t0 = time.monotonic()
    peak = 0.0
    deadline = t0 + 60 * args.minutes
    while time.monotonic() < deadline:
        time.sleep(min(5.0, max(0.0, deadline - time.monotonic())))
        peak = max(peak, *(_rss_mib(p.pid) for p in ladders))
    cpu = [_cpu_seconds(p.pid) - c for p, c in zip(ladders, cpu0, strict=True)]
    wall = time.monotonic() - t0
    for ladder in ladders:
        ladder.send_signal(signal.SIGTERM)
    errs = [ladder.communicate(timeout=60)[1] for ladder in ladders]
    for worker in workers:
        worker.send_signal(signal.SIGTERM)
    for worker in workers:
        worker.wait(timeout=60)
    each = [json.loads(r.read_text()) for r in reports]
    stats = {k: sum(e[k] for e in each) for k in each[0] if k != "elapsed"}
    minutes = max(e["elapsed"] for e in each) / 60
    if postgres:
        size = _pg_size(db) - size0
    else:
        size = sum(p.stat().st_size for p in work.glob("season.sqlite*") if p.is_file())
    if cluster is not None:
        cluster.stop()
    shutil.rmtree(work, ignore_errors=True)
    games = max(stats["games"], 1)
    waited = stats["wait_seconds"] / ((stats["wait_seconds"] + stats["seated_seconds"]) or 1)
    return {
        "store": "postgresql" if postgres else "sqlite",
        "processes": args.processes,
        "bots": args.bots,
        "players": args.players,
        "round_sizes": args.round_sizes or "all",
        "minutes": round(minutes, 2),
        "sets_finished": stats["sets_finished"],
        "sets_per_minute": round(stats["sets_finished"] / minutes, 1),
        "games": stats["games"],
        "games_per_minute": round(stats["games"] / minutes, 1),
        "sets_void": stats["sets_void"],
        "sets_lost": stats["sets_lost"],
        "wait_share": round(waited, 3),
        "matchmaking_ms_per_set": round(
            1000 * stats["matchmaking_seconds"] / max(stats["sets_started"], 1), 3
        ),
        "claim_ms_per_table": round(1000 * stats["claim_seconds"] / max(stats["claims"], 1), 3),
        "finish_ms_per_set": round(
            1000 * stats["finish_seconds"] / max(stats["sets_finished"], 1), 3
        ),
        "store_ms_per_game": round(1000 * stats["save_seconds"] / games, 3),
        "record_kib_per_game": round(stats["save_bytes"] / games / 1024, 2),
        "store_kib_per_game_on_disk": round(size / games / 1024, 2),
        "ladder_cpu_share": [round(c / wall, 3) for c in cpu],
        "ladder_peak_rss_mib": round(peak, 1),
        "ladder_stderr": [e.strip().splitlines()[-3:] for e in errs],
    }


def _pg_size(url: str) -> int:
    """The bytes of the PostgreSQL database at ``url``."""
    from wizard_referee.storage import open_database

    db = open_database(url)
    try:
        return int(db.execute("SELECT pg_database_size(current_database())").fetchone()[0])
    finally:
        db.close()


def _postgres(url: str | None) -> tuple[str, Any]:
    """The bench's PostgreSQL store: ``url`` (an empty database of yours),
    or a database on a durable throwaway cluster (tests/postgres.py)."""
    if url:
        return url, None
    sys.path.insert(0, str(ROOT))
    from tests.postgres import Cluster, problem

    why = problem()
    if why is not None:
        raise SystemExit(f"no PostgreSQL to measure: {why} (or give --postgres-url)")
    cluster = Cluster(durable=True).start()
    return str(cluster.create_database()[1]), cluster


def bots(args: argparse.Namespace) -> None:
    """A worker: each token's bot played under trio until SIGTERM."""
    import trio

    from wizard_arena.client import serve_bot
    from wizard_bots.random_bot import RandomBot

    tokens: dict[str, str] = json.loads(Path(args.tokens).read_text())

    async def main() -> None:
        with trio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
            async with trio.open_nursery() as nursery:
                for name, token in tokens.items():
                    nursery.start_soon(
                        partial(
                            serve_bot,
                            RandomBot(),
                            args.server,
                            name,
                            token,
                            reconnect=True,
                            reconnect_timeout=30,
                        )
                    )
                async for _ in signals:
                    nursery.cancel_scope.cancel()
                    break

    trio.run(main)


# -- standings -------------------------------------------------------------------------------------


def standings(args: argparse.Namespace) -> dict[str, Any]:
    from wizard_arena.rules import Rules
    from wizard_referee.ladder import sql
    from wizard_referee.ladder.plackett_luce import LiveModel
    from wizard_referee.ladder.season import Season
    from wizard_referee.ladder.simulate import Field, season
    from wizard_referee.ladder.standings import official
    from wizard_referee.ladder.store import LadderStore, new_token
    from wizard_referee.storage import PlayedGame, write_game

    f = Field(entries=args.entries, players=4, online=0.75)
    per_round = round(args.entries * 0.75) // 4 * 12
    t = time.perf_counter()
    run = season(f, 2 * (args.games // per_round + 1), seed=1)  # (entries come and go: more)
    simulated = time.perf_counter() - t
    games = run.games[: args.games - args.games % 12]
    work = Path(tempfile.mkdtemp(prefix="bench-ladder-"))
    db = work / "season.sqlite"
    t = time.perf_counter()
    with LadderStore.create(db, Season("bench", rules=Rules(players=4))) as store:
        ids = {}
        for name in f.truth():
            store.add_entrant(name, token=new_token())
        ids = {v.label.removesuffix("@v1"): v.id for v in store.versions()}
        model = LiveModel()
        for s in range(len(games) // 12):
            unit = games[12 * s : 12 * s + 12]
            members = [ids[p] for p in unit[0].players]
            with store.db.transaction():
                (set_id,) = store.rows(
                    sql.ADD_SET,
                    {"seats": json.dumps(members), "now": 0.0, "runner": "bench", "expires": 0.0},
                )[0]
                for r, g in enumerate(unit):
                    gid = f"s{set_id}-r{r}"
                    seats = [ids[p] for p in g.players]
                    ranks = sorted(g.scores, reverse=True)
                    write_game(
                        store.db,
                        PlayedGame(
                            gid,
                            "finished",
                            0.0,
                            0.0,
                            False,
                            "{}",
                            tuple(int(x) for x in g.scores),
                            tuple(ranks.index(x) + 1 for x in g.scores),
                            tuple({} for _ in seats),
                        ),
                        planned=False,
                        seats=seats,
                        columns={"set_id": set_id, "seating": r},
                        seat_columns=[{"version_id": v} for v in seats],
                    )
            store.finish_set(set_id, members, model.rate, runner="bench")
    written = time.perf_counter() - t
    out: dict[str, Any] = {
        "entries": args.entries,
        "games": len(games),
        "sets": len(games) // 12,
        "simulated_s": round(simulated, 1),
        "written_s": round(written, 1),
    }
    with LadderStore.open(db, read_only=True) as store:
        for boot in (0, args.bootstrap):
            t, cpu = time.perf_counter(), time.process_time()
            fitted = official(store, boot)
            out[f"official_s_bootstrap_{boot}"] = round(time.perf_counter() - t, 2)
            out[f"official_cpu_s_bootstrap_{boot}"] = round(time.process_time() - cpu, 2)
            out[f"groups_bootstrap_{boot}"] = fitted["groups"]
    shutil.rmtree(work, ignore_errors=True)
    return out


# -- simulated -------------------------------------------------------------------------------------


def simulated(args: argparse.Namespace) -> dict[str, Any]:
    from wizard_referee.ladder.simulate import Field, coverage, season

    def marks(run: Any) -> list[tuple[float, int, int, int, int, int]]:
        return [
            (c.time, c.sets, c.groups, c.fewest, c.fewest_late, c.tables) for c in run.checkpoints
        ]

    out: dict[str, Any] = {"growth": {}, "coverage": []}
    churn = Field(entries=32, players=4, online=0.75, late=8, joins=40.0)
    out["growth"]["32 entries, online 0.75, 8 late"] = marks(
        season(churn, 160.0, seed=7, checkpoints=[20.0, 50.0, 80.0, 120.0])
    )
    for patience in (0.5, 0.0):
        always = Field(entries=16, players=4, online=1.0, patience=patience)
        out["growth"][f"16 entries always online, patience {patience}"] = marks(
            season(always, 100.0, seed=7, checkpoints=[10.0, 50.0])
        )
    fields = [
        (Field(entries=8, players=4, online=1.0), 14.0),
        (Field(entries=16, players=4, online=0.75), 40.0),
        (Field(entries=16, players=4, online=0.75, spread=900.0), 40.0),
        (Field(entries=24, players=3, online=0.75), 40.0),
    ]
    for f, duration in fields:
        (cov,), split = coverage(f, duration, args.seasons, bootstrap=args.bootstrap, seed=1000)
        r, rse, rn = cov.rate("ratings")
        nb, nse, nn = cov.rate("neighbours")
        out["coverage"].append(
            {
                "entries": f.entries,
                "players": f.players,
                "online": f.online,
                "spread": f.spread,
                "duration": duration,
                "seasons": args.seasons,
                "split_seasons": split,
                "ratings": f"{100 * r:.1f}% +- {100 * rse:.1f}% ({rn})",
                "neighbours": f"{100 * nb:.1f}% +- {100 * nse:.1f}% ({nn})",
                "cpu_s": round(cov.cpu_seconds, 1),
            }
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode")
    b = sub.add_parser("bots")
    b.add_argument("--server", required=True)
    b.add_argument("--tokens", required=True)
    parser.add_argument("--bots", type=int, default=64)
    parser.add_argument("--processes", type=int, default=1, help="ladder processes (live)")
    parser.add_argument("--postgres", action="store_true", help="a PostgreSQL store (live)")
    parser.add_argument("--postgres-url", help="an empty database of your server (live)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--round-sizes", default="", help="short games (default: whole games)")
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--standings", action="store_true")
    parser.add_argument("--entries", type=int, default=300)
    parser.add_argument("--games", type=int, default=100_000)
    parser.add_argument("--simulate", action="store_true")
    parser.add_argument("--seasons", type=int, default=200)
    args = parser.parse_args()
    sys.path[:0] = [str(ROOT / p) for p in ("sdk", "server", "example_bots")]
    if args.mode == "bots":
        bots(args)
        return
    if args.standings:
        result = standings(args)
    elif args.simulate:
        result = simulated(args)
    else:
        result = live(args)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

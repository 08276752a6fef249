"""What confinement (``sandbox = "bwrap"``, docs/untrusted-bots.md) costs.

    python bench/bench_sandbox.py                  # starts, then tournaments of 8 entrants
    python bench/bench_sandbox.py --starts 40 --games 48 --runs 3
    python bench/bench_sandbox.py --only starts

Run as root on Linux with bubblewrap installed (confinement drops to
another uid only as root). Two parts:

- ``starts``: the time of one start, median of ``--starts``, of
  ``/bin/true`` and of a Python bot's imports (``python -c "import
  wizard_arena.client"``): plain (a subprocess), and confined as the
  tournament confines an entrant (a cgroup made with the limits,
  ``/bin/sh`` entering it, bubblewrap, setpriv's uid drop, then the
  command; the group removed after); and the parts: bubblewrap and
  setpriv without a cgroup, a cgroup made and removed with nothing in it,
  and the wait from a confined start's end until its group can be removed.
- ``tournament``: 8 entrants (the random bot, ``wizard-arena bot``), 4
  players, short games (round sizes 1 to 5), 2 tables at once, played on
  the hosting room's host (:func:`wizard_referee.hosting.host.open_host`)
  confined (each entrant over the referee's Unix socket) and unconfined
  (loopback TCP), alternated, ``--runs`` each: the start-up (the launcher,
  the referee, 8 bots connected), games per minute over the games, and the
  referee's CPU per decision (this process's user+system time over the
  games: the referee and the runner; the bots are other processes).

It prints one JSON line per part and a summary.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import trio

from wizard_referee.sandbox import (
    UID_BASE,
    Cgroup,
    Confinement,
    Limits,
    confined_command,
    problems,
)

PYTHON_IMPORT = [sys.executable, "-c", "import wizard_arena.client"]
TRUE = ["/bin/true"]


def _ms(samples: list[float]) -> float:
    return round(1000 * statistics.median(samples), 2)


def _plain(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdin=subprocess.DEVNULL)
    return time.perf_counter() - t


REMOVALS: list[float] = []
"""The time from a confined start's end to its cgroup removed, each start."""


def _confined(cmd: list[str], with_cgroup: bool = True) -> float:
    t = time.perf_counter()
    argv, env = confined_command(cmd, os.environ, Confinement(uid=UID_BASE))
    if with_cgroup:
        group = Cgroup.create(f"wizard-arena-{os.getpid()}-bench-{uuid.uuid4().hex[:6]}", Limits())
        argv = group.entering(argv)
    subprocess.run(argv, env=env, check=True, stdin=subprocess.DEVNULL)
    if with_cgroup:
        ended = time.perf_counter()
        group.kill_all()
        while not group.remove():  # EBUSY until the kernel has let the exited processes go
            time.sleep(0.001)
        REMOVALS.append(time.perf_counter() - ended)
    return time.perf_counter() - t


def _cgroup_only() -> float:
    t = time.perf_counter()
    group = Cgroup.create(f"wizard-arena-{os.getpid()}-bench-{uuid.uuid4().hex[:6]}", Limits())
    group.remove()
    return time.perf_counter() - t


def bench_starts(n: int) -> dict[str, Any]:
    out: dict[str, Any] = {"part": "starts", "n": n}
    for label, cmd in (("true", TRUE), ("python_bot_imports", PYTHON_IMPORT)):
        plain, confined, no_cgroup = [], [], []
        REMOVALS.clear()
        for _ in range(n):  # alternated: a change of load hits each alike
            plain.append(_plain(cmd))
            confined.append(_confined(cmd))
            no_cgroup.append(_confined(cmd, with_cgroup=False))
        out[label] = {
            "plain_ms": _ms(plain),
            "confined_ms": _ms(confined),
            "bwrap_setpriv_only_ms": _ms(no_cgroup),
            "cgroup_removal_after_exit_ms": _ms(REMOVALS),
            "added_ms": round(_ms(confined) - _ms(plain), 2),
        }
    out["cgroup_make_remove_ms"] = _ms([_cgroup_only() for _ in range(n)])
    return out


def _without_seccomp(argv: list[str]) -> list[str]:
    """A confined start's argv without its seccomp filter: bubblewrap's
    command line as it was before it had one (no /bin/sh opening the filter
    as descriptor 3, no ``--seccomp 3``)."""
    assert argv[:3] == ["/bin/sh", "-c", 'exec "$@" 3<"$0"'], argv[:3]
    out = argv[4:]
    i = out.index("--seccomp")
    return out[:i] + out[i + 2 :]


def bench_seccomp(n: int) -> dict[str, Any]:
    """What the seccomp filter adds to a confined start (bubblewrap and
    setpriv, no cgroup), with and without it, alternated; and the cost of
    building its program with libseccomp (once per process)."""
    from wizard_referee.sandbox.seccomp import filter_program

    build = []
    for _ in range(n):
        t = time.perf_counter()
        filter_program.__wrapped__()
        build.append(time.perf_counter() - t)
    out: dict[str, Any] = {"part": "seccomp", "n": n, "build_program_ms": _ms(build)}
    for label, cmd in (("true", TRUE), ("python_bot_imports", PYTHON_IMPORT)):
        argv, env = confined_command(cmd, os.environ, Confinement(uid=UID_BASE))
        bare = _without_seccomp(argv)
        with_filter: list[float] = []
        without: list[float] = []
        for _ in range(n):
            for sample, run in ((with_filter, argv), (without, bare)):
                t = time.perf_counter()
                subprocess.run(run, env=env, check=True, stdin=subprocess.DEVNULL)
                sample.append(time.perf_counter() - t)
        out[label] = {
            "with_filter_ms": _ms(with_filter),
            "without_filter_ms": _ms(without),
            "added_ms": round(_ms(with_filter) - _ms(without), 2),
        }
    return out


def _config(sandbox: str, games: int, workdir: str) -> Any:
    from wizard_referee.tournament.config import EntrantConfig, TournamentConfig

    bot = (sys.executable, "-m", "wizard_arena.cli", "bot", "wizard_bots.random_bot:RandomBot")
    args = ("--server", "{server}", "--name", "{name}", "--quiet")
    entrants = tuple(EntrantConfig(f"e{k}", (*bot, *args)) for k in range(8))
    return TournamentConfig(
        entrants,
        name="bench",
        players=4,
        round_sizes=(1, 2, 3, 4, 5),
        move_time=5.0,
        parallel=2,
        sandbox=sandbox,
        workdir=workdir,
        database=str(Path(workdir) / "bench.sqlite"),
        reconnect_window=0,
    )


async def _tournament(sandbox: str, games: int, workdir: str) -> dict[str, Any]:
    from wizard_referee.hosting.host import open_host
    from wizard_referee.referee.logs import get_logger
    from wizard_referee.tournament.runner import plan_games
    from wizard_referee.tournament.store import game_tags

    config = _config(sandbox, games, workdir)
    specs = plan_games(config)
    specs = (specs * (games // len(specs) + 1))[:games]
    t0 = time.perf_counter()
    logs = Path(workdir) / f"logs-{sandbox}"
    async with open_host(config.hosting(), "bench", logs, get_logger(bench="sandbox")) as host:
        started = time.perf_counter() - t0
        r0, w0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
        decisions = 0
        queue = list(enumerate(specs))

        async def table() -> None:
            nonlocal decisions
            while queue:
                k, spec = queue.pop(0)
                spec = replace(spec, id=f"{spec.id}-{k}")
                rec = await host.play(spec, game_tags(spec, "bench"))
                decisions += sum(len(h) + 1 for rr in rec.rounds for h in rr.hands)

        async with trio.open_nursery() as n:
            for _ in range(config.parallel):
                n.start_soon(table)
        wall = time.perf_counter() - w0
        r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return {
        "sandbox": sandbox,
        "start_s": round(started, 2),
        "games": games,
        "games_per_minute": round(60 * games / wall, 1),
        "decisions": decisions,
        "referee_cpu_us_per_decision": round(1e6 * cpu / decisions, 1),
    }


def bench_tournament(games: int, runs: int) -> dict[str, Any]:
    from wizard_referee.referee.grpc_setup import prepare_referee_transport
    from wizard_referee.referee.logs import configure_logging

    prepare_referee_transport()
    configure_logging("warning", "json", open(os.devnull, "w"))  # noqa: SIM115
    results: dict[str, list[dict[str, Any]]] = {"bwrap": [], "none": []}
    for _ in range(runs):
        for sandbox in ("none", "bwrap"):
            with tempfile.TemporaryDirectory(prefix="bench-sandbox-") as tmp:
                results[sandbox].append(trio.run(_tournament, sandbox, games, tmp))
    out: dict[str, Any] = {"part": "tournament", "runs": runs, "games": games}
    for sandbox, rs in results.items():
        out[sandbox] = {
            key: statistics.median(r[key] for r in rs)
            for key in ("start_s", "games_per_minute", "referee_cpu_us_per_decision")
        }
        out[sandbox]["each"] = rs
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=20, help="starts of each kind (default 20)")
    parser.add_argument("--games", type=int, default=32, help="games per tournament (default 32)")
    parser.add_argument("--runs", type=int, default=3, help="tournaments of each (default 3)")
    parser.add_argument("--only", choices=["starts", "seccomp", "tournament"])
    args = parser.parse_args()
    found = problems()
    if found or os.geteuid() != 0:
        print("error: " + ("; ".join(found) or "run as root"), file=sys.stderr)
        return 2
    load = os.getloadavg()[0]
    if args.only in (None, "starts"):
        print(json.dumps(bench_starts(args.starts)), flush=True)
    if args.only in (None, "seccomp"):
        print(json.dumps(bench_seccomp(args.starts)), flush=True)
    if args.only in (None, "tournament"):
        print(json.dumps(bench_tournament(args.games, args.runs)), flush=True)
    print(json.dumps({"load_average_at_start": load, "cores": os.cpu_count()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A ladder season under the events of a real one, its store checked by SQL
afterwards (docs/performance.md, "The ladder under churn"; docs/ladder.md).

    python bench/bench_ladder_soak.py                    # PostgreSQL, about 5 minutes
    python bench/bench_ladder_soak.py --window 10 --play 20   # shorter
    python bench/bench_ladder_soak.py --default-action   # the default action's strength

**Soak** (the default): a season of tables of 3 (short games: rounds of 1
to 3 cards) with ``--bots`` dial-in entrants on a PostgreSQL store (a
durable throwaway cluster, as tests/postgres.py makes), one ``wizard-arena
ladder run`` process (``--return-window`` ``--window`` seconds) and each
entrant's bot in a worker process of its own (the example random bot,
reconnecting for as long as it takes). After ``--play`` seconds of play
between events, in this order:

1. **a leaver**: one entrant's bot is killed (SIGKILL) and never comes back;
2. **a rotation**: ``ladder rotate-token`` of another; its old bot goes
   on trying with the old token, and a new one dials in with the new;
3. **an upgrade**: ``ladder version`` of a third; its new version's bot
   dials in;
4. **a maintenance**: the ladder is stopped (SIGTERM) for ``--window`` + 15
   seconds, then started again;
5. **a database outage**: the PostgreSQL server is stopped for
   ``--outage`` seconds (20), then started again.

Then the ladder is stopped, and the store is checked by SQL: every finished
set has all its games, each with a result for every seat, and its members'
scores are their games' sums; the places in the order of finishing run
1..n; the live ratings replay; no set is left ``playing``. Reported: sets
finished, void and waiting, games stored and **discarded** (stored in a void
set: the target is 0), abandons by entrant, the sets the rotated and the
upgraded entries played after the event, the old token's refusals, the
ladder's exits and its log's ``database_lost`` and ``set_abandoned`` lines.

**Default action** (``--default-action``): games of 4 players (the full
rules) where one seat plays the referee's default action and the others
the random or the heuristic bot, every seat of ``--deals`` deals: each
side's mean score per game (what a leaver's seats are played by).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PLAYERS = 3
ROUND_SIZES = "1,2,3"
TOKEN_ENV = "SOAK_BOT_TOKEN"


def _cli() -> list[str]:
    return [sys.executable, "-m", "wizard_arena.cli"]


def _env() -> dict[str, str]:
    paths = [str(ROOT / p) for p in ("sdk", "server", "example_bots")]
    old = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, *([old] if old else [])])}


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _text(path: Path) -> str:
    return path.read_text() if path.exists() else ""


class Soak:
    def __init__(self, args: argparse.Namespace) -> None:
        sys.path.insert(0, str(ROOT))
        from tests.postgres import Cluster, problem

        why = problem()
        if why is not None:
            raise SystemExit(f"no PostgreSQL to run on: {why}")
        self.args = args
        self.work = Path(tempfile.mkdtemp(prefix="bench-soak-"))
        self.cluster = Cluster(durable=True).start()
        self.db = str(self.cluster.create_database()[1])
        self.port = _free_port()
        self.ladder: subprocess.Popen[str] | None = None
        self.exits: list[int | None] = []
        self.bots: dict[str, subprocess.Popen[bytes]] = {}
        self.events: list[tuple[str, float]] = []
        self.t0 = time.monotonic()

    def cmd(self, *argv: str) -> str:
        done = subprocess.run(
            [*_cli(), "ladder", *argv, "-d", self.db],
            env=_env(), capture_output=True, text=True, check=True, cwd=self.work,
        )  # fmt: skip
        return done.stdout

    def start_ladder(self) -> None:
        argv = [
            *_cli(), "ladder", "run", "-d", self.db, "--port", str(self.port), "--quiet",
            "--return-window", str(self.args.window), "--bootstrap", "0",
            "--log-file", str(self.work / "ladder.log"), "--log-level", "info",
            "--report", str(self.work / f"report{len(self.exits)}.json"),
        ]  # fmt: skip
        self.ladder = subprocess.Popen(
            argv, env=_env(), stderr=subprocess.PIPE, text=True, cwd=self.work
        )

    def stop_ladder(self) -> None:
        assert self.ladder is not None
        self.ladder.send_signal(signal.SIGTERM)
        _, err = self.ladder.communicate(timeout=120)
        self.exits.append(self.ladder.returncode)
        if self.ladder.returncode != 0:
            print(err, file=sys.stderr)

    def bot(self, key: str, name: str, token: str) -> None:
        argv = [sys.executable, __file__, "bot", "--server", f"127.0.0.1:{self.port}",
                "--name", name, "--log", str(self.work / f"bot-{key}.log")]  # fmt: skip
        self.bots[key] = subprocess.Popen(argv, env={**_env(), TOKEN_ENV: token})  # (not argv)

    def in_a_set(self, version: int) -> None:
        """Wait until ``version`` is in a set being played, a game of it stored."""
        from wizard_referee.ladder.store import LadderStore

        with LadderStore.open(self.db, read_only=True) as store:
            while True:
                for set_id, seats in store.rows(
                    "SELECT id, seats FROM sets WHERE status = 'playing'"
                ):
                    if version in json.loads(seats) and store.stored_games(int(set_id)):
                        return
                time.sleep(0.05)

    def mark(self, event: str) -> None:
        self.events.append((event, round(time.monotonic() - self.t0, 1)))
        print(f"{self.events[-1][1]:7.1f} s  {event}", file=sys.stderr, flush=True)

    def run(self) -> dict[str, Any]:
        try:
            return self._run()
        finally:  # (whatever happened: nothing of the bench left running)
            procs: list[subprocess.Popen[Any]] = list(self.bots.values())
            if self.ladder is not None:
                procs.append(self.ladder)
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
            self.cluster.stop()
            shutil.rmtree(self.work, ignore_errors=True)

    def _run(self) -> dict[str, Any]:
        args = self.args
        self.cmd("create", "--players", str(PLAYERS), "--round-sizes", ROUND_SIZES)
        names = [f"bot{k:02d}" for k in range(args.bots)]
        tokens = {}
        for n in names:
            out = self.cmd("add", n)
            tokens[n] = next(w for w in out.split() if len(w) == 48)
        self.start_ladder()
        time.sleep(3)
        for n in names:
            self.bot(n, n, tokens[n])
        self.mark("started")
        time.sleep(args.play)
        leaver, rotated, upgraded = names[0], names[1], names[2]
        self.in_a_set(1)  # (bot00's version 1: killed in the middle of a set)
        self.bots[leaver].send_signal(signal.SIGKILL)
        self.mark(f"{leaver} killed, never to return")
        time.sleep(args.play)
        out = self.cmd("rotate-token", rotated)
        fresh = next(w for w in out.split() if len(w) == 48)
        self.bot(f"{rotated}-new", rotated, fresh)  # (the old one goes on trying)
        self.mark(f"{rotated}'s token rotated")
        time.sleep(args.play)
        out = self.cmd("version", upgraded)
        newer = next(w for w in out.split() if len(w) == 48)
        self.bots[upgraded].send_signal(signal.SIGTERM)
        self.bot(f"{upgraded}-v2", upgraded, newer)
        self.mark(f"{upgraded} upgraded to version 2")
        time.sleep(args.play)
        self.stop_ladder()
        self.mark("ladder stopped (SIGTERM)")
        time.sleep(args.window + 15)
        self.start_ladder()
        self.mark("ladder started again")
        time.sleep(args.play)
        self.cluster.pause()
        self.mark("database stopped")
        time.sleep(args.outage)
        self.cluster.resume()
        self.mark("database started again")
        time.sleep(args.play + args.window)
        self.stop_ladder()
        self.mark("ladder stopped")
        for p in self.bots.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.bots.values():
            p.wait(timeout=60)
        result = self.check()
        result["events"] = self.events
        result["ladder_exits"] = self.exits
        log = [json.loads(x) for x in (self.work / "ladder.log").read_text().splitlines()]
        kinds = [e.get("event") for e in log]
        result["log"] = {
            k: kinds.count(k)
            for k in (
                "database_lost",
                "database_back",
                "set_abandoned",
                "set_void",
                "session_closed",
                "standings_failed",
            )
        }
        old_bot = _text(self.work / f"bot-{rotated}.log")
        result["old_token_refusals"] = old_bot.count("rotated")
        result["old_token_too_many_sessions"] = old_bot.count("too many sessions")
        new_bot = _text(self.work / f"bot-{rotated}-new.log")
        result["new_token_too_many_sessions"] = new_bot.count("too many sessions")
        return result

    def check(self) -> dict[str, Any]:
        from wizard_referee.ladder.plackett_luce import LiveModel, replay
        from wizard_referee.ladder.store import LadderStore

        per_set = 6  # (3 players, balanced seating)
        with LadderStore.open(self.db, read_only=True) as store:
            q = store.rows
            counts = store.set_counts()
            labels = {v.id: v.label for v in store.versions()}
            problems = {
                "finished sets without all their games": q(
                    "SELECT s.id FROM sets s LEFT JOIN games g ON g.set_id = s.id AND"
                    " g.status = 'finished' WHERE s.status = 'finished' GROUP BY s.id"
                    f" HAVING COUNT(g.id) <> {per_set}"
                ),
                "finished games without a result for every seat": q(
                    "SELECT g.id FROM games g LEFT JOIN seat_results r ON r.game_id = g.id"
                    f" WHERE g.status = 'finished' GROUP BY g.id HAVING COUNT(r.seat) <> {PLAYERS}"
                ),
                "set scores that are not their games' sums": q(
                    "SELECT sr.set_id, sr.version_id FROM set_results sr WHERE sr.score <>"
                    " (SELECT SUM(r.total) FROM seat_results r JOIN games g ON g.id = r.game_id"
                    " WHERE g.set_id = sr.set_id AND r.version_id = sr.version_id)"
                ),
                "finished sets without a result for each member": q(
                    "SELECT s.id FROM sets s LEFT JOIN set_results r ON r.set_id = s.id"
                    " WHERE s.status = 'finished' GROUP BY s.id"
                    f" HAVING COUNT(r.version_id) <> {PLAYERS}"
                ),
                "sets left playing": q("SELECT id FROM sets WHERE status = 'playing'"),
                "abandons of sets not finished": q(
                    "SELECT a.set_id FROM abandons a JOIN sets s ON s.id = a.set_id"
                    " WHERE s.status NOT IN ('finished', 'suspended')"
                ),
            }
            seqs = [
                int(r[0])
                for r in q(
                    "SELECT finish_seq FROM sets WHERE finish_seq IS NOT NULL ORDER BY finish_seq"
                )
            ]
            if seqs != list(range(1, len(seqs) + 1)):
                problems["places in the order of finishing not 1..n"] = [seqs[:5]]
            sets = list(store.finished_sets())
            live = replay(LiveModel(), ((s, [r[v][0] for v in s]) for _, s, r in sets))
            last = {v: rating for _, _, r in sets for v, (_, rating) in r.items()}
            off = [labels[v] for v in live if abs(live[v][0] - last[v][0]) > 1e-6]
            if off:
                problems["live ratings that do not replay"] = off
            discarded = q(
                "SELECT COUNT(*) FROM games g JOIN sets s ON s.id = g.set_id"
                " WHERE s.status = 'void'"
            )[0][0]
            played = store.set_counts_by_version()
            return {
                "bots": self.args.bots,
                "window_s": self.args.window,
                "outage_s": self.args.outage,
                "sets": counts,
                "games_stored": q("SELECT COUNT(*) FROM games")[0][0],
                "games_discarded": int(discarded),
                "void_why": [str(r[0]) for r in q("SELECT why FROM sets WHERE status = 'void'")],
                "abandons": {labels[v]: n for v, n in store.abandon_counts().items()},
                "sets_by_entry": {labels[v]: n for v, n in sorted(played.items())},
                "integrity_problems": {k: v for k, v in problems.items() if v},
            }


def bot(args: argparse.Namespace) -> None:
    """One entrant's bot, reconnecting for as long as it takes, until SIGTERM;
    every refusal it meets written to ``--log``."""
    import trio

    from wizard_arena.client import serve_bot
    from wizard_bots.random_bot import RandomBot

    async def main() -> None:
        with trio.open_signal_receiver(signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:

                async def play() -> None:
                    while True:
                        try:
                            await serve_bot(
                                RandomBot(), args.server, args.name, os.environ[TOKEN_ENV],
                                reconnect=True, reconnect_timeout=600,
                            )  # fmt: skip
                        except Exception as e:  # (refused: told why; try again)
                            with Path(args.log).open("a", encoding="utf-8") as log:
                                log.write(f"{e}\n")
                        await trio.sleep(1.0)

                nursery.start_soon(play)
                async for _ in signals:
                    nursery.cancel_scope.cancel()
                    break

    trio.run(main)


def default_action(args: argparse.Namespace) -> dict[str, Any]:
    from wizard_arena.bot import Bot
    from wizard_arena.local import play_local
    from wizard_arena.rules import Rules
    from wizard_bots.heuristic import HeuristicBot
    from wizard_bots.random_bot import RandomBot

    class Absent(Bot):
        """Answers nothing: the referee's default action plays every decision."""

    out: dict[str, Any] = {"deals": args.deals, "players": 4}
    for other in (RandomBot, HeuristicBot):
        mine, theirs = [], []
        for deal in range(args.deals):
            for seat in range(4):
                bots: list[Any] = [other() for _ in range(4)]
                bots[seat] = Absent()
                totals = play_local(bots, Rules(players=4), seed=deal, hooks=False).totals
                mine.append(totals[seat])
                theirs.append(statistics.mean(t for i, t in enumerate(totals) if i != seat))
        out[other.__name__] = {
            "default_action_mean": round(statistics.mean(mine), 1),
            "others_mean": round(statistics.mean(theirs), 1),
            "games": len(mine),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="mode")
    b = sub.add_parser("bot")
    for flag in ("--server", "--name", "--log"):
        b.add_argument(flag, required=True)
    parser.add_argument("--bots", type=int, default=9)
    parser.add_argument("--window", type=float, default=20.0, help="the return window (s)")
    parser.add_argument("--play", type=float, default=30.0, help="seconds between events")
    parser.add_argument("--outage", type=float, default=20.0, help="the database's stop (s)")
    parser.add_argument("--default-action", action="store_true")
    parser.add_argument("--deals", type=int, default=150)
    args = parser.parse_args()
    sys.path[:0] = [str(ROOT / p) for p in ("sdk", "server", "example_bots")]
    if args.mode == "bot":
        bot(args)
        return
    result = default_action(args) if args.default_action else Soak(args).run()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

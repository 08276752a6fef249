"""Two ladder processes sharing one PostgreSQL store, 16 dial-in bots on
loopback, one process SIGKILLed in the middle of a set: a token's session
on one process refused on the other, every finished set stored exactly
once, the killed process's sets played on or voided by the other, no
entry at two tables at once, the live ratings those of the sets replayed
in the order they were committed, and the standings the same as those of
the same sets stored by one process."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from wizard_arena.client import (
    ConnectionLostError,
    ServerFullError,
    open_bot_session,
    serve_bot,
)
from wizard_arena.rules import Rules
from wizard_bots.random_bot import RandomBot
from wizard_referee.ladder.plackett_luce import LiveModel, replay
from wizard_referee.ladder.season import Season
from wizard_referee.ladder.standings import official
from wizard_referee.ladder.store import LadderStore, new_token
from wizard_referee.storage import open_database

from .conftest import NEEDS_POSTGRES, ROOT
from .support import scaled

BOTS = 16
LEASE = 2.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def _mid_set(url: str, pid: int) -> list[int]:
    """The sets process ``pid`` plays with at least one game stored."""
    db = open_database(url)
    try:
        rows = db.execute(
            "SELECT s.id FROM sets s WHERE s.status = 'playing' AND s.claimed_by LIKE ?"
            " AND EXISTS (SELECT 1 FROM games g WHERE g.set_id = s.id)",
            (f"%-{pid}-%",),
        ).fetchall()
        return [int(r[0]) for r in rows]
    finally:
        db.close()


def _status(url: str) -> dict[int, str]:
    with LadderStore.open(url, read_only=True) as store:
        return {int(r[0]): str(r[1]) for r in store.rows("SELECT id, status FROM sets")}


def _one_process_copy(url: str, path: Path) -> LadderStore:
    """The finished sets of the store at ``url``, stored again by one process
    in their order of finishing, in a new SQLite store at ``path``."""
    with LadderStore.open(url, read_only=True) as shared:
        season, secret, _ = shared.season()
        names = [v.name for v in shared.versions()]
        sets = list(shared.finished_sets())
        labels = {v.id: v.label for v in shared.versions()}
        games = {
            set_id: [shared.game(f"s{set_id}-r{r}") for r in sorted(shared.stored_games(set_id))]
            for set_id, _, _ in sets
        }
    one = LadderStore.create(path, season)
    for name in names:
        one.add_entrant(name, token=new_token())
    one.start_runner("one", "here", os.getpid(), 600.0)
    ids = {v.label: v.id for v in one.versions()}
    assert {ids[label]: label for label in labels.values()} == labels
    model = LiveModel()
    for set_id, seats, _ in sets:
        new_id, _ = one.new_set(seats, "one", 600.0, secret)
        for r, found in enumerate(games[set_id]):
            assert found is not None
            record = found[0]
            one.save_game(new_id, r, [ids[n] for n in record.names], record, runner="one")
        one.finish_set(new_id, seats, model.rate, runner="one")
    return one


@NEEDS_POSTGRES
@pytest.mark.e2e
@pytest.mark.slow(seconds=15)
def test_two_processes_share_a_season_and_one_is_killed_mid_set(
    postgres_url: str, tmp_path: Path
) -> None:
    rules = Rules(players=4, hand_sizes=(1, 2))
    season = Season("shared", players=4, rules=rules, policy={"move_time": scaled(2.0)})
    tokens = {f"bot{i:02d}": new_token() for i in range(BOTS)}
    with LadderStore.create(postgres_url, season) as store:
        for name, token in tokens.items():
            store.add_entrant(name, token=token)
    ports = [_free_port(), _free_port()]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(str(ROOT / p) for p in ("sdk", "server", "example_bots")),
    }

    def ladder(i: int) -> subprocess.Popen[bytes]:
        cmd = [
            sys.executable, "-m", "wizard_arena.cli", "ladder", "run", "-d", postgres_url,
            "--port", str(ports[i]), "--quiet", "--bootstrap", "-1", "--lease", str(LEASE),
            "--return-window", "60", "--log-level", "info",
            "--log-file", str(tmp_path / f"ladder{i}.log"),
        ]  # fmt: skip
        with (tmp_path / f"ladder{i}.err").open("wb") as err:
            return subprocess.Popen(cmd, env=env, cwd=tmp_path, stderr=err)

    procs = [ladder(0), ladder(1)]
    killed: list[int] = []

    async def dial_in(name: str, token: str, first: int) -> None:
        """A bot of ``first``'s process; when its process goes (or refuses
        it), it dials the other."""
        i = first
        while True:
            with contextlib.suppress(ConnectionLostError, ServerFullError):
                await serve_bot(RandomBot(), f"127.0.0.1:{ports[i]}", name, token, reconnect=False)
            if procs[i].poll() is not None:
                i = 1 - i
            await trio.sleep(0.3)

    async def until(cond: Any, timeout: float) -> None:
        with trio.fail_after(scaled(timeout)):
            while not await trio.to_thread.run_sync(cond):
                await trio.sleep(0.2)

    async def main() -> None:
        await until(lambda: all(_listening(p) for p in ports), 30)
        async with trio.open_nursery() as bots:
            for n, (name, token) in enumerate(tokens.items()):
                bots.start_soon(dial_in, name, token, n % 2)
            # both processes play; then the first is killed in the middle of a set
            await until(lambda: bool(_mid_set(postgres_url, procs[1].pid)), 30)
            await until(lambda: bool(_mid_set(postgres_url, procs[0].pid)), 30)
            # a token's one session is on the first process: the second closes another
            with (
                trio.fail_after(scaled(20)),
                pytest.raises(ConnectionLostError, match="this ladder's processes"),
            ):
                address = f"127.0.0.1:{ports[1]}"
                async with open_bot_session(address, name="bot00", token=tokens["bot00"]) as s:
                    async for _ in s:
                        pass
            # (the first may be between sets by now: wait until it is in one again)
            pid = procs[0].pid
            with trio.fail_after(scaled(30)):
                while not (found := await trio.to_thread.run_sync(_mid_set, postgres_url, pid)):
                    await trio.sleep(0.1)
            killed.extend(found)
            procs[0].send_signal(signal.SIGKILL)
            procs[0].wait()
            status = _status(postgres_url)
            finished_then = sum(1 for s in status.values() if s == "finished")
            # the other takes its sets over, plays them on (or voids them), and goes on
            await until(
                lambda: all(_status(postgres_url)[s] in ("finished", "void") for s in killed), 40
            )
            await until(
                lambda: (
                    sum(1 for s in _status(postgres_url).values() if s == "finished")
                    >= finished_then + 2
                ),
                30,
            )
            procs[1].send_signal(signal.SIGTERM)
            await trio.to_thread.run_sync(procs[1].wait)
            bots.cancel_scope.cancel()

    try:
        trio.run(main)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert procs[1].returncode == 0, (tmp_path / "ladder1.err").read_text()
    log = [json.loads(line) for line in (tmp_path / "ladder1.log").read_text().splitlines()]
    assert any(e.get("event") == "sets_taken_over" for e in log)
    assert not [e for e in log if e.get("event") == "live_ratings_replayed_differ"]

    with LadderStore.open(postgres_url, read_only=True) as store:
        status = {int(r[0]): str(r[1]) for r in store.rows("SELECT id, status FROM sets")}
        assert killed and all(status[s] in ("finished", "void") for s in killed)
        sets = list(store.finished_sets())
        # every finished set stored exactly once: its 12 games, each once, in order
        assert [r[0] for r in store.finished_after(0)] == list(range(1, len(sets) + 1))
        for set_id, seats, results in sets:
            assert store.stored_games(set_id) == dict.fromkeys(range(12), "finished")
            assert sorted(results) == sorted(seats)
        games = store.rows("SELECT id, seats, started_at, finished_at FROM games")
        assert len(games) == len({g[0] for g in games})
        # no entry sat at two tables at once (its session limit is 1)
        spans: dict[int, list[tuple[float, float]]] = {}
        for _, seats_json, started, ended in games:
            for v in json.loads(seats_json):
                spans.setdefault(v, []).append((started, ended))
        for v, times in spans.items():
            times.sort()
            assert all(b[0] >= a[1] for a, b in itertools.pairwise(times)), v
        # the live ratings are those of the sets replayed in the order they were committed
        live = replay(LiveModel(), ((s, [r[v][0] for v in s]) for _, s, r in sets))
        last = {v: rating for _, _, r in sets for v, (_, rating) in r.items()}
        assert all(abs(live[v][0] - last[v][0]) < 1e-9 for v in live)
        shared = official(store, 0)
    with _one_process_copy(postgres_url, tmp_path / "one.sqlite") as one:
        alone = official(one, 0)
        one_last = {v: r for _, _, res in one.finished_sets() for v, (_, r) in res.items()}
    assert shared["entries"] == alone["entries"]
    assert shared["games"] == alone["games"] == 12 * len(sets)
    assert one_last == last

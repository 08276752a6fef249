"""The running ladder, in this process, with bots on loopback: duplicate
sets played and finished whole, tokens checked against the registry at
each Hello and a rotated one shut out at once, sets interrupted by a
disconnect finished when the entrant returns or completed without it (its
seats on the default action), official standings tried again after a
failure, a PostgreSQL restart waited out, hosted entrants started and
replaced; and, in a subprocess, SIGKILL and restart."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import stat
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import trio

from wizard_arena.client import AuthenticationError, open_bot_session, serve_bot, server_info
from wizard_arena.rules import Rules
from wizard_bots.random_bot import RandomBot
from wizard_referee.hosting.config import HostError
from wizard_referee.ladder.plackett_luce import LiveModel, replay
from wizard_referee.ladder.process import Ladder, RunOptions, run_ladder
from wizard_referee.ladder.season import Season
from wizard_referee.ladder.standings import official
from wizard_referee.ladder.store import LadderStore, new_token
from wizard_referee.referee.logs import get_logger
from wizard_referee.tournament.seating import deal_seatings

from .cli_here import cli_here
from .conftest import NEEDS_POSTGRES, NEEDS_SANDBOX, ROOT
from .postgres import Cluster
from .support import scaled

BOT = [sys.executable, "-m", "wizard_arena.cli", "bot", "wizard_bots.random_bot:RandomBot"]
ARGS = ["--server", "{server}", "--name", "{name}", "--quiet"]  # the token: in the environment


def _season(
    where: Path | str, names: list[str], players: int = 3
) -> tuple[Path | str, dict[str, str]]:
    """A season of short games (rounds of 1 and 2 cards) with dial-in
    entrants ``names``, in ``where`` (a test's folder: an SQLite file in it;
    or a store's target); their tokens."""
    path = where / "season.sqlite" if isinstance(where, Path) else where
    rules = Rules(players=players, hand_sizes=(1, 2))
    season = Season("test", players=players, rules=rules, policy={"move_time": scaled(2.0)})
    tokens = {}
    with LadderStore.create(path, season) as store:
        for name in names:
            tokens[name] = new_token()
            store.add_entrant(name, token=tokens[name])
    return path, tokens


@asynccontextmanager
async def running(
    path: Path | str, notes: list[str] | None = None, **options: Any
) -> AsyncIterator[Ladder]:
    options.setdefault("port", 0)
    options.setdefault("bootstrap", -1)  # no standings process
    async with trio.open_nursery() as nursery:
        ladder: Ladder = await nursery.start(
            partial(
                run_ladder,
                path,
                RunOptions(**options),
                log=get_logger(),
                notice=(notes if notes is not None else []).append,
            )
        )
        try:
            yield ladder
        finally:
            ladder.stop()


async def until(cond: Callable[[], bool], timeout: float = 30.0) -> None:
    with trio.fail_after(scaled(timeout)):
        while not cond():
            await trio.sleep(0.05)


def bot(nursery: trio.Nursery, address: str, name: str, token: str, **kw: Any) -> None:
    kw.setdefault("reconnect", False)
    nursery.start_soon(partial(serve_bot, RandomBot(), address, name, token, **kw))


def sets_of(path: Path | str, entry: str) -> int:
    """Finished sets of ``entry`` (``NAME@vN``)."""
    with LadderStore.open(path, read_only=True) as store:
        ids = {v.label: v.id for v in store.versions()}
        return store.set_counts_by_version().get(ids.get(entry, -1), 0)


def finished(path: Path | str) -> int:
    with LadderStore.open(path, read_only=True) as store:
        return store.set_counts().get("finished", 0)


def test_sets_are_played_whole_and_rated_reproducibly(
    database: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # (a PostgreSQL store's files are named after it, here)
    path, tokens = _season(database, ["a", "b", "c", "d"])

    async def main() -> None:
        async with (
            running(path, bootstrap=20, standings_every=0.2) as ladder,
            trio.open_nursery() as bots,
        ):
            for name, token in tokens.items():
                bot(bots, ladder.address, name, token)
            await until(lambda: finished(path) >= 5)
            # the official ratings, from their own process: the point fit, then intervals
            await until(lambda: ladder.intervals is not None, 60)
            assert ladder.point is not None and ladder.point["finished_sets"] >= 1
            table = ladder.standings()
            assert {r["entry"] for r in table} == {"a@v1", "b@v1", "c@v1", "d@v1"}
            assert all(r["rating"] is not None and r["mu"] is not None for r in table)
            assert sum(r["online"] for r in table) == 4
            bots.cancel_scope.cancel()

    trio.run(main)
    shown = cli_here(
        ["ladder", "standings", "-d", str(path), "--bootstrap", "20"], capsys, monkeypatch
    )
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("test: 3 players") and "official (95% interval)" in lines[1]
    rows = [line.split() for line in lines[2:] if not line.startswith("note:")]
    assert sorted(r[1] for r in rows) == ["a@v1", "b@v1", "c@v1", "d@v1"]
    assert [r[0] for r in rows] == ["1", "2", "3", "4"]
    assert "note: official ratings: Bradley-Terry of" in shown.stdout
    data = json.loads(
        cli_here(["ladder", "standings", "-d", str(path), "--json", "--bootstrap", "0"], capsys,
                 monkeypatch).stdout
    )  # fmt: skip
    assert sum(r["sets"] for r in data["entries"]) == 3 * data["official"]["finished_sets"]
    with LadderStore.open(path) as store:
        versions = {v.id: v.label for v in store.versions()}
        sets = list(store.finished_sets())
        assert len(sets) >= 5
        for set_id, seats, results in sets:
            row = store.set_row(set_id)
            assert row is not None and row["status"] == "finished"
            games = store.stored_games(set_id)
            assert games == dict.fromkeys(range(6), "finished")
            records = [store.game(f"s{set_id}-r{r}") for r in range(6)]
            assert all(r is not None and r[1] == "finished" for r in records)
            # one deal, every seating of the design, each game's id told apart
            assert {r[0].seed for r in records if r} == {row["deal_seed"]}
            labels = [versions[v] for v in seats]
            assert [tuple(r[0].names) for r in records if r] == deal_seatings(labels)
            assert len({r[0].tags["bot_game_id"] for r in records if r}) == 6
            assert sorted(results) == sorted(seats)
            summed = {v: 0 for v in seats}
            for r in records:
                assert r is not None
                for name, total in zip(r[0].names, r[0].totals, strict=True):
                    summed[{versions[v]: v for v in seats}[name]] += total
            assert {v: results[v][0] for v in seats} == summed
        # the live ratings stored after each set are the replay's
        live = replay(LiveModel(), ((s, [r[v][0] for v in s]) for _, s, r in sets))
        last = {v: rating for _, _, r in sets for v, (_, rating) in r.items()}
        assert all(abs(live[v][0] - last[v][0]) < 1e-9 for v in live)
        board = official(store, 50)
        assert sorted(board["entries"]) == sorted(versions.values())
        assert board["finished_sets"] == len(sets) and board["games"] == 6 * len(sets)
        assert store.online() == {}  # the sessions' rows went with the ladder


def test_tokens_are_checked_against_the_registry_at_each_hello(
    database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path, tokens = _season(database, ["a"])

    async def refusal(address: str, token: str) -> str:
        try:
            async with open_bot_session(address, name="x", token=token):
                return "admitted"
        except AuthenticationError as e:
            return str(e)

    async def main() -> None:
        async with running(path) as ladder:
            address = ladder.address
            assert "invalid access token" in await refusal(address, "nobody's")
            async with open_bot_session(address, name="a", token=tokens["a"]) as first:
                assert first.welcome.session_id
                with pytest.raises(Exception, match="too many sessions with this access token"):
                    async with open_bot_session(address, name="a2", token=tokens["a"]):
                        pass
            late = new_token()
            with LadderStore.open(path) as store:  # a registry command while it runs
                store.add_entrant("late", token=late)
            assert await refusal(address, late) == "admitted"
            fresh = new_token()
            with LadderStore.open(path) as store:
                store.rotate_token("late", fresh)
            assert "no longer valid (rotated)" in await refusal(address, late)
            assert await refusal(address, fresh) == "admitted"
            async with open_bot_session(address, name="late", token=fresh) as session:
                await until(lambda: "late@v1" in ladder.host.pool)
                with LadderStore.open(path) as store:
                    store.retire("late")
                # its session is closed within a second or so, and the token refused
                with (
                    trio.fail_after(scaled(10)),
                    pytest.raises(AuthenticationError, match="retired"),
                ):
                    async for _ in session:
                        pass
            assert "no longer valid (retired)" in await refusal(address, fresh)

    trio.run(main)


def test_a_hello_while_the_database_is_lost_is_asked_to_try_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bot dialing in while the registry cannot be read is refused as
    unavailable (it tries again), not as holding a bad token (it stops)."""
    from wizard_arena.client import ConnectionLostError
    from wizard_referee.storage import DatabaseLost

    path, tokens = _season(tmp_path, ["a"])

    async def main() -> None:
        async with running(path) as ladder:

            def lost(store: LadderStore, token: str) -> Any:
                raise DatabaseLost("test", "the connection is lost")

            # (every connection's: the token lookups have one of their own)
            monkeypatch.setattr(LadderStore, "token", lost)
            with pytest.raises(ConnectionLostError, match="try again shortly"):
                async with open_bot_session(ladder.address, name="a", token=tokens["a"]):
                    pass

    trio.run(main)


def test_official_standings_are_tried_again_after_a_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed official fit is tried again (after a back-off), its error
    shown meanwhile (progress line, pages' file); one success clears it."""
    from wizard_referee.ladder import process as runner
    from wizard_referee.ladder.standings import official_files, read_failure

    monkeypatch.setattr(runner, "STANDINGS_RETRY", 0.2)
    path, tokens = _season(tmp_path, ["a", "b", "c"])
    blocked = official_files(Path(path))[0]
    blocked.mkdir()  # (where the fit is written: the process fails)

    async def main() -> None:
        async with (
            running(path, bootstrap=0, standings_every=0.2) as ladder,
            trio.open_nursery() as bots,
        ):
            for name, token in tokens.items():
                bot(bots, ladder.address, name, token)
            await until(lambda: (read_failure(Path(path)) or {}).get("failures", 0) >= 1, 60)
            assert "official ratings failing" in ladder.progress_line()
            assert ladder.point is None
            blocked.rmdir()
            await until(lambda: ladder.point is not None, 60)
            await until(lambda: read_failure(Path(path)) is None)
            assert ladder.standings_failure is None
            assert re.search(r"official \d+ s old", ladder.progress_line())
            bots.cancel_scope.cancel()

    trio.run(main)


@NEEDS_POSTGRES
def test_a_database_restart_suspends_the_tables_and_they_go_on(
    postgres_cluster: Cluster, postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The PostgreSQL server stops (a maintenance) and starts again: the
    ladder waits for it, reconnects, and plays on; nothing is lost or void."""
    monkeypatch.chdir(tmp_path)
    path, tokens = _season(postgres_url, ["a", "b", "c"])

    async def main() -> None:
        async with running(path) as ladder, trio.open_nursery() as bots:
            for name, token in tokens.items():
                bot(bots, ladder.address, name, token)
            await until(lambda: ladder.stats.sets_finished >= 1 and ladder.stats.games >= 8)
            await trio.to_thread.run_sync(postgres_cluster.pause)
            try:
                await until(lambda: ladder.stats.outages == 1)
                await trio.sleep(1.5)  # (tries to reconnect meanwhile)
            finally:
                await trio.to_thread.run_sync(postgres_cluster.resume)
            before = ladder.stats.sets_finished
            await until(lambda: ladder.stats.sets_finished >= before + 2, 60)
            assert ladder.stats.outages == 1 and ladder.stats.outage_seconds > 1
            bots.cancel_scope.cancel()

    trio.run(main)
    with LadderStore.open(path) as store:
        assert store.set_counts().get("void", 0) == 0
        for set_id, _, _ in store.finished_sets():
            assert store.stored_games(set_id) == dict.fromkeys(range(6), "finished")
        games = store.rows("SELECT COUNT(*) FROM games")[0][0]
        playing = store.rows("SELECT COUNT(*) FROM sets WHERE status <> 'finished'")[0][0]
        assert games >= 6 * len(list(store.finished_sets())) and playing <= 1


@NEEDS_POSTGRES
def test_a_database_that_comes_back_refusing_the_ladder_stops_it(
    postgres_cluster: Cluster, postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its database dropped (a refusal for good once it answers, not a lost
    connection), the ladder stops with one line saying why, instead of
    trying again forever with every table waiting."""
    from wizard_referee.ladder import process as runner
    from wizard_referee.storage import DatabaseLost, StorageError

    monkeypatch.setattr(runner, "RECONNECT_FIRST", 0.05)
    monkeypatch.chdir(tmp_path)
    path, _ = _season(postgres_url, ["a"])
    name = urlsplit(postgres_url).path.lstrip("/")

    def drop() -> None:
        import psycopg

        with psycopg.connect(postgres_cluster.url(), autocommit=True) as con:
            con.execute(f'DROP DATABASE "{name}" WITH (FORCE)')  # (our own name)

    async def main() -> None:
        with trio.fail_after(scaled(30)):
            async with running(path, lease=1.5):
                await trio.to_thread.run_sync(drop)
                await trio.sleep_forever()

    with pytest.raises(BaseExceptionGroup) as caught:
        trio.run(main)
    errors = _leaves(caught.value)
    refused = [e for e in errors if isinstance(e, StorageError) and "refusing" in str(e)]
    assert refused, errors
    assert "does not exist" in str(refused[0]) and "\n" not in str(refused[0])
    assert not any(isinstance(e, DatabaseLost) for e in refused)


def _leaves(group: BaseExceptionGroup[Any]) -> list[BaseException]:
    out: list[BaseException] = []
    for e in group.exceptions:
        out.extend(_leaves(e) if isinstance(e, BaseExceptionGroup) else [e])
    return out


def test_a_set_claimed_as_the_database_went_is_not_held_forever(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new set whose transaction committed as the connection went (the
    error reaching the ladder before it started the set) is suspended once
    the database answers again, then played on: not left 'playing', its
    claim renewed by the heartbeat and nobody playing it."""
    from wizard_referee.ladder import process as runner
    from wizard_referee.storage import DatabaseLost

    monkeypatch.setattr(runner, "RECONNECT_FIRST", 0.05)
    path, tokens = _season(tmp_path, ["a", "b", "c"])
    in_doubt: list[int] = []

    async def main() -> None:
        async with running(path) as ladder, trio.open_nursery() as bots:
            new_set = ladder.store.new_set

            def committed_then_lost(*args: Any, **kw: Any) -> tuple[int, str]:
                set_id, deal = new_set(*args, **kw)
                if not in_doubt:
                    in_doubt.append(set_id)
                    raise DatabaseLost("test", "the connection is lost")
                return set_id, deal

            monkeypatch.setattr(ladder.store, "new_set", committed_then_lost)
            for name, token in tokens.items():
                bot(bots, ladder.address, name, token)
            await until(lambda: ladder.stats.outages == 1)
            await until(lambda: ladder.store.set_row(in_doubt[0])["status"] == "finished")
            bots.cancel_scope.cancel()

    trio.run(main)


def test_a_registry_read_cut_off_by_the_database_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The registry's change is read again after the database answers when
    the connection went between its count and its versions (else the
    change, a rotation or a new entrant, is missed until the next one)."""
    from wizard_referee.storage import DatabaseLost

    path, _ = _season(tmp_path, ["a"])
    with LadderStore.open(path) as store:
        ladder = Ladder(store, RunOptions(), get_logger(), print)
        assert ladder._reload()
        store.add_entrant("b", token=new_token())
        versions = store.versions
        lost = [DatabaseLost("test", "the connection is lost")]

        def cut_off() -> Any:
            if lost:
                raise lost.pop()
            return versions()

        monkeypatch.setattr(store, "versions", cut_off)
        with pytest.raises(DatabaseLost):
            ladder._reload()
        assert ladder._reload() and "b@v1" in ladder._labels


def test_a_rotated_token_is_shut_out_at_once_and_the_new_one_admitted(tmp_path: Path) -> None:
    path, tokens = _season(tmp_path, ["a"])

    async def main() -> None:
        async with (
            running(path) as ladder,
            open_bot_session(ladder.address, name="a", token=tokens["a"]) as old,
        ):
            await until(lambda: "a@v1" in ladder.host.pool)
            fresh = new_token()
            with LadderStore.open(path) as store:
                store.rotate_token("a", fresh)
            # the old token's session is closed within a second or so
            with trio.fail_after(10), pytest.raises(AuthenticationError, match="rotated"):
                async for _ in old:
                    pass
            # and the owner's bot with the new token takes its slot (one per token)
            async with open_bot_session(ladder.address, name="a", token=fresh) as new:
                assert new.welcome.session_id
                await until(lambda: ladder.store.online() == {1: 1})

    trio.run(main)


@pytest.mark.parametrize("cap", [None, 0.25, 0.0])
def test_the_seasons_network_credit_cap_reaches_its_dial_in_bots(
    tmp_path: Path, cap: float | None
) -> None:
    """The cap is a season's setting (every set under the same clock rules);
    whether a proxy stands in front is the running process's."""
    path = tmp_path / "season.sqlite"
    policy: dict[str, Any] = {"move_time": scaled(2.0)}
    if cap is not None:
        policy["lag_credit_cap"] = cap
    season = Season("far", players=3, rules=Rules(players=3, hand_sizes=(1,)), policy=policy)
    token = new_token()
    with LadderStore.create(path, season) as store:
        store.add_entrant("a", token=token)
    expected = 0.5 if cap is None else cap
    assert f"network credit up to {expected:g} s" in season.describe()

    async def main() -> None:
        limits = {"lag_credit_behind_proxy": cap == 0.25, "hello_timeout": 2.5, "max_greeting": 7}
        async with running(path, referee=limits, max_sessions_per_token=2) as ladder:
            assert ladder.config().policy.lag_credit_behind_proxy is (cap == 0.25)
            # the running process's limits reach its referee; the season's stay
            policy = ladder.config().policy
            assert (policy.hello_timeout, policy.max_greeting) == (2.5, 7)
            assert policy.max_sessions_per_token == 2 and policy.lag_credit_cap == expected
            assert ladder.host.arena.config.policy == policy
            info = await trio.to_thread.run_sync(server_info, ladder.address)
            assert info.lag_credit_cap == expected
            async with open_bot_session(ladder.address, name="a", token=token) as session:
                assert session.welcome.clock_probes is (expected > 0)

    trio.run(main)


def test_run_options_take_the_running_referees_settings_alone() -> None:
    """A season's settings (its move time) and the ladder's own session
    limit are not a running process's referee settings."""
    assert RunOptions(referee={"auth_backoff": 0.0}).referee == {"auth_backoff": 0.0}
    for key in ("move_time", "max_sessions_per_token", "no_such_limit"):
        with pytest.raises(ValueError, match=f"not a ladder process's setting: {key}"):
            RunOptions(referee={key: 1})


def test_an_interrupted_set_goes_on_when_its_entrant_returns(
    database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    path, tokens = _season(database, ["a", "b", "c"])

    async def main() -> None:
        async with running(path) as ladder, trio.open_nursery() as bots:
            bot(bots, ladder.address, "a", tokens["a"])
            bot(bots, ladder.address, "b", tokens["b"])
            async with trio.open_nursery() as once:  # c leaves after two games
                bot(once, ladder.address, "c", tokens["c"], games=2)
            with LadderStore.open(path, read_only=True) as store:
                await until(lambda: store.set_counts().get("suspended") == 1)
                # (the game begun as it left is played by the default policy: fault 'disconnect')
                assert 2 <= len(store.stored_games(1)) < 6
            bot(bots, ladder.address, "c", tokens["c"])
            await until(lambda: finished(path) >= 2)
            bots.cancel_scope.cancel()

    trio.run(main)
    with LadderStore.open(path) as store:
        row = store.set_row(1)
        assert row is not None and row["status"] == "finished" and row["finish_seq"] == 1
        assert store.stored_games(1) == dict.fromkeys(range(6), "finished")


def test_a_set_whose_entrant_does_not_return_is_completed_and_costs_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Leaving a set voids nothing: past the return window the leaver's
    seats are played by the default action, the set counts, and the
    abandon is counted against the leaver (store, standings)."""
    path, tokens = _season(tmp_path, ["a", "b", "c"])

    async def main() -> None:
        async with running(path, return_window=1.0) as ladder, trio.open_nursery() as bots:
            bot(bots, ladder.address, "a", tokens["a"])
            bot(bots, ladder.address, "b", tokens["b"])
            async with trio.open_nursery() as once:
                bot(once, ladder.address, "c", tokens["c"], games=3)
            await until(lambda: finished(path) == 1)
            table = {r["entry"]: r for r in ladder.standings()}
            assert table["c@v1"]["abandons"] == 1 and table["a@v1"]["abandons"] == 0
            bots.cancel_scope.cancel()

    trio.run(main)
    with LadderStore.open(path) as store:
        row = store.set_row(1)
        assert row is not None and row["status"] == "finished"
        assert store.set_counts().get("void", 0) == 0
        assert store.stored_games(1) == dict.fromkeys(range(6), "finished")
        c = next(v.id for v in store.versions() if v.label == "c@v1")
        assert store.abandoned(1) == {c} and store.abandon_counts() == {c: 1}
        assert store.set_counts_by_version()[c] == 1  # the set counts for the leaver too
        assert len(store.rated_games({v.id: v.label for v in store.versions()})) == 6
        # its games after it left: every decision of its seat the default action
        record = store.game("s1-r5")
        assert record is not None
        seat = list(record[0].names).index("c@v1")
        moves = [m for rnd in record[0].rounds for m in rnd.moves if m.seat == seat]
        assert moves and all(m.fault == "disconnect" for m in moves)
    shown = cli_here(
        ["ladder", "standings", "-d", str(path), "--bootstrap", "0"], capsys, monkeypatch
    )
    assert " left " in shown.stdout.splitlines()[1]
    c_line = next(line.split() for line in shown.stdout.splitlines() if "c@v1" in line)
    a_line = next(line.split() for line in shown.stdout.splitlines() if "a@v1" in line)
    assert c_line[-3:-1] == ["1", "0"] and a_line[-3:-1] == ["0", "0"]


def argv_of(pid: int) -> str:
    """What ``ps`` shows every local user of a process: its command line."""
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def test_hosted_entrants_start_play_and_are_replaced(tmp_path: Path) -> None:
    """...and no bot's token is in its command line (a hosted one's in its
    environment, a dial-in one's in a file), their logs private."""
    path, tokens = _season(tmp_path, ["a", "b"])
    with LadderStore.open(path) as store:
        store.add_entrant("h", command=[*BOT, *ARGS])
    token_file = tmp_path / "b.token"
    token_file.write_text(tokens["b"] + "\n")

    async def main() -> None:
        async with running(path) as ladder, trio.open_nursery() as bots:
            bot(bots, ladder.address, "a", tokens["a"])
            b = await trio.lowlevel.open_process(
                [*BOT, "--server", ladder.address, "--name", "b", "--token-file", str(token_file)],
                env={**os.environ, "WIZARD_ARENA_TOKEN": "not-this-one"},
            )
            await until(lambda: finished(path) >= 1, 60)
            first = list(ladder.instances[3])  # h@v1's process
            for inst in first:
                assert inst.proc is not None and inst.token not in argv_of(inst.proc.pid)
            assert tokens["b"] not in argv_of(b.pid)
            logs = Path(f"{path}.logs")
            assert stat.S_IMODE(logs.stat().st_mode) == 0o700
            assert {stat.S_IMODE(p.stat().st_mode) for p in logs.iterdir()} == {0o600}
            with LadderStore.open(path) as store:
                store.add_version("h")
            await until(lambda: sets_of(path, "h@v2") >= 1, 60)
            # stopped once their set was over (a stop takes the process's exit)
            await until(lambda: all(i.proc.poll() is not None for i in first), 30)
            bots.cancel_scope.cancel()
            b.kill()
            await b.wait()

    trio.run(main)
    with LadderStore.open(path) as store:
        played = store.set_counts_by_version()
        by_label = {v.label: v.id for v in store.versions()}
    assert played.get(by_label["h@v1"], 0) >= 1 and played.get(by_label["h@v2"], 0) >= 1


@NEEDS_SANDBOX
def test_hosted_entrants_run_confined_when_the_season_says_so(tmp_path: Path) -> None:
    path = tmp_path / "season.sqlite"
    season = Season("confined", players=3, rules=Rules(players=3, hand_sizes=(1,)), sandbox="bwrap")
    with LadderStore.create(path, season) as store:
        for name in ("x", "y", "z"):
            store.add_entrant(name, command=[*BOT, *ARGS], limits={"memory_limit": 256 * 2**20})

    async def main() -> None:
        async with running(path) as ladder:
            await until(lambda: finished(path) >= 1, 60)
            insts = [i for group in ladder.instances.values() for i in group]
            assert {i.confinement.uid for i in insts} == {60001, 60002, 60003}
            assert all(i.confinement.limits.memory == 256 * 2**20 for i in insts)

    trio.run(main)


def test_a_confined_season_whose_shared_path_reaches_its_store_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PYTHONPATH (bound read-only into every confined entrant) holding the
    season's store (and so its secret, logs and every deal seed beside it) is
    refused before any bot starts, in one line, as a tournament's is."""
    path = tmp_path / "season.sqlite"
    season = Season("confined", players=3, rules=Rules(players=3, hand_sizes=(1,)), sandbox="bwrap")
    with LadderStore.create(path, season) as store:
        for name in ("x", "y", "z"):
            (tmp_path / name).mkdir()
            store.add_entrant(name, command=[*BOT, *ARGS], folder=str(tmp_path / name))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))

    async def main() -> None:
        async with running(path):
            raise AssertionError("the ladder ran")

    with pytest.RaisesGroup(
        pytest.RaisesExc(HostError, match="PYTHONPATH"), flatten_subgroups=True
    ) as refused:
        trio.run(main)
    (line,) = (str(e) for e in refused.value.exceptions)
    assert "through it the results store" in line and "\n" not in line


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.e2e
@pytest.mark.slow(seconds=8)
def test_sigkill_and_restart_lose_nothing_and_count_nothing_twice(tmp_path: Path) -> None:
    path, tokens = _season(tmp_path, ["a", "b", "c"])
    port = _free_port()
    cmd = [
        sys.executable, "-m", "wizard_arena.cli", "ladder", "run", "-d", str(path),
        "--port", str(port), "--quiet", "--bootstrap", "0", "--log-level", "info",
    ]  # fmt: skip
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(str(ROOT / p) for p in ("sdk", "server", "example_bots")),
    }

    def playing_second_set() -> bool:
        with LadderStore.open(path, read_only=True) as store:
            return store.set_counts().get("finished", 0) >= 1 and bool(store.stored_games(2))

    async def main() -> None:
        first = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE)
        async with trio.open_nursery() as bots:
            for name, token in tokens.items():
                bot(bots, f"127.0.0.1:{port}", name, token, reconnect=True, reconnect_timeout=60)
            await until(playing_second_set, 60)
            first.send_signal(signal.SIGKILL)
            first.wait()
            with LadderStore.open(path, read_only=True) as store:
                before = store.set_counts()
                assert before.get("playing") == 1  # its claim is left as it was
            second = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE)
            try:
                await until(lambda: finished(path) >= 3, 60)
            finally:
                second.send_signal(signal.SIGTERM)
                await trio.to_thread.run_sync(second.wait)
                bots.cancel_scope.cancel()
        assert second.returncode == 0, second.stderr.read() if second.stderr else ""

    trio.run(main)
    with LadderStore.open(path) as store:
        counts = store.set_counts()
        sets = list(store.finished_sets())
        for set_id, _, results in sets:
            assert store.stored_games(set_id) == dict.fromkeys(range(6), "finished")
            assert len(results) == 3
        assert [store.set_row(s)["finish_seq"] for s, _, _ in sets] == list(  # type: ignore[index]
            range(1, len(sets) + 1)
        )
        assert store.set_row(2)["status"] == "finished"  # type: ignore[index]
        assert counts.get("void", 0) == 0
        games = store.rated_games({v.id: v.label for v in store.versions()})
        assert len(games) == 6 * len(sets)
    log = (Path(f"{path}.logs") / "ladder.log").read_text().splitlines()
    assert not [
        line for line in log if json.loads(line).get("event") == "live_ratings_replayed_differ"
    ]

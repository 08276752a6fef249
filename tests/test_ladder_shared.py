"""Several ladder processes sharing one store, at the store's level (each
runner its own connection; on SQLite and PostgreSQL where the store's rules
are the same, on PostgreSQL alone for its row locks): an entry's sessions
within its limit on every process, a lapsed claim taken over once and its
former claimant storing nothing more, a suspended set claimed by one
process of several (``FOR UPDATE SKIP LOCKED``: a set another process holds
is skipped, not waited for), an older schema migrated after a note; a
set's times of the database's clock; of two processes making one season
at once, the second refused and removing nothing; a running ladder's
session rows another process removed stored again by its heartbeat; the
sets others finished caught up with in the order they were committed; a
suspended set void only when no live process has its members, a member
that left the process holding its set for another one its leaver, a set
suspended again before a game keeping its return window, and one whose
every game is stored finished with none of them connected."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from time import time as real_time
from types import SimpleNamespace

import pytest
import trio

from wizard_arena.client import serve_bot
from wizard_arena.rules import Rules
from wizard_bots.random_bot import RandomBot
from wizard_referee.ladder import sql
from wizard_referee.ladder.plackett_luce import LiveModel
from wizard_referee.ladder.process import Ladder, RunOptions, run_ladder
from wizard_referee.ladder.season import Season
from wizard_referee.ladder.store import ClaimLost, LadderStore, StoreError, new_token
from wizard_referee.referee.logs import get_logger
from wizard_referee.referee.record import GameRecord
from wizard_referee.storage import is_url, open_database
from wizard_referee.tournament.seating import deal_seatings
from wizard_referee.tournament.store import GameSpec

from .conftest import NEEDS_POSTGRES
from .support import scaled
from .web_support import play_record

RULES = Rules(players=3, hand_sizes=(1,))
SECRET = "s" * 64


def _season(target: str) -> str:
    with LadderStore.create(target, Season("shared", players=3, rules=RULES)) as store:
        for name in ("a", "b", "c", "d"):
            store.add_entrant(name, token=new_token())
    return target


@contextmanager
def _runners(target: str) -> Iterator[tuple[LadderStore, LadderStore]]:
    """Two runners, A and B, each with its own connection to the store."""
    a, b = LadderStore.open(target), LadderStore.open(target)
    try:
        a.start_runner("A", "here", 1, 30.0)
        b.start_runner("B", "there", 2, 30.0)
        yield a, b
    finally:
        a.close()
        b.close()


def _game(
    store: LadderStore, set_id: int, r: int, deal: str, members: tuple[int, ...] = (1, 2, 3)
) -> tuple[list[int], GameRecord]:
    """Game ``r`` of set ``set_id`` (members a, b, c unless given), played here."""
    labels = {v.id: v.label for v in store.versions()}
    names = [labels[v] for v in members]
    seating = deal_seatings(names)[r]
    spec = GameSpec(f"s{set_id}-r{r}", 0, set_id, 0, r, deal, tuple(seating))
    by_label = {labels[v]: v for v in members}
    record = play_record(spec, RULES, dict.fromkeys(names, RandomBot))
    return [by_label[x] for x in seating], record


def test_an_entrys_sessions_stay_within_its_limit_on_every_process(database: str) -> None:
    with _runners(_season(database)) as (a, b):
        assert a.add_session("s1", "A", 1, 30.0, limit=1)
        assert not b.add_session("s2", "B", 1, 30.0, limit=1)  # its one slot is A's
        assert b.add_session("s2", "B", 1, 30.0, limit=2)
        assert not a.add_session("s3", "A", 1, 30.0, limit=2)
        # a session whose lease lapsed (its process was killed) holds no slot
        assert a.add_session("s4", "A", 2, -1.0, limit=1)
        assert b.add_session("s5", "B", 2, 30.0, limit=1)
        # a session that went frees its slot at once
        b.drop_session("s2")
        assert a.add_session("s6", "A", 1, 30.0, limit=2)
        # hosted sessions have no limit
        assert all(a.add_session(f"h{i}", "A", 4, 30.0) for i in range(3))
        assert b.online() == {1: 2, 2: 1, 4: 3}


def test_a_lapsed_claim_is_taken_over_once_and_its_claimant_stores_nothing_more(
    database: str,
) -> None:
    with _runners(_season(database)) as (a, b):
        set_id, deal = a.new_set([1, 2, 3], "A", -1.0, SECRET)  # (its lease lapsed at once)
        seats, record = _game(a, set_id, 0, deal)
        a.save_game(set_id, 0, seats, record, runner="A")
        assert b.take_over_lapsed() == [set_id]
        assert a.take_over_lapsed() == []  # (taken once)
        row = b.set_row(set_id)
        assert row is not None and row["status"] == "suspended"
        seats, record = _game(a, set_id, 1, deal)
        with pytest.raises(ClaimLost, match="no longer claimed by this ladder process"):
            a.save_game(set_id, 1, seats, record, runner="A")
        assert b.claim(set_id, "B", 30.0)
        assert not a.claim(set_id, "A", 30.0)
        for r in range(1, 6):
            seats, record = _game(b, set_id, r, deal)
            b.save_game(set_id, r, seats, record, runner="B")
        with pytest.raises(ClaimLost):
            a.finish_set(set_id, [1, 2, 3], LiveModel().rate, runner="A")
        seq, _, _ = b.finish_set(set_id, [1, 2, 3], LiveModel().rate, runner="B")
        assert seq == 1
        assert a.stored_games(set_id) == dict.fromkeys(range(6), "finished")
        assert [(q, s) for q, s, _, _ in a.finished_after(0)] == [(1, set_id)]


@NEEDS_POSTGRES
def test_a_set_another_process_holds_is_skipped_not_waited_for(postgres_url: str) -> None:
    with _runners(_season(postgres_url)) as (a, b):
        a.db.execute("SET lock_timeout = '10s'")  # (a wait would fail, not hang)
        set_id, _ = a.new_set([1, 2, 3], "A", -1.0, SECRET)
        with b.db.transaction():  # B is taking the lapsed set over
            held = b.rows(b.db.locked(sql.LAPSED_CLAIMS), {"now": b.clock()})
            assert [int(r[0]) for r in held] == [set_id]
            assert a.take_over_lapsed() == []
        assert a.take_over_lapsed() == [set_id]
        with b.db.transaction():  # B is claiming the suspended set
            assert b.rows(b.db.locked(sql.SUSPENDED_SET), {"id": set_id})
            assert not a.claim(set_id, "A", 30.0)
        assert a.claim(set_id, "A", 30.0)
        assert not b.claim(set_id, "B", 30.0)


def test_a_store_of_an_older_schema_is_migrated_after_a_note(
    database: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _season(database)
    db = open_database(database, create=False)
    for step in (
        "DROP TABLE abandons",
        "DROP INDEX sessions_slot",
        "DROP INDEX sets_claimed",
        "ALTER TABLE sessions DROP COLUMN slot",
        "UPDATE schema_version SET version = 1 WHERE component = 'ladder'",
    ):
        db.execute(step)  # (the store as version 1 made it)
    db.close()
    capsys.readouterr()
    with LadderStore.open(database, read_only=True) as store:  # a reader changes nothing
        assert next(v.label for v in store.versions()) == "a@v1"
        assert store.abandon_counts() == {}
    with LadderStore.open(database) as store:
        store.start_runner("A", "here", 1, 30.0)
        assert store.add_session("s1", "A", 1, 30.0, limit=1)
        assert not store.add_session("s2", "A", 1, 30.0, limit=1)
    note = capsys.readouterr().err
    assert "of schema version 1; this wizard-arena writes version 3" in note
    assert "migrating it now" in note
    if not is_url(database):
        assert Path(f"{database}.schema-1.bak").is_file()
    db = open_database(database, create=False)
    try:
        version = db.execute("SELECT version FROM schema_version WHERE component = 'ladder'")
        assert version.fetchone()[0] == 3
    finally:
        db.close()


def test_a_sets_times_are_of_the_databases_clock(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Processes on machines whose clocks differ write times of one clock:
    the database's (here this process's clock is an hour behind)."""
    import wizard_referee.ladder.store as store_module

    behind = SimpleNamespace(time=lambda: real_time() - 3600.0)
    monkeypatch.setattr(store_module, "time", behind, raising=False)
    with _runners(_season(database)) as (a, _):
        a.add_entrant("e", token=new_token())
        set_id, deal = a.new_set([1, 2, 3], "A", 30.0, SECRET)
        for r in range(6):
            seats, record = _game(a, set_id, r, deal)
            a.save_game(set_id, r, seats, record, runner="A")
        a.finish_set(set_id, [1, 2, 3], LiveModel().rate, runner="A")
        now = a.clock()
        row = a.set_row(set_id)
        assert row is not None and abs(row["ended_at"] - now) < 60
        assert abs(row["created_at"] - now) < 60
        created = {v.label: v.created_at for v in a.versions()}
        assert abs(created["e@v1"] - now) < 60


def test_of_two_processes_creating_one_season_the_loser_removes_nothing(
    database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two ``ladder create`` at once both find no store at first; the one
    that makes it second is refused and leaves the first one's season."""
    import wizard_referee.ladder.store as store_module

    LadderStore.create(database, Season("first", players=3, rules=RULES)).close()

    class Unseen(type(Path())):  # type: ignore[misc]
        def exists(self, *args: object, **kwargs: object) -> bool:
            return False  # (as the loser saw it a moment before the winner made it)

    monkeypatch.setattr(store_module, "store_exists", lambda *args: False)
    monkeypatch.setattr(store_module, "Path", Unseen)
    with pytest.raises(StoreError, match="holds a ladder already"):
        LadderStore.create(database, Season("second", players=3, rules=RULES))
    monkeypatch.undo()
    with LadderStore.open(database, read_only=True) as store:
        assert store.season()[0].name == "first"


def test_session_rows_another_process_removed_are_stored_again(
    database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process that stalled longer than its lease finds its sessions' rows
    removed by another (as expired): its heartbeat stores them again, so
    the entry's session limit holds on every process."""
    monkeypatch.chdir(tmp_path)  # (a PostgreSQL store's files are named after it, here)
    token = new_token()
    with LadderStore.create(database, Season("shared", players=3, rules=RULES)) as store:
        store.add_entrant("a", token=token)

    def rows() -> list[str]:
        with LadderStore.open(database, read_only=True) as store:
            return [str(r[0]) for r in store.rows("SELECT id FROM sessions")]

    async def until(cond: Callable[[], bool], timeout: float) -> None:
        with trio.fail_after(scaled(timeout)):
            while not cond():
                await trio.sleep(0.05)

    async def main() -> None:
        options = RunOptions(port=0, bootstrap=-1, lease=1.5)
        async with trio.open_nursery() as nursery:
            ladder: Ladder = await nursery.start(
                partial(run_ladder, database, options, log=get_logger(), notice=print)
            )
            nursery.start_soon(
                partial(serve_bot, RandomBot(), ladder.address, "a", token, reconnect=False)
            )
            await until(lambda: len(rows()) == 1, 20)
            with LadderStore.open(database) as other:  # it removes the rows as expired
                other.run("DELETE FROM sessions")
            await until(lambda: len(rows()) == 1, 10)  # stored again by the heartbeat
            with LadderStore.open(database) as other:  # its one slot is held
                assert not other.add_session("x/1", ladder.runner, 1, 30.0, limit=1)
            ladder.stop()
            nursery.cancel_scope.cancel()

    trio.run(main)


def _played(store: LadderStore, runner: str, members: tuple[int, ...]) -> int:
    """A set of ``members`` claimed by ``runner``, its games played and stored."""
    set_id, deal = store.new_set(list(members), runner, 30.0, SECRET)
    for r in range(6):
        seats, record = _game(store, set_id, r, deal, members)
        store.save_game(set_id, r, seats, record, runner=runner)
    return set_id


def test_catching_up_applies_every_set_in_the_order_committed(database: str) -> None:
    """B finishes a set, then A one with two of its members, before A reads
    B's: A's live ratings end as stored after its own set (not put back to
    those after B's), and each set is counted once."""
    with _runners(_season(database)) as (a, b):
        ladder = Ladder(a, RunOptions(), get_logger(), print)
        ladder.runner = "A"
        ladder._load()
        ladder._renewed = float("-inf")  # (a heartbeat is due: it renews A's leases)
        a.run("UPDATE runners SET expires_at = 0 WHERE id = 'A'")
        b.finish_set(_played(b, "B", (1, 2, 3)), [1, 2, 3], LiveModel().rate, runner="B")
        ladder._finish(_played(a, "A", (1, 2, 4)), [1, 2, 4])
        ladder._catch_up()
        last = {v: rating for _, _, res in a.finished_sets() for v, (_, rating) in res.items()}
        assert ladder.ratings == last
        assert ladder.sets == {1: 2, 2: 2, 3: 1, 4: 1}
        assert ladder.finished_to == 2 and not ladder.counted
        assert a.rows("SELECT expires_at FROM runners WHERE id = 'A'")[0][0] > a.clock() + 20


def test_a_suspended_set_is_void_only_when_no_live_process_has_its_members(
    database: str,
) -> None:
    """Past the return window, A (none of the set's members connected) leaves
    the set to B while B has them all connected, and while B has all but one
    connected nowhere (that one left: B plays on without it); once no live
    process has those left, and the set's holder none of them, it is void."""
    with _runners(_season(database)) as (a, b):
        ladder = Ladder(a, RunOptions(return_window=1.0), get_logger(), print)
        ladder.runner = "A"
        ladder.versions = {v.id: v for v in a.versions()}
        ladder._host = SimpleNamespace(pool={})  # type: ignore[assignment]
        set_id, _ = a.new_set([1, 2, 3], "A", 30.0, SECRET)
        a.suspend(set_id, "a member left", "A")
        a.run("UPDATE sets SET suspended_at = 0")  # (long ago, the ladder running since)
        a.run("UPDATE runners SET started_at = 0")
        for v in (1, 2, 3):
            assert b.add_session(f"B/{v}", "B", v, 30.0, limit=1)
        assert a.connected_together([1, 2, 3]) == ["B"]
        ladder._settle_suspended()
        row = a.set_row(set_id)
        assert row is not None and row["status"] == "suspended"
        b.drop_session("B/3")  # (its bot went away)
        assert a.connected_together([1, 2, 3]) == []
        ladder._settle_suspended()
        row = a.set_row(set_id)
        assert row is not None and row["status"] == "suspended"  # (for B to play on)
        assert a.abandoned(set_id) == {3}  # (connected nowhere: it left; a and b are on B)
        a.run("UPDATE sets SET claimed_by = NULL")  # (its holder killed: taken over)
        b.drop_session("B/2")
        assert a.add_session("A/2", "A", 2, 30.0, limit=1)
        ladder._settle_suspended()
        row = a.set_row(set_id)
        assert row is not None and row["status"] == "void" and "did not come back" in row["why"]
        assert a.abandoned(set_id) == {3}


@NEEDS_POSTGRES
def test_a_member_that_left_for_another_process_abandons_its_set(postgres_url: str) -> None:
    """a leaves A, which suspended its set and still has b and c connected,
    and dials B: past the return window a is the set's leaver (its seats
    played by the default action, B seating it meanwhile), not the set
    void; either process finds so, and the set waits for A to play it on."""
    with _runners(_season(postgres_url)) as (a, b):
        set_id, _ = a.new_set([1, 2, 3], "A", 30.0, SECRET)
        a.suspend(set_id, "a not connected", "A")
        a.run("UPDATE sets SET suspended_at = 0")  # (long ago, the ladder running since)
        a.run("UPDATE runners SET started_at = 0")
        for v in (2, 3):
            assert a.add_session(f"A/{v}", "A", v, 30.0, limit=1)
        assert b.add_session("B/1", "B", 1, 30.0, limit=1)
        for store, runner in ((b, "B"), (a, "A")):
            ladder = Ladder(store, RunOptions(return_window=1.0), get_logger(), print)
            ladder.runner = runner
            ladder.versions = {v.id: v for v in store.versions()}
            ladder._host = SimpleNamespace(pool={})  # type: ignore[assignment]
            ladder._settle_suspended()
            row = store.set_row(set_id)
            assert row is not None and row["status"] == "suspended", row
            assert store.abandoned(set_id) == {1}
        assert a.abandon_counts() == {1: 1}


def test_a_set_suspended_again_before_a_game_keeps_its_return_window(database: str) -> None:
    """A set claimed and suspended again (or its claim lapsed) before a game
    of it was stored keeps the time it was first suspended: a member that
    connects and drops restarts no window; a game stored starts a new one."""
    with _runners(_season(database)) as (a, _):
        set_id, deal = a.new_set([1, 2, 3], "A", 30.0, SECRET)
        a.suspend(set_id, "c not connected", "A")
        a.run("UPDATE sets SET suspended_at = 5")
        assert a.claim(set_id, "A", 30.0)
        a.suspend(set_id, "c not connected", "A")
        row = a.set_row(set_id)
        assert row is not None and row["status"] == "suspended" and row["suspended_at"] == 5
        assert a.claim(set_id, "A", -1.0)  # (its lease lapses at once: A was killed)
        assert a.take_over_lapsed() == [set_id]
        row = a.set_row(set_id)
        assert row is not None and row["status"] == "suspended" and row["suspended_at"] == 5
        assert a.claim(set_id, "A", 30.0)
        seats, record = _game(a, set_id, 0, deal)
        a.save_game(set_id, 0, seats, record, runner="A")
        a.suspend(set_id, "c not connected", "A")
        row = a.set_row(set_id)
        assert row is not None and row["suspended_at"] >= a.clock() - 60


def test_a_member_retired_while_its_set_waits_abandons_it(database: str) -> None:
    """Its version replaced or retired, a member away from its suspended set
    never returns: it is recorded as the set's leaver at once (its seats
    played by the default action), not the set voided."""
    with _runners(_season(database)) as (a, _):
        ladder = Ladder(a, RunOptions(), get_logger(), print)
        ladder.runner = "A"
        ladder._host = SimpleNamespace(pool={})  # type: ignore[assignment]
        set_id, _ = a.new_set([1, 2, 3], "A", 30.0, SECRET)
        a.suspend(set_id, "c left", "A")
        a.retire("c")
        ladder.versions = {v.id: v for v in a.versions()}
        ladder._settle_suspended()
        row = a.set_row(set_id)
        assert row is not None and row["status"] == "suspended"  # (for a and b to return)
        assert a.abandoned(set_id) == {3} and ladder.stats.abandons == 1


def test_a_taken_over_set_with_every_game_stored_is_finished_not_voided(
    database: str,
) -> None:
    """A stopped after storing a set's last game and before finishing it; B,
    with none of its members connected and the return window long past,
    finishes it (its games count); a set whose stored game did not finish
    is void."""
    with _runners(_season(database)) as (a, b):
        ladder = Ladder(b, RunOptions(return_window=1.0), get_logger(), print)
        ladder.runner = "B"
        ladder.versions = {v.id: v for v in b.versions()}
        ladder._host = SimpleNamespace(pool={})  # type: ignore[assignment]
        whole, deal = a.new_set([1, 2, 3], "A", -1.0, SECRET)  # (its lease lapsed at once)
        for r in range(6):
            seats, record = _game(a, whole, r, deal)
            a.save_game(whole, r, seats, record, runner="A")
        broken, deal = a.new_set([1, 2, 4], "A", -1.0, SECRET)
        for r in range(6):
            seats, record = _game(a, broken, r, deal, members=(1, 2, 4))
            if r == 5:
                record = replace(record, status="aborted", error="the referee stopped")
            a.save_game(broken, r, seats, record, runner="A")
        assert sorted(b.take_over_lapsed()) == [whole, broken]
        b.run("UPDATE sets SET suspended_at = 0")  # (long ago)
        assert b.connected_together([1, 2, 3]) == []
        ladder._settle_suspended()
        row = b.set_row(whole)
        assert row is not None and row["status"] == "finished" and row["finish_seq"] == 1
        assert ladder.stats.sets_finished == 1 and set(ladder.ratings) == {1, 2, 3}
        row = b.set_row(broken)
        assert row is not None and row["status"] == "void"
        assert row["why"] == f"game s{broken}-r5 did not finish"

"""The misbehaving-bots kit (``wizard_bots.misbehaving``) against a real
referee on loopback: each kind of misbehaviour produces its fault code in the
game record, the game finishes and verifies, and the other bots at the table
are unaffected.

Tables of 6 playing rounds of 1 to 4 cards (``round_sizes``, which every bot
declares in its Hello: 14 decisions a seat instead of a whole game's 65), a
short move time, and bots that misbehave on their first eligible decisions
(``rate=1``, ``limit=2``) so that every test commits its misbehaviour
without waiting for chance.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
from typing import Any

import pytest

from wizard_arena.rules import Rules
from wizard_bots.misbehaving import (
    CLIENTS,
    KINDS,
    FloodClient,
    RawClient,
    Report,
    WrongVersionClient,
    run_kind,
)
from wizard_referee.referee.record import GameRecord, verify_record

from .conftest import ROOT
from .support import ServerThread, scaled

pytestmark = pytest.mark.timeout(120)

PLAYERS = 6
RULES = Rules(players=PLAYERS, hand_sizes=(1, 2, 3, 4))
#: What every bot here declares in its Hello, so that it may sit at RULES' tables.
OPTIONS = RULES.options
MOVE_TIME = 0.5
#: The inbound limit of the flood tests' server. At the default (64) the
#: referee reads a Python client's burst as fast as it arrives, so a flood is
#: never cut off there (see the kit's documentation); with a tiny limit any
#: backlog is.
FLOOD_INBOUND_LIMIT = 2

#: kind -> the fault codes its seat must get (and no others)
EXPECTED = {
    "slow": {"timeout"},
    "illegal": {"illegal"},
    "malformed": {"malformed"},
    "oversized": {"disconnect"},
    "never-answer": {"timeout"},
    "disconnect": {"disconnect"},
    "flood": {"flooding"},
}

#: The ``serve`` fixture's defaults here (conftest.py): the move time stretched
#: by the load as the tests are collected (the slow bots oversleep the time
#: left, whatever it is; the good ones must answer within it)
SERVER_DEFAULTS = {"rules": RULES, "move_time": scaled(MOVE_TIME)}


class _Running:
    """A misbehaving bot of any kind running in a thread."""

    def __init__(self, kind: str, address: str, name: str, **options: Any) -> None:
        self.report: Report | None = None
        self._thread = threading.Thread(
            target=self._run, args=(kind, address, name, options), daemon=True
        )
        self._thread.start()

    def _run(self, kind: str, address: str, name: str, options: dict[str, Any]) -> None:
        self.report = run_kind(kind, address, name, rule_options=OPTIONS, **options)

    def join(self, timeout: float = 60.0) -> Report:
        self._thread.join(scaled(timeout))
        assert self.report is not None, "the bot did not finish"
        return self.report


def good_bots(address: str, count: int = PLAYERS - 1) -> list[RawClient]:
    """Well-behaved random bots, one game each."""
    return [
        RawClient(address, f"good{i}", games=1, seed=i, rule_options=OPTIONS).start()
        for i in range(count)
    ]


def only_game(server: ServerThread) -> GameRecord:
    records = server.wait_records(1)
    assert len(records) == 1
    rec = records[0]
    assert rec.status == "finished", rec.error
    assert verify_record(rec) == []
    return rec


def assert_unaffected(rec: GameRecord, good: list[RawClient], bad_seats: set[int]) -> None:
    """Every other seat played its own moves, without a fault."""
    for seat, faults in enumerate(rec.faults):
        if seat not in bad_seats:
            assert faults == {}, f"seat {seat} ({rec.names[seat]}) faulted: {faults}"
    moves = [m for r in rec.rounds for m in r.moves if m.seat not in bad_seats]
    assert moves and all(m.fault is None for m in moves)
    for g in good:
        report = g.join(scaled(60))
        assert (report.games, report.faults, report.statuses) == (1, {}, ["OK"]), report


@pytest.mark.e2e
@pytest.mark.parametrize("kind", sorted(EXPECTED))
def test_each_misbehaviour_is_faulted_and_the_game_goes_on(serve: Any, kind: str) -> None:
    flood = kind == "flood"
    server = serve(inbound_limit=FLOOD_INBOUND_LIMIT) if flood else serve()
    options: dict[str, Any] = {"games": 1, "rate": 1.0, "limit": 10 if flood else 2, "seed": 1}
    bad = _Running(kind, server.address, "bad", **options)
    good = good_bots(server.address)
    report = bad.join()
    rec = only_game(server)
    seat = rec.names.index("bad")
    faults = rec.faults[seat]
    assert set(faults) == EXPECTED[kind], (faults, rec.fault_details[seat])
    assert_unaffected(rec, good, {seat})
    assert report.misbehaved >= 1
    mine = [m for r in rec.rounds for m in r.moves if m.seat == seat]

    if kind in ("slow", "never-answer"):
        if kind == "never-answer":
            assert faults["timeout"] == 2
        else:  # a late SDK answer may make the next request late too
            assert faults["timeout"] >= 2
        timed_out = [m for m in mine if m.fault == "timeout"]
        assert len(timed_out) == faults["timeout"]
        assert report.games == 1 and report.faults == faults
    elif kind == "illegal":
        assert faults == {"illegal": 2}
        assert sum(report.rejections.values()) == 2
        assert set(report.rejections) <= {
            "bid_out_of_range",
            "card_not_in_hand",
            "must_follow_suit",
        }
        assert all(m.fault is None for m in mine)  # it answered legally in time
    elif kind == "malformed":
        assert faults == {"malformed": 2}
        assert report.rejections == {"malformed": 2}
        assert all(m.fault is None for m in mine)
    else:  # the stream ends: the referee plays the rest of the game for the seat
        assert faults == {next(iter(EXPECTED[kind])): 1}
        assert report.cut == 1 and report.games == 0
        first = next(i for i, m in enumerate(mine) if m.fault is not None)
        assert all(m.fault == "disconnect" for m in mine[first:])
        if kind == "oversized":
            assert report.statuses == ["RESOURCE_EXHAUSTED"]
            assert "larger than max" in report.details[0]
        elif kind == "flood":
            assert report.statuses == ["RESOURCE_EXHAUSTED"]
            assert "inbound queue full" in report.details[0]
        else:
            assert report.statuses == ["CANCELLED"]


@pytest.mark.e2e
def test_disconnect_happens_in_the_middle_of_a_trick(serve: Any) -> None:
    server = serve()
    bad = CLIENTS["disconnect"](
        server.address, "bad", games=1, rate=1.0, rule_options=OPTIONS
    ).start()
    good = good_bots(server.address)
    bad.join(scaled(60))
    rec = only_game(server)
    seat = rec.names.index("bad")
    assert_unaffected(rec, good, {seat})
    for rr in rec.rounds:
        plays = [m for m in rr.moves if m.action.startswith("play ")]
        for i, m in enumerate(plays):
            if m.seat == seat and m.fault == "disconnect":
                assert i % PLAYERS != 0, "the first defaulted card should not lead a trick"
                return
    raise AssertionError("no card was played by the referee for the leaver")


@pytest.mark.e2e
def test_wrong_version_is_refused_at_hello(serve: Any) -> None:
    server = serve()
    bad = WrongVersionClient(server.address, "bad", games=1, rate=1.0, rule_options=OPTIONS).start()
    report = bad.join(scaled(30))
    assert report.statuses == ["FAILED_PRECONDITION"]
    assert report.refused == 1 and report.sessions == 0
    assert "unsupported protocol version: the bot speaks 2..3" in report.details[0]
    good = good_bots(server.address, PLAYERS)
    rec = only_game(server)
    assert "bad" not in rec.names
    assert_unaffected(rec, good, set())


@pytest.mark.e2e
def test_wrong_version_at_a_rate_plays_after_a_refusal(serve: Any) -> None:
    server = serve()
    # a seed whose first hello is wrong and second right (one draw per hello)
    seed = next(s for s in range(100) if [r < 0.5 for r in _draws(s, 2)] == [True, False])
    bad = WrongVersionClient(
        server.address, "bad", games=2, rate=0.5, seed=seed, rule_options=OPTIONS
    ).start()
    good = good_bots(server.address)
    report = bad.join(scaled(60))
    assert report.refused == 1 and report.games == 1
    assert report.statuses == ["FAILED_PRECONDITION", "OK"]
    rec = only_game(server)
    assert rec.faults[rec.names.index("bad")] == {}
    assert_unaffected(rec, good, set())


def _draws(seed: int, n: int) -> list[float]:
    rng = random.Random(seed)
    return [rng.random() for _ in range(n)]


@pytest.mark.e2e
def test_a_table_of_misbehaving_bots_finishes(serve: Any) -> None:
    """Six different misbehaviours at one table: each seat gets its own code."""
    server = serve(inbound_limit=FLOOD_INBOUND_LIMIT)
    kinds = ["illegal", "malformed", "never-answer", "disconnect", "oversized", "flood"]
    bots = [
        CLIENTS[k](
            server.address,
            k,
            games=1,
            rate=1.0,
            limit=10 if k == "flood" else 2,
            rule_options=OPTIONS,
        ).start()
        for k in kinds
    ]
    for b in bots:
        b.join(scaled(60))
    rec = only_game(server)
    for k in kinds:
        assert set(rec.faults[rec.names.index(k)]) == EXPECTED[k], (k, rec.faults)


@pytest.mark.e2e
def test_never_answer_rate_one_never_answers(serve: Any) -> None:
    # no limit on timeouts in a row: the bot is to time out all game long
    # a short deadline: each of the bad seat's 14 moves waits it out
    server = serve(move_time=0.05, max_consecutive_timeouts=0)
    bad = CLIENTS["never-answer"](
        server.address, "bad", games=1, rate=1.0, rule_options=OPTIONS
    ).start()
    good_bots(server.address)
    bad.join(scaled(60))
    rec = only_game(server)
    seat = rec.names.index("bad")
    mine = [m for r in rec.rounds for m in r.moves if m.seat == seat]
    assert all(m.fault == "timeout" for m in mine)
    assert rec.faults[seat] == {"timeout": len(mine)}
    # (the others are not checked: at 0.05 s a starved shared core could time them out)


@pytest.mark.e2e
def test_command_line(serve: Any) -> None:
    server = serve()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wizard_bots.misbehaving",
            "malformed",
            "--server",
            server.address,
            "--name",
            "cli",
            "--games",
            "1",
            "--rate",
            "1",
            "--limit",
            "1",
            "--rule-options",
            ",".join(OPTIONS),
            "--json",
            "-q",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    good = good_bots(server.address)
    out, err = proc.communicate(timeout=scaled(60))
    assert proc.returncode == 0, err
    report = json.loads(out)
    assert report["kind"] == "malformed" and report["games"] == 1
    assert report["faults"] == {"malformed": 1}
    assert "cli (malformed): 1 games played" in err
    rec = only_game(server)
    assert_unaffected(rec, good, {rec.names.index("cli")})


def test_usage() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "wizard_bots.misbehaving", "--help"],
        capture_output=True,
        text=True,
        timeout=scaled(30),
    )
    assert proc.returncode == 0
    for kind in KINDS:
        assert kind in proc.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "wizard_bots.misbehaving", "sulk"],
        capture_output=True,
        text=True,
        timeout=scaled(30),
    )
    assert bad.returncode == 2


def test_flood_client_options() -> None:
    client = FloodClient("127.0.0.1:1", "f", burst=7, rate=0.25)
    assert client.burst == 7 and client.rate == 0.25
    with pytest.raises(ValueError):
        RawClient("127.0.0.1:1", "x", rate=1.5)


def test_the_hello_declares_the_rule_options_given() -> None:
    assert RawClient("127.0.0.1:1", "x").hello().rule_options == ()
    assert RawClient("127.0.0.1:1", "x", rule_options=OPTIONS).hello().rule_options == OPTIONS
    wrong = WrongVersionClient("127.0.0.1:1", "w", rate=1.0, rule_options=["tricksy"]).hello()
    assert (wrong.min_version, tuple(wrong.rule_options)) == (2, ("tricksy",))

"""Resilience, continued: the time bank (a decision may run past the move time by
drawing on it) and the limits on connections and sessions per token."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio

from wizard_arena.bot import GameInfo
from wizard_arena.client import ServerFullError, run_bot
from wizard_arena.protocol.messages import DecisionRequest
from wizard_arena.rules import Rules
from wizard_referee.referee.arena import ArenaConfig
from wizard_referee.referee.policy import PolicyError, RefereePolicy
from wizard_referee.referee.record import GameRecord, verify_record
from wizard_referee.referee.seat import CloseCode
from wizard_referee.tournament.runner import (
    TournamentConfig,
    TournamentError,
    run_tournament,
)

from .conftest import ROOT
from .memory_bots import MemBot, memory_arena, on_mock_clock, play, start, wait_until
from .resilience import SHORT, SHORT_OK, Dropper, serve_args
from .support import RawBot, ServerThread, moves_of, run_bots, scaled, seat_of, wait_for

#: The ``serve`` fixture's defaults here (conftest.py), as in test_resilience.
SERVER_DEFAULTS = {"rules": Rules(players=3)}

# -- 3. time bank ------------------------------------------------------------------------------


def think_first(seconds: float) -> Any:
    def think(req: DecisionRequest) -> float:
        return seconds if req.view.round == 1 and req.view.legal_bids else 0.0

    return think


@on_mock_clock
async def test_a_decision_may_draw_on_the_time_bank() -> None:
    async with memory_arena(move_time=0.3, time_bank=3.0) as arena:
        slow = MemBot("slow", think=think_first(0.5))
        (rec,) = await play(arena, slow, MemBot("q0"), MemBot("q1"))
    seat = seat_of(rec, "slow")
    assert rec.faults[seat] == {}
    assert slow.info is not None and slow.info.time_bank == 3.0
    # the deal is random: a turned Wizard makes the dealer's first request a trump choice
    reqs = slow.requests
    i = next(k for k, r in enumerate(reqs) if r.view.round == 1 and r.view.legal_bids)
    first, second = reqs[i], reqs[i + 1]
    assert first.time_bank == 3.0 and first.view.time_left == pytest.approx(0.3)
    # the first bid ran 0.2 s past the move time: that came off the bank
    bid = next(m for m in rec.rounds[0].moves if m.seat == seat and m.action.startswith("bid"))
    assert bid.ms == pytest.approx(500.0)
    assert second.time_bank == pytest.approx(2.8)
    assert all(r.time_bank == second.time_bank for r in reqs[i + 2 :])


@on_mock_clock
async def test_an_exhausted_time_bank_times_out() -> None:
    async def silent_once(bot: MemBot, req: DecisionRequest) -> bool:
        return len(bot.requests) == 1  # the first request is never answered

    async with memory_arena(move_time=0.2, time_bank=0.3) as arena:
        slow = MemBot("slow", on_request=silent_once)
        (rec,) = await play(arena, slow, MemBot("x0"), MemBot("x1"))
    seat = seat_of(rec, "slow")
    assert rec.faults[seat] == {"timeout": 1}
    assert rec.fault_details[seat]["timeout"] == (
        "no legal answer within 0.2 s and the 0.3 s time bank"
    )
    first = next(mv for mv in moves_of(rec, seat))
    assert first.fault == "timeout" and first.ms == pytest.approx(500.0)
    assert slow.requests[0].time_bank == 0.3
    assert all(r.time_bank == 0 for r in slow.requests[1:])


@on_mock_clock
async def test_a_dropped_bot_keeps_what_is_left_of_its_bank() -> None:
    async def drop_late(bot: MemBot, req: DecisionRequest) -> bool:
        if len(bot.requests) == 2:
            await trio.sleep(1.5)  # 1 s into the bank
            bot.disconnect()
            return True
        return False

    async with memory_arena(move_time=0.5, time_bank=2.0) as arena, trio.open_nursery() as n:
        bot = MemBot("dropper", on_request=drop_late)
        await start(n, arena, bot, MemBot("d0"), MemBot("d1"))
        await bot.done.wait()
        assert bot.welcome is not None
        back = MemBot("dropper", resume_token=bot.welcome.resume_token)
        await start(n, arena, back)
    assert bot.requests[1].time_bank == 2.0
    assert back.messages(GameInfo)[0].time_bank == pytest.approx(1.0)
    assert all(r.time_bank == pytest.approx(1.0) for r in back.requests)


@on_mock_clock
async def test_without_a_time_bank_nothing_changes() -> None:
    async with memory_arena() as arena:
        bot = MemBot("plain")
        await play(arena, bot, MemBot("n0"), MemBot("n1"))
    assert bot.info is not None and bot.info.time_bank == 0
    assert all(r.time_bank == 0 for r in bot.requests)


@pytest.mark.e2e
def test_the_time_bank_goes_over_the_wire(serve: Any) -> None:
    server = serve(time_bank=2.5, rules=SHORT)
    bot = RawBot(server.address, "banked", **SHORT_OK)
    run_bots([bot, *[RawBot(server.address, f"n{i}", **SHORT_OK) for i in range(2)]])
    assert bot.info is not None and bot.info.time_bank == 2.5
    assert bot.requests and all(r.time_bank == 2.5 for r in bot.requests)


def test_time_bank_settings() -> None:
    assert serve_args("--time-bank", "7.5").time_bank == 7.5
    assert serve_args().time_bank == 0.0
    with pytest.raises(ValueError, match="time_bank must not be negative"):
        ArenaConfig.build(time_bank=-1)
    for bad in (float("inf"), float("nan")):
        with pytest.raises(PolicyError, match="time_bank must be a finite number"):
            RefereePolicy(time_bank=bad)
    entrants = [{"name": n, "command": ["x"]} for n in "abc"]
    cfg = TournamentConfig.from_dict(
        {"tournament": {"players": 3, "time_bank": 4}, "entrant": entrants}
    )
    assert cfg.time_bank == 4
    with pytest.raises(TournamentError, match="time_bank"):
        TournamentConfig.from_dict(
            {"tournament": {"players": 3, "time_bank": -2}, "entrant": entrants}
        )


# -- 4. limits ---------------------------------------------------------------------------------


def open_count(server: ServerThread) -> int:
    arena = server.arena
    assert arena is not None
    return int(server.call(lambda: len(arena.connections)))


@on_mock_clock
async def test_max_connections() -> None:
    async with memory_arena(max_connections=2) as arena, trio.open_nursery() as n:
        a, b, c = MemBot("a", games=None), MemBot("b", games=None), MemBot("c", games=None)
        await start(n, arena, a, b, c)
        await c.done.wait()
        assert c.closed_with == (CloseCode.RESOURCE_EXHAUSTED, "server full: 2 connections at most")
        assert c.received == [] and len(arena.connections) == 2
        a.leave()
        await a.done.wait()
        assert len(arena.connections) == 1
        d = MemBot("d", games=None)
        await start(n, arena, d)
        await wait_until(lambda: d.welcome is not None)
        for bot in (b, d):
            bot.leave()


@pytest.mark.e2e
def test_max_connections_over_grpc(serve: Any) -> None:
    server = serve(max_connections=2)
    a = RawBot(server.address, "a", games=None).start()
    b = RawBot(server.address, "b", games=None).start()
    wait_for(lambda: a.welcome is not None and b.welcome is not None)
    c = RawBot(server.address, "c", games=None).start().join(20)
    assert c.status == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert c.details.startswith("server full") and c.welcome is None
    with pytest.raises(ServerFullError, match="server full"):
        run_bot(Dropper(lambda: None), server.address, games=1)
    a.close_send()
    a.join(20)
    wait_for(lambda: open_count(server) < 2)
    d = RawBot(server.address, "d", games=None).start()
    wait_for(lambda: d.welcome is not None)
    for bot in (b, d):
        bot.close_send()
        bot.join(20)


@on_mock_clock
async def test_max_sessions_per_token() -> None:
    limits = {"tokens": frozenset({"one", "two"}), "max_sessions_per_token": 1}
    async with memory_arena(**limits) as arena, trio.open_nursery() as n:
        first = MemBot("first", token="one", games=None)
        again = MemBot("again", token="one", games=None)
        other = MemBot("other", token="two", games=None)
        await start(n, arena, first, again, other)
        await again.done.wait()
        assert again.closed_with == (
            CloseCode.RESOURCE_EXHAUSTED,
            "too many sessions with this access token (1 at most)",
        )
        await wait_until(lambda: other.welcome is not None)
        first.leave()
        await first.done.wait()
        assert not [s for s in arena.sessions.values() if s.hello.token == "one"]
        later = MemBot("later", token="one", games=None)
        await start(n, arena, later)
        await wait_until(lambda: later.welcome is not None)
        for bot in (other, later):
            bot.leave()


def test_limit_settings() -> None:
    args = serve_args(
        "--max-connections", "50", "--max-sessions-per-token", "2", "--max-message-bytes", "4096"
    )
    assert (args.max_connections, args.max_sessions_per_token, args.max_message_bytes) == (
        50,
        2,
        4096,
    )
    plain = serve_args()
    assert (plain.max_connections, plain.max_sessions_per_token) == (0, 0)
    assert (plain.reseat_delay, serve_args("--reseat-delay", "0").reseat_delay) == (0.5, 0.0)
    assert plain.reseat_delay == RefereePolicy().reseat_delay
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="reseat_delay"):
            RefereePolicy(reseat_delay=bad)
    assert plain.max_message_bytes == 64 * 1024
    with pytest.raises(ValueError, match="max_connections must not be negative"):
        ArenaConfig.build(max_connections=-1)
    with pytest.raises(ValueError, match="max_sessions_per_token must not be negative"):
        RefereePolicy(max_sessions_per_token=-1)
    # serve's flags make the policy, and nothing else does
    policy = RefereePolicy.from_mapping(vars(args))
    assert (policy.max_connections, policy.max_sessions_per_token) == (50, 2)
    assert policy.max_message_bytes == 4096
    assert RefereePolicy.from_mapping(vars(plain)) == RefereePolicy()
    entrants = [{"name": n, "command": ["x"]} for n in "abc"]
    cfg = TournamentConfig.from_dict(
        {
            "tournament": {
                "players": 3,
                "max_connections": 10,
                "max_sessions_per_token": 1,
                "max_message_bytes": 8192,
            },
            "entrant": entrants,
        }
    )
    assert (cfg.max_connections, cfg.max_sessions_per_token, cfg.max_message_bytes) == (
        10,
        1,
        8192,
    )
    with pytest.raises(TournamentError, match="max_message_bytes"):
        TournamentConfig.from_dict(
            {"tournament": {"players": 3, "max_message_bytes": 0}, "entrant": entrants}
        )


@pytest.mark.e2e
def test_a_tournament_records_a_launched_bot_that_dies_as_crash(tmp_path: Path) -> None:
    bot = [sys.executable, "-m", "wizard_arena.cli", "bot"]
    common = ["--server", "{server}", "--token", "{token}", "--name", "{name}", "--quiet"]
    marker = tmp_path / "crashed"
    entrants = [
        {
            "name": "crashy",
            "command": [
                *bot,
                "tests.bots.crash_bot:CrashOnceBot",
                *common,
                "--arg",
                f"marker={marker}",
            ],
        },
        *[
            {"name": f"det-{i}", "command": [*bot, "tests.bots.det_bot:DeterministicBot", *common]}
            for i in range(2)
        ],
    ]
    config = TournamentConfig.from_dict(
        {
            "tournament": {
                "players": 3,
                "move_time": scaled(5.0),
                "round_sizes": [1, 2, 3],
                "database": str(tmp_path / "t.sqlite"),
            },
            "entrant": entrants,
        },
        base=ROOT,
    )
    records: list[GameRecord] = []
    trio.run(lambda: run_tournament(config, on_record=records.append))
    assert marker.exists()
    crashed = [r for r in records if any("crash" in f for f in r.faults)]
    assert len(crashed) == 1
    (rec,) = crashed
    seat = seat_of(rec, "crashy")
    assert rec.faults[seat] == {"crash": 1}
    assert "exited" in rec.fault_details[seat]["crash"]
    assert all("disconnect" not in f for r in records for f in r.faults)
    assert all(r.status == "finished" and verify_record(r) == [] for r in records)

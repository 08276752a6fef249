"""Resilience: resuming a dropped session, graded fault policies, time banks, limits.

The referee's side runs on trio's virtual clock with in-memory seats
(:mod:`tests.memory_bots`); the tests marked ``e2e`` play the same
behaviours over real gRPC, through the SDK where it takes part.
"""

from __future__ import annotations

import threading
from typing import Any

import grpc
import pytest
import trio

from wizard_arena.bot import GameInfo
from wizard_arena.client import RunResult, run_bot, serve_bot
from wizard_arena.protocol.messages import ActionRejected, DecisionRequest, RoundStart, Welcome
from wizard_arena.rules import Bid, Rules
from wizard_referee.hosting.entrants import Instance
from wizard_referee.referee.arena import ArenaConfig
from wizard_referee.referee.policy import PolicyError, RefereePolicy
from wizard_referee.referee.record import GameRecord, MoveRecord, RoundRecord, verify_record
from wizard_referee.referee.seat import CloseCode
from wizard_referee.tournament.runner import (
    EntrantConfig,
    TournamentConfig,
    TournamentError,
    relabel_crashes,
)

from .memory_bots import (
    MemBot,
    leave_at,
    memory_arena,
    on_mock_clock,
    play,
    start,
    wait_until,
)
from .resilience import SHORT, SHORT_OK, Dropper, serve_args
from .support import RawBot, moves_of, run_bots, scaled, seat_of

#: The ``serve`` fixture's defaults here (conftest.py): tables of 3.
SERVER_DEFAULTS = {"rules": Rules(players=3)}


# -- 1. resuming a dropped session -----------------------------------------------------------


@on_mock_clock
async def test_welcome_carries_a_secret_resume_token() -> None:
    async with memory_arena(tokens=frozenset({"access-1"})) as arena, trio.open_nursery() as n:
        a, b = MemBot("a", token="access-1", games=None), MemBot("b", token="access-1", games=None)
        await start(n, arena, a, b)
        await wait_until(lambda: a.welcome is not None and b.welcome is not None)
        assert a.welcome and b.welcome
        assert len(a.welcome.resume_token) >= 24 and a.welcome.resume_token != "access-1"
        assert a.welcome.resume_token != b.welcome.resume_token
        assert not a.welcome.resumed
        a.leave()
        b.leave()
    async with memory_arena(reconnect_window=0) as off, trio.open_nursery() as n:
        c = MemBot("c", games=None)
        await start(n, off, c)
        await wait_until(lambda: c.welcome is not None)
        assert c.welcome and c.welcome.resume_token == ""
        c.leave()


@on_mock_clock
async def test_drop_mid_game_and_resume() -> None:
    async with memory_arena() as arena, trio.open_nursery() as n:
        leaver = MemBot("leaver", on_request=leave_at(3))
        others = [MemBot(f"o{i}") for i in range(2)]
        await start(n, arena, leaver, *others)
        await leaver.done.wait()
        assert leaver.end is not None and leaver.end.cancelled
        welcome = leaver.welcome
        assert welcome is not None and leaver.info is not None
        back = MemBot("leaver", resume_token=welcome.resume_token)
        await start(n, arena, back)
    assert back.closed_with == (CloseCode.OK, "")
    (again,) = back.messages(Welcome)
    assert again.resumed and again.session_id == welcome.session_id
    assert again.resume_token == welcome.resume_token
    # the game in progress is sent again: GameStarted, then the round from the seat's view
    first = back.received[1:3]
    assert isinstance(first[0], GameInfo) and first[0].game_id == leaver.info.game_id
    assert first[0].seat == leaver.info.seat
    assert isinstance(first[1], RoundStart)
    (rec,) = arena.records
    assert rec.status == "finished" and verify_record(rec) == []
    seat = seat_of(rec, "leaver")
    assert rec.faults[seat] == {"disconnect": 1}
    mine = moves_of(rec, seat)
    # answered before the drop, then (perhaps) defaults, then its own moves again
    assert [mv.fault for mv in mine[:2]] == [None, None]
    later = mine[2:]
    own_again = [i for i, mv in enumerate(later) if mv.fault is None]
    assert own_again, "the resumed bot made no move of its own"
    assert all(mv.fault is None for mv in later[own_again[0] :])
    assert len(back.requests) == len(later) - own_again[0]
    assert back.game_ends and back.game_ends[0].game_id == rec.game_id
    assert [(f.seat, f.code) for f in back.game_ends[0].faults] == [(seat, "disconnect")]


@on_mock_clock
async def test_resume_while_the_old_stream_is_still_open_takes_over() -> None:
    hold = trio.Event()

    async def stall(bot: MemBot, req: DecisionRequest) -> bool:
        if len(bot.requests) >= 2:
            hold.set()  # do not answer: the request stays open
            return True
        return False

    async with memory_arena() as arena, trio.open_nursery() as n:
        old = MemBot("twin", on_request=stall, games=None)
        await start(n, arena, old, *[MemBot(f"t{i}") for i in range(2)])
        await hold.wait()
        await trio.sleep(1.0)  # (virtual) time passes: the request has 4 s left
        pending = old.requests[-1]
        assert old.welcome is not None
        new = MemBot("twin", resume_token=old.welcome.resume_token)
        await start(n, arena, new)
    assert old.closed_with == (CloseCode.UNAVAILABLE, "the session was resumed on another stream")
    # the open request is sent again, same id, with the time left
    req = new.requests[0]
    assert req.request_id == pending.request_id
    assert req.view.time_left == pytest.approx(arena.config.policy.move_time - 1.0)
    (rec,) = arena.records
    seat = seat_of(rec, "twin")
    assert rec.faults[seat] == {"disconnect": 1}
    assert rec.fault_details[seat] == {"disconnect": "resumed on a new stream"}
    assert all(mv.fault is None for mv in moves_of(rec, seat))


@on_mock_clock
async def test_resume_after_the_window_starts_a_new_session() -> None:
    async with memory_arena(reconnect_window=0.2) as arena, trio.open_nursery() as n:
        leaver = MemBot("late", on_request=leave_at(2))
        others = [MemBot(f"w{i}", think=0.1) for i in range(2)]
        await start(n, arena, leaver, *others)
        await leaver.done.wait()
        await trio.sleep(0.3)  # past the window, with the game still on
        assert len(arena.records) == 0 and leaver.welcome is not None
        back = MemBot("late", resume_token=leaver.welcome.resume_token, games=None)
        await start(n, arena, back)
        await wait_until(lambda: back.welcome is not None)
        assert back.welcome is not None and not back.welcome.resumed
        assert back.welcome.session_id != leaver.welcome.session_id
        assert back.welcome.resume_token not in ("", leaver.welcome.resume_token)
        for b in others:
            await b.done.wait()
        back.leave()
    (rec,) = arena.records
    seat = seat_of(rec, "late")
    mine = moves_of(rec, seat)
    assert rec.faults[seat] == {"disconnect": 1}
    assert mine[0].fault is None and all(mv.fault == "disconnect" for mv in mine[1:])
    assert [type(m) for m in back.received] == [Welcome]


@on_mock_clock
async def test_a_resume_within_the_window_but_after_the_game_starts_a_new_session() -> None:
    async with memory_arena(reconnect_window=60) as arena, trio.open_nursery() as n:
        leaver = MemBot("gone", on_request=leave_at(2))
        await play(arena, leaver, MemBot("x0"), MemBot("x1"))
        assert leaver.welcome is not None and len(arena.records) == 1
        back = MemBot("gone", resume_token=leaver.welcome.resume_token, games=None)
        await start(n, arena, back)
        await wait_until(lambda: back.welcome is not None)
        assert back.welcome is not None and not back.welcome.resumed
        # the token of a session that has gone for good is not kept
        assert len(arena.resume_tokens) == 1  # (the new session's)
        back.leave()


@on_mock_clock
async def test_a_wrong_resume_token_is_refused() -> None:
    async with memory_arena() as arena:
        bot = MemBot("forger", resume_token="not-a-token-of-this-server")
        await play(arena, bot)
    assert bot.closed_with == (CloseCode.FAILED_PRECONDITION, "unknown resume token")
    assert bot.welcome is None


@on_mock_clock
async def test_a_resume_token_is_bound_to_its_access_token() -> None:
    tokens = frozenset({"alpha", "beta"})
    async with memory_arena(tokens=tokens, reconnect_window=30) as arena, trio.open_nursery() as n:
        leaver = MemBot("victim", token="alpha", on_request=leave_at(2))
        others = [MemBot(f"b{i}", token="alpha") for i in range(2)]
        await start(n, arena, leaver, *others)
        await leaver.done.wait()
        assert leaver.welcome is not None
        thief = MemBot("thief", token="beta", resume_token=leaver.welcome.resume_token, games=None)
        await start(n, arena, thief)
        await wait_until(lambda: thief.welcome is not None)
        assert thief.welcome is not None and not thief.welcome.resumed
        thief.leave()
    (rec,) = arena.records
    assert all(mv.fault == "disconnect" for mv in moves_of(rec, seat_of(rec, "victim"))[1:])


@pytest.mark.e2e
@pytest.mark.parametrize("sdk", ["blocking", "trio"])
def test_the_sdk_resumes_its_seat(serve: Any, sdk: str) -> None:
    """run_bot and serve_bot both take their seat back after a dropped stream."""
    server = serve()
    arena = server.arena
    assert arena is not None

    def cut() -> None:
        def close() -> None:
            for s in arena.sessions.values():
                if s.name == "dropper":
                    s.conn.close(CloseCode.UNAVAILABLE, "cut by the test")

        server.call(close)

    box: list[RunResult | BaseException] = []

    def go() -> None:
        try:
            if sdk == "trio":
                box.append(trio.run(lambda: serve_bot(Dropper(cut), server.address, games=1)))
            else:
                box.append(run_bot(Dropper(cut), server.address, games=1))
        except BaseException as e:  # pragma: no cover - reported below
            box.append(e)

    t = threading.Thread(target=go, daemon=True)
    t.start()
    others = run_bots([RawBot(server.address, f"r{i}") for i in range(2)], timeout=scaled(60))
    t.join(60)
    (res,) = box
    assert isinstance(res, RunResult), res
    assert res.reconnects == 1 and len(res.games) == 1
    assert res.welcome is not None and res.welcome.resumed
    (rec,) = server.wait_records(1)
    seat = seat_of(rec, "dropper")
    assert rec.faults[seat] == {"disconnect": 1}
    mine = [mv for rnd in rec.rounds for mv in rnd.moves if mv.seat == seat]
    assert mine[-1].fault is None  # its own moves again after the drop
    assert res.games[0].game_id == rec.game_id
    assert all(b.status == grpc.StatusCode.OK for b in others)


def test_reconnect_window_settings() -> None:
    assert serve_args("--reconnect-window", "5").reconnect_window == 5.0
    assert serve_args().reconnect_window == 30.0
    entrants = [{"name": n, "command": ["x"]} for n in "abc"]
    cfg = TournamentConfig.from_dict(
        {"tournament": {"players": 3, "reconnect_window": 2.5}, "entrant": entrants}
    )
    assert cfg.reconnect_window == 2.5
    with pytest.raises(TournamentError, match="reconnect_window"):
        TournamentConfig.from_dict(
            {"tournament": {"players": 3, "reconnect_window": -1}, "entrant": entrants}
        )


# -- 2. graded fault policy ------------------------------------------------------------------


def bad_bid_in(rounds: set[int], times: int = 1) -> Any:
    """An on_request hook: in ``rounds`` the first ``times`` answers to the
    bid request are out of range (an illegal bid), then a legal one."""

    def bad(bot: Any, req: DecisionRequest) -> bool:
        v = req.view
        if v.round in rounds and v.legal_bids:
            sent = bot.state.setdefault(req.request_id, 0)
            if sent < times:
                bot.state[req.request_id] = sent + 1
                bot.send_action(req.request_id, Bid(v.cards_per_player + 1))
                return True
        return False

    async def hook(bot: MemBot, req: DecisionRequest) -> bool:
        return bad(bot, req)

    hook.raw = bad  # type: ignore[attr-defined]  (the same, for a RawBot)
    return hook


def resend_on_reject(bot: Any, msg: Any) -> None:
    if isinstance(msg, ActionRejected) and msg.time_left > 0:
        req = next(r for r in bot.requests if r.request_id == msg.request_id)
        bot.send_action(req.request_id, bot.random_action(req))


async def resend_on_reject_async(bot: MemBot, msg: Any) -> None:
    resend_on_reject(bot, msg)


def from_first_bid(moves: list[MoveRecord]) -> tuple[list[MoveRecord], list[MoveRecord]]:
    """A seat's moves of one round, split at its bid: the deal is random, and a
    turned Wizard gives the dealer a trump choice before it bids."""
    k = next(i for i, mv in enumerate(moves) if mv.action.startswith("bid"))
    return moves[:k], moves[k:]


def check_forfeit_of_round_2(rec: GameRecord, seat: int, end_totals: list[int]) -> None:
    """The seat forfeited round 2 for an illegal bid, and only that round."""
    assert rec.status == "finished" and verify_record(rec) == []
    assert rec.fault_policy == "forfeit_round"
    assert rec.faults[seat] == {"illegal": 1}
    by_round = {rr.round: [mv for mv in rr.moves if mv.seat == seat] for rr in rec.rounds}
    # round 2: the faulted bid and every later decision of the round are the default's
    before, after = from_first_bid(by_round[2])
    assert after and all(mv.fault == "forfeit_round" for mv in after)
    assert all(mv.fault is None for mv in before)
    assert all(mv.fault is None for r, mvs in by_round.items() if r != 2 for mv in mvs)
    points = rec.results[1][2][seat]
    assert rec.penalties == [
        {"round": 2, "seat": seat, "points": -10 * 2 - points, "reason": "forfeit_round"}
    ]
    core_totals = rec.results[-1][3]
    want = [t + (-20 - points if s == seat else 0) for s, t in enumerate(core_totals)]
    assert rec.totals == want == end_totals


@on_mock_clock
async def test_fault_policy_forfeit_round() -> None:
    async with memory_arena(fault_policy="forfeit_round") as arena:
        bad = MemBot("bad", on_request=bad_bid_in({2}), on_message=resend_on_reject_async)
        (rec,) = await play(arena, bad, MemBot("f0"), MemBot("f1"))
    (end,) = bad.game_ends
    check_forfeit_of_round_2(rec, seat_of(rec, "bad"), list(end.totals))
    assert list(end.ranks) == rec.ranks


@pytest.mark.e2e
def test_fault_policy_forfeit_round_over_grpc(serve: Any) -> None:
    server = serve(fault_policy="forfeit_round", rules=SHORT)
    hook = bad_bid_in({2}).raw
    bad = RawBot(server.address, "bad", on_request=hook, on_message=resend_on_reject, **SHORT_OK)
    run_bots([bad, *[RawBot(server.address, f"f{i}", **SHORT_OK) for i in range(2)]])
    (rec,) = server.wait_records(1)
    (end,) = bad.game_ends
    check_forfeit_of_round_2(rec, seat_of(rec, "bad"), list(end.totals))
    assert list(end.ranks) == rec.ranks


@on_mock_clock
async def test_a_fault_found_by_the_reader_forfeits_the_open_decision() -> None:
    async def wrong_id_first(bot: MemBot, req: DecisionRequest) -> bool:
        if req.view.round == 2 and req.view.legal_bids:
            # a wrong request id (a malformed fault, found by the reader), then the answer
            bot.send_action("no-such-request", Bid(0))
            bot.send_action(req.request_id, bot.random_action(req))
            return True
        return False

    async with memory_arena(fault_policy="forfeit_round") as arena:
        bad = MemBot("bad", on_request=wrong_id_first)
        (rec,) = await play(arena, bad, MemBot("m0"), MemBot("m1"))
    assert rec.status == "finished" and verify_record(rec) == []
    seat = seat_of(rec, "bad")
    assert rec.faults[seat] == {"malformed": 1}
    before, after = from_first_bid([mv for mv in rec.rounds[1].moves if mv.seat == seat])
    assert after and all(mv.fault == "forfeit_round" for mv in after)
    assert all(mv.fault is None for mv in before)
    assert [p["round"] for p in rec.penalties] == [2]
    # the answer that came after the fault was late: ignored, not rejected
    assert [r.code for r in bad.rejections] == ["unknown_request"]


@on_mock_clock
async def test_a_timeout_forfeits_the_round_and_costs_nothing_more_in_it() -> None:
    async def silent_in_round_3(bot: MemBot, req: DecisionRequest) -> bool:
        return req.view.round == 3  # never answers in round 3

    async with memory_arena(fault_policy="forfeit_round", move_time=2.0) as arena:
        quiet = MemBot("quiet", on_request=silent_in_round_3)
        (rec,) = await play(arena, quiet, MemBot("q0"), MemBot("q1"))
    seat = seat_of(rec, "quiet")
    assert rec.faults[seat] == {"timeout": 1}
    mine = [mv for mv in rec.rounds[2].moves if mv.seat == seat]
    assert mine[0].fault == "timeout" and mine[0].ms == 2000.0
    assert mine[1:] and all(mv.fault == "forfeit_round" and mv.ms == 0 for mv in mine[1:])
    assert [r.view.round for r in quiet.requests].count(3) == 1
    assert [p["round"] for p in rec.penalties] == [3]


@on_mock_clock
async def test_fault_policy_remove_after_k_faults() -> None:
    async with memory_arena(fault_policy="remove", max_faults=2) as arena:
        hook = bad_bid_in({1, 2, 3, 4})
        bad = MemBot("bad", on_request=hook, on_message=resend_on_reject_async)
        (rec,) = await play(arena, bad, MemBot("k0"), MemBot("k1"))
    assert rec.status == "finished" and verify_record(rec) == []
    seat = seat_of(rec, "bad")
    assert rec.faults[seat] == {"illegal": 2}
    assert rec.removed[seat] == 2 and [r for s, r in enumerate(rec.removed) if s != seat] == [
        None,
        None,
    ]
    mine = [(rr.round, mv) for rr in rec.rounds for mv in rr.moves if mv.seat == seat]
    # round 1: its own moves; from the second fault (the bid of round 2) the default's
    assert all(mv.fault is None for r, mv in mine if r == 1)
    before, after = from_first_bid([mv for r, mv in mine if r == 2])
    assert all(mv.fault is None for mv in before)
    assert after and all(mv.fault == "removed" for mv in after)
    assert all(mv.fault == "removed" for r, mv in mine if r >= 3)
    # no request was sent to it after its removal
    assert max(r.view.round for r in bad.requests) == 2
    assert bad.game_ends and rec.penalties == []


@on_mock_clock
async def test_a_removed_seat_is_not_faulted_again() -> None:
    async def mute(bot: MemBot, req: DecisionRequest) -> bool:
        return True

    async with memory_arena(fault_policy="remove", max_faults=1, move_time=1.0) as arena:
        gone = MemBot("gone", on_request=mute)
        (rec,) = await play(arena, gone, MemBot("r0"), MemBot("r1"))
    seat = seat_of(rec, "gone")
    assert rec.faults[seat] == {"timeout": 1} and rec.removed[seat] == 1
    mine = moves_of(rec, seat)
    assert mine[0].fault == "timeout" and all(mv.fault == "removed" for mv in mine[1:])
    assert len(gone.requests) == 1
    assert trio.current_time() == pytest.approx(1.0)  # one deadline waited for, no more


def test_fault_policy_settings() -> None:
    with pytest.raises(PolicyError, match="fault_policy must be one of default, forfeit_round"):
        RefereePolicy(fault_policy="expel")
    with pytest.raises(ValueError, match="max_faults"):
        ArenaConfig.build(max_faults=0)
    args = serve_args("--fault-policy", "remove", "--max-faults", "5")
    assert (args.fault_policy, args.max_faults) == ("remove", 5)
    assert (serve_args().fault_policy, serve_args().max_faults) == ("default", 3)
    entrants = [{"name": n, "command": ["x"]} for n in "abc"]
    cfg = TournamentConfig.from_dict(
        {
            "tournament": {"players": 3, "fault_policy": "forfeit_round", "max_faults": 2},
            "entrant": entrants,
        }
    )
    assert (cfg.fault_policy, cfg.max_faults) == ("forfeit_round", 2)
    with pytest.raises(TournamentError, match="fault_policy"):
        TournamentConfig.from_dict(
            {"tournament": {"players": 3, "fault_policy": "expel"}, "entrant": entrants}
        )


class _Proc:
    def __init__(self, code: int | None) -> None:
        self.code = code

    def poll(self) -> int | None:
        return self.code


def test_a_launched_bot_that_exits_is_faulted_crash() -> None:
    rec = GameRecord("g", {}, ["a", "b", "c"], 1, 0, 0.0)
    rec.faults = [{"disconnect": 1}, {"disconnect": 1, "timeout": 2}, {"disconnect": 1}]
    rec.fault_details = [{"disconnect": "gone"}, {"disconnect": "gone"}, {"disconnect": "x"}]
    rec.rounds = [RoundRecord(1, 0, [], None, [MoveRecord(0, "bid 0", 0.0, "disconnect")])]
    exited = Instance(EntrantConfig("a", ("x",), None), 0, "t", proc=_Proc(1))
    restarted = Instance(EntrantConfig("b", ("x",), None), 0, "u", restarts=1, proc=_Proc(None))
    running = Instance(EntrantConfig("c", ("x",), None), 0, "v", proc=_Proc(None))
    relabel_crashes(rec, [exited, restarted, running], [0, 0, 0])
    assert rec.faults == [{"crash": 1}, {"crash": 1, "timeout": 2}, {"disconnect": 1}]
    assert rec.fault_details[0] == {"crash": "the bot's process exited (gone)"}
    assert rec.rounds[0].moves[0].fault == "crash"
    # an external bot (no instance) keeps its disconnect
    rec2 = GameRecord("g", {}, ["a"], 1, 0, 0.0, faults=[{"disconnect": 1}])
    rec2.fault_details = [{}]
    relabel_crashes(rec2, [None], [0])
    assert rec2.faults == [{"disconnect": 1}]

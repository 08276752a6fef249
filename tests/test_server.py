"""The referee server: over real gRPC on loopback, and on trio's virtual clock.

The tests marked ``e2e`` run :func:`serve_arena` (in trio, in a background
thread: see ``tests/support.py``) on 127.0.0.1 with port 0 and talk to it
with scripted raw clients; no test asserts on timing. Deadlines are tested
on trio's virtual clock with in-memory seats (:mod:`tests.memory_bots`).
"""

from __future__ import annotations

import functools
from collections import Counter
from typing import Any

import grpc
import pytest
import trio

from wizard_arena.bot import GameInfo
from wizard_arena.protocol import wire
from wizard_arena.protocol.messages import (
    ActionRejected,
    DecisionRequest,
    RoundStart,
    TableEvent,
)
from wizard_arena.rules import (
    FULL_DECK,
    Bid,
    BidMade,
    Card,
    ChooseTrump,
    Phase,
    Play,
    Rules,
    Suit,
    default_action,
    suit_to_follow,
)
from wizard_referee.referee.faults import FAULT_CODES
from wizard_referee.referee.record import GameRecord, verify_record
from wizard_referee.referee.seat import CloseCode

from .memory_bots import MemBot, memory_arena, on_mock_clock, play
from .support import (
    RawBot,
    check_information,
    game_of,
    record_of,
    replay,
    run_bots,
    scaled,
    seat_of,
    spawn_aio_bots,
)

pytestmark = pytest.mark.timeout(120)


# -- fixtures ---------------------------------------------------------------------------


# -- full games -------------------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_full_game(serve: Any, players: int) -> None:
    server = serve(rules=Rules(players=players), seed=players)
    bots = run_bots([RawBot(server.address, f"p{players}-{i}") for i in range(players)])
    gid = game_of(bots[0])
    assert {game_of(b) for b in bots} == {gid}
    rec = record_of(server, gid)
    assert rec.status == "finished"
    assert verify_record(rec) == []
    assert rec.faulted_seats == []
    assert len(rec.rounds) == Rules(players=players).rounds
    assert sorted(rec.names) == sorted(b.name for b in bots)
    for b in bots:
        assert b.status == grpc.StatusCode.OK
        assert b.welcome is not None and b.welcome.version == 1
        info = b.messages(GameInfo)[0]
        assert info.names == tuple(rec.names) and rec.names[info.seat] == b.name
        assert info.move_time == server.config.policy.move_time
        end = b.game_ends[0]
        assert list(end.totals) == rec.totals and list(end.ranks) == rec.ranks
        assert end.faults == ()
        assert b.rejections == []
        # every decision of this seat came to it, and only to it
        seat = info.seat
        moves = [m for rr in rec.rounds for m in rr.moves if m.seat == seat]
        assert len([r for r in b.requests if r.game_id == gid]) == len(moves)
        check_information(b, rec)
    assert GameRecord.from_json(rec.to_json()) == rec


@pytest.mark.e2e
def test_information_never_leaks(serve: Any) -> None:
    """Each seat records every message of a whole game; no card of another
    seat's hand may appear in any of them before it is played."""
    server = serve(rules=Rules(players=3), seed=11)
    bots = run_bots([RawBot(server.address, f"info-{i}") for i in range(3)])
    rec = record_of(server, game_of(bots[0]))
    assert rec.status == "finished"
    for b in bots:
        check_information(b, rec)
    # the check does catch a leak: show seat 0 a card from seat 1's first hand
    b = bots[0]
    seat = b.messages(GameInfo)[0].seat
    other = rec.rounds[-1].hands[(seat + 1) % 3]
    mine = set(rec.rounds[-1].hands[seat])
    secret = next(c for c in other if c not in mine and c != rec.rounds[-1].turned_card)
    last_start = max(
        i
        for i, r in enumerate(b.received)
        if isinstance(r.msg, RoundStart) and r.msg.game_id == rec.game_id
    )
    fake = type(b.received[last_start].raw)()
    fake.CopyFrom(b.received[last_start].raw)
    fake.round_started.your_hand[0].CopyFrom(wire.card_to_pb(Card(secret)))
    b.received[last_start].raw = fake
    with pytest.raises(AssertionError, match="before it was played"):
        check_information(b, rec)


@pytest.mark.slow(seconds=5)
@pytest.mark.e2e
def test_sixteen_tables_at_once(serve: Any) -> None:
    """64 random bots (grpc.aio, in a process of their own) at 16 tables of 4
    (games of eight rounds, 1 to 8 cards: the full 15 take three times as long)."""
    server = serve(rules=Rules(players=4, hand_sizes=tuple(range(1, 9))))
    bots = spawn_aio_bots(server.address, 64, "m")
    games = {b["games"][0] for b in bots}
    assert len(games) == 16
    for gid in games:
        rec = record_of(server, gid)
        assert rec.status == "finished", rec.error
        assert rec.faulted_seats == []
        assert verify_record(rec) == []
    for b in bots:
        assert b["status"] == "OK", b
        assert b["ends"] == b["games"][:1] and b["faults"] == []


# -- deadlines --------------------------------------------------------------------------


@on_mock_clock
async def test_slow_bot_gets_default_moves() -> None:
    slow_at = {2, 5}  # think past the deadline on these decisions (1-based)

    async def slow(bot: MemBot, req: DecisionRequest) -> bool:
        n = bot.state["n"] = bot.state.get("n", 0) + 1
        if n in slow_at:
            await trio.sleep(1.5)
            bot.send_action(req.request_id, bot.random_action(req))  # late: ignored
            return True
        return False

    async with memory_arena(rules=Rules(players=6), move_time=1.0) as arena:
        bots = [MemBot(f"s{i}") for i in range(5)]
        bots.append(MemBot("slow", on_request=slow))
        (rec,) = await play(arena, *bots)
    assert rec.status == "finished" and verify_record(rec) == []
    seat = seat_of(rec, "slow")
    assert rec.faults[seat] == {"timeout": len(slow_at)}  # the late answers were not faulted
    mine = [snap for snap in replay(rec) if snap.mv.seat == seat]
    for k, snap in enumerate(mine, 1):
        if k in slow_at:
            assert snap.mv.fault == "timeout" and snap.mv.ms == 1000.0
            assert snap.mv.action == _text(default_action(snap.legal))
        else:
            assert snap.mv.fault is None
    assert bots[-1].closed_with == (CloseCode.OK, "") and bots[-1].rejections == []
    end = bots[0].game_ends[0]
    assert [(f.seat, f.code, f.count) for f in end.faults] == [(seat, "timeout", 2)]
    assert "timeout" in FAULT_CODES


def _text(action: Any) -> str:
    from wizard_arena.rules import action_text

    return str(action_text(action))


# -- illegal, out-of-turn and wrong-id actions ----------------------------------------------


def _cheat(tried: Counter[str], bot: RawBot, req: DecisionRequest) -> bool:
    """Each kind of rejected action once (``tried`` counts them), answering
    ``req`` with it; False when none fits this request."""
    v = req.view
    rid = req.request_id
    done = bot.state.setdefault("done", set())
    if v.phase is Phase.BID and "bid" not in done:
        done.add("bid")
        bot.send_action(rid, Bid(v.cards_per_player + 1))
        tried["bid_out_of_range"] += 1
    elif v.phase is Phase.PLAY and "card" not in done:
        done.add("card")
        bot.send_action(rid, Play(next(c for c in FULL_DECK if c not in v.hand)))
        tried["card_not_in_hand"] += 1
    elif v.phase is Phase.PLAY and "follow" not in done:
        follow = suit_to_follow(v.trick)
        off = [c for c in v.hand if c.suit is not None and c.suit is not follow]
        if follow is None or not off or follow not in {c.suit for c in v.hand}:
            return False
        done.add("follow")
        bot.send_action(rid, Play(off[0]))
        tried["must_follow_suit"] += 1
    elif "wrong_id" not in done:
        done.add("wrong_id")
        bot.send_action("no-such-request", bot.random_action(req))
        tried["unknown_request"] += 1
    elif "empty" not in done:
        done.add("empty")
        bot.send_action(rid, None)
        tried["malformed"] += 1
    elif v.phase is Phase.PLAY and "trump" not in done:
        done.add("trump")
        bot.send_action(rid, ChooseTrump(Suit.HEARTS))
        tried["trump_choice_not_allowed"] += 1
    elif v.phase is Phase.PLAY and "bid_in_play" not in done:
        done.add("bid_in_play")
        bot.send_action(rid, Bid(0))
        tried["wrong_phase"] += 1
    else:
        return False
    bot.state.setdefault("pending", []).append(req)
    return True


@pytest.mark.e2e
def test_rejected_actions_are_recorded_and_can_be_retried(serve: Any) -> None:
    server = serve(rules=Rules(players=6), seed=5)
    tried: Counter[str] = Counter()

    def retry(bot: RawBot, msg: Any) -> None:
        if isinstance(msg, ActionRejected) and bot.state.get("pending"):
            req = bot.state["pending"].pop()
            assert msg.time_left > 0, msg
            bot.send_action(req.request_id, bot.random_action(req))
        elif _own_bid(bot, msg) and not bot.state.get("out_of_turn"):
            # our bid went in: nothing is open for us now, so act out of turn
            bot.state["out_of_turn"] = True
            bot.send_action("out-of-turn", Bid(0))
            tried["not_your_turn"] += 1

    # the others think in round 1, while the cheat acts out of turn
    def think(req: DecisionRequest) -> float:
        return 0.05 if req.view.round == 1 else 0.0

    bots = [RawBot(server.address, f"h{i}", think=think) for i in range(5)]
    cheat = functools.partial(_cheat, tried)
    bots.append(RawBot(server.address, "cheat", on_request=cheat, on_message=retry))
    run_bots(bots, timeout=scaled(60))
    cheater = bots[-1]
    rec = record_of(server, game_of(cheater))
    assert rec.status == "finished" and verify_record(rec) == []
    seat = seat_of(rec, "cheat")
    got = Counter(r.code for r in cheater.rejections)
    assert got == tried, (got, tried)
    assert {"bid_out_of_range", "card_not_in_hand", "unknown_request", "not_your_turn"} <= set(got)
    for r in cheater.rejections:
        assert r.game_id == rec.game_id
        assert f"seat {seat}" in r.message
    wrong = next(r for r in cheater.rejections if r.code == "unknown_request")
    assert wrong.request_id == "no-such-request" and "not the open request" in wrong.message
    illegal = sum(tried[k] for k in tried if k not in ("unknown_request", "malformed"))
    assert rec.faults[seat] == {
        "illegal": illegal,
        "malformed": tried["unknown_request"] + tried["malformed"],
    }
    # every retry was in time: no move of the cheat was played by the referee
    assert all(mv.fault is None for rr in rec.rounds for mv in rr.moves)
    assert cheater.status == grpc.StatusCode.OK
    assert any(f.seat == seat and f.code == "illegal" for f in cheater.game_ends[0].faults)
    # the others were told nothing about the cheat's rejections
    for b in bots[:-1]:
        assert b.rejections == []


def _own_bid(bot: RawBot, msg: Any) -> bool:
    """Whether ``msg`` is the news of ``bot``'s own bid."""
    return (
        isinstance(msg, TableEvent)
        and isinstance(msg.event, BidMade)
        and bot.info is not None
        and msg.event.seat == bot.info.seat
    )

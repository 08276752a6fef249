"""The in-memory transport's own part (a bot that does not read, an abrupt
disconnect), and the table sees an in-memory seat's faults as it sees a
gRPC stream's. What it shares with the gRPC stream (the seat contract) is
tested on both in test_seat_contract.py."""

from __future__ import annotations

import pytest
import trio

from wizard_arena.protocol.messages import DecisionRequest, Welcome
from wizard_arena.rules import Bid
from wizard_referee.referee.memory import MemorySeat, connect
from wizard_referee.referee.policy import RefereePolicy
from wizard_referee.referee.seat import CloseCode

from .memory_bots import MemBot, memory_arena, on_mock_clock, play, start, wait_until


@on_mock_clock
async def test_a_bot_that_does_not_read_is_cut_off_and_its_messages_dropped() -> None:
    seat = MemorySeat(outbound_limit=2)
    for i in range(3):
        seat.send(Welcome(1, f"s{i}", "0"))
    why = "outbound queue full (2 messages): the bot is not reading what the server sends"
    assert seat.closed and seat.bot.closed_with == (CloseCode.RESOURCE_EXHAUSTED, why)
    with pytest.raises(trio.EndOfChannel):
        await seat.bot.receive()


@on_mock_clock
async def test_a_disconnect_is_abrupt() -> None:
    bot = connect(lambda seat: None, RefereePolicy(inbound_limit=5))
    assert isinstance(bot.seat, MemorySeat) and bot.seat.inbound_limit == 5
    bot.seat.send(Welcome(1, "s1", "0"))
    bot.disconnect()
    assert bot.seat.closed and bot.seat.close_reason == "stream cancelled"
    assert bot.closed_with is None and bot.cancelled
    with pytest.raises(trio.EndOfChannel):
        await bot.receive()  # what was sent before is lost with the connection


@on_mock_clock
async def test_a_flooding_bot_at_a_table_is_faulted_flooding() -> None:
    async def flood(bot: MemBot, req: DecisionRequest) -> bool:
        if req.view.round == 2:
            for _ in range(10):  # in one go: the referee reads nothing meanwhile
                bot.send_action(req.request_id, Bid(99))
            return True
        return False

    async with memory_arena(inbound_limit=4) as arena:
        bad = MemBot("flood", on_request=flood)
        (rec,) = await play(arena, bad, MemBot("f0"), MemBot("f1"))
    seat = rec.names.index("flood")
    why = "inbound queue full (4 messages): the bot sent faster than the referee reads"
    assert rec.faults[seat]["flooding"] == 1
    assert rec.fault_details[seat]["flooding"] == f"closed by server: RESOURCE_EXHAUSTED {why}"
    assert bad.closed_with == (CloseCode.RESOURCE_EXHAUSTED, why)
    # the answers that did arrive were read and refused before the seat was seen to go
    assert set(rec.faults[seat]) == {"flooding", "illegal"}
    assert all(mv.fault in (None, "disconnect") for rr in rec.rounds for mv in rr.moves)


@on_mock_clock
async def test_the_arena_accepts_an_in_memory_seat_as_a_stream() -> None:
    async with memory_arena(hello_timeout=1.0) as arena, trio.open_nursery() as n:
        bot = MemBot("m", games=None)
        await start(n, arena, bot)
        await wait_until(lambda: bot.welcome is not None)
        (session,) = arena.sessions.values()
        assert bot.end is not None and session.conn is bot.end.seat
        assert session.conn in arena.connections
        bot.leave()
    assert len(arena.sessions) == 0 and len(arena.connections) == 0


@on_mock_clock
async def test_a_table_takes_the_answers_by_route_and_lets_go_after_the_game() -> None:
    async with memory_arena() as arena:
        bots = [MemBot(f"r{i}") for i in range(3)]
        (rec,) = await play(arena, *bots)
    assert rec.status == "finished"
    assert all(not mv.fault for rr in rec.rounds for mv in rr.moves)
    moves = sum(len(rr.moves) for rr in rec.rounds)
    # every answer was counted once, beside the three hellos
    assert arena.counters.messages_in == moves + len(bots)
    assert all(b.end is not None and b.end.seat.route is None for b in bots)

"""A table's one alarm ends each waiting decision at its deadline, to the
instant of trio's clock, whatever order the deadlines were set in; a wait
already over, or ended by a fault, is left alone."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
import trio
import trio.testing

from wizard_arena.protocol.messages import ActionMsg, ActionRejected, DecisionRequest
from wizard_arena.rules import Bid, Rules
from wizard_referee.referee.alarm import Alarm
from wizard_referee.referee.pending import Allowance, Pending, Stage

from .memory_bots import MemBot, memory_arena, on_mock_clock, play


@dataclass
class _Seat:
    """The seat state the alarm reads (as the table's), with its answers channel."""

    send_answer: trio.MemorySendChannel[ActionMsg | None]
    answers: trio.MemoryReceiveChannel[ActionMsg | None]
    pending: Pending | None = None
    ended_at: list[float] = field(default_factory=list)

    @classmethod
    def new(cls, buffer: int = 8) -> _Seat:
        send, recv = trio.open_memory_channel[ActionMsg | None](buffer)
        return cls(send, recv)

    def ask(self, rid: str, deadline: float, alarm: Alarm | None = None) -> Pending:
        now = trio.current_time()
        allowance = Allowance(move_time=deadline - now)
        self.pending = Pending(rid, now, allowance, self.send_answer)
        if alarm is not None:
            alarm.asked(deadline)
        return self.pending


async def _wait(seat: _Seat, rid: str, deadline: float, alarm: Alarm) -> None:
    """A decision as the table waits for one: ask, then wait to be woken."""
    pending = seat.ask(rid, deadline, alarm)
    try:
        assert await pending.next_answer(seat.answers) is None
    finally:
        seat.pending = None
        seat.ended_at.append(trio.current_time())


@on_mock_clock
async def test_each_wait_ends_at_its_own_deadline_even_when_an_earlier_one_comes_later() -> None:
    a, b, c = _Seat.new(), _Seat.new(), _Seat.new()
    alarm = Alarm([a, b, c])
    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(alarm.run)
        await trio.sleep(0.5)  # the alarm sleeps with nothing to ring for
        nursery.start_soon(_wait, a, "a-1", start + 9.0, alarm)
        await trio.sleep(1.0)
        # asked later, due earlier: the alarm is moved forward
        nursery.start_soon(_wait, b, "b-1", start + 4.0, alarm)
        nursery.start_soon(_wait, c, "c-1", start + 6.25, alarm)
        await trio.sleep(20)
        nursery.cancel_scope.cancel()
    assert b.ended_at == [start + 4.0]
    assert c.ended_at == [start + 6.25]
    assert a.ended_at == [start + 9.0]


@on_mock_clock
async def test_an_answered_decision_is_not_expired_and_the_next_keeps_its_deadline() -> None:
    seat = _Seat.new()
    alarm = Alarm([seat])
    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(alarm.run)
        # the first decision is answered at once: the alarm stays set for
        # its deadline, 5 s on
        first = seat.ask("r-1", start + 5.0, alarm)
        assert first.offer(ActionMsg("r-1", Bid(0)), arriving=False).value == "taken"
        assert await first.next_answer(seat.answers) == ActionMsg("r-1", Bid(0))
        seat.pending = None
        await trio.sleep(1.0)
        # the second is asked at 1 s and never answered: due at 6 s, later
        # than the alarm, which rings at 5 s for nothing and is set again
        nursery.start_soon(_wait, seat, "r-2", start + 6.0, alarm)
        await trio.sleep(30)
        nursery.cancel_scope.cancel()
    assert seat.ended_at == [start + 6.0]
    assert first.stage is Stage.BUSY  # never expired


@on_mock_clock
async def test_expire_ends_a_wait_at_once_once() -> None:
    seat = _Seat.new(buffer=1)
    alarm = Alarm([seat])
    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(_wait, seat, "r-1", start + 5.0, alarm)
        await trio.sleep(1.0)
        pending = seat.pending
        assert pending is not None
        pending.expire()  # a fault benched the seat
        pending.expire()  # twice: nothing more is sent
        assert pending.stage is Stage.ENDED
    assert seat.ended_at == [start + 1.0]
    assert seat.answers.statistics().current_buffer_used == 0  # one wake-up, taken


@on_mock_clock
async def test_a_full_answers_queue_still_ends_the_wait() -> None:
    seat = _Seat.new(buffer=1)
    seat.send_answer.send_nowait(ActionMsg("r-0", Bid(0)))  # a stale answer fills the queue
    pending = seat.ask("r-1", trio.current_time() + 5.0)
    pending.expire()  # the queue is full: marked, not sent
    assert pending.stage is Stage.ENDED
    assert await pending.next_answer(seat.answers) is None
    assert seat.answers.statistics().current_buffer_used == 1


@on_mock_clock
async def test_an_answer_handed_over_before_the_wait_ended_counts_one_queued_does_not() -> None:
    seat = _Seat.new()
    pending = seat.ask("r-1", trio.current_time() + 5.0)
    answer = ActionMsg("r-1", Bid(1))
    assert pending.offer(answer, arriving=True).value == "not now"  # not parked yet
    got: list[ActionMsg | None] = []

    async def decision() -> None:
        got.append(await pending.next_answer(seat.answers))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(decision)
        await trio.testing.wait_all_tasks_blocked()
        assert pending.stage is Stage.PARKED
        assert pending.offer(answer, arriving=True).value == "taken"  # handed over
        assert pending.stage is Stage.BUSY
        pending.expire()  # before the decision runs: the answer counts
    assert got == [answer]
    # queued while the decision is busy, then the wait ends: not taken
    later = seat.ask("r-2", trio.current_time() + 5.0)
    assert later.offer(ActionMsg("r-2", Bid(1)), arriving=False).value == "taken"
    later.expire()
    assert await later.next_answer(seat.answers) is None


@on_mock_clock
async def test_an_answer_at_the_deadline_or_to_another_request_is_a_stray() -> None:
    seat = _Seat.new()
    pending = seat.ask("r-1", trio.current_time() + 5.0)
    assert pending.offer(ActionMsg("r-0", Bid(1)), arriving=False).value == "stray"
    await trio.sleep(5.0)
    assert pending.time_left() == 0.0
    assert pending.offer(ActionMsg("r-1", Bid(1)), arriving=False).value == "stray"


# -- at a table ----------------------------------------------------------------------------


@on_mock_clock
async def test_an_answer_taken_before_the_deadline_counts_though_the_table_runs_after_it() -> None:
    """A bot answers 1 ms before the deadline; the referee, busy, runs again
    only 1 ms after it (the clock jumps). The answer was handed to the
    waiting decision in time, so it counts (as it did with a cancel scope
    around the wait), whichever of the decision and the alarm trio runs
    first once the deadline has passed (each order comes up in a game)."""

    async def just_in_time(bot: MemBot, req: DecisionRequest) -> bool:
        assert req.view.time_left is not None
        await trio.sleep(req.view.time_left - 0.001)
        bot.send_action(req.request_id, bot.random_action(req))  # to the waiting decision
        clock = trio.lowlevel.current_clock()
        assert isinstance(clock, trio.testing.MockClock)
        clock.jump(0.002)  # the table's next turn comes after the deadline
        return True

    async with memory_arena(move_time=0.3) as arena:
        late = MemBot("just-in-time", on_request=just_in_time)
        (rec,) = await play(arena, late, MemBot("p0"), MemBot("p1"))
    seat = rec.names.index("just-in-time")
    moves = [mv for rnd in rec.rounds for mv in rnd.moves if mv.seat == seat]
    assert len(moves) == len(late.requests) > 20
    assert rec.faults[seat] == {}
    assert all(mv.fault is None and mv.ms == pytest.approx(301.0) for mv in moves)


@on_mock_clock
async def test_hidden_bids_each_wait_to_their_own_deadline_by_their_own_bank() -> None:
    """With hidden bids every seat is asked at once, each under its own
    deadline: the move time plus what is left of its own bank."""

    async def script(bot: MemBot, req: DecisionRequest) -> bool:
        v = req.view
        if not v.legal_bids or v.round > 2:
            return False
        plan = {("a", 1): 0.6, ("a", 2): None, ("b", 2): None, ("c", 2): 1.1}
        if (bot.name, v.round) not in plan:
            return False
        think = plan[bot.name, v.round]
        if think is not None:  # None: never answered
            await trio.sleep(think)
            bot.send_action(req.request_id, bot.random_action(req))
        return True

    async with memory_arena(
        rules=Rules(players=3, hidden_bids=True), move_time=0.3, time_bank=1.0
    ) as arena:
        (rec,) = await play(
            arena,
            *(MemBot(name, on_request=script, rule_options=("hidden_bids",)) for name in "abc"),
        )
    bids = {
        rec.names[mv.seat]: (mv.ms, mv.fault)
        for mv in rec.rounds[1].moves
        if mv.action.startswith("bid")
    }
    # a drew 0.3 s on its bank in the first round (0.7 s left), b and c none
    assert bids == {"a": (1000.0, "timeout"), "b": (1300.0, "timeout"), "c": (1100.0, None)}


@on_mock_clock
async def test_an_answer_at_the_deadline_instant_is_late_whichever_runs_first() -> None:
    """An answer that comes exactly at the deadline is too late, every time
    (as under a cancel scope), though the alarm may not have rung yet: it
    is logged as a late answer, and the move is the default, a timeout."""

    async def at_the_deadline(bot: MemBot, req: DecisionRequest) -> bool:
        assert req.view.time_left is not None
        await trio.sleep(req.view.time_left)
        bot.send_action(req.request_id, bot.random_action(req))
        return True

    async with memory_arena(move_time=0.3, max_consecutive_timeouts=0) as arena:
        late = MemBot("at-the-deadline", on_request=at_the_deadline)
        (rec,) = await play(arena, late, MemBot("p0"), MemBot("p1"))
    seat = rec.names.index("at-the-deadline")
    moves = [mv for rnd in rec.rounds for mv in rnd.moves if mv.seat == seat]
    assert len(moves) == len(late.requests) > 20
    assert all(mv.fault == "timeout" and mv.ms == pytest.approx(300.0) for mv in moves)
    # a late answer is not rejected, only logged
    assert not [m for m in late.received if isinstance(m, ActionRejected)]

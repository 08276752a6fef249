"""The network credit on trio's virtual clock: clock probes, the estimate,
the cap, the deadline it lengthens (hidden bids' too, each its own), the
time bank and rejections without it, a resumed session measured afresh, and
no probe for a bot that did not ask. In-memory seats; a "far" bot is one
whose messages each way wait ``delay`` virtual seconds (:class:`FarBot`)."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from typing import Any

import pytest
import trio

from wizard_arena.protocol.messages import (
    ActionMsg,
    ClockProbe,
    ClockProbeReply,
    DecisionRequest,
    ServerMsg,
)
from wizard_arena.rules import Bid, Rules
from wizard_referee.referee.arena import Arena
from wizard_referee.referee.clock_probes import PROBE_GAP, PROBE_INTERVAL, PROBE_TIMEOUT, WARM_UP
from wizard_referee.referee.record import GameRecord, verify_record
from wizard_referee.referee.round_trips import KERNEL_SLACK, MIN_SAMPLES
from wizard_referee.referee.seat import Malformed

from .memory_bots import MemBot, memory_arena, on_mock_clock, start, wait_until

SHORT = Rules(players=3, hand_sizes=(1, 2))
"""Two rounds: 2 bids and 3 cards for each seat."""


class _Link:
    """One direction of a far bot's network: each message handed over
    ``delay`` after it was put, in order."""

    def __init__(self, delay: float, deliver: Any) -> None:
        self.delay = delay
        self.deliver = deliver
        self._in, self._out = trio.open_memory_channel[tuple[float, Any]](math.inf)

    def put(self, msg: Any, extra: float = 0.0) -> None:
        self._in.send_nowait((trio.current_time() + self.delay + extra, msg))

    async def run(self) -> None:
        async for due, msg in self._out:
            await trio.sleep_until(due)
            self.deliver(msg)


class FarBot(MemBot):
    """A :class:`MemBot` ``delay`` virtual seconds away each way (``up``:
    towards the referee, default ``delay``) that asks for clock probes and
    answers each as it arrives, ``hold`` seconds late (a bot that tries to
    look further away than it is). ``seen`` keeps each message's arrival
    time; ``sent_at`` each action's."""

    def __init__(
        self,
        name: str,
        delay: float,
        *,
        up: float | None = None,
        hold: float = 0.0,
        probes: bool = True,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("rule_options", ("round_sizes", "hidden_bids"))
        super().__init__(name, **kwargs)
        self.hello = replace(self.hello, clock_probes=probes)
        self.down = _Link(delay, self._arrive)
        self.up = _Link(delay if up is None else up, self._to_referee)
        self.hold = hold
        self.seen: list[tuple[float, ServerMsg]] = []
        self.sent_at: list[tuple[float, str]] = []
        self._inbox, self._handled = trio.open_memory_channel[ServerMsg](math.inf)

    async def run(self, arena: Arena, *, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self.up.run)
            nursery.start_soon(self.down.run)
            nursery.start_soon(self._handle_all)
            await nursery.start(super().run, arena)
            task_status.started(self)
            await self.done.wait()
            nursery.cancel_scope.cancel()

    async def _handle(self, msg: ServerMsg) -> None:
        """(MemBot's loop) a message leaves the referee: it arrives later."""
        self.down.put(msg)

    def _arrive(self, msg: ServerMsg) -> None:
        self.seen.append((trio.current_time(), msg))
        if isinstance(msg, ClockProbe):
            self.up.put(ClockProbeReply(msg.id), self.hold)  # answered as it arrives
            return
        self._inbox.send_nowait(msg)

    async def _handle_all(self) -> None:
        async for msg in self._handled:
            await MemBot._handle(self, msg)

    def send(self, msg: Any) -> None:
        if isinstance(msg, ActionMsg):
            self.sent_at.append((trio.current_time(), msg.request_id))
        self.up.put(msg)

    def _to_referee(self, msg: Any) -> None:
        MemBot.send(self, msg)

    # -- what it saw ------------------------------------------------------------------

    def arrivals(self, kind: type) -> list[tuple[float, Any]]:
        return [(t, m) for t, m in self.seen if isinstance(m, kind)]


def clock_of(arena: Arena, bot: MemBot) -> Any:
    (session,) = [s for s in arena.sessions.values() if s.hello.bot_name == bot.name]
    return session.conn.clock


async def warm(arena: Arena, bot: FarBot) -> None:
    """Wait until the bot's connection has the round trips its credit needs."""
    await wait_until(lambda: bool(arena.sessions) and _samples(arena, bot) >= MIN_SAMPLES)


def _samples(arena: Arena, bot: MemBot) -> int:
    sessions = [s for s in arena.sessions.values() if s.hello.bot_name == bot.name]
    return sessions[0].conn.clock.trips.samples if sessions and sessions[0].conn.clock else 0


def never_probed(bot: FarBot) -> None:
    """Its Welcome granted no probes, it received none, and no credit."""
    assert bot.welcome is not None and not bot.welcome.clock_probes
    assert not bot.arrivals(ClockProbe)
    assert {r.network_credit for _, r in bot.arrivals(DecisionRequest)} == {0.0}


def moves_of(record: GameRecord, seat: int) -> list[Any]:
    return [mv for rr in record.rounds for mv in rr.moves if mv.seat == seat]


async def play_far(arena: Arena, far: FarBot, *near: MemBot) -> GameRecord:
    """``far`` connects first and is measured; then the others join and
    one game is played. Returns its record."""
    async with trio.open_nursery() as nursery:
        await start(nursery, arena, far)
        await warm(arena, far)
        await start(nursery, arena, *near)
    (record,) = arena.records
    assert record.status == "finished" and verify_record(record) == []
    return record


# -- the credit -------------------------------------------------------------------------


@on_mock_clock
async def test_a_far_bot_thinking_most_of_its_move_is_in_time_only_with_the_credit() -> None:
    """150 ms away each way, 0.9 s of thinking in a 1 s move: each answer
    arrives 1.2 s after its request. Without a credit every decision times
    out; with it (0.3 s, the round trip) none does."""
    for cap, timeouts in ((0.0, True), (0.5, False)):
        async with memory_arena(rules=SHORT, move_time=1.0, lag_credit_cap=cap) as arena:
            far = FarBot("far", 0.15, think=0.9, probes=cap > 0)
            near = [MemBot(f"near-{i}", rule_options=("round_sizes",)) for i in range(2)]
            record = (
                await play_far(arena, far, *near)
                if cap
                else await _play_unmeasured(arena, far, *near)
            )
        seat = record.names.index("far")
        moves = moves_of(record, seat)
        assert len(moves) == 5
        if timeouts:
            assert all(mv.fault == "timeout" and mv.credit_ms == 0 for mv in moves)
            assert not far.arrivals(ClockProbe)
            assert far.welcome is not None and not far.welcome.clock_probes
            continue
        assert [mv.fault for mv in moves] == [None] * 5
        assert all(mv.credit_ms == 300 for mv in moves)
        assert all(mv.ms == 1200 for mv in moves)  # the bot took 1.2 s as the referee saw it
        assert far.welcome is not None and far.welcome.clock_probes
        for _, req in far.arrivals(DecisionRequest):
            assert req.view.time_left == 1.0 and req.network_credit == 0.3  # move time unchanged
        # the near bots asked for nothing: no probe, no credit
        near_seats = [s for s in range(3) if s != seat]
        assert all(mv.credit_ms == 0 for s in near_seats for mv in moves_of(record, s))
        assert not any(isinstance(m, ClockProbe) for b in near for m in b.received)


async def _play_unmeasured(arena: Arena, *bots: MemBot) -> GameRecord:
    async with trio.open_nursery() as nursery:
        await start(nursery, arena, *bots)
    (record,) = arena.records
    return record


@on_mock_clock
async def test_the_credit_is_capped_and_the_cap_is_advertised() -> None:
    async with memory_arena(rules=SHORT, move_time=1.0, lag_credit_cap=0.2) as arena:
        assert arena.server_info().lag_credit_cap == 0.2
        far = FarBot("far", 0.15, think=0.5)
        near = [MemBot(f"near-{i}", rule_options=("round_sizes",)) for i in range(2)]
        record = await play_far(arena, far, *near)
    moves = moves_of(record, record.names.index("far"))
    assert [mv.credit_ms for mv in moves] == [200] * 5 and not any(mv.fault for mv in moves)
    assert {r.network_credit for _, r in far.arrivals(DecisionRequest)} == {0.2}


@on_mock_clock
async def test_a_cap_of_zero_sends_no_probe() -> None:
    async with memory_arena(rules=SHORT, lag_credit_cap=0.0) as arena:
        assert arena.server_info().lag_credit_cap == 0.0
        bots = [FarBot(f"far-{i}", 0.01) for i in range(3)]
        async with trio.open_nursery() as nursery:
            await start(nursery, arena, *bots)
    for bot in bots:
        never_probed(bot)


@on_mock_clock
async def test_a_bot_that_does_not_ask_never_gets_a_probe() -> None:
    """A v1.1 bot (no Hello.clock_probes) beside one that asks: only the
    one that asked is probed; the other's stream is what it was."""
    async with memory_arena(rules=SHORT) as arena:
        asks = FarBot("asks", 0.05)
        v1_1 = [FarBot(f"v1.1-{i}", 0.05, probes=False) for i in range(2)]
        await play_far(arena, asks, *v1_1)
    assert len(asks.arrivals(ClockProbe)) >= MIN_SAMPLES
    for bot in v1_1:
        never_probed(bot)


# -- what a bot cannot do with it ------------------------------------------------------


@on_mock_clock
async def test_replies_held_back_gain_nothing_where_the_kernel_measures() -> None:
    """The bot answers its probes 400 ms late; the kernel saw the
    connection's real 300 ms round trip: the credit is that, plus the slack."""
    async with memory_arena(rules=SHORT, move_time=1.0, lag_credit_cap=1.0) as arena:
        far = FarBot("far", 0.15, hold=0.4, think=0.1)
        near = [MemBot(f"near-{i}", rule_options=("round_sizes",)) for i in range(2)]
        async with trio.open_nursery() as nursery:
            await start(nursery, arena, far)
            assert far.end is not None
            far.end.seat.min_rtt = 0.3  # what the kernel measured of this connection
            await warm(arena, far)
            await start(nursery, arena, *near)
    (record,) = arena.records
    credits = {mv.credit_ms for mv in moves_of(record, record.names.index("far"))}
    assert credits == {round((0.3 + KERNEL_SLACK) * 1000)}


@on_mock_clock
async def test_replies_held_back_are_bounded_by_the_fastest_answer() -> None:
    """Behind a proxy (no kernel measure) the cap alone bounds the first
    decision; from the first answer on, no more than the fastest answer
    (the round trip and the bot's thinking) is credited."""
    async with memory_arena(rules=SHORT, move_time=1.0, lag_credit_cap=1.0) as arena:
        far = FarBot("far", 0.15, hold=0.4, think=0.02)
        near = [MemBot(f"near-{i}", rule_options=("round_sizes",)) for i in range(2)]
        record = await play_far(arena, far, *near)
    credits = [mv.credit_ms for mv in moves_of(record, record.names.index("far"))]
    assert (
        credits[0] == 700
    )  # the held-back probes' round trip: the cap would be all that bounds it
    assert credits[1:] == [320] * 4  # 300 ms there and back and 20 ms of thinking


@on_mock_clock
async def test_a_reply_to_no_probe_is_dropped_without_a_fault() -> None:
    async def junk(bot: MemBot, msg: ServerMsg) -> None:
        if isinstance(msg, DecisionRequest):
            MemBot.send(bot, ClockProbeReply("made-up"))

    async with memory_arena(rules=SHORT) as arena:
        bots = [MemBot(f"b{i}", rule_options=("round_sizes",), on_message=junk) for i in range(3)]
        async with trio.open_nursery() as nursery:
            await start(nursery, arena, *bots)
    (record,) = arena.records
    assert record.status == "finished" and record.faulted_seats == []
    assert not any(b.rejections for b in bots)


# -- when probes are sent -------------------------------------------------------------


@on_mock_clock
async def test_probes_never_go_while_a_request_is_open_and_keep_their_pace() -> None:
    """A game of 12 decisions a seat (about 25 virtual seconds): the probes'
    warm-up, then one every PROBE_INTERVAL, each once no request is open."""
    async with memory_arena(rules=Rules(players=3, hand_sizes=(4, 6)), move_time=1.0) as arena:
        far = FarBot("far", 0.1, think=0.6)
        near = [MemBot(f"near-{i}", rule_options=("round_sizes",), think=0.7) for i in range(2)]
        async with trio.open_nursery() as nursery:
            await start(nursery, arena, far)
            await warm(arena, far)
            clock = clock_of(arena, far)
            await start(nursery, arena, *near)
    # (the last probe may have gone out as the game ended, its reply never back)
    assert clock.sent >= MIN_SAMPLES + 2 and clock.replies >= clock.sent - 1
    delay = 0.1
    sent = [t - delay for t, _ in far.arrivals(ClockProbe)]
    requests = {r.request_id: t - delay for t, r in far.arrivals(DecisionRequest)}
    answered = {rid: t + delay for t, rid in far.sent_at}
    assert len(requests) == 12
    for rid, asked in requests.items():
        assert not any(asked <= t < answered[rid] for t in sent), rid
    gaps = [b - a for a, b in itertools.pairwise(sent)]
    assert all(g >= 2 * delay + PROBE_GAP - 1e-9 for g in gaps[: MIN_SAMPLES - 1])
    assert all(g >= PROBE_INTERVAL - 1e-9 for g in gaps[MIN_SAMPLES:])


@on_mock_clock
async def test_an_unanswered_probe_is_given_up_and_the_next_sent() -> None:
    async def deaf(bot: MemBot, msg: ServerMsg) -> None:
        bot.state.setdefault("probes", []).append(trio.current_time())

    async with memory_arena(rules=SHORT) as arena:
        bot = MemBot("deaf", on_message=deaf, games=None, rule_options=("round_sizes",))
        bot.hello = replace(bot.hello, clock_probes=True)
        async with trio.open_nursery() as nursery:
            await start(nursery, arena, bot)
            await wait_until(lambda: len(bot.messages(ClockProbe)) >= 3)
            nursery.cancel_scope.cancel()
        times = [
            t
            for t, m in zip(bot.state["probes"], bot.received, strict=True)
            if isinstance(m, ClockProbe)
        ]
        assert [round(b - a, 6) for a, b in itertools.pairwise(times)] == [
            PROBE_TIMEOUT + PROBE_GAP
        ] * 2
        assert clock_of(arena, bot).trips.samples == 0


# -- the deadline and what it does not change ---------------------------------------------


@on_mock_clock
async def test_the_bank_pays_only_beyond_the_credit_and_rejections_leave_it_out() -> None:
    """1 s move, 0.3 s credit, 2 s bank. The first answer is illegal (the
    rejection says what is left without the credit), then the bot thinks
    1.1 s: 1.4 s as the referee sees it, 0.1 s past move time + credit."""

    async def illegal_first(bot: MemBot, req: DecisionRequest) -> bool:
        if len(bot.requests) == 1:
            bot.send(ActionMsg(req.request_id, Bid(99)))
            await trio.sleep(1.1)
            bot.send_action(req.request_id, bot.random_action(req))
            return True
        return False

    async with memory_arena(rules=SHORT, move_time=1.0, time_bank=2.0) as arena:
        far = FarBot("far", 0.15, on_request=illegal_first)
        near = [MemBot(f"near-{i}", rule_options=("round_sizes",)) for i in range(2)]
        record = await play_far(arena, far, *near)
    (rejected,) = far.rejections
    # sent 0.3 s after the request (its way there and the illegal bid's back): 1.3 - 0.3 - 0.3
    assert rejected.time_left == pytest.approx(2.0 + 0.7)
    first = moves_of(record, record.names.index("far"))[0]
    assert first.fault is None and first.credit_ms == 300 and first.ms == 1400
    banks = [r.time_bank for _, r in far.arrivals(DecisionRequest)]
    assert banks[0] == 2.0 and banks[1] == pytest.approx(1.9)


@on_mock_clock
async def test_hidden_bids_each_get_their_own_credit_and_deadline() -> None:
    """Three bots 50, 100 and 200 ms away bid at once, each asked with its
    own credit; the silent one times out at its own deadline, the others
    (0.95 s of thinking: late without their credits) are in time."""
    rules = Rules(players=3, hidden_bids=True, hand_sizes=(1, 2))

    async def silent(bot: MemBot, req: DecisionRequest) -> bool:
        return True  # never answers

    async with memory_arena(rules=rules, move_time=1.0, matchmaking=False) as arena:
        bots = [
            FarBot("far-50", 0.05, think=0.95),
            FarBot("far-100", 0.1, think=0.95),
            FarBot("far-200", 0.2, on_request=silent),
        ]
        async with trio.open_nursery() as nursery:
            for bot in bots:
                await start(nursery, arena, bot)
                await warm(arena, bot)
            record = await arena.play_game(list(arena.sessions.values()))
    assert record.status == "finished" and verify_record(record) == []
    first_bids = {mv.seat: mv for mv in record.rounds[0].moves if mv.action.startswith("bid")}
    by_name = {record.names[s]: mv for s, mv in first_bids.items()}
    assert by_name["far-50"].credit_ms == 100 and by_name["far-50"].fault is None
    assert by_name["far-100"].credit_ms == 200 and by_name["far-100"].fault is None
    assert by_name["far-200"].credit_ms == 400 and by_name["far-200"].fault == "timeout"
    assert by_name["far-200"].ms == 1400  # its own deadline: move time + its credit
    assert (
        "1 s + 0.4 s network credit"
        in record.fault_details[record.names.index("far-200")]["timeout"]
    )


# -- a resumed session -----------------------------------------------------------------


@on_mock_clock
async def test_a_resumed_session_is_measured_afresh_and_keeps_the_open_credit() -> None:
    """The far bot does not answer its third request and comes back on a new
    connection (the old one still open: it is taken over). The open request
    comes again with its credit (its deadline is unchanged); the next
    requests have none until the new connection's round trips are in."""
    state: dict[str, Any] = {}

    async def stall_third(bot: MemBot, req: DecisionRequest) -> bool:
        if len(bot.requests) == 3:
            state["stalled"] = req
            return True
        return False

    async with memory_arena(rules=Rules(players=3, hand_sizes=(3,)), move_time=5.0) as arena:
        far = FarBot("far", 0.1, on_request=stall_third, rule_options=("round_sizes",))
        near = [MemBot(f"near-{i}", rule_options=("round_sizes",)) for i in range(2)]
        async with trio.open_nursery() as nursery:
            await start(nursery, arena, far)
            await warm(arena, far)
            await start(nursery, arena, *near)
            await wait_until(lambda: "stalled" in state)
            assert far.welcome is not None
            back = FarBot(
                "far", 0.1, resume_token=far.welcome.resume_token, rule_options=("round_sizes",)
            )
            await start(nursery, arena, back)
    (record,) = arena.records
    assert record.status == "finished"
    stalled: DecisionRequest = state["stalled"]
    assert stalled.network_credit == 0.2
    again = [r for _, r in back.arrivals(DecisionRequest) if r.request_id == stalled.request_id]
    assert len(again) == 1 and again[0].network_credit == 0.2
    later = [r for _, r in back.arrivals(DecisionRequest) if r.request_id != stalled.request_id]
    assert later and later[0].network_credit == 0.0  # the new connection's samples: none yet
    assert back.welcome is not None and back.welcome.clock_probes and back.welcome.resumed
    moves = moves_of(record, record.names.index("far"))
    assert moves[2].credit_ms == 200 and moves[2].fault is None  # answered on the new stream
    assert far.status is not None and far.status.name == "UNAVAILABLE"


@on_mock_clock
async def test_a_malformed_message_is_still_a_fault_with_probes_on() -> None:
    """Probe replies are taken apart; everything else is handled as before."""

    async def garbage(bot: MemBot, req: DecisionRequest) -> bool:
        if len(bot.requests) == 1:
            MemBot.send(bot, Malformed("not a message"))
        return False

    async with memory_arena(rules=SHORT) as arena:
        far = FarBot("far", 0.01, on_request=garbage)
        near = [MemBot(f"near-{i}", rule_options=("round_sizes",)) for i in range(2)]
        record = await play_far(arena, far, *near)
    assert record.faults[record.names.index("far")] == {"malformed": 1}


@on_mock_clock
async def test_a_probing_bot_is_seated_once_its_probes_are_warm() -> None:
    """Its table waits for its first round trips (1.4 s here): then its
    first decision has the credit, and none times out where a near bot's
    would not, behind a proxy too (no kernel measure)."""
    async with memory_arena(rules=SHORT, move_time=1.0, lag_credit_cap=0.5) as arena:
        far = FarBot("far", 0.15, think=0.75)  # answers 1.05 s after each request
        near = [MemBot(f"near-{i}", rule_options=("round_sizes",)) for i in range(2)]
        async with trio.open_nursery() as nursery:
            await start(nursery, arena, far, *near)  # all at once
    (record,) = arena.records
    moves = moves_of(record, record.names.index("far"))
    first_request = far.arrivals(DecisionRequest)[0][0]
    assert len([t for t, _ in far.arrivals(ClockProbe) if t < first_request]) >= MIN_SAMPLES
    assert [mv.fault for mv in moves] == [None] * 5
    assert {mv.credit_ms for mv in moves} == {300}


class _Deaf(FarBot):
    """A far bot that asks for clock probes and never answers one."""

    def _arrive(self, msg: ServerMsg) -> None:
        if not isinstance(msg, ClockProbe):
            super()._arrive(msg)


@pytest.mark.parametrize("kernel", [0.3, None], ids=["kernel-known", "behind-proxy"])
@on_mock_clock
async def test_a_bot_whose_probes_never_warm_is_credited_the_kernel_bound(
    kernel: float | None,
) -> None:
    """It asks for probes and answers none: its table seats it after the
    warm-up's 5 s, and its decisions are credited the kernel's measure of
    its connection (300 ms), so none times out; where the kernel does not
    measure (behind a proxy) they get no credit."""
    async with memory_arena(rules=SHORT, move_time=1.0, lag_credit_cap=0.5) as arena:
        far = _Deaf("far", 0.15, think=0.75)
        near = [MemBot(f"near-{i}", rule_options=("round_sizes",)) for i in range(2)]
        async with trio.open_nursery() as nursery:
            await start(nursery, arena, far)
            assert far.end is not None
            far.end.seat.min_rtt = kernel
            await start(nursery, arena, *near)
    (record,) = arena.records
    moves = moves_of(record, record.names.index("far"))
    assert far.arrivals(DecisionRequest)[0][0] >= WARM_UP
    if kernel is not None:
        assert [mv.fault for mv in moves] == [None] * 5
        assert {mv.credit_ms for mv in moves} == {300}
    else:
        assert moves[0].fault == "timeout" and moves[0].credit_ms == 0

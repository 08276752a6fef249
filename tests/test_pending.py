"""The table's alarm against a reference: whether an answer counts, and when
a decision ends, as a plain ``trio.move_on_at(deadline)`` around the wait
decides it.

The referee keeps its per-move deadlines with one alarm per table
(:mod:`wizard_referee.referee.alarm`), waking each
:class:`~wizard_referee.referee.pending.Pending` decision at its deadline,
for less CPU than a cancel scope per decision. :class:`ReferencePending` is
the simple version it replaced: the decision waits inside a cancel scope
with the deadline, a fault that benches the seat cancels it, and the alarm
never rings for it. Both offer an answer by the same rule
(:meth:`Pending.offer`: the open request's id, before the deadline).

Hypothesis draws one or two scripted bots (what each sends for its first
requests, and when: at once, just before, at, just after the deadline;
legal, illegal or empty answers, answers to its previous request, a second
hello, bytes that do not decode, an action quoting an id never issued; a
server busy past the deadline right after an answer), their seats, the
fault policy (hidden bids too), and a seed for trio's scheduler, which
runs the tasks ready at one instant in a random order; the same game on
the mock clock must end the same with both, and with the alarm under
another order: the record (every move, its time and fault, the faults, the
sanctions, the totals) and what each bot was sent (requests with their
time left, rejections, the end). The reference states the rule at the
deadline instant plainly: a decision that timed out is settled once
everything else due at that instant has happened (so the fault of a
message arriving then comes first); the referee settles it once what has
arrived is handled (docs/protocol.md, "Deadlines, late answers and the
default action"). ``WIZARD_PENDING_EXAMPLES`` sets the number of examples
(40). Checked by hand: the test fails (within 300 examples) with either
race fix undone (an answer handed over before the alarm rang dropped; an
answer at the deadline instant taken), or with the table not handling
what has arrived before it moves on."""

from __future__ import annotations

import math
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from unittest import mock

import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wizard_arena.protocol.messages import (
    ActionMsg,
    ActionRejected,
    DecisionRequest,
    GameEnd,
    ServerMsg,
)
from wizard_arena.rules import Bid, Rules
from wizard_referee.referee import table
from wizard_referee.referee.memory import MemorySeat
from wizard_referee.referee.pending import Allowance, Pending, Stage
from wizard_referee.referee.seat import Malformed

from .memory_bots import MemBot, memory_arena, play, wait_until


class ReferencePending(Pending):
    """The deadline kept by a cancel scope around the wait (as before the
    alarm): the alarm never rings for it; a fault cancels the scope."""

    __slots__ = ("_scope",)

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._scope: trio.CancelScope | None = None

    async def next_answer(
        self, answers: trio.MemoryReceiveChannel[ActionMsg | None]
    ) -> ActionMsg | None:
        if self.stage is Stage.ENDED:
            return None
        with trio.move_on_at(self.deadline) as self._scope:
            while True:
                msg = await self._parked(answers)
                if msg is not None and msg.request_id == self.request_id:
                    return msg
        if self.deadline <= trio.current_time():
            # timed out: what else is due at the deadline instant happens first
            await trio.testing.wait_all_tasks_blocked()
        return None

    def expire(self) -> None:
        self.stage = Stage.ENDED
        if self._scope is not None:
            self._scope.cancel()

    def ring(self, now: float) -> float:
        return math.inf


# -- scripts ---------------------------------------------------------------------------------

#: What a bot sends: an answer to the open request (legal, illegal, without
#: an action), a stale one (to its previous request), or no answer: a second
#: hello, bytes that do not decode, an action quoting an id never issued.
KINDS = ("legal", "illegal", "malformed", "stale", "hello", "undecodable", "unknown")
#: The kinds that answer the open request.
ANSWERS = ("legal", "illegal", "malformed")
#: The kinds that are no answer, and that fault the seat.
FAULTING = ("hello", "undecodable", "unknown")
#: The kinds that fault the seat.
FAULTS = ("illegal", "malformed", *FAULTING)
#: A millisecond or so: a binary fraction, as every time here (no rounding on the clock).
TICK = 2**-10
#: When a message is sent, from the request's arrival: seconds, or relative to the deadline.
WHEN = (0.0, TICK, 0.125, "-", "0", "+")


@dataclass(frozen=True)
class Step:
    """What a bot sends for one request: (when, kind) in order; ``busy``:
    the server is busy 2 ms past the last one (the clock jumps)."""

    sends: tuple[tuple[float | str, str], ...]
    busy: bool


steps = st.builds(
    Step,
    st.lists(st.tuples(st.sampled_from(WHEN), st.sampled_from(KINDS)), max_size=3).map(tuple),
    st.booleans(),
)


def _seated(
    first: list[Step], second: list[Step], seats: Sequence[int], two: bool
) -> list[list[Step]]:
    plans: list[list[Step]] = [[], [], []]
    plans[seats[0]] = first
    if two:
        plans[seats[1]] = second
    return plans


plans = st.lists(steps, max_size=6)
#: One or two bots are scripted (the others answer at once), in any of the three seats.
scripts = st.builds(_seated, plans, plans, st.permutations(range(3)), st.booleans())
setups = st.sampled_from(
    [
        {},
        {"fault_policy": "forfeit_round"},
        {"fault_policy": "remove", "max_faults": 2},
        {"time_bank": 0.5, "max_consecutive_timeouts": 2},
        {"hidden_bids": True},
    ]
)


def _at(when: float | str, req: DecisionRequest) -> float:
    """Seconds from the request's arrival at which to send."""
    if isinstance(when, float):
        return when
    assert req.view.time_left is not None
    return max(0.0, req.view.time_left + req.time_bank + {"-": -TICK, "0": 0.0, "+": TICK}[when])


def _message(kind: str, bot: MemBot, req: DecisionRequest) -> Any:
    rid = req.request_id
    if kind == "legal":
        return ActionMsg(rid, bot.random_action(req))
    if kind == "illegal":
        return ActionMsg(rid, Bid(99))
    if kind == "malformed":
        return ActionMsg(rid, None, "no choice")
    if kind == "hello":
        return bot.hello
    if kind == "undecodable":
        return Malformed("not a BotMessage")
    if kind == "unknown":
        return ActionMsg(f"never-{len(bot.requests)}", bot.random_action(req))
    assert kind == "stale" and len(bot.requests) > 1
    return ActionMsg(bot.requests[-2].request_id, bot.random_action(req))


@dataclass
class Moments:
    """What the scripted bots of one game do when (shared by them)."""

    due: list[float]
    """When their next messages are to be sent."""
    sent: dict[str, float]
    """When each last sent one."""


def scripted(plan: Sequence[Step], hidden: bool, benching: bool, moments: Moments) -> Any:
    """``benching``: a fault may end the open request (fault policy
    ``forfeit_round`` or ``remove``)."""
    asked: dict[str, float] = {}
    """When each request reached the bot (it reads the next one only once
    done with the last: a request may wait)."""

    def note(seat: MemorySeat) -> None:
        send = seat.send

        def noted(msg: ServerMsg) -> None:
            if isinstance(msg, DecisionRequest):
                asked[msg.request_id] = trio.current_time()
            send(msg)

        seat.send = noted  # type: ignore[method-assign]

    last = [-1.0]
    """When the bot last sent a message."""
    faulted = [-1.0]
    """When the bot last sent a message that faults its seat."""

    async def on_request(bot: MemBot, req: DecisionRequest) -> bool:
        k = len(bot.requests) - 1
        if k == 0 and bot.end is not None:
            note(bot.end.seat)
        if k >= len(plan):
            return False  # answered at once
        start = asked.get(req.request_id, trio.current_time())
        faulted_before = faulted[0]  # (for an earlier request)
        step = plan[k]
        sent = ""
        answered = False
        """The request may have ended before the last message (a legal
        answer, or with ``benching`` a fault)."""
        for when, kind in step.sends:
            planned = start + _at(when, req)
            at = max(planned, trio.current_time())
            if (sent and at == trio.current_time()) or (kind == "stale" and k == 0):
                continue  # one message an instant: the referee's order is then its own
            if kind in FAULTING and (at > planned or at == last[0]):
                # (the bot read the request late, or sent another message at
                # this instant: this one would follow a chain of others at one
                # instant, maybe a deadline, where what has arrived when the
                # referee settles a decision is trio's order)
                continue
            moments.due.append(at)
            try:
                await trio.sleep_until(at)
            finally:
                moments.due.remove(at)
            bot.send(_message(kind, bot, req))
            moments.sent[bot.name] = last[0] = at
            if kind in FAULTS:
                faulted[0] = at
            answered = answered or sent == "legal" or (benching and sent in FAULTS)
            sent = kind
        in_time = trio.current_time() < start + _at("0", req)
        now = trio.current_time()
        if (
            step.busy
            and sent in ANSWERS
            and not answered
            and in_time
            and not hidden
            and not (benching and faulted_before >= start)
            and not any(now <= t <= now + 2 * TICK for t in moments.due)
            and not any(t == now for name, t in moments.sent.items() if name != bot.name)
        ):
            # busy past the deadline right after an answer in time (handed to
            # the decision waiting for it): when the referee next runs is then
            # the same whichever task trio runs first. (After another message,
            # read by the seat's reader, or with other seats asked at once,
            # the reader's, the alarm's and the other decisions' order
            # past the deadline is the scheduler's. So is it after a fault
            # the bot sent for an earlier request once this one was asked,
            # which may have ended it already; and when another bot sent a
            # message at this instant, or one falls due within the jump: it
            # is then read when the referee runs again, in the scheduler's
            # order with the requests it sends then.)
            clock = trio.lowlevel.current_clock()
            assert isinstance(clock, trio.testing.MockClock)
            clock.jump(2 * TICK)
        return True

    return on_request


def _outcome(bots: Sequence[MemBot], records: Sequence[Any]) -> Any:
    """What must not depend on how the deadline is kept, nor on trio's order."""
    (rec,) = records

    def moves(rr: Any) -> list[tuple[Any, ...]]:
        got = [(m.seat, m.action, round(m.ms, 6), m.fault) for m in rr.moves]
        # hidden bids are asked at once: their order is the scheduler's
        return sorted(m for m in got if m[1].startswith("bid")) + [
            m for m in got if not m[1].startswith("bid")
        ]

    def sent(bot: MemBot) -> Any:
        # request ids by the bot's own count (hidden bids are numbered in the
        # scheduler's order); a rejection and the table's events at the same
        # instant come in the scheduler's order: the rejections apart
        mine = {r.request_id: f"#{i}" for i, r in enumerate(bot.requests)}

        def seen(msg: ServerMsg) -> Any:
            if isinstance(msg, DecisionRequest):
                return ("request", mine[msg.request_id], msg.view.time_left, msg.time_bank)
            if isinstance(msg, ActionRejected):
                rid = mine.get(msg.request_id, msg.request_id)
                return ("rejected", rid, msg.code, round(msg.time_left, 6))
            if isinstance(msg, GameEnd):
                return ("end", msg.totals, msg.ranks, msg.faults)
            return (type(msg).__name__,)

        got = [seen(m) for m in bot.received[1:]]
        rejected = [m for m in got if m[0] == "rejected"]
        return bot.name, bot.closed_with, [m for m in got if m[0] != "rejected"], sorted(rejected)

    rest = repr(
        (
            rec.status,
            [sorted(f.items()) for f in rec.faults],
            [sorted(f.items()) for f in rec.fault_details],
            rec.removed,
            rec.penalties,
            rec.totals,
            [sent(b) for b in bots],
        )
    ).replace(rec.game_id, "G")
    return rec.names, [moves(rr) for rr in rec.rounds], rest


def run_game(
    pending: type[Pending], plans: Sequence[Sequence[Step]], setup: dict[str, Any], seed: int
) -> Any:
    settings = dict(setup)
    hidden = settings.pop("hidden_bids", False)
    rules = Rules(players=3, hand_sizes=(1, 2, 3), hidden_bids=hidden)
    options = ("round_sizes", "hidden_bids") if hidden else ("round_sizes",)

    async def game() -> Any:
        async with memory_arena(
            rules=rules, move_time=0.25, bot_seed_secret="fixed", **settings
        ) as arena:
            moments = Moments([], {})
            bots = [
                MemBot(
                    f"b{i}",
                    rule_options=options,
                    on_request=scripted(plan, hidden, "fault_policy" in settings, moments),
                )
                for i, plan in enumerate(plans)
            ]
            await play(arena, *bots)
            await wait_until(lambda: arena.games_played == 1)  # (every bot may have gone)
            return _outcome(bots, list(arena.records))

    trio._core._run._r.seed(seed)  # the scheduler's order (batches reversed or not)
    with mock.patch.object(table._Table, "pending_type", pending):
        return trio.run(game, clock=trio.testing.MockClock(autojump_threshold=0))


@settings(
    max_examples=int(os.environ.get("WIZARD_PENDING_EXAMPLES", "40")),
    deadline=None,
    derandomize=False,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(plans=scripts, setup=setups, seed=st.integers(0, 2**32 - 1))
def test_the_alarm_decides_as_a_cancel_scope_does(
    plans: list[list[Step]], setup: dict[str, Any], seed: int
) -> None:
    alarm = run_game(Pending, plans, setup, seed)
    assert alarm == run_game(ReferencePending, plans, setup, seed)
    # and as itself under another order of trio's scheduler
    assert alarm == run_game(Pending, plans, setup, random.Random(seed).getrandbits(32))


@pytest.mark.parametrize("busy", [False, True])
def test_an_answer_just_before_the_deadline_counts_with_both(busy: bool) -> None:
    """The race fixed twice: a bot answers 1 ms before the deadline and the
    server is busy past it before the decision runs."""
    plans = [[Step((("-", "legal"),), busy)] * 6, [], []]
    ms = 1000 * (0.25 + (TICK if busy else -TICK))
    for seed in range(6):
        alarm = run_game(Pending, plans, {}, seed)
        assert alarm == run_game(ReferencePending, plans, {}, seed)
        names, rounds, _ = alarm
        late = [m for rnd in rounds for m in rnd if m[0] == names.index("b0")][:6]
        assert [(ms, fault) for *_, ms, fault in late] == [(pytest.approx(ms, abs=1e-3), None)] * 6


@pytest.mark.parametrize("seed", range(4))
def test_a_fault_arriving_at_the_deadline_comes_before_the_timeout(seed: int) -> None:
    """A second hello at the deadline instant, under ``forfeit_round``: its
    fault forfeits the round and the decision is the sanction's, not a
    timeout, whichever task trio runs first."""
    plans = [[Step((("0", "hello"),), False)], [], []]
    names, rounds, rest = run_game(Pending, plans, {"fault_policy": "forfeit_round"}, seed)
    first = next(m for m in rounds[0] if m[0] == names.index("b0"))
    assert first[2:] == (250.0, "forfeit_round")
    assert "malformed" in rest and "timeout" not in rest


# -- the allowance: the one place that does a decision's time arithmetic ---------------------

#: Times as the mock clock has them in these tests: whole ticks (binary fractions,
#: so that the sums below are exact), up to about 1,000 s.
_seconds = st.integers(0, 2**20).map(lambda n: n * TICK)
_move_times = st.integers(1, 2**20).map(lambda n: n * TICK)


@settings(max_examples=300, deadline=None)
@given(
    move_time=_move_times,
    credit=_seconds,
    bank=_seconds,
    took=_seconds,
)
def test_the_bank_is_charged_only_beyond_the_move_time_and_the_credit(
    move_time: float, credit: float, bank: float, took: float
) -> None:
    a = Allowance(move_time, credit, bank)
    left = a.bank_after(took)
    assert 0.0 <= left <= bank
    if took <= a.free:
        assert left == bank
    else:
        assert left == max(0.0, bank - (took - move_time - credit))
    # an answer at the deadline itself would leave nothing (it is late anyway)
    assert a.bank_after(a.total) == 0.0


@settings(max_examples=300, deadline=None)
@given(
    move_time=_move_times,
    credit=_seconds,
    bank=_seconds,
    elapsed=_seconds,
)
def test_a_bot_is_never_told_more_time_than_the_deadline_allows(
    move_time: float, credit: float, bank: float, elapsed: float
) -> None:
    """What a request (or a rejection) says is left, and what a request sent
    again to a bot taken back says, never reaches past the deadline; the
    credit is the margin for the messages' way, and nothing else is lost."""
    a = Allowance(move_time, credit, bank)
    remaining = max(0.0, a.total - elapsed)
    told = a.time_left(elapsed)
    assert 0.0 <= told <= remaining
    assert told == max(0.0, remaining - credit)
    move_left, bank_left = a.left_at(elapsed)
    assert 0.0 <= move_left <= move_time and 0.0 <= bank_left <= bank
    assert move_left + bank_left <= remaining
    if elapsed <= move_time:  # within the move time: the whole bank is still there
        assert bank_left == bank
        assert move_left + bank_left == told


def test_a_table_asks_each_decision_with_the_seats_allowance() -> None:
    """At a real (in-memory) table with a time bank, each request's deadline
    is its start + move time + the bank left, and the bank each decision
    leaves is the next request's: a bot that thinks past its move time draws
    on it, and the requests say so."""
    asked: list[Pending] = []

    class Recording(Pending):
        __slots__ = ()

        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            asked.append(self)

    async def main() -> None:
        rules = Rules(players=3, hand_sizes=(1, 2, 3))
        async with memory_arena(rules=rules, move_time=1.0, time_bank=3.0) as arena:
            slow = MemBot("slow", think=1.25, rule_options=("round_sizes",))  # 0.25 s of bank each
            await play(arena, slow, *(MemBot(n, rule_options=("round_sizes",)) for n in "bc"))

    with mock.patch.object(table._Table, "pending_type", Recording):
        trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert len(asked) > 6 and all(p.deadline == p.start + p.allowance.total for p in asked)
    banks = sorted({p.allowance.bank for p in asked}, reverse=True)
    assert banks[0] == 3.0 and len(banks) > 2  # the slow seat's bank went down step by step
    assert all(p.allowance.move_time == 1.0 and p.allowance.credit == 0.0 for p in asked)

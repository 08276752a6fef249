"""The SDK's deadlines against the real referee (in-memory seats, trio's
virtual clock): a blocking bot that overruns is logged and sends nothing
while the referee plays its default; an AsyncBot that does not decide is
cancelled before the deadline and the default goes out in time. Exact
times, no sleeping, no ports (:mod:`tests.memory_client`)."""

from __future__ import annotations

import logging
import re
from functools import partial

import pytest
import trio

from wizard_arena.client import AsyncBot, RecordKind, RunResult
from wizard_arena.client.driver import Driver
from wizard_arena.client.serve import serve_sessions
from wizard_arena.rules import Card, Rules, SeatView
from wizard_bots.random_bot import RandomBot

from .bots.ponderer import Ponderer
from .memory_bots import MemBot, memory_arena, on_mock_clock
from .memory_client import memory_sessions, run_blocking, take


class Sleepy(RandomBot):
    """A blocking bot that takes 0.8 s over its bid in round 2."""

    def bid(self, view: SeatView) -> int:
        if view.round == 2:
            take(0.8)
        return super().bid(view)


@on_mock_clock
async def test_blocking_overrun_is_logged_and_nothing_sent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="wizard_arena.client")
    results: list[RunResult] = []
    async with memory_arena(move_time=0.5) as arena:
        async with trio.open_nursery() as nursery:
            for name in ("r1", "r2"):
                nursery.start_soon(MemBot(name).run, arena)

            async def sleepy() -> None:
                results.append(await run_blocking(Sleepy(seed=1), arena, "sleepy"))

            nursery.start_soon(sleepy)
        (rec,) = arena.records
    (res,) = results
    assert len(res.games) == 1 and res.overruns == 1 and res.defaults_sent == 0
    assert "nothing sent, the referee plays its default" in caplog.text
    assert re.search(r"the bot took 0\.800 s in game \S+, round 2, bid; 0\.500 s", caplog.text)
    (overrun,) = [r for r in res.records if r.kind is RecordKind.OVERRUN]
    assert overrun.round == 2 and overrun.seconds == pytest.approx(0.8)
    # the referee played its default: one timeout, in the record and the GameEnd
    assert rec.faults[rec.names.index("sleepy")] == {"timeout": 1}
    assert [f.code for f in res.faults] == ["timeout"]


@on_mock_clock
async def test_async_bot_is_cancelled_before_the_deadline() -> None:
    ponderer = Ponderer()
    results: list[RunResult] = []
    async with memory_arena(move_time=0.6) as arena:
        # (virtual time: a decision never cancelled fails here, not hangs)
        with trio.fail_after(3600):
            async with trio.open_nursery() as nursery:

                async def play() -> None:
                    results.append(
                        await serve_sessions(
                            memory_sessions(arena, "ponderer"),
                            ponderer,
                            Driver(RunResult(), strict=False, games=1),
                            margin=0.1,
                            clock=trio.current_time,
                        )
                    )

                nursery.start_soon(play)
                welcome = await nursery.start(
                    partial(
                        serve_sessions,
                        memory_sessions(arena, "calm"),
                        RandomBotAsync(),
                        Driver(RunResult(), strict=False, games=1),
                        clock=trio.current_time,
                    )
                )
                assert welcome.version == 1
                nursery.start_soon(MemBot("r1").run, arena)
        (rec,) = arena.records
    (res,) = results
    assert ponderer.cards == 210  # 1 + 2 + ... + 20
    assert len(res.games) == 1 and res.overruns == res.defaults_sent == 3
    cancelled = [r for r in res.records if r.kind is RecordKind.CANCELLED]
    # cancelled `margin` before the deadline: the default is in time, no fault
    assert [r.seconds for r in cancelled] == pytest.approx([0.5] * 3)
    assert rec.faults == [{}, {}, {}]
    assert ponderer.hooks == ["start", *["round"] * Rules(players=3).rounds, "end"]


class RandomBotAsync(AsyncBot):
    """An async bot that answers at once with the first legal action."""

    async def bid(self, view: SeatView) -> int:
        return view.legal_bids[0]

    async def play(self, view: SeatView) -> Card:
        return view.legal_cards[0]

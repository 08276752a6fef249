"""The network credit over real gRPC and a real delay: a bot behind a
userspace relay (wizard_arena.testing.relay; this kernel has no netem) 150
ms away each way, and bots that hold their probe replies back, directly
(the kernel's tcpi_min_rtt bounds them) and through the relay (their fastest
answers do). The clock logic itself is tested on the virtual clock
(tests/test_network_credit.py); these check it holds on the wire."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from wizard_arena import Bot
from wizard_arena.client import run_bot
from wizard_arena.protocol import wire
from wizard_arena.protocol.messages import ClockProbe, ClockProbeReply, DecisionRequest
from wizard_arena.rules import Action, Rules, SeatView
from wizard_arena.testing import RawBot
from wizard_arena.testing.relay import DelayRelay
from wizard_referee.referee.record import GameRecord
from wizard_referee.referee.round_trips import KERNEL_SLACK, MIN_SAMPLES

from .support import ServerThread, scaled, time_factor

pytestmark = pytest.mark.e2e

SHORT = Rules(players=3, hand_sizes=(1, 2))
"""Two rounds: each seat decides 5 times."""
AWAY = 0.15
"""Seconds each way between the far bot and the referee (the relay's delay)."""


THINK = 0.72
"""Seconds the far bot thinks of its 1 s move: with its way there and back
(at least 2 x 145 ms through the relay) its answers arrive after 1.01 s at
the earliest, late without a credit; with its credit (about 300 ms) the
referee waits until about 1.3 s, room for 0.27 s of scheduling and load."""


class Thinker(Bot):
    """Thinks ``think`` seconds (:data:`THINK`), then plays the first legal action."""

    def __init__(self, think: float = THINK) -> None:
        super().__init__()
        self.think = think

    def bid(self, view: SeatView) -> Action:
        return self._think(view)

    def play(self, view: SeatView) -> Action:
        return self._think(view)

    def _think(self, view: SeatView) -> Action:
        time.sleep(self.think)
        return view.legal_actions[0]


def _samples(server: ServerThread, name: str) -> int:
    assert server.arena is not None
    arena = server.arena

    def count() -> int:
        for s in arena.sessions.values():
            if s.hello.bot_name == name and s.conn.clock is not None:
                return s.conn.clock.trips.samples
        return 0

    return int(server.call(count))


def _wait_measured(server: ServerThread, name: str, timeout: float = 20.0) -> None:
    """Wait until the bot ``name`` has the round trips its credit needs."""
    timeout = scaled(timeout)
    end = time.monotonic() + timeout
    while _samples(server, name) < MIN_SAMPLES:
        assert time.monotonic() < end, f"{name} was not measured within {timeout} s"
        time.sleep(0.02)


def _near(address: str, i: int) -> RawBot:
    return RawBot(address, f"near-{i}", rule_options=("round_sizes",))


def _far_moves(record: GameRecord, name: str) -> list[Any]:
    seat = record.names.index(name)
    return [mv for rr in record.rounds for mv in rr.moves if mv.seat == seat]


@pytest.mark.slow(seconds=14)
def test_a_far_thinker_times_out_without_the_credit_and_never_with_it(
    serve: Callable[..., ServerThread],
) -> None:
    """The SDK bot thinks 0.72 s of a 1 s move through a relay 150 ms away
    each way (±5 ms): its answers reach the referee about 1.02 s after each
    request. Without a credit all 5 of its decisions time out; with the
    credit (its measured round trip) none does. On a busy machine every
    time in it is stretched alike (:func:`time_factor`): the margins too."""
    f = time_factor()
    away = AWAY * f
    for cap in (0.0, 0.5 * f):
        server = serve(rules=SHORT, move_time=f, lag_credit_cap=cap, lag_credit_behind_proxy=True)
        with DelayRelay(server.address, away, jitter=0.005, seed=1) as relay:
            far = threading.Thread(
                target=run_bot,
                args=(Thinker(THINK * f), relay.address, "far"),
                kwargs={"games": 1, "rule_options": ("round_sizes",)},
                daemon=True,
            )
            far.start()
            if cap:  # seat it once its round trip is measured
                _wait_measured(server, "far")
            near = [_near(server.address, i).start() for i in range(2)]
            (record,) = server.wait_records(1, timeout=scaled(30))
            far.join(timeout=scaled(10))
            for bot in near:
                bot.join()
        # the near bots (v1.1 Hellos) never receive a probe, credit or not
        assert not [m for bot in near for m in bot.messages(ClockProbe)]
        moves = _far_moves(record, "far")
        assert len(moves) == 5
        if not cap:
            assert [mv.fault for mv in moves] == ["timeout"] * 5
            assert all(mv.credit_ms == 0 for mv in moves)
            continue
        assert [mv.fault for mv in moves] == [None] * 5, moves
        # the credit is the round trip the probes saw: 300 ms, less the jitter
        low, high = 2 * away * 1000 - 15 * f, 2 * away * 1000 + 25 * f
        assert all(low <= mv.credit_ms <= high for mv in moves), moves
        assert all(mv.ms > 1000 * f for mv in moves)  # late but for the credit


def _holding(hold: float) -> Callable[[RawBot, Any], None]:
    """A RawBot hook that answers each clock probe ``hold`` seconds late."""

    def on_message(bot: RawBot, msg: Any) -> None:
        if isinstance(msg, ClockProbe):
            reply = wire.encode_bot(ClockProbeReply(msg.id))
            timer = threading.Timer(hold, bot.send_raw, (reply,))
            timer.daemon = True
            timer.start()

    return on_message


@pytest.mark.slow(seconds=10)
def test_probe_replies_held_back_gain_no_more_than_the_real_round_trip(
    serve: Callable[..., ServerThread],
) -> None:
    """A bot answers its probes 400 ms late (and its decisions at once).
    Connected directly, the kernel's measure of its loopback connection
    bounds its credit to the slack; through the relay (as behind a proxy:
    no kernel measure), from its first answer on the fastest answer does,
    about the relay's 300 ms round trip."""
    for relayed in (False, True):
        server = serve(
            rules=SHORT, move_time=scaled(1.0), lag_credit_cap=1.0, lag_credit_behind_proxy=relayed
        )
        with DelayRelay(server.address, AWAY, jitter=0.005, seed=2) as relay:
            address = relay.address if relayed else server.address
            holder = RawBot(
                address,
                "holder",
                clock_probes=True,
                rule_options=("round_sizes",),
                on_message=_holding(0.4),
            ).start()
            _wait_measured(server, "holder")
            near = [_near(server.address, i).start() for i in range(2)]
            (record,) = server.wait_records(1, timeout=scaled(30))
            for bot in (holder, *near):
                bot.join()
        credits = [mv.credit_ms for mv in _far_moves(record, "holder")]
        assert all(mv.fault is None for mv in _far_moves(record, "holder"))
        requests = holder.messages(DecisionRequest)
        assert [round(r.network_credit * 1000) for r in requests] == credits
        if not relayed:
            # tcpi_min_rtt of a loopback connection is microseconds: the slack is
            # all; its answers (a millisecond, more on a loaded machine) may
            # bound it further, never raise it
            assert credits[0] == KERNEL_SLACK * 1000
            assert all(c <= KERNEL_SLACK * 1000 for c in credits[1:]), credits
        else:
            assert credits[0] >= 600  # before any answer, the cap alone bounds it
            # then its fastest answer: the relay's 300 ms round trip, plus what
            # a loaded machine adds, far below the 700 ms its probes claim
            assert all(2 * AWAY * 1000 - 15 <= c <= 2 * AWAY * 1000 + 100 for c in credits[1:])

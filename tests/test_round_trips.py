"""The network credit's estimate (wizard_referee.referee.round_trips): a low
percentile of the recent probes, only after enough of them, bounded by the
kernel's measure and the fastest answers, capped."""

from __future__ import annotations

import random

import pytest

from wizard_referee.referee.round_trips import (
    DECISIONS,
    KERNEL_SLACK,
    MIN_SAMPLES,
    WINDOW,
    RoundTrips,
    low_quantile,
)


def probed(*rtts: float) -> RoundTrips:
    trips = RoundTrips()
    for rtt in rtts:
        trips.probed(rtt)
    return trips


def test_no_credit_before_enough_probes() -> None:
    trips = probed(*[0.2] * (MIN_SAMPLES - 1))
    assert trips.estimate() is None and trips.credit(1.0) == 0.0
    trips.probed(0.2)
    assert trips.estimate() == 0.2 and trips.credit(1.0) == 0.2


def test_a_low_percentile_ignores_slow_probes() -> None:
    """A quarter of the window may be slow (a busy moment, a bot answering
    late) without moving the estimate; more than that lifts it only to the
    fastest of the slow ones."""
    rng = random.Random(1)
    fast = [0.150 + rng.random() * 0.002 for _ in range(12)]
    trips = probed(*fast, 0.9, 0.8, 0.7, 0.6)
    estimate = trips.estimate()
    assert estimate is not None and 0.150 <= estimate <= 0.152
    # a bot that holds back every reply can only raise it, never below the network
    held = probed(*[0.150 + 0.4] * WINDOW)
    assert held.estimate() == pytest.approx(0.55)
    assert min(fast) <= estimate


def test_the_window_keeps_the_recent_probes() -> None:
    """The route changed (or the bot moved): the old round trips leave the
    window, so the estimate follows the connection as it is now."""
    trips = probed(*[0.05] * WINDOW)
    for _ in range(WINDOW * 3 // 4):
        trips.probed(0.2)
    assert trips.estimate() == 0.05  # a quarter of the window is still the old route
    trips.probed(0.2)
    assert trips.samples == WINDOW and trips.estimate() == 0.2


def test_the_kernel_bounds_a_bot_that_answers_probes_late() -> None:
    trips = probed(*[0.55] * WINDOW)  # 150 ms of network, 400 ms held back
    trips.kernel_rtt = 0.150
    assert trips.estimate() == pytest.approx(0.150 + KERNEL_SLACK)
    trips.kernel_rtt = 0.9  # the kernel's bound never raises the estimate
    assert trips.estimate() == 0.55


def test_the_fastest_answer_bounds_the_estimate() -> None:
    """No answer comes back faster than the round trip: a bot that answers
    a decision in 160 ms cannot be 550 ms away."""
    trips = probed(*[0.55] * WINDOW)
    for took in (0.9, 0.7, 0.16, 0.8):
        trips.answered(took)
    assert trips.estimate() == 0.16
    # only the recent decisions count: the fast one leaves the window
    for _ in range(DECISIONS):
        trips.answered(0.6)
    assert trips.estimate() == 0.55


def test_the_cap_and_whole_steps() -> None:
    trips = probed(*[0.3017] * MIN_SAMPLES)
    assert trips.credit(1.0) == 0.3  # whole steps of 10 ms, rounded down
    assert trips.credit(0.25) == 0.25
    assert trips.credit(0.255) == 0.25
    assert trips.credit(0.0) == 0.0  # a cap of 0 turns the credit off
    assert probed(*[0.0009] * MIN_SAMPLES).credit(1.0) == 0.0  # on this machine: none
    assert probed(*[0.29] * MIN_SAMPLES).credit(1.0) == 0.29  # (no float drift below a step)


def test_nonsense_samples_are_clamped() -> None:
    trips = probed(-0.5, 0.1, 0.1, 0.1)
    assert trips.estimate() == 0.0
    trips.answered(-1.0)
    assert trips.estimate() == 0.0


def test_low_quantile_is_the_lower_nearest_rank() -> None:
    assert low_quantile([3.0]) == 3.0
    assert low_quantile([4.0, 3.0, 2.0, 1.0, 5.0]) == 2.0  # ceil(0.25 * 5) = 2nd
    assert low_quantile([float(i) for i in range(8)], 0.5) == 3.0

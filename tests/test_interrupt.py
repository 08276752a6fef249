"""Ctrl-C cancels a hosted run instead of raising into its code
(:mod:`wizard_referee.hosting.interrupt`)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator

import pytest
import trio

from wizard_referee.hosting.interrupt import run_interruptible


@pytest.fixture(autouse=True)
def _ctrl_c_as_in_a_terminal() -> Iterator[None]:
    """SIGINT handled as Python does by default: a test runner started as a
    background job of a non-interactive shell inherits it ignored (POSIX),
    and then neither trio nor run_interruptible hears it."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _run_that_signals(sig: int, reached: list[str]) -> object:
    async def run() -> str:
        try:
            os.kill(os.getpid(), sig)
            total = sum(range(100_000))  # plain code: trio's default raises in here
            reached.append(f"after the signal {total}")
            await trio.sleep(60)  # cancelled by the signal
            reached.append("slept")
            return "done"
        finally:
            reached.append("finally")

    return run


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_cancels_the_run_and_then_raises_keyboard_interrupt(sig: int) -> None:
    reached: list[str] = []
    before = signal.getsignal(sig)
    with pytest.raises(KeyboardInterrupt):
        run_interruptible(_run_that_signals(sig, reached))  # type: ignore[arg-type]
    # the code between two checkpoints ran to the next one, then unwound
    assert reached == [f"after the signal {sum(range(100_000))}", "finally"]
    assert signal.getsignal(sig) == before  # the handler is put back


def test_trio_s_default_raises_inside_plain_code_which_is_why() -> None:
    """The hazard the helper removes: the same run under ``trio.run``."""
    reached: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        trio.run(_run_that_signals(signal.SIGINT, reached))  # type: ignore[arg-type]
    assert reached == ["finally"]


def test_a_run_returns_its_value_and_its_own_errors_unchanged() -> None:
    async def value() -> int:
        await trio.sleep(0)
        return 42

    async def broken() -> None:
        await trio.sleep(0)
        raise ValueError("its own")

    assert run_interruptible(value) == 42
    with pytest.raises(ValueError, match="its own"):
        run_interruptible(broken)


def test_a_second_signal_stops_an_unwinding_that_hangs() -> None:
    """After the first signal the handlers are trio's again: a second
    Ctrl-C raises at once, even through a shielded wait in the unwinding."""
    reached: list[str] = []

    async def run() -> None:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            await trio.sleep(60)
        finally:
            with trio.CancelScope(shield=True):
                reached.append("unwinding")
                os.kill(os.getpid(), signal.SIGINT)  # the second one
                await trio.sleep(60)  # (shielded: only KeyboardInterrupt ends it)
                reached.append("slept through")

    clock = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_interruptible(run)
    assert reached == ["unwinding"] and time.monotonic() - clock < 30


def test_an_ignored_signal_stays_ignored() -> None:
    """A background job's SIGINT is ignored: its run is not stopped by it."""

    async def run() -> str:
        os.kill(os.getpid(), signal.SIGINT)
        await trio.sleep(0.2)
        return "finished"

    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        assert run_interruptible(run) == "finished"
    finally:
        signal.signal(signal.SIGINT, before)


def test_a_run_that_goes_on_once_cancelled_is_not_taken_as_done() -> None:
    """A run that swallows the cancellation and returns: a partial result,
    not the run's, so the caller hears KeyboardInterrupt."""

    async def stubborn() -> str:
        os.kill(os.getpid(), signal.SIGTERM)
        with contextlib.suppress(trio.Cancelled):  # (what a run must not do)
            await trio.sleep(60)
        return "partial"

    with pytest.raises(KeyboardInterrupt):
        run_interruptible(stubborn)

"""Ctrl-C (or SIGTERM) stops a hosted run by cancelling it, never by raising
into whatever code happens to be running.

trio's default turns SIGINT into a KeyboardInterrupt raised at once in any
task's code that is not protected from it: between two lines of a table,
or inside ``nursery.start_soon`` after a task's coroutine was made and
before trio took it (the coroutine is then left never awaited, and Python
warns about it on standard error at exit). :func:`run_interruptible`
listens for the first SIGINT or SIGTERM itself: it cancels the run, which
unwinds as any cancellation does (every ``finally`` runs, every bot is
stopped, every game stored so far is kept), and then KeyboardInterrupt is
raised from ``trio.run``'s caller. After the first signal the handlers
are the ones before it again: a second Ctrl-C raises KeyboardInterrupt at
once (through trio's own handler) and a second SIGTERM does what it did
before (by default, end the process), for an unwinding that hangs. A
signal the process ignores (a background job's SIGINT) stays ignored.

>>> import trio
>>> async def quick() -> int:
...     await trio.sleep(0)
...     return 7
>>> run_interruptible(quick)
7
"""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

import trio

__all__ = ["STOPPING_SIGNALS", "run_interruptible"]

T = TypeVar("T")

#: The signals that stop a run: Ctrl-C and a polite kill.
STOPPING_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def run_interruptible(run: Callable[[], Awaitable[T]]) -> T:
    """``trio.run(run)``, where the first SIGINT or SIGTERM cancels ``run``
    and then raises KeyboardInterrupt (with what the cancelled run raised
    on its way out, if anything, as its cause). A run that ends before a
    signal cancels it returns its result. Call it from the main thread."""
    scope = trio.CancelScope()  # cancelled by the first signal alone
    results: list[T] = []
    raised: list[BaseException] = []
    heard = [s for s in STOPPING_SIGNALS if signal.getsignal(s) is not signal.SIG_IGN]

    async def watch(task_status: trio.TaskStatus[None]) -> None:
        # the first signal only: leaving the block puts the handlers back
        with trio.open_signal_receiver(*heard) as signals:
            task_status.started()
            async for _ in signals:
                scope.cancel()
                break

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            if heard:
                await nursery.start(watch)
            try:
                with scope:
                    value = await run()
                    if not scope.cancel_called:  # (a run that went on once cancelled: not done)
                        results.append(value)
            except BaseException as e:  # raised below, outside the nursery's group
                raised.append(e)
            finally:
                nursery.cancel_scope.cancel()
        if raised:
            raise raised[0]

    try:
        trio.run(main)
    except BaseException as e:
        if scope.cancel_called and not isinstance(e, KeyboardInterrupt):
            raise KeyboardInterrupt from e
        raise
    if results:  # (it ended before the signal's cancellation reached it)
        return results[0]
    raise KeyboardInterrupt  # (cancelled: only the signal cancels it)

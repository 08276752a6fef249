"""Ctrl-C (or SIGTERM) stops a hosted run by cancelling it, never by raising
into whatever code happens to be running.

trio's default turns SIGINT into a KeyboardInterrupt raised at once in any
task's code that is not protected from it: between two lines of a table,
or inside ``nursery.start_soon`` after a task's coroutine was made and
before trio took it (the coroutine is then left never awaited, and Python
warns about it on standard error at exit). :func:`run_interruptible`
installs its own handler instead: the signal cancels the run, which
unwinds as any cancellation does (every ``finally`` runs, every game
stored so far is kept), and only then is KeyboardInterrupt raised, from
``trio.run``'s caller's point of view exactly as before.

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
    """``trio.run(run)``, where SIGINT or SIGTERM cancels ``run`` and then
    raises KeyboardInterrupt (whatever the cancelled run raised or returned
    on its way out is its cause, or dropped). Call it from the main thread."""
    stopped: list[int] = []
    results: list[T] = []
    raised: list[BaseException] = []

    async def main() -> None:
        with trio.open_signal_receiver(*STOPPING_SIGNALS) as signals:
            scope = trio.CancelScope()

            async def watch() -> None:
                async for sig in signals:
                    stopped.append(sig)
                    scope.cancel()
                    return

            async with trio.open_nursery() as nursery:
                nursery.start_soon(watch)
                try:
                    with scope:
                        results.append(await run())
                except BaseException as e:  # raised below, outside the nursery's group
                    raised.append(e)
                finally:
                    nursery.cancel_scope.cancel()
        if raised:
            raise raised[0]

    try:
        trio.run(main)
    except BaseException as e:
        if stopped:
            raise KeyboardInterrupt from e
        raise
    if stopped or not results:  # (cancelled: by the signal, nothing else cancels it)
        raise KeyboardInterrupt
    return results[0]

"""Reconnecting: exponential backoff, and what to do after a stream ends
with an error (shared by :func:`~wizard_arena.client.run_bot` and
:func:`~wizard_arena.client.serve_bot`)."""

from __future__ import annotations

import logging
import random
import time

from wizard_arena.client.driver import Driver
from wizard_arena.client.errors import ArenaError, ConnectionLostError
from wizard_arena.protocol.messages import SERVER_SHUTTING_DOWN

__all__ = ["BACKOFF_MAX", "BACKOFF_START", "Backoff", "after_stream_error"]

log = logging.getLogger("wizard_arena.client")

BACKOFF_START = 0.25
"""Seconds before the first retry."""
BACKOFF_MAX = 8.0
"""The longest wait between two retries."""


class Backoff:
    """Delays between connection attempts: from :data:`BACKOFF_START`
    doubling to :data:`BACKOFF_MAX`, with jitter, for at most ``timeout``
    seconds since the first failure after a success (:meth:`reset`)."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.reset()

    def reset(self) -> None:
        self.delay = BACKOFF_START
        self.since: float | None = None

    def next_delay(self, err: ArenaError) -> float:
        """Seconds to wait before the next attempt; re-raises ``err`` when
        reconnecting has taken too long."""
        now = time.monotonic()
        if self.since is None:
            self.since = now
        if now - self.since >= self.timeout:
            raise err
        delay = min(self.delay, max(0.0, self.since + self.timeout - now))
        self.delay = min(self.delay * 2, BACKOFF_MAX)
        return delay * random.uniform(0.8, 1.0)


def after_stream_error(
    e: ArenaError,
    driver: Driver,
    welcomed: bool,
    reconnect: bool,
    backoff: Backoff,
    stop_at_shutdown: bool = False,
) -> float | None:
    """After a stream ended with ``e``: the delay before connecting again (0 to
    retry at once with a fresh session); re-raises ``e`` when the bot must
    stop. None when the server shut down cleanly and ``stop_at_shutdown``:
    the run is over, not failed (``RunResult.server_shut_down``)."""
    shut_down = isinstance(e, ConnectionLostError) and e.details == SERVER_SHUTTING_DOWN
    if stop_at_shutdown and shut_down:
        driver.result.server_shut_down = True
        return None
    if not isinstance(e, ConnectionLostError):
        if driver.refused_resume(e):
            return 0.0
        raise e
    if welcomed:
        driver.reset()
    if not reconnect:
        raise e
    delay = backoff.next_delay(e)
    log.warning("%s; reconnecting in %.2f s", e, delay)
    return delay

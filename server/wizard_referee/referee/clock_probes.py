"""One connection's clock probes: when they are sent, their replies timed.

A bot whose Hello asks for them (``Hello.clock_probes``, protocol v1.2) on
a server that gives a network credit (a cap above 0) gets a
:class:`ClockProbes` for its connection, whose :meth:`~ClockProbes.run` (a
task of the arena's) sends it a ``ClockProbe`` now and then:

- never while a request is open for the bot (the table says when one opens
  and closes: :meth:`~ClockProbes.opened`, :meth:`~ClockProbes.closed`), so
  a bot that reads its stream only between decisions does not answer late
  for its thinking;
- one at a time: the next goes :data:`PROBE_GAP` after the last came back
  until :data:`~.round_trips.MIN_SAMPLES` round trips are in (about a
  second's warm-up for a bot 300 ms away), then every
  :data:`PROBE_INTERVAL`; one unanswered for :data:`PROBE_TIMEOUT` is given
  up (and the next sent);
- each with an id the bot cannot guess (so it cannot answer before it
  receives it).

The warm-up: a table does not seat a bot until its first round trips are
in (:attr:`ClockProbes.warm`, at most :data:`WARM_UP` seconds); until then,
and for a connection that takes a seat back in a game, the credit is the
kernel's measure of the connection alone (:mod:`.round_trips`).

A reply is taken where the connection receives it
(:meth:`SeatBase._deliver <.seat.SeatBase._deliver>`), before anything is
routed to a table: one that quotes no probe in flight is dropped, never a
stray or a fault. Each round trip (trio's clock, from the probe handed to
the transport to its reply handed back) goes to the connection's
:class:`~.round_trips.RoundTrips`, with the kernel's measure of the
connection read then (:mod:`.tcp_rtt`); the table reads the credit of each
request from there (:meth:`~ClockProbes.credit`). A resumed session is a
new connection: its probes, and its samples, start afresh.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

import trio

from wizard_arena.protocol.messages import ClockProbe
from wizard_referee.referee.round_trips import MIN_SAMPLES, RoundTrips

__all__ = ["PROBE_GAP", "PROBE_INTERVAL", "PROBE_TIMEOUT", "WARM_UP", "ClockProbes"]

PROBE_INTERVAL = 10.0
"""Seconds between probes once the estimate has its first samples. A
network's round trip changes seldom, and probes are traffic: with 256 bots
thinking 100 ms each, a probe every 2 s added 0.2-0.3 messages to the 1.1
a lean bot receives per decision (docs/performance.md, "The network
credit")."""
PROBE_GAP = 0.05
"""The least time between two probes (the warm-up's pace)."""
PROBE_TIMEOUT = 5.0
"""Seconds a probe may go unanswered before it is given up."""
WARM_UP = 5.0
"""Seconds from a connection's first probe a table waits for its
:data:`~.round_trips.MIN_SAMPLES` round trips before seating it anyway
(:attr:`ClockProbes.warm`)."""


class ClockProbes:
    """The clock probes of one connection (see the module). ``send`` hands
    a message to the connection; ``kernel_rtt`` reads the kernel's
    ``tcpi_min_rtt`` of it (None: not known; not given: never known);
    ``closed`` says whether the connection has ended."""

    def __init__(
        self,
        send: Callable[[ClockProbe], None],
        closed: Callable[[], bool],
        kernel_rtt: Callable[[], float | None] | None = None,
    ) -> None:
        self.trips = RoundTrips()
        self._send = send
        self._closed = closed
        self._kernel_rtt = kernel_rtt
        self._asking = False
        self._quiet: trio.Event | None = None
        """Set when the open request closes, while :meth:`run` waits for it
        (made only then: a decision makes no event)."""
        self._flight: tuple[str, float] | None = None
        """The probe in flight: its id and when it was sent."""
        self._back = trio.Event()
        self._scope = trio.CancelScope()
        self.sent = 0
        """Probes sent."""
        self.replies = 0
        """Replies timed (to the probe in flight)."""
        self.warm = trio.Event()
        """Set once :data:`~.round_trips.MIN_SAMPLES` round trips are in (or
        the connection ended): a table waits for it, until :attr:`warm_by`."""
        self.warm_by = trio.current_time() + WARM_UP

    # -- what the table says ---------------------------------------------------------

    def opened(self) -> None:
        """A request is open for the bot: no probe is sent until it closes."""
        self._asking = True

    def closed(self, took: float | None = None) -> None:
        """The request closed; ``took``: seconds from the request sent to its
        answer (None: it was not answered)."""
        if took is not None:
            self.trips.answered(took)
        self._asking = False
        quiet, self._quiet = self._quiet, None
        if quiet is not None:
            quiet.set()

    def credit(self, cap: float) -> float:
        """The credit for a request now: the estimated round trip, at most
        ``cap`` (:meth:`.round_trips.RoundTrips.credit`); during the warm-up
        the kernel's measure is read afresh for it."""
        trips = self.trips
        if trips.samples < MIN_SAMPLES and self._kernel_rtt is not None:
            trips.kernel_rtt = self._kernel_rtt()
        return trips.credit(cap)

    # -- what the connection says -------------------------------------------------------

    def reply(self, probe_id: str) -> bool:
        """The bot answered a probe (in trio, as the reply arrives): whether
        it answered the probe in flight."""
        flight = self._flight
        if flight is None or probe_id != flight[0]:
            return False  # late, repeated or made up: dropped
        self._flight = None
        self.trips.probed(trio.current_time() - flight[1])
        self.replies += 1
        if self.trips.samples >= MIN_SAMPLES:
            self.warm.set()
        if self._kernel_rtt is not None:
            self.trips.kernel_rtt = self._kernel_rtt()
        self._back.set()
        return True

    # -- the probes -------------------------------------------------------------------

    def stop(self) -> None:
        """The connection ended: no more probes (:meth:`run` returns)."""
        self._scope.cancel()
        self.warm.set()

    async def run(self) -> None:
        """Probe the connection until it ends (or :meth:`stop`)."""
        with self._scope:
            await self._probe()

    async def _probe(self) -> None:
        while not self._closed():
            while self._asking:
                self._quiet = quiet = trio.Event()
                await quiet.wait()
            if self._closed():
                return
            probe_id = secrets.token_urlsafe(6)
            self._back = trio.Event()
            self._flight = (probe_id, trio.current_time())
            self._send(ClockProbe(probe_id))
            self.sent += 1
            with trio.move_on_after(PROBE_TIMEOUT):
                await self._back.wait()
            self._flight = None
            warm = self.trips.samples >= MIN_SAMPLES
            await trio.sleep(PROBE_INTERVAL if warm else PROBE_GAP)

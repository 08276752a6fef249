"""The front door: what a stream that has not been greeted yet may cost.

Anyone who can reach the port can open a ``Play`` stream, without a token.
Until its Hello has been answered such a stream is bounded here, by peer
address (:func:`peer_key`: an IPv4 address, an IPv6 one by its /64 network,
as a host usually gets a whole /64):

- streams greeting at once: at most ``max_greeting`` in all and
  ``max_greeting_per_peer`` per peer (:class:`~.policy.RefereePolicy`;
  not for this machine's own: :func:`is_local`); a further one ends at
  once with RESOURCE_EXHAUSTED, and each gets ``hello_timeout`` seconds
  to say Hello;
- failed authentications: after :data:`FREE_FAILURES` in a row from one
  peer, its new streams are refused (RESOURCE_EXHAUSTED, saying for how
  long) for ``auth_backoff`` seconds, doubling with each further failure
  up to :data:`MAX_BACKOFF_FACTOR` times; a Hello from the peer that
  authenticates clears its record. At most :data:`MAX_PEERS` peers are
  remembered (the oldest failure is forgotten first).

Pure bookkeeping on trio's clock (times are given): the arena asks it at
each new stream (:meth:`FrontDoor.enter`) and tells it how the stream's
greeting ended.

>>> door = FrontDoor(max_greeting=2, per_peer=1, backoff=1.0)
>>> a = peer_key("ipv4:10.0.0.1:4000")
>>> door.enter(a, 0.0) is None, door.enter(a, 0.0)
(True, 'too many streams without a Hello from this address (1 at most)')
>>> door.leave(a)
>>> [door.failed(a, 0.0) for _ in range(FREE_FAILURES + 2)]
[0.0, 0.0, 0.0, 1.0, 2.0]
>>> door.enter(a, 1.5)
'too many failed authentications from this address: retry in 0.5 s'
>>> door.enter(a, 2.0), door.leave(a)
(None, None)
"""

from __future__ import annotations

import ctypes
import gc
import ipaddress
from collections import OrderedDict
from dataclasses import dataclass

from wizard_referee.referee.tcp_rtt import parse_peer

__all__ = [
    "FREE_FAILURES",
    "MAX_BACKOFF_FACTOR",
    "MAX_PEERS",
    "TRIM_CHURN",
    "FrontDoor",
    "is_local",
    "peer_key",
    "release_freed_memory",
]

FREE_FAILURES = 3
"""Failed authentications in a row a peer may have before its back-off."""
MAX_BACKOFF_FACTOR = 64
"""The longest back-off, in units of ``auth_backoff``."""
MAX_PEERS = 4096
"""Peers whose failed authentications are remembered at most."""
TRIM_CHURN = 256
"""New streams in one check period (:func:`release_freed_memory`) that
make a flood: once one is over, freed memory goes back to the system."""


def release_freed_memory() -> bool:
    """Collect the garbage a flood of streams left (its streams' cycles),
    then give the memory the C allocator holds free back to the system
    (glibc's ``malloc_trim(0)``, every arena): grpc core's and Python's
    freed blocks otherwise stay in the process's RSS. False where there is
    no ``malloc_trim`` (not glibc)."""
    gc.collect()
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return False
    trim(0)
    return True


def peer_key(peer: str) -> str:
    """The address a gRPC peer string is counted under: the IPv4 address
    (an IPv4-mapped IPv6 one too), the /64 network of an IPv6 one, the
    peer string itself for anything else (a Unix socket, ``memory``).

    >>> peer_key("ipv4:127.0.0.1:5555"), peer_key("ipv6:[::ffff:10.1.2.3]:80")
    ('127.0.0.1', '10.1.2.3')
    >>> peer_key("ipv6:[2001:db8:1:2:aaaa::1]:443"), peer_key("ipv6:[::1]:1"), peer_key("unix:")
    ('2001:db8:1:2::/64', '::1', 'unix:')
    """
    found = parse_peer(peer)
    if found is None:
        return peer
    address = ipaddress.ip_address(found[0])
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        if not address.is_loopback:
            return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def is_local(key: str) -> bool:
    """Whether peer ``key`` (:func:`peer_key`) is this machine: a loopback
    address or a Unix socket (the per-peer cap does not apply: every local
    process is one address, a host's entrants and benches among them).

    >>> is_local("127.0.0.1"), is_local("::1"), is_local("unix:"), is_local("10.0.0.1")
    (True, True, True, False)
    """
    if key.startswith("unix:"):
        return True
    try:
        return ipaddress.ip_network(key, strict=False).is_loopback
    except ValueError:
        return False


@dataclass(slots=True)
class _Failures:
    count: int
    until: float
    """trio time until which the peer's new streams are refused."""


class FrontDoor:
    """The streams greeting now and the peers' failed authentications (see
    the module); a limit of 0 is no limit, a ``backoff`` of 0 no back-off."""

    def __init__(self, max_greeting: int, per_peer: int, backoff: float) -> None:
        self.max_greeting = max_greeting
        self.per_peer = per_peer
        self.backoff = backoff
        self.greeting = 0
        """Streams entered and not yet left."""
        self.opened = 0
        """Streams that knocked (refused or not)."""
        self._by_peer: dict[str, int] = {}
        self._failures: OrderedDict[str, _Failures] = OrderedDict()

    def greeting_from(self, key: str) -> int:
        """Streams from peer ``key`` greeting now."""
        return self._by_peer.get(key, 0)

    def blocked(self, key: str, now: float) -> float:
        """Seconds peer ``key`` is still refused for its failed
        authentications (0: it is not)."""
        f = self._failures.get(key)
        return max(0.0, f.until - now) if f is not None else 0.0

    def enter(self, key: str, now: float) -> str | None:
        """A new stream from peer ``key``: why it is refused (the status
        details), or None when it may greet (then :meth:`leave` once its
        greeting ends)."""
        self.opened += 1
        wait = self.blocked(key, now)
        if wait > 0:
            return f"too many failed authentications from this address: retry in {wait:.3g} s"
        if self.max_greeting and self.greeting >= self.max_greeting:
            return f"too many streams without a Hello ({self.max_greeting} at most)"
        n = self._by_peer.get(key, 0)
        if self.per_peer and n >= self.per_peer and not is_local(key):
            return f"too many streams without a Hello from this address ({self.per_peer} at most)"
        self.greeting += 1
        self._by_peer[key] = n + 1
        return None

    def leave(self, key: str) -> None:
        """The greeting of a stream from ``key`` has ended (however)."""
        self.greeting -= 1
        n = self._by_peer[key] - 1
        if n:
            self._by_peer[key] = n
        else:
            del self._by_peer[key]

    def failed(self, key: str, now: float) -> float:
        """Peer ``key`` failed to authenticate: the back-off it starts
        (seconds; 0 while within :data:`FREE_FAILURES`)."""
        f = self._failures.pop(key, None) or _Failures(0, 0.0)
        f.count += 1
        self._failures[key] = f  # the most recent last
        while len(self._failures) > MAX_PEERS:
            self._failures.popitem(last=False)
        beyond = f.count - FREE_FAILURES
        if beyond <= 0 or not self.backoff:
            return 0.0
        wait: float = self.backoff * min(1 << (beyond - 1), MAX_BACKOFF_FACTOR)
        f.until = now + wait
        return wait

    def failures(self, key: str) -> int:
        """Failed authentications in a row of peer ``key``."""
        f = self._failures.get(key)
        return f.count if f is not None else 0

    def passed(self, key: str) -> None:
        """Peer ``key`` authenticated: its failures are forgotten."""
        self._failures.pop(key, None)

"""The referee's policy: deadlines, network credit, time bank, fault policy,
reconnecting, limits.

One frozen :class:`RefereePolicy`, validated once when it is made, is what
``serve`` builds from its flags (:meth:`RefereePolicy.from_mapping` of the
parsed arguments), what a tournament builds from its ``[tournament]``
section, and what ``check`` sets; :class:`~wizard_referee.referee.arena.ArenaConfig`
carries it to the arena and its tables.

>>> RefereePolicy(move_time=0.5, fault_policy="remove").fault_policy
<FaultPolicy.REMOVE: 'remove'>
>>> RefereePolicy(max_faults=0)
Traceback (most recent call last):
...
wizard_referee.referee.policy.PolicyError: max_faults must be at least 1
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from wizard_referee.referee.faults import FAULT_POLICIES, FaultPolicy

__all__ = ["PolicyError", "RefereePolicy"]


class PolicyError(ValueError):
    """A setting of the policy that cannot be: ``field`` and what is wrong with it."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"{field} {problem}")

    def flag(self) -> str:
        """The message with the command-line flag's name (``--move-time must be positive``)."""
        return f"--{self.field.replace('_', '-')} {self.problem}"


@dataclass(frozen=True, slots=True)
class RefereePolicy:
    """How the referee treats bots (every field has a ``serve`` flag or a
    ``[tournament]`` key of the same name, except where said)."""

    move_time: float = 1.0
    """Seconds allowed for each decision."""
    lag_credit_cap: float = 0.5
    """Seconds of network credit a decision gets at most: the bot's round
    trip as its clock probes measure it (docs/protocol.md, "Fair clocks: the
    network credit") is added to each deadline, up to this. 0: no credit, and
    no clock probes are sent."""
    lag_credit_behind_proxy: bool = False
    """Bots reach the referee through a proxy (or a relay): the kernel's
    measure of a connection is the proxy's, so the credit is bounded by the
    cap and the bot's fastest answers alone."""
    time_bank: float = 0.0
    """Seconds per seat and game a decision may run past ``move_time`` by
    drawing on (0: none)."""
    fault_policy: FaultPolicy = FaultPolicy.DEFAULT
    """What a fault costs beyond the default action: ``default`` (nothing),
    ``forfeit_round`` or ``remove`` (after ``max_faults``); see
    :mod:`wizard_referee.referee.faults`."""
    max_faults: int = 3
    """Faults in one game after which fault policy ``remove`` removes the seat."""
    reconnect_window: float = 30.0
    """Seconds a bot whose connection dropped in a game may take its seat
    back (Hello.resume_token); 0 disables resuming (no resume token is issued)."""
    max_consecutive_timeouts: int = 10
    """Decisions in a row (over its games) a bot may let time out; at the
    next its stream ends with DEADLINE_EXCEEDED and it is not seated again
    (it may connect again). 0: no limit."""
    hello_timeout: float = 5.0
    """Seconds a new stream has to send its Hello; then it ends with
    INVALID_ARGUMENT ``no Hello within the hello timeout``."""
    max_greeting: int = 256
    """Open streams at most that have not had their Hello answered yet; a
    further one ends at once with RESOURCE_EXHAUSTED. 0: no limit."""
    max_greeting_per_peer: int = 16
    """The same from one peer address (an IPv6 one by its /64 network; not
    for loopback or a Unix socket: :func:`~.front_door.is_local`). 0: no
    limit."""
    auth_backoff: float = 1.0
    """Seconds a peer address is refused new streams after its
    :data:`~.front_door.FREE_FAILURES` failed authentications in a row,
    doubling with each further failure (up to 64 times this); a Hello that
    authenticates ends it. 0: no back-off."""
    inbound_limit: int = 64
    """Messages a bot may have queued unread before it is cut off for
    flooding (no flag)."""
    outbound_limit: int = 256
    """Messages waiting for a bot that does not read (gRPC's flow-control
    window for its stream is full) before its stream ends with
    RESOURCE_EXHAUSTED (no flag)."""
    max_message_bytes: int = 64 * 1024
    """Largest message a bot may send."""
    max_connections: int = 0
    """Open Play streams at most (lobby, tables and greeting); a further one
    ends at once with RESOURCE_EXHAUSTED ``server full``. 0: no limit."""
    max_sessions_per_token: int = 0
    """Connected sessions at most per (non-empty) access token; a further
    Hello with that token is refused with RESOURCE_EXHAUSTED. 0: no limit."""
    reseat_delay: float = 0.5
    """Matchmaking waits this long after a bot's game ends before seating it
    again, so a bot that stops after its last game can leave first."""

    #: field -> (the least value, whether the least value itself is allowed)
    _LEAST: ClassVar[dict[str, tuple[float, bool]]] = {
        "move_time": (0, False),
        "lag_credit_cap": (0, True),
        "time_bank": (0, True),
        "max_faults": (1, True),
        "reconnect_window": (0, True),
        "max_consecutive_timeouts": (0, True),
        "hello_timeout": (0, False),
        "max_greeting": (0, True),
        "max_greeting_per_peer": (0, True),
        "auth_backoff": (0, True),
        "inbound_limit": (1, True),
        "outbound_limit": (1, True),
        "max_message_bytes": (0, False),
        "max_connections": (0, True),
        "max_sessions_per_token": (0, True),
        "reseat_delay": (0, True),
    }

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "fault_policy", FaultPolicy(self.fault_policy))
        except ValueError:
            choices = ", ".join(FAULT_POLICIES)
            raise PolicyError(
                "fault_policy", f"must be one of {choices}, not {self.fault_policy!r}"
            ) from None
        for f in fields(self):
            if f.name in self._LEAST:
                self._check(f.name, getattr(self, f.name), f.type == "int")

    def _check(self, name: str, value: Any, whole: bool) -> None:
        least, inclusive = self._LEAST[name]
        if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)):
            kind = "a whole number" if whole else "a number of seconds"
            raise PolicyError(name, f"must be {kind}, not {value!r}")
        if not whole and not math.isfinite(value):
            raise PolicyError(name, f"must be a finite number of seconds, not {value!r}")
        if inclusive and value < least:
            problem = "must not be negative" if least == 0 else f"must be at least {least}"
            raise PolicyError(name, problem)
        if not inclusive and value <= least:
            raise PolicyError(name, "must be positive")

    @classmethod
    def from_mapping(cls, settings: Mapping[str, Any]) -> RefereePolicy:
        """The policy set by the keys of ``settings`` that name its fields
        (the others are the caller's and are ignored; a missing or ``None``
        one keeps its default): a ``[tournament]`` section, or the
        ``vars()`` of ``serve``'s parsed arguments. PolicyError names the
        field that cannot be."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in settings.items() if k in names and v is not None})

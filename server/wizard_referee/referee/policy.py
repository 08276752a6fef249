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

import argparse
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from wizard_referee.referee.faults import FAULT_POLICIES, FaultPolicy

__all__ = ["SETTINGS", "PolicyError", "RefereePolicy", "Setting"]


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

    def __post_init__(self) -> None:
        try:
            object.__setattr__(self, "fault_policy", FaultPolicy(self.fault_policy))
        except ValueError:
            choices = ", ".join(FAULT_POLICIES)
            raise PolicyError(
                "fault_policy", f"must be one of {choices}, not {self.fault_policy!r}"
            ) from None
        for setting in SETTINGS.values():
            problem = setting.problem(getattr(self, setting.name))
            if problem is not None:
                raise PolicyError(setting.name, problem)

    @classmethod
    def from_mapping(cls, settings: Mapping[str, Any]) -> RefereePolicy:
        """The policy set by the keys of ``settings`` that name its fields
        (the others are the caller's and are ignored; a missing or ``None``
        one keeps its default): a ``[tournament]`` section, or the
        ``vars()`` of ``serve``'s parsed arguments. PolicyError names the
        field that cannot be."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in settings.items() if k in names and v is not None})


SEASON = "season"
"""A setting fixed for a whole competition, so that its games compare: a
``[tournament]`` key, a ``ladder create`` flag, a ``serve`` flag."""
PROCESS = "process"
"""A setting of the running referee (its front door and limits): a
``[tournament]`` key, a ``ladder run`` flag, a ``serve`` flag."""
SERVE = "serve"
"""A setting of ``serve``'s matchmaking alone (a tournament and a ladder
seat their own games): a ``serve`` flag."""
INTERNAL = "internal"
"""A setting with no flag or key (tests and embedders set it)."""


@dataclass(frozen=True, slots=True)
class Setting:
    """One field of :class:`RefereePolicy` as the command line and the
    configuration files offer it: the one source from which ``serve``'s,
    ``ladder create``'s and ``ladder run``'s flags and the ``[tournament]``
    keys are made, and the bound :class:`RefereePolicy` checks.

    >>> SETTINGS["hello_timeout"].flag, SETTINGS["hello_timeout"].problem(0)
    ('--hello-timeout', 'must be positive')
    >>> SETTINGS["max_greeting"].problem(-1), SETTINGS["max_faults"].problem(2.5)
    ('must not be negative', 'must be a whole number, not 2.5')
    """

    name: str
    kind: str
    """``seconds``, ``whole``, ``flag`` or ``choice``."""
    scope: str
    """:data:`SEASON`, :data:`PROCESS`, :data:`SERVE` or :data:`INTERNAL`."""
    help: str
    """What the flag does, without its default."""
    least: float = 0
    """The least value of a number."""
    inclusive: bool = True
    """Whether :attr:`least` itself is allowed."""
    zero: str = ""
    """What 0 means, where it means something of its own (``no limit``)."""
    example: str = ""
    """A good value as a TOML file writes it."""
    metavar: str | None = None
    choices: tuple[str, ...] = ()

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def default(self) -> Any:
        value = _DEFAULTS[self.name]
        return value.value if isinstance(value, FaultPolicy) else value

    def problem(self, value: Any) -> str | None:
        """What is wrong with ``value`` for this setting (None: nothing)."""
        if self.kind == "flag":
            return None if type(value) is bool else f"must be true or false, not {value!r}"
        if self.kind == "choice":
            if value in self.choices:
                return None
            return f"must be one of {', '.join(self.choices)}, not {value!r}"
        whole = self.kind == "whole"
        if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)):
            kind = "a whole number" if whole else "a number of seconds"
            return f"must be {kind}, not {value!r}"
        if not whole and not math.isfinite(value):
            return f"must be a finite number of seconds, not {value!r}"
        least = int(self.least) if whole else self.least
        if self.inclusive and value < least:
            return "must not be negative" if least == 0 else f"must be at least {least}"
        if not self.inclusive and value <= least:
            return "must be positive"
        return None

    def what(self) -> str:
        """Completes "KEY must be ...": ``a number of seconds, 0 or more``."""
        if self.kind == "flag":
            return "true or false"
        if self.kind == "choice":
            return "one of " + ", ".join(f'"{c}"' for c in self.choices)
        unit = "a whole number" if self.kind == "whole" else "a number of seconds"
        least = int(self.least) if self.kind == "whole" else self.least
        return f"{unit}, {least:g} or more" if self.inclusive else f"{unit} above {least:g}"

    def flag_help(self, default: Any = None) -> str:
        """The flag's help with its default (``default``: the policy's)."""
        default = self.default if default is None else default
        if self.kind in ("flag", "choice"):
            return self.help  # (a choice's help names its default)
        shown = f"{default:g}" if isinstance(default, float) else str(default)
        if self.zero and default == 0:
            return f"{self.help} (default 0: {self.zero})"
        if self.zero:
            return f"{self.help} (default {shown}; 0: {self.zero})"
        return f"{self.help} (default {shown})"


def _settings(*rows: Setting) -> dict[str, Setting]:
    return {row.name: row for row in rows}


_DEFAULTS: dict[str, Any] = {f.name: f.default for f in fields(RefereePolicy)}

#: Every field of :class:`RefereePolicy`, in the order its flags are listed.
SETTINGS: dict[str, Setting] = _settings(
    Setting(
        "move_time",
        "seconds",
        SEASON,
        "deadline per decision",
        inclusive=False,
        example="1.0",
        metavar="SECONDS",
    ),
    Setting(
        "lag_credit_cap",
        "seconds",
        SEASON,
        "most network credit a decision gets: the round trip of each bot that asks for "
        "clock probes is measured and added to its deadlines, up to this; see docs/protocol.md",
        zero="no credit and no probes",
        example="0.5",
        metavar="SECONDS",
    ),
    Setting(
        "time_bank",
        "seconds",
        SEASON,
        "per seat and game: time a decision may run past the move time by drawing on it",
        zero="none",
        example="2.0",
        metavar="SECONDS",
    ),
    Setting(
        "fault_policy",
        "choice",
        SEASON,
        "what a fault costs beyond the default action: default (nothing more; the "
        "default), forfeit_round (the round: -10 points per card dealt) or remove (after "
        "max faults in a game, the seat)",
        choices=FAULT_POLICIES,
        example='"default"',
    ),
    Setting(
        "max_faults",
        "whole",
        SEASON,
        "faults in one game after which fault policy remove removes the seat",
        least=1,
        example="3",
        metavar="K",
    ),
    Setting(
        "reconnect_window",
        "seconds",
        SEASON,
        "a bot whose connection drops in a game may take its seat back within this time "
        "(Hello.resume_token)",
        zero="never",
        example="30",
        metavar="SECONDS",
    ),
    Setting(
        "lag_credit_behind_proxy",
        "flag",
        PROCESS,
        "bots reach the referee through a proxy: the kernel's round trip of a connection "
        "is the proxy's, so only the cap and the bot's fastest answers bound its credit",
        example="true",
    ),
    Setting(
        "max_connections",
        "whole",
        PROCESS,
        "open bot streams at most; more are refused with RESOURCE_EXHAUSTED",
        zero="no limit",
        example="100",
        metavar="N",
    ),
    Setting(
        "hello_timeout",
        "seconds",
        PROCESS,
        "a new stream must send its Hello within this time",
        inclusive=False,
        example="5",
        metavar="SECONDS",
    ),
    Setting(
        "max_greeting",
        "whole",
        PROCESS,
        "streams at most that have not had their Hello answered; more are refused with "
        "RESOURCE_EXHAUSTED",
        zero="no limit",
        example="256",
        metavar="N",
    ),
    Setting(
        "max_greeting_per_peer",
        "whole",
        PROCESS,
        "the same from one address, an IPv6 one by its /64, loopback and Unix sockets excepted",
        zero="no limit",
        example="16",
        metavar="N",
    ),
    Setting(
        "auth_backoff",
        "seconds",
        PROCESS,
        "after 3 failed authentications in a row from one address, its new streams are "
        "refused for this long, doubling with each further failure up to 64 times",
        zero="no back-off",
        example="1.0",
        metavar="SECONDS",
    ),
    Setting(
        "max_sessions_per_token",
        "whole",
        PROCESS,
        "connected sessions at most per access token",
        zero="no limit",
        example="2",
        metavar="N",
    ),
    Setting(
        "max_message_bytes",
        "whole",
        PROCESS,
        "largest message a bot may send",
        inclusive=False,
        example="65536",
        metavar="BYTES",
    ),
    Setting(
        "max_consecutive_timeouts",
        "whole",
        PROCESS,
        "a bot whose last N decisions all timed out is cut off (DEADLINE_EXCEEDED) and not "
        "seated again until it connects again",
        zero="never",
        example="10",
        metavar="N",
    ),
    Setting(
        "reseat_delay",
        "seconds",
        SERVE,
        "pause after a bot's game before seating it again, so a bot that stops after its "
        "last game can leave first",
        example="0.5",
        metavar="SECONDS",
    ),
    Setting("inbound_limit", "whole", INTERNAL, "unread messages before a flood", least=1),
    Setting("outbound_limit", "whole", INTERNAL, "unsent messages before a cut-off", least=1),
)
assert set(SETTINGS) == set(_DEFAULTS), set(SETTINGS) ^ set(_DEFAULTS)


def names(scope: str) -> tuple[str, ...]:
    """The settings of one scope, in :data:`SETTINGS`' order."""
    return tuple(name for name, s in SETTINGS.items() if s.scope == scope)


def add_flags(
    parser: argparse._ActionsContainer,
    settings: Iterable[str],
    *,
    defaults: Mapping[str, Any] | None = None,
    unset: bool = False,
) -> None:
    """Add the flags of ``settings`` to ``parser`` (or an argument group),
    each to ``dest`` of its field's name: with the policy's default, one of
    ``defaults`` instead, or none at all (``unset``: the flag is ``None``
    when not given, so that a file's or a store's value stands)."""
    for name in settings:
        s = SETTINGS[name]
        default = s.default if unset else (defaults or {}).get(name, s.default)
        common: dict[str, Any] = {
            "default": None if unset else default,
            "help": s.flag_help(default),
        }
        if s.kind == "flag":
            parser.add_argument(s.flag, action="store_true", **common)
        elif s.kind == "choice":
            parser.add_argument(s.flag, choices=s.choices, **common)
        else:
            kind = float if s.kind == "seconds" else int
            parser.add_argument(s.flag, type=kind, metavar=s.metavar, **common)

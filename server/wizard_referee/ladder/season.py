"""A season's settings, fixed when the ladder is created (``ladder create``):
the table size, the seatings of a duplicate set, the rules, how the referee
treats the bots, and whether hosted entrants run confined. Every set of the
season is played under them, so that its results compare.

>>> s = Season("spring", players=3, rules=Rules(players=3, hand_sizes=(1, 2)))
>>> s.games_per_set, Season.from_json(s.to_json(), "spring") == s
(6, True)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from wizard_arena.rules import Rules
from wizard_referee.referee.policy import SEASON, RefereePolicy, names
from wizard_referee.sandbox import SANDBOXES
from wizard_referee.tournament.seating import DEFAULT_SEATING, SEATINGS, games_per_deal

__all__ = ["POLICY_KEYS", "Season", "SeasonError"]

#: The referee's settings a season fixes (the rest are the running process's):
#: the :data:`~wizard_referee.referee.policy.SETTINGS` of scope ``season``.
POLICY_KEYS = names(SEASON)


class SeasonError(ValueError):
    """A setting that cannot be (one line)."""


@dataclass(frozen=True)
class Season:
    name: str
    players: int = 4
    seating: str = DEFAULT_SEATING
    """The seatings of a duplicate set (:mod:`wizard_referee.tournament.seating`)."""
    rules: Rules = field(default_factory=Rules)
    policy: dict[str, Any] = field(default_factory=dict)
    """The :data:`POLICY_KEYS` given (the others keep the referee's defaults)."""
    sandbox: str = "none"
    """How hosted entrants run: ``bwrap`` (confined) or ``none``."""

    def __post_init__(self) -> None:
        if self.rules.players != self.players:
            raise SeasonError(f"the rules seat {self.rules.players}, the tables {self.players}")
        if self.seating not in SEATINGS:
            raise SeasonError(f"seating must be one of {', '.join(SEATINGS)}")
        if self.sandbox not in SANDBOXES:
            raise SeasonError(f"sandbox must be none or bwrap, not {self.sandbox!r}")
        unknown = set(self.policy) - set(POLICY_KEYS)
        if unknown:
            raise SeasonError(f"not a season's setting: {', '.join(sorted(unknown))}")
        self.referee_policy()  # PolicyError (a ValueError) names what cannot be

    @property
    def games_per_set(self) -> int:
        """Games of one duplicate set: one deal in every seating of the design."""
        return games_per_deal(self.players, self.seating)

    def referee_policy(self, **running: Any) -> RefereePolicy:
        """The referee's policy: the season's settings and the running
        process's own (``max_sessions_per_token``, ``max_connections``, ...)."""
        return RefereePolicy.from_mapping({**self.policy, **running})

    def to_json(self) -> str:
        return json.dumps(
            {
                "players": self.players,
                "seating": self.seating,
                "rules": self.rules.to_dict(),
                "policy": self.policy,
                "sandbox": self.sandbox,
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str, name: str = "") -> Season:
        data = json.loads(text)
        return cls(
            name,
            players=int(data["players"]),
            seating=str(data["seating"]),
            rules=Rules.from_dict(data["rules"]),
            policy=dict(data["policy"]),
            sandbox=str(data["sandbox"]),
        )

    def describe(self) -> str:
        p = self.referee_policy()
        return (
            f"{self.rules.describe()}, duplicate sets of {self.games_per_set} games "
            f"(seating {self.seating}), move time {p.move_time:g} s, "
            f"network credit up to {p.lag_credit_cap:g} s"
        )

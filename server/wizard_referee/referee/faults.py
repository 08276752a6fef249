"""Fault policy: what a fault costs a seat beyond the default action, in one place.

A fault (:class:`~wizard_arena.protocol.codes.FaultCode`) is always recorded
against the seat and, for a decision the bot did not make in time, answered
by the default action. The policy in force (docs/protocol-reference.md, "Fault
policy") may cost the seat more:

- ``default``: nothing more;
- ``forfeit_round``: the seat's decisions for the rest of the round are the
  default policy's (the open one too), and the round scores
  :data:`FORFEIT_POINTS_PER_CARD` per card dealt (a referee penalty, kept
  apart from the rules' scores);
- ``remove``: after ``max_faults`` faults in one game the default policy plays
  the seat to the end, and nothing more is held against it.

:class:`FaultBook` keeps one game's faults and sanctions; the table asks it
what a fault costs and whether it may still ask a seat for its decision.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from wizard_arena.protocol.codes import FaultCode

if TYPE_CHECKING:
    from wizard_arena.rules import RoundResult
    from wizard_referee.referee.record import GameRecord

__all__ = [
    "FAULT_CODES",
    "FAULT_POLICIES",
    "FORFEIT_POINTS_PER_CARD",
    "FaultBook",
    "FaultPolicy",
    "Sanction",
]


class FaultPolicy(enum.StrEnum):
    """What a fault costs the seat beyond the default action."""

    DEFAULT = "default"
    FORFEIT_ROUND = "forfeit_round"
    REMOVE = "remove"


#: The fault policies by name (``--fault-policy`` choices, ``[tournament] fault_policy``).
FAULT_POLICIES: tuple[str, ...] = tuple(FaultPolicy)


class Sanction(enum.StrEnum):
    """Why the default policy plays a seat's decision under the fault policy
    (recorded as the move's ``fault``)."""

    FORFEIT_ROUND = "forfeit_round"
    """The seat forfeited the round (fault policy ``forfeit_round``)."""
    REMOVED = "removed"
    """The seat was removed from the game (fault policy ``remove``)."""


#: What each fault code means (docs/protocol-reference.md, "Fault codes", lists exactly these).
FAULT_CODES: dict[str, str] = {
    FaultCode.TIMEOUT: "no valid answer before the deadline; the default action was played",
    FaultCode.ILLEGAL: "an action the rules refuse (it was rejected; the bot could retry in time)",
    FaultCode.MALFORMED: "a message that did not decode, an action without a usable choice, "
    "or an action quoting a request id that was never issued",
    FaultCode.DISCONNECT: "the connection dropped (once per drop); the default policy played "
    "for the seat until the bot resumed its session, if it did",
    FaultCode.FLOODING: "the bot sent messages faster than the inbound queue allows; cut off",
    FaultCode.CRASH: "a bot process the tournament launched exited during the game (recorded "
    "instead of its disconnect), or its entrant runs no more: it never connected, or "
    "crashed past its restarts (the seat was played by the default action)",
}

#: Points a forfeited round scores, per card dealt in it.
FORFEIT_POINTS_PER_CARD = -10


class FaultBook:
    """The faults of one game and what they cost, kept here: by seat the
    count of each fault code and the detail of its first occurrence, the
    round the seat was removed in (fault policy ``remove``) and the rounds
    it forfeited (``forfeit_round``), and the penalties those rounds cost;
    :meth:`write` puts them in the game's record."""

    def __init__(self, policy: FaultPolicy, max_faults: int, seats: int) -> None:
        self.policy = policy
        self.max_faults = max_faults
        self.counts: list[dict[str, int]] = [{} for _ in range(seats)]
        """By seat: fault code -> count."""
        self.details: list[dict[str, str]] = [{} for _ in range(seats)]
        """By seat: fault code -> the detail of its first occurrence."""
        self.removed_in: list[int | None] = [None] * seats
        """By seat: the round it was removed in (fault policy ``remove``), or None."""
        self.forfeited: list[set[int]] = [set() for _ in range(seats)]
        """By seat: the rounds it forfeited (fault policy ``forfeit_round``)."""
        self.penalties: list[dict[str, Any]] = []
        """The referee penalties (:attr:`GameRecord.penalties`), once added."""

    def removed(self, seat: int) -> bool:
        """Whether the seat is out of the game (nothing more is held against it)."""
        return self.removed_in[seat] is not None

    def charge(self, seat: int, code: FaultCode, detail: str, round_: int) -> Sanction | None:
        """Count a fault of ``seat`` in round ``round_`` (0: before the first
        deal, which counts as round 1). Returns the sanction the fault puts in
        force now (the seat's open decision, if any, is the default
        policy's too), or None. Call only for a seat not :meth:`removed`."""
        counts = self.counts[seat]
        counts[code] = counts.get(code, 0) + 1
        self.details[seat].setdefault(code, detail)
        rnd = max(round_, 1)
        if self.policy is FaultPolicy.FORFEIT_ROUND:
            if rnd in self.forfeited[seat]:
                return None  # a forfeited round costs nothing more
            self.forfeited[seat].add(rnd)
            return Sanction.FORFEIT_ROUND
        if self.policy is FaultPolicy.REMOVE and sum(counts.values()) >= self.max_faults:
            self.removed_in[seat] = rnd
            return Sanction.REMOVED
        return None

    def benched(self, seat: int, round_: int) -> Sanction | None:
        """Why the default policy plays the seat's decisions in round
        ``round_`` under the fault policy, if it does."""
        if self.removed(seat):
            return Sanction.REMOVED
        if round_ in self.forfeited[seat]:
            return Sanction.FORFEIT_ROUND
        return None

    def add_penalties(self, results: Sequence[RoundResult], dealt: Sequence[Sequence[int]]) -> None:
        """Add the referee penalties (fault policy ``forfeit_round``) that
        make each forfeited round of a seat score FORFEIT_POINTS_PER_CARD per
        card dealt (``dealt``: by round, the cards each seat was dealt), for
        the rounds played (``results``: the rules' own)."""
        for seat, rounds in enumerate(self.forfeited):
            for rnd in sorted(rounds):
                if rnd > len(results):
                    continue
                scored = results[rnd - 1].points[seat]
                self.penalties.append(
                    {
                        "round": rnd,
                        "seat": seat,
                        "points": FORFEIT_POINTS_PER_CARD * dealt[rnd - 1][seat] - scored,
                        "reason": Sanction.FORFEIT_ROUND,
                    }
                )

    def write(self, record: GameRecord) -> None:
        """Put the faults so far in ``record`` (``faults``, ``fault_details``,
        ``removed``, ``penalties``): after each fault, so that a game in
        progress shows them (spectators), and at its end."""
        record.faults = [dict(c) for c in self.counts]
        record.fault_details = [dict(d) for d in self.details]
        record.removed = list(self.removed_in)
        record.penalties = list(self.penalties)

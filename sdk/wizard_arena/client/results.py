"""What a bot's run came to: :class:`RunResult`, and the client's own
records of its decisions and faults (:class:`ClientRecord`).

The referee records the faults it sees (a timeout, an illegal action); some
things only the client sees: the bot raised or answered something it may not
play (the SDK sent the referee's default instead, so the referee saw a legal
move), answered after its deadline, or had its ``AsyncBot`` decision
cancelled; and how long each decision really took. The SDK records each as a
:class:`ClientRecord`, keeps them on :attr:`RunResult.records`, and
``wizard-arena bot --report FILE`` writes them as JSON lines (one object per
line, :meth:`ClientRecord.to_dict`; the last line is the run's summary,
:func:`summary`), which ``wizard-arena check`` reads.

>>> r = ClientRecord(RecordKind.OVERRUN, "g1", "g1-7", 2, "bid", seconds=0.61, time_left=0.5)
>>> ClientRecord.from_dict(json.loads(json.dumps(r.to_dict()))) == r
True
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from wizard_arena.bot import GameSummary
from wizard_arena.protocol.messages import FaultSummary, Welcome

__all__ = [
    "EXIT_BOT_ERRORS",
    "ClientRecord",
    "RecordKind",
    "RunResult",
    "read_report",
    "summary",
]


class RecordKind(enum.StrEnum):
    """What a :class:`ClientRecord` records."""

    DECISION = "decision"
    """The bot was asked for a decision: ``seconds`` it took (from the
    request's arrival), ``time_left`` it had, ``action`` the action sent
    (``""``: nothing was sent, the deadline had passed)."""
    BOT_ERROR = "bot_error"
    """The bot raised (``code`` ``raised``, ``detail`` the exception) or
    answered an action it may not play (``code`` ``illegal``, ``action`` its
    answer, ``detail`` why); the SDK sent the referee's default instead."""
    OVERRUN = "overrun"
    """The bot answered after the deadline (``seconds`` it took, ``time_left``
    it had): nothing was sent, the referee plays its default."""
    CANCELLED = "cancelled"
    """An ``AsyncBot`` decision was cancelled at the deadline (``time_left``
    it had) and the default was sent."""
    REJECTED = "rejected"
    """The referee rejected an action (``code`` and ``detail`` its reason,
    ``time_left`` still open for the request)."""
    HOOK_ERROR = "hook_error"
    """One of the bot's ``on_*`` hooks (``code``) raised (``detail``)."""
    MISMATCH = "mismatch"
    """The referee disagreed with the rules core (``code`` ``legal_actions``:
    the actions it offered; ``view``: its view of the game)."""


@dataclass(frozen=True, slots=True)
class ClientRecord:
    """One decision or fault, as the client saw it (fields unused by a
    :class:`RecordKind` keep their defaults)."""

    kind: RecordKind
    """What is recorded."""
    game_id: str = ""
    request_id: str = ""
    """The DecisionRequest concerned (``""``: none)."""
    round: int = 0
    """The round of the decision (0: none)."""
    phase: str = ""
    """The phase of the decision (``bid``, ``play``, ``choose_trump``)."""
    seconds: float | None = None
    """The time the bot took, from the request's arrival."""
    time_left: float | None = None
    """The time the request allowed (``None``: no deadline)."""
    network_credit: float = 0.0
    """The request's network credit (protocol v1.2): the round trip the
    referee added to its deadline, beyond ``time_left``."""
    action: str = ""
    """An action as text (``bid 2``, ``play 13H``, ``trump H``)."""
    code: str = ""
    """Which bot error, reject code, hook or disagreement."""
    detail: str = ""
    """What happened, in words (an exception, the referee's message)."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``kind`` as its string)."""
        out = asdict(self)
        out["kind"] = str(self.kind)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClientRecord:
        """Inverse of :meth:`to_dict`; unknown keys are ignored."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["kind"] = RecordKind(values["kind"])
        return cls(**values)


#: Exit status of ``wizard-arena bot`` after a run whose games were played
#: while the bot raised or returned unusable actions (the SDK sent the
#: referee's default instead): see :attr:`RunResult.bot_errors`.
EXIT_BOT_ERRORS = 4


@dataclass
class RunResult:
    """What a bot's run came to (returned by :func:`run_bot` and :func:`serve_bot`)."""

    games: list[GameSummary] = field(default_factory=list)
    """Each finished game, in order."""
    faults: list[FaultSummary] = field(default_factory=list)
    """Faults the referee recorded against this bot's seat (from GameOver)."""
    decisions: int = 0
    """Decision requests received."""
    bot_errors: int = 0
    """Times the bot raised or returned something unusable (a default was sent)."""
    hook_errors: int = 0
    """Times one of the bot's ``on_*`` hooks raised."""
    defaults_sent: int = 0
    """Default actions the SDK sent for the bot."""
    overruns: int = 0
    """Decisions answered after the deadline (nothing sent)."""
    rejections: int = 0
    """ActionRejected messages received."""
    mismatches: int = 0
    """Requests whose offered legal actions differed from the rules core's."""
    reconnects: int = 0
    """Successful reconnections after a dropped connection."""
    server_shut_down: bool = False
    """The run ended because the server shut down cleanly (``stop_at_shutdown``)."""
    welcome: Welcome | None = None
    """The last Welcome received."""
    records: list[ClientRecord] = field(default_factory=list)
    """The client's records of every decision and fault, in order (none with
    ``keep_records=False``; see :class:`~wizard_arena.client.results.ClientRecord`)."""


def summary(result: RunResult) -> dict[str, Any]:
    """The last line of a report: the run's counts, as a JSON-ready dict
    (``kind`` ``summary``)."""
    return {
        "kind": "summary",
        "games": len(result.games),
        "decisions": result.decisions,
        "bot_errors": result.bot_errors,
        "hook_errors": result.hook_errors,
        "defaults_sent": result.defaults_sent,
        "overruns": result.overruns,
        "rejections": result.rejections,
        "mismatches": result.mismatches,
        "reconnects": result.reconnects,
    }


def read_report(lines: Iterable[str]) -> tuple[list[ClientRecord], dict[str, Any] | None]:
    """The records and the summary (``None`` if the run did not end: no
    summary line) of a report written by ``wizard-arena bot --report``.
    Lines that are not JSON objects of a known kind (e.g. the last line of a
    process killed while writing it) are skipped."""
    records: list[ClientRecord] = []
    total: dict[str, Any] | None = None
    for line in lines:
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        if data.get("kind") == "summary":
            total = data
            continue
        try:
            records.append(ClientRecord.from_dict(data))
        except (KeyError, TypeError, ValueError):
            continue
    return records, total

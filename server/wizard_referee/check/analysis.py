"""Reading what happened: the referee's game records (faults, decisions and
their latency), the Python SDK's own records of the bot's decisions and
faults (``wizard-arena bot --report``: :mod:`wizard_arena.client.results`),
and the bot process's exit status and stderr; each problem found becomes a
:class:`~wizard_referee.check.report.Problem` with advice.

A bot run with ``--command`` (any language) has no SDK report: the check
then relies on the referee's records and the process's exit and stderr.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

from wizard_arena.client.results import EXIT_BOT_ERRORS, ClientRecord, RecordKind
from wizard_referee.check.report import ADVICE, CheckReport, Problem, limit_advice
from wizard_referee.referee.faults import FAULT_CODES
from wizard_referee.referee.record import GameRecord
from wizard_referee.stats import percentile

__all__ = ["SLOW_SHARE", "STDERR_TAIL", "SdkReport", "analyse"]

STDERR_TAIL = 15
"""Lines of the bot's stderr kept in the report."""
SLOW_SHARE = 0.5
"""A decision taking more than this share of the move time is a warning."""

_PHASE_OF = {"bid": "bid", "play": "play", "trump": "choose_trump"}
"""A move's kind in a game record -> the phase of the SDK's records."""


@dataclass
class SdkReport:
    """What the Python SDK's ``--report`` file says (records and, when the
    run ended, its summary; :func:`wizard_arena.client.results.read_report`)."""

    records: list[ClientRecord] = field(default_factory=list)
    summary: dict[str, Any] | None = None

    def of(self, kind: RecordKind) -> list[ClientRecord]:
        return [r for r in self.records if r.kind is kind]


@dataclass
class _Decision:
    """One of the bot's moves, as the referee recorded it."""

    game: str
    round: int
    kind: str  # bid, play, trump
    cards: int
    ms: float
    fault: str | None
    after_timeout: bool = False
    """The bot's previous decision in the game timed out: a bot that answers
    one request at a time was still working on that one when this request
    came, so the referee's time for this one includes the rest of it."""


def _decisions(record: GameRecord, seat: int) -> list[_Decision]:
    out: list[_Decision] = []
    for rr in record.rounds:
        held = len(rr.hands[seat])
        for mv in rr.moves:
            if mv.seat != seat:
                continue
            kind = mv.action.split(" ", 1)[0]
            after = bool(out) and out[-1].fault == "timeout"
            out.append(_Decision(record.game_id, rr.round, kind, held, mv.ms, mv.fault, after))
            if kind == "play":
                held -= 1
    return out


def _what(d: _Decision) -> str:
    if d.kind == "play":
        return f"a {d.cards}-card play decision (round {d.round})"
    if d.kind == "bid":
        return f"a bid with {d.cards} cards in hand (round {d.round})"
    return f"a trump choice (round {d.round})"


def _where(r: ClientRecord) -> str:
    return f"game {r.game_id}, round {r.round}, {r.phase}"


def _first_detail(records: list[GameRecord], seats: list[int], code: str) -> str:
    for rec, seat in zip(records, seats, strict=True):
        detail = rec.fault_details[seat].get(code)
        if detail:
            return f"{rec.game_id}: {detail}"
    return ""


def analyse(
    report: CheckReport,
    records: list[GameRecord],
    seats: list[int],
    connected: bool,
    stderr_text: str,
    sdk: SdkReport | None = None,
    killed: str | None = None,
) -> None:
    """Fill ``report`` from the game records (the bot's seat in each), the
    bot's stderr and, for a Python SDK bot, its ``--report``; ``killed``:
    the limit a confined bot exceeded ("out of memory: limit 512 MiB")."""
    sdk = sdk if sdk is not None else SdkReport()
    report.stderr_tail = stderr_text.splitlines()[-STDERR_TAIL:]
    if sdk.summary is not None:
        keys = ("games", "decisions", "bot_errors", "hook_errors", "overruns")
        report.sdk_summary = {k: int(sdk.summary.get(k, 0)) for k in keys}
        report.sdk_summary["rejected"] = int(sdk.summary.get("rejections", 0))
    decisions = _tally(report, records, seats)
    if not connected:
        report.problems.append(
            Problem("no_connection", 1, _no_connection(report), ADVICE["no_connection"])
        )
    _timeouts(report, decisions, sdk)
    _cancelled(report, sdk)
    for code, n in report.faults.items():
        if code != "timeout":  # (above, with the decisions that timed out)
            detail = _first_detail(records, seats, code)
            advice = (
                limit_advice(detail) or ADVICE.get(code) or FAULT_CODES.get(code, "see the detail")
            )
            report.problems.append(Problem(code, n, detail, advice))
    errors = _bot_errors(report, sdk)
    hooks = _hook_errors(report, sdk)
    _crash(report, connected, len(records), errors + hooks, killed)
    _slow(report, decisions)


def _tally(report: CheckReport, records: list[GameRecord], seats: list[int]) -> list[_Decision]:
    """The games, faults, decisions and latency from the referee's records."""
    decisions: list[_Decision] = []
    faults: Counter[str] = Counter()
    for rec, seat in zip(records, seats, strict=True):
        faults.update(rec.faults[seat])
        decisions += _decisions(rec, seat)
        report.games.append(
            {
                "game_id": rec.game_id,
                "seat": seat,
                "status": rec.status,
                "faults": dict(rec.faults[seat]),
                "points": rec.totals[seat] if rec.totals else None,
                "rank": rec.ranks[seat] if rec.ranks else None,
            }
        )
    report.faults = dict(sorted(faults.items()))
    answered = [d.ms for d in decisions if d.fault is None]
    report.decisions = len(decisions)
    if answered:
        report.latency_ms = {
            "p50": round(percentile(answered, 0.5), 3),
            "p95": round(percentile(answered, 0.95), 3),
            "max": round(max(answered), 3),
        }
    return decisions


def _no_connection(report: CheckReport) -> str:
    if report.exit_code is not None:
        return f"the bot exited with status {report.exit_code} before connecting"
    return "the bot did not connect within the connect timeout (it was stopped)"


def _timeouts(report: CheckReport, decisions: list[_Decision], sdk: SdkReport) -> None:
    """Decisions the referee timed out; with the SDK's records of how long
    the bot really took for them."""
    timeouts = [d for d in decisions if d.fault == "timeout"]
    if not timeouts:
        return
    took: dict[tuple[str, int, str], deque[float]] = {}
    for o in sdk.of(RecordKind.OVERRUN):
        if o.seconds is not None:
            took.setdefault((o.game_id, o.round, o.phase), deque()).append(o.seconds)
    measured: list[tuple[float, _Decision]] = []
    for d in timeouts:
        q = took.get((d.game, d.round, _PHASE_OF.get(d.kind, d.kind)))
        if q:
            measured.append((q.popleft(), d))
    if measured:
        secs, worst = max(measured, key=lambda x: x[0])
        lead = f"your bot took {secs:.2g} s for {_what(worst)}"
    else:
        worst = max(timeouts, key=lambda d: (d.cards, d.round))
        lead = f"your bot did not answer {_what(worst)} within {report.move_time:g} s"
    where = ", ".join(_what(d) for d in timeouts[:5])
    more = f" and {len(timeouts) - 5} more" if len(timeouts) > 5 else ""
    report.problems.append(
        Problem(
            "timeout",
            len(timeouts),
            f"no legal answer within {report.move_time:g} s for {where}{more}; the "
            "referee played its default move",
            f"{lead}: {ADVICE['timeout']}",
        )
    )


def _cancelled(report: CheckReport, sdk: SdkReport) -> None:
    """AsyncBot decisions the SDK cancelled at the deadline (it sent the
    default move in time, so the referee's record shows no timeout)."""
    cancelled = sdk.of(RecordKind.CANCELLED)
    if not cancelled:
        return
    first = cancelled[0]
    report.problems.append(
        Problem(
            "cancelled",
            len(cancelled),
            f"the SDK cancelled {len(cancelled)} decision(s) of the AsyncBot at the "
            f"deadline and sent the default move (first: {_where(first)}, "
            f"{first.time_left or 0.0:.3f} s allowed)",
            ADVICE["cancelled"],
        )
    )


def _bot_errors(report: CheckReport, sdk: SdkReport) -> int:
    """The bot raised or answered an action it may not play (the SDK sent
    the default move instead); their number."""
    errors = sdk.of(RecordKind.BOT_ERROR)
    count = max(report.sdk_summary.get("bot_errors", 0), len(errors))
    if not count:
        return 0
    examples = []
    illegal = next((r for r in errors if r.code == "illegal"), None)
    if illegal is not None:
        examples.append(f"the bot chose {illegal.action} in {_where(illegal)}, which is not legal")
    raised = next((r for r in errors if r.code == "raised"), None)
    if raised is not None:
        examples.append(f"the bot raised in {_where(raised)} ({raised.detail})")
    report.problems.append(
        Problem(
            "bot_error",
            count,
            "; ".join(examples) or "the SDK reported bot errors",
            ADVICE["bot_error"],
        )
    )
    return count


def _hook_errors(report: CheckReport, sdk: SdkReport) -> int:
    """The bot's ``on_*`` hooks raised (play went on); their number."""
    errors = sdk.of(RecordKind.HOOK_ERROR)
    count = max(report.sdk_summary.get("hook_errors", 0), len(errors))
    if count:
        detail = f"the bot's {errors[0].code} hook raised ({errors[0].detail})" if errors else ""
        report.problems.append(
            Problem(
                "hook_error", count, detail or "the SDK reported hook errors", ADVICE["hook_error"]
            )
        )
    return count


def _crash(
    report: CheckReport, connected: bool, played: int, sdk_errors: int, killed: str | None
) -> None:
    """The process ended on its own with a failure status, or before its
    games were played (or was killed for a limit: the advice names it)."""
    # `wizard-arena bot` exits EXIT_BOT_ERRORS after its games when the bot (or a
    # hook) raised: that is the bot_error (hook_error) problem above, not a crash
    ended_ok = report.exit_code in (0, None) or (
        report.exit_code == EXIT_BOT_ERRORS and sdk_errors > 0
    )
    if not killed and (not connected or (ended_ok and played >= report.games_planned)):
        return
    if killed:
        what = f"the bot's process was killed: {killed}"
    elif report.exit_code is None:
        what = "the bot's connection ended and it did not come back"
    else:
        what = f"the bot process exited with status {report.exit_code}"
    report.problems.append(
        Problem(
            "crash",
            1,
            f"{what} after {played} of {report.games_planned} games",
            limit_advice(what) or ADVICE["crash"],
        )
    )


def _slow(report: CheckReport, decisions: list[_Decision]) -> None:
    """A warning (not a problem) for decisions close to the deadline; those
    right after a timeout apart (their time is mostly the timed-out decision's)."""
    move_ms = report.move_time * 1000
    slow = [d for d in decisions if d.fault is None and d.ms > SLOW_SHARE * move_ms]
    own = [d for d in slow if not d.after_timeout]
    knock_on = len(slow) - len(own)
    share = f"more than {SLOW_SHARE:.0%} of the {report.move_time:g} s move time"
    busy = "the bot still working on the timed-out decision before it"
    if own:
        worst = max(own, key=lambda d: d.ms)
        report.warnings.append(
            f"{len(own)} decision(s) took {share} (slowest: {worst.ms / 1000:.2g} s for "
            f"{_what(worst)}): close to the deadline"
            + (
                f"; {knock_on} more, right after a timeout, are not counted: their time "
                f"was mostly {busy}"
                if knock_on
                else ""
            )
        )
    elif knock_on:
        report.warnings.append(
            f"{knock_on} decision(s) right after a timeout took {share}: their time was "
            f"mostly {busy} (the timeouts above), not their own"
        )

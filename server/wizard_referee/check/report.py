"""The check's report: the problems found, the advice for each, and the
report printed for a person (:func:`format_report`) or as JSON
(:meth:`CheckReport.to_dict`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from wizard_referee.referee.logs import shown

__all__ = ["ADVICE", "LIMIT_ADVICE", "CheckReport", "Problem", "format_report", "limit_advice"]


#: Advice by problem code (``timeout``'s is preceded by what the bot did).
ADVICE: dict[str, str] = {
    "no_connection": "run it by hand against 'wizard-arena serve' to see why; it must connect "
    "to the server it is given and send a Hello with the token it is given "
    "(see the last lines of its stderr below)",
    "timeout": "answer within the deadline; time left is in view.time_left "
    "(DecisionRequest.time_left_ms on the wire): budget your thinking by it and "
    "return the best move found so far when it runs low; a tournament's machine "
    "may be busier than yours",
    "cancelled": "decide sooner: serve_bot cancels an AsyncBot's decision a margin before the "
    "deadline; budget your search by view.time_left and keep a best move ready",
    "illegal": "bid one of view.legal_bids and play one of view.legal_cards: follow suit "
    "when you can, bid 0..cards dealt (the dealer may have one bid forbidden), play only "
    "cards you hold. The referee rejects anything else; each rejection is a fault.",
    "malformed": "answer each DecisionRequest with exactly one Action quoting its request_id, "
    "with exactly one choice set (bid, card or trump) of the kind asked, copying cards from "
    "legal_cards as received; send nothing else (no empty or repeated messages).",
    "disconnect": "keep the stream open for the whole game and after it (half-close only when "
    "you stop); catch exceptions in your bot so that it never dies mid-game; a message over "
    "64 KiB also ends the stream (gRPC refuses it).",
    "flooding": "send one action per DecisionRequest: the referee cuts off a bot with more "
    "than 64 messages waiting unread.",
    "bot_error": "your bot raised an exception, or returned a bid not in view.legal_bids or "
    "a card not in view.legal_cards; the SDK sent the referee's default move "
    "instead (so the referee recorded no fault, but the move was not yours): fix "
    "the error shown in its log (run it with -v to see every decision)",
    "hook_error": "one of your bot's on_* hooks (on_game_start, on_trick_end, on_round_end, "
    "on_game_end) raised; play went on, but whatever the hook keeps (your bot's memory of "
    "the game) may be wrong: fix the error shown in its log",
    "crash": "see the last lines of its stderr below; a bot must play until the server "
    "ends the stream or its games are played, and exit with status 0",
}


#: Advice for a confined bot killed for a limit, by the start of the reason
#: its fault records (docs/untrusted-bots.md, "Limits").
LIMIT_ADVICE: dict[str, str] = {
    "out of memory": "your bot used more memory than its limit ({reason}): bound what it "
    "keeps (search trees, caches, its /tmp files count too), or ask the organiser for a "
    "higher memory_limit",
    "process limit": "your bot started more processes or threads than its limit ({reason}): "
    "use a pool of a fixed size, or ask the organiser for a higher max_processes",
}


def limit_advice(detail: str) -> str | None:
    """The advice for a fault whose detail names a limit the bot exceeded.

    >>> limit_advice("t0-d0-r1: the bot's process was killed: out of memory: limit 512 MiB")
    'your bot used more memory than its limit (out of memory: limit 512 MiB): bound ...'
    >>> limit_advice("the bot's process exited") is None
    True
    """
    for start, advice in LIMIT_ADVICE.items():
        at = detail.find(start)
        if at >= 0:
            return advice.format(reason=detail[at:])
    return None


@dataclass
class Problem:
    """One kind of problem found, with advice."""

    code: str
    count: int
    detail: str
    advice: str


@dataclass
class CheckReport:
    bot: str
    players: int
    move_time: float
    games_planned: int
    opponents: list[str]
    rules: str = ""
    """The rules played (``Rules.describe()``)."""
    games: list[dict[str, Any]] = field(default_factory=list)
    """Per game: id, seat, faults, points, rank."""
    decisions: int = 0
    latency_ms: dict[str, float] = field(default_factory=dict)
    """p50, p95 and max of the bot's answered decisions, as the referee measured them."""
    faults: dict[str, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    exit_code: int | None = None
    """The bot's exit status (None: still running when stopped, or never started)."""
    stopped: bool = False
    """Whether the check had to stop the bot after its games."""
    stderr_tail: list[str] = field(default_factory=list)
    sdk_summary: dict[str, int] = field(default_factory=dict)
    """From the Python SDK's report: games, decisions, bot errors, hook errors,
    overruns, rejected (empty for a ``--command`` bot, or a run that did not end)."""

    @property
    def clean(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["clean"] = self.clean
        return out


def format_report(r: CheckReport) -> str:
    """The report as text for a person."""
    out = [f"wizard-arena check: {r.bot}", *_summary_lines(r)]
    for w in r.warnings:
        out.append(f"  warning: {w}")
    if not r.problems:
        return "\n".join([*out, "", "Result: clean."])
    out += ["", f"PROBLEMS ({len(r.problems)}):"]
    for i, p in enumerate(r.problems, 1):
        out.append(f"  {i}. {p.code} x{p.count}: {p.detail}")
        out.append(f"     advice: {p.advice}")
    if r.stderr_tail:
        out += ["", "last lines of the bot's stderr:"]
        out += [f"  | {shown(line)}" for line in r.stderr_tail]  # (no escapes)
    out += ["", f"Result: {len(r.problems)} problem(s) found."]
    return "\n".join(out)


def _summary_lines(r: CheckReport) -> list[str]:
    seats = sorted({g["seat"] for g in r.games})
    out = [
        f"  {len(r.games)} of {r.games_planned} games ({r.rules or f'{r.players} players'}), "
        f"{r.move_time:g} s per move, against {', '.join(r.opponents)}"
        + (f"; seats played: {', '.join(map(str, seats))}" if seats else "")
    ]
    if r.latency_ms:
        lat = r.latency_ms
        out.append(
            f"  decisions: {r.decisions}; latency as the referee measured it: "
            f"p50 {lat['p50']:.1f} ms, p95 {lat['p95']:.1f} ms, max {lat['max']:.1f} ms"
        )
    ranks = [g["rank"] for g in r.games if g["rank"] is not None]
    points = [g["points"] for g in r.games if g["points"] is not None]
    if ranks:
        out.append(
            f"  results: mean rank {sum(ranks) / len(ranks):.2f}, "
            f"mean points {sum(points) / len(points):.1f}"
        )
    faults = ", ".join(f"{k} x{v}" for k, v in r.faults.items())
    if faults:
        out.append(f"  faults the referee recorded: {faults}")
    elif r.problems:  # e.g. bot errors the SDK covered with default moves
        out.append("  faults the referee recorded: none (the problems below are not faults)")
    else:
        out.append("  faults the referee recorded: none")
    if r.stopped:
        out.append("  process: still running at the end; stopped by the check (SIGTERM)")
    elif r.exit_code is not None:
        out.append(f"  process: exited with status {r.exit_code}")
    return out

"""``wizard-arena check``: try a bot under tournament conditions before entering it.

::

    wizard-arena check my_bot.py:MyBot [--arg key=value ...]
    wizard-arena check --command "node bot.js"
        [--games N] [--players N] [RULE OPTIONS] [--move-time S] [--json]

The check starts a referee on loopback (any free port, matchmaking off,
access tokens), starts the bot under test as a subprocess, connects local
reference opponents (the example heuristic and random bots, in this
process), and referees ``--games`` games (default: one per seat) with the
bot in each seat in turn, under a short deadline (``--move-time``, default
0.5 s: shorter than a tournament's, so a bot that passes has a margin).
Then it reads the game records and the bot's own log and reports what went
wrong, each problem with advice:

* ``timeout``: no legal answer before the deadline (which decisions: round,
  bid or play, cards in hand, and for SDK bots how long they really took);
* ``illegal`` / ``malformed``: actions the referee rejected;
* ``disconnect`` / ``flooding``: the stream ended during a game;
* ``cancelled``: an ``AsyncBot`` decision the SDK cancelled at the deadline
  (it sent the default move, so the record shows no timeout);
* ``bot_error``: the bot raised, or returned an action that was not legal,
  and the Python SDK sent the referee's default action for it (the record
  shows a legal move; the SDK's log says what happened);
* ``crash``: the process ended on its own with a non-zero status, or before
  its games were played (with its exit status and the last lines of its
  stderr); ``wizard-arena bot``'s status 4 after its games (the bot hit
  errors, reported as ``bot_error``) is not a crash;
* ``no_connection``: the bot never connected;

and, as warnings that do not fail the check, decisions that took more than
half the move time. It also prints the decision latency the referee measured
(p50, p95, max: from sending the request to receiving the answer, so the
loopback hops are included) and the bot's results.

Exit status: 0 when the bot played every game without a problem, 1 when
problems were found, 2 for a usage error (including a bot SPEC or
``--arg`` that ``wizard-arena bot`` refuses).

**The bot under test.** ``MODULE:CLASS`` (or ``path/to/file.py:CLASS``) is
run as ``wizard-arena bot SPEC --server HOST:PORT --name NAME --token TOKEN
--games N [--arg ...]``. ``--command CMDLINE`` runs any program instead (a
bot in any language), with the same contract as tournament entrants and the
Node.js example bot: the command line is split like a shell would, ``{server}``,
``{name}``, ``{token}`` and ``{games}`` in it are replaced; if it has no
``{server}``, the options ``--server HOST:PORT --name NAME --token TOKEN
--games N`` are appended. The environment also has ``WIZARD_ARENA_SERVER``,
``WIZARD_ARENA_NAME``, ``WIZARD_ARENA_TOKEN`` and ``WIZARD_ARENA_GAMES``.
The program must connect (Hello with that token) within
``--connect-timeout`` seconds, play, and should exit with status 0 after
``N`` games; one still running a few seconds after the last game is
stopped (SIGTERM), which is not counted as a crash. It runs in the current
directory; its stdout and stderr are captured.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import re
import secrets
import shlex
import subprocess
import sys
import tempfile
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import IO, Any

import trio

from wizard_arena.cli.rules_options import add_rules_arguments, rules_from_args
from wizard_arena.client.cmd_bot import EXIT_BOT_ERRORS
from wizard_arena.rules import Rules
from wizard_referee.referee.arena import Arena, ArenaConfig, Session, serve_arena
from wizard_referee.referee.logs import configure_logging
from wizard_referee.referee.policy import RefereePolicy
from wizard_referee.referee.record import FAULT_CODES, GameRecord

__all__ = ["CheckOptions", "CheckReport", "Problem", "add_arguments", "format_report", "run"]

DEFAULT_OPPONENTS = ("wizard_bots.heuristic:HeuristicBot", "wizard_bots.random_bot:RandomBot")
FALLBACK_OPPONENT = "wizard_bots.random_bot:RandomBot"
BOT_NAME = "bot-under-test"
_STDERR_TAIL = 15
_EXIT_GRACE = 5.0
"""Seconds the bot has to exit by itself after its last game."""
_SLOW_SHARE = 0.5
"""A decision taking more than this share of the move time is a warning."""


class UsageError(Exception):
    """A bad command line (exit status 2)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "spec",
        nargs="?",
        metavar="MODULE:CLASS",
        help="the bot class (module.path:Class or path/to/file.py:Class); or use --command",
    )
    parser.add_argument(
        "--command",
        metavar="CMDLINE",
        help="run this program as the bot instead (any language; see the contract in "
        "'wizard-arena check --help' below)",
    )
    parser.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="keyword argument for the bot class (repeatable; as for 'wizard-arena bot')",
    )
    parser.add_argument(
        "--games", type=int, metavar="N", help="games to play (default: one per seat)"
    )
    add_rules_arguments(parser)
    parser.add_argument(
        "--move-time",
        type=float,
        default=0.5,
        metavar="SECONDS",
        help="deadline per decision (default 0.5: shorter than a tournament's)",
    )
    parser.add_argument(
        "--opponent",
        action="append",
        default=[],
        metavar="MODULE:CLASS",
        help="a reference opponent class (repeatable; cycled over the other seats; "
        "default: the example heuristic and random bots)",
    )
    parser.add_argument("--seed", type=int, default=1, help="base seed of the deals (default 1)")
    parser.add_argument(
        "--connect-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="how long the bot has to connect (default 30)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.epilog = (
        "--command contract: {server} {name} {token} {games} in CMDLINE are replaced; "
        "without {server}, '--server HOST:PORT --name NAME --token TOKEN --games N' is "
        "appended. The environment has WIZARD_ARENA_SERVER, _NAME, _TOKEN and _GAMES. "
        "Exit status: 0 clean, 1 problems found, 2 usage error."
    )


# -- the report ------------------------------------------------------------------------------


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
    """From the Python SDK's last line: games, decisions, bot errors, overruns, rejected."""

    @property
    def clean(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["clean"] = self.clean
        return out


@dataclass
class CheckOptions:
    label: str
    rules: Rules
    move_time: float
    games: int
    opponents: list[str]
    seed: int
    connect_timeout: float
    workdir: str = "."

    @property
    def players(self) -> int:
        return self.rules.players


# -- running the check ---------------------------------------------------------------------


def _bot_command(args: argparse.Namespace, server: str, token: str, games: int) -> list[str]:
    if args.command is not None:
        parts = shlex.split(args.command)
        subst = {"{server}": server, "{name}": BOT_NAME, "{token}": token, "{games}": str(games)}
        has_server = any("{server}" in p for p in parts)
        out = []
        for p in parts:
            for k, v in subst.items():
                p = p.replace(k, v)
            out.append(p)
        if not has_server:
            out += ["--server", server, "--name", BOT_NAME, "--token", token]
            out += ["--games", str(games)]
        return out
    cmd = [sys.executable, "-m", "wizard_arena.cli", "bot", args.spec]
    cmd += ["--server", server, "--name", BOT_NAME, "--token", token, "--games", str(games)]
    for a in args.arg:
        cmd += ["--arg", a]
    return cmd


def _load_opponents(specs: list[str]) -> list[Any]:
    from wizard_arena.client.cmd_bot import SpecError, load_class

    out = []
    for spec in specs:
        try:
            cls = load_class(spec)
        except SpecError:
            if spec not in DEFAULT_OPPONENTS:
                raise
            cls = load_class(FALLBACK_OPPONENT)
        out.append(cls)
    return out


async def _opponent(bot: Any, address: str, name: str, token: str) -> None:
    from wizard_arena.client import ArenaError, serve_bot

    try:
        await serve_bot(bot, address, name=name, token=token, reconnect=False)
    except ArenaError as e:
        logging.getLogger("wizard_referee.check").warning("opponent %s: %s", name, e)


async def _wait_for_session(
    arena: Arena, sessions: list[Session], proc: trio.Process, timeout: float
) -> Session | None:
    """The bot's live session (waiting up to ``timeout`` for a (re)connection)."""
    with trio.move_on_after(timeout):
        while True:
            live = [s for s in sessions if s.alive and not s.busy]
            if live:
                return live[-1]
            if proc.poll() is not None:
                return None
            with trio.move_on_after(0.1):
                await arena.wait_for_change()
    return None


@dataclass
class CheckRun:
    """What happened when the games were refereed."""

    records: list[GameRecord] = field(default_factory=list)
    seats: list[int] = field(default_factory=list)
    """The bot's seat in each game."""
    opponents: list[str] = field(default_factory=list)
    exit_code: int | None = None
    """The bot's exit status; None when the check had to stop it."""
    stopped: bool = False
    connected: bool = False
    """Whether the bot ever connected."""
    start_error: str = ""
    """Why the bot's program could not be started."""


async def run_check(
    opts: CheckOptions,
    make_command: Callable[[str, str, int], list[str]],
    stdout: IO[bytes],
    stderr: IO[bytes],
) -> CheckRun:
    """Start the referee, the opponents and the bot (``make_command(server,
    token, games)``), and referee the games."""
    players = opts.players
    bot_token = secrets.token_hex(16)
    opp_tokens = [secrets.token_hex(16) for _ in range(players - 1)]
    config = ArenaConfig(
        host="127.0.0.1",
        port=0,
        rules=opts.rules,
        policy=RefereePolicy(move_time=opts.move_time, reseat_delay=0.0),
        tokens=frozenset([bot_token, *opp_tokens]),
        matchmaking=False,
    )
    classes = _load_opponents(opts.opponents)
    by_token: dict[str, list[Session]] = {t: [] for t in [bot_token, *opp_tokens]}
    result = CheckRun(opponents=[c.__name__ for c in classes])
    async with trio.open_nursery() as nursery:
        arena: Arena = await nursery.start(serve_arena, config)
        arena.on_session.append(lambda s: by_token[s.hello.token].append(s))
        names = []
        for i, token in enumerate(opp_tokens):
            cls = classes[i % len(classes)]
            name = f"{cls.__name__.removesuffix('Bot').lower() or 'bot'}-{i + 1}"
            names.append(name)
            nursery.start_soon(_opponent, cls(), arena.address, name, token)
        cmd = make_command(arena.address, bot_token, opts.games)
        env = dict(
            os.environ,
            WIZARD_ARENA_SERVER=arena.address,
            WIZARD_ARENA_NAME=BOT_NAME,
            WIZARD_ARENA_TOKEN=bot_token,
            WIZARD_ARENA_GAMES=str(opts.games),
            PYTHONUNBUFFERED="1",
        )
        try:
            proc = await trio.lowlevel.open_process(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=stdout,
                stderr=stderr,
                env=env,
                cwd=opts.workdir,
            )
        except OSError as e:
            result.start_error = f"cannot start {cmd[0]!r}: {e}"
            nursery.cancel_scope.cancel()
            return result
        try:
            for g in range(opts.games):
                wait = opts.connect_timeout if g == 0 else min(opts.connect_timeout, 10.0)
                bot = await _wait_for_session(arena, by_token[bot_token], proc, wait)
                if bot is None:
                    break
                result.connected = True
                opponents: list[Session | None] = []
                for t in opp_tokens:
                    live = [s for s in by_token[t] if s.alive]
                    if not live:  # an opponent failed to connect: give it a moment
                        with trio.move_on_after(opts.connect_timeout):
                            while not any(s.alive for s in by_token[t]):
                                await arena.wait_for_change()
                        live = [s for s in by_token[t] if s.alive]
                    opponents.append(live[-1] if live else None)
                seat = g % players
                order = opponents[g % (players - 1) :] + opponents[: g % (players - 1)]
                order_names = names[g % (players - 1) :] + names[: g % (players - 1)]
                seats = [*order[:seat], bot, *order[seat:]]
                seat_names = [*order_names[:seat], BOT_NAME, *order_names[seat:]]
                record = await arena.play_game(
                    seats,
                    names=seat_names,
                    game_id=f"check-{g + 1}",
                    seed=f"check:{opts.seed}:{g}",
                    tags={"check": True},
                )
                result.records.append(record)
                result.seats.append(seat)
            # let a bot that plays N games and leaves exit by itself
            with trio.move_on_after(_EXIT_GRACE if result.connected else 0):
                while proc.poll() is None:
                    await trio.sleep(0.05)
        finally:
            with trio.CancelScope(shield=True):
                if proc.poll() is None:
                    result.stopped = True
                    proc.terminate()
                    with trio.move_on_after(3):
                        await proc.wait()
                    if proc.poll() is None:
                        proc.kill()
                        await proc.wait()
            nursery.cancel_scope.cancel()
    result.exit_code = None if result.stopped else proc.returncode
    return result


# -- reading the results -------------------------------------------------------------------

_SDK_SUMMARY = re.compile(
    r"wizard-arena bot: (\d+) games? played, (\d+) decisions, (\d+) bot errors, "
    r"(\d+) overruns, (\d+) rejected"
)
_SDK_OVERRUN = re.compile(r"the bot took ([\d.]+) s in game (\S+), round (\d+), (\w+);")
_SDK_ASYNC_OVERRUN = re.compile(
    r"the bot did not decide within ([\d.]+) s \(game (\S+), round (\d+), (\w+)\)"
)
_SDK_RAISED = re.compile(r"the bot raised in game (\S+), round (\d+), (\w+)")
_SDK_ILLEGAL = re.compile(
    r"the bot chose (.+?) in game (\S+), round (\d+), (\w+), which is not legal"
)
_EXC_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception)(: .*)?$")


@dataclass
class _Decision:
    game: str
    round: int
    kind: str  # bid, play, trump
    cards: int
    ms: float
    fault: str | None


def _decisions(record: GameRecord, seat: int) -> list[_Decision]:
    out = []
    for rr in record.rounds:
        held = len(rr.hands[seat])
        for mv in rr.moves:
            if mv.seat != seat:
                continue
            kind = mv.action.split(" ", 1)[0]
            out.append(_Decision(record.game_id, rr.round, kind, held, mv.ms, mv.fault))
            if kind == "play":
                held -= 1
    return out


def _percentile(values: list[float], q: float) -> float:
    s = sorted(values)
    if not s:
        return math.nan
    k = (len(s) - 1) * q
    lo, hi = math.floor(k), math.ceil(k)
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


def _what(d: _Decision) -> str:
    if d.kind == "play":
        return f"a {d.cards}-card play decision (round {d.round})"
    if d.kind == "bid":
        return f"a bid with {d.cards} cards in hand (round {d.round})"
    return f"a trump choice (round {d.round})"


def _first_detail(records: list[GameRecord], seats: list[int], code: str) -> str:
    for rec, seat in zip(records, seats, strict=True):
        detail = rec.fault_details[seat].get(code)
        if detail:
            return f"{rec.game_id}: {detail}"
    return ""


_ADVICE = {
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
}


def analyse(
    report: CheckReport,
    records: list[GameRecord],
    seats: list[int],
    connected: bool,
    stderr_text: str,
) -> None:
    """Fill ``report`` from the records and the bot's stderr."""
    lines = stderr_text.splitlines()
    report.stderr_tail = lines[-_STDERR_TAIL:]
    summaries = list(_SDK_SUMMARY.finditer(stderr_text))
    if summaries:
        m = summaries[-1]
        keys = ("games", "decisions", "bot_errors", "overruns", "rejected")
        report.sdk_summary = dict(zip(keys, map(int, m.groups()), strict=True))

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
            "p50": round(_percentile(answered, 0.5), 3),
            "p95": round(_percentile(answered, 0.95), 3),
            "max": round(max(answered), 3),
        }
    move_ms = report.move_time * 1000

    # SDK log: how long overrunning decisions really took, and the bot's own errors
    took: dict[tuple[str, int, str], deque[float]] = {}
    for o in _SDK_OVERRUN.finditer(stderr_text):
        key = (o.group(2), int(o.group(3)), o.group(4))
        took.setdefault(key, deque()).append(float(o.group(1)))
    cancelled = list(_SDK_ASYNC_OVERRUN.finditer(stderr_text))
    phase_of = {"bid": "bid", "play": "play", "trump": "choose_trump"}

    if not connected:
        if report.exit_code is not None:
            detail = f"the bot exited with status {report.exit_code} before connecting"
        else:
            detail = "the bot did not connect within the connect timeout (it was stopped)"
        report.problems.append(
            Problem(
                "no_connection",
                1,
                detail,
                "run it by hand against 'wizard-arena serve' to see why; it must connect to "
                "the server it is given and send a Hello with the token it is given "
                "(see the last lines of its stderr below)",
            )
        )

    timeouts = [d for d in decisions if d.fault == "timeout"]
    if timeouts:
        measured: list[tuple[float, _Decision]] = []
        for d in timeouts:
            q = took.get((d.game, d.round, phase_of.get(d.kind, d.kind)))
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
                f"{lead}: answer within the deadline; time left is in view.time_left "
                "(DecisionRequest.time_left_ms on the wire): budget your thinking by it and "
                "return the best move found so far when it runs low; a tournament's machine "
                "may be busier than yours",
            )
        )

    if cancelled:
        first = cancelled[0]
        report.problems.append(
            Problem(
                "cancelled",
                len(cancelled),
                f"the SDK cancelled {len(cancelled)} decision(s) of the AsyncBot at the "
                f"deadline and sent the default move (first: game {first.group(2)}, round "
                f"{first.group(3)}, {first.group(4)}, {first.group(1)} s allowed)",
                "decide sooner: serve_bot cancels an AsyncBot's decision a margin before the "
                "deadline; budget your search by view.time_left and keep a best move ready",
            )
        )

    for code, n in report.faults.items():
        if code != "timeout":  # (above, with the decisions that timed out)
            advice = _ADVICE.get(code) or FAULT_CODES.get(code, "see the detail")
            report.problems.append(Problem(code, n, _first_detail(records, seats, code), advice))

    errors = report.sdk_summary.get("bot_errors", 0)
    raised = [r.group(0) for r in _SDK_RAISED.finditer(stderr_text)]
    illegal_choices = [r.group(0) for r in _SDK_ILLEGAL.finditer(stderr_text)]
    errors = max(errors, len(raised) + len(illegal_choices))
    if errors:
        examples = []
        if illegal_choices:
            examples.append(illegal_choices[0])
        if raised:
            exc = next((ln.strip() for ln in lines if _EXC_LINE.match(ln.strip())), "")
            examples.append(raised[0] + (f" ({exc})" if exc else ""))
        report.problems.append(
            Problem(
                "bot_error",
                errors,
                "; ".join(examples) or "the SDK reported bot errors",
                "your bot raised an exception, or returned a bid not in view.legal_bids or "
                "a card not in view.legal_cards; the SDK sent the referee's default move "
                "instead (so the referee recorded no fault, but the move was not yours): fix "
                "the error shown in its log (run it with -v to see every decision)",
            )
        )

    played = len(records)
    # `wizard-arena bot` exits EXIT_BOT_ERRORS after its games when the bot raised:
    # that is the bot_error problem above, not a crash
    ended_ok = report.exit_code in (0, None) or (report.exit_code == EXIT_BOT_ERRORS and errors > 0)
    if connected and (not ended_ok or played < report.games_planned):
        if report.exit_code is None:
            what = "the bot's connection ended and it did not come back"
        else:
            what = f"the bot process exited with status {report.exit_code}"
        report.problems.append(
            Problem(
                "crash",
                1,
                f"{what} after {played} of {report.games_planned} games",
                "see the last lines of its stderr below; a bot must play until the server "
                "ends the stream or its games are played, and exit with status 0",
            )
        )

    slow = [d for d in decisions if d.fault is None and d.ms > _SLOW_SHARE * move_ms]
    if slow:
        worst = max(slow, key=lambda d: d.ms)
        report.warnings.append(
            f"{len(slow)} decision(s) took more than {_SLOW_SHARE:.0%} of the "
            f"{report.move_time:g} s move time (slowest: {worst.ms / 1000:.2g} s for "
            f"{_what(worst)}): close to the deadline"
        )


# -- output ------------------------------------------------------------------------------


def format_report(r: CheckReport) -> str:
    out = [f"wizard-arena check: {r.bot}"]
    seats = sorted({g["seat"] for g in r.games})
    out.append(
        f"  {len(r.games)} of {r.games_planned} games ({r.rules or f'{r.players} players'}), "
        f"{r.move_time:g} s per move, against {', '.join(r.opponents)}"
        + (f"; seats played: {', '.join(map(str, seats))}" if seats else "")
    )
    if r.latency_ms:
        lat = r.latency_ms
        out.append(
            f"  decisions: {r.decisions}; latency as the referee measured it: "
            f"p50 {lat['p50']:.1f} ms, p95 {lat['p95']:.1f} ms, max {lat['max']:.1f} ms"
        )
    if r.games:
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
    for w in r.warnings:
        out.append(f"  warning: {w}")
    if r.problems:
        out.append("")
        out.append(f"PROBLEMS ({len(r.problems)}):")
        for i, p in enumerate(r.problems, 1):
            out.append(f"  {i}. {p.code} x{p.count}: {p.detail}")
            out.append(f"     advice: {p.advice}")
        if r.stderr_tail:
            out.append("")
            out.append("last lines of the bot's stderr:")
            out += [f"  | {line}" for line in r.stderr_tail]
        out.append("")
        out.append(f"Result: {len(r.problems)} problem(s) found.")
    else:
        out.append("")
        out.append("Result: clean.")
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    prog = "wizard-arena check"
    try:
        opts = _options(args)
    except UsageError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    configure_logging("error", "json")
    logging.getLogger("wizard_arena.client").setLevel(logging.CRITICAL)
    with tempfile.TemporaryDirectory(prefix="wizard-check-") as tmp:
        out_path, err_path = Path(tmp) / "stdout", Path(tmp) / "stderr"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            done = trio.run(run_check, opts, partial(_bot_command, args), out, err)
        if done.start_error:
            print(f"{prog}: error: {done.start_error}", file=sys.stderr)
            return 2
        stderr_text = err_path.read_text(errors="replace")
    if not done.connected and done.exit_code == 2 and args.command is None:
        # 'wizard-arena bot' refused the SPEC or an --arg
        print(f"{prog}: error: the bot did not start:", file=sys.stderr)
        print(stderr_text.rstrip(), file=sys.stderr)
        return 2
    report = CheckReport(
        bot=opts.label,
        players=opts.players,
        rules=opts.rules.describe(),
        move_time=opts.move_time,
        games_planned=opts.games,
        opponents=done.opponents,
        exit_code=done.exit_code,
        stopped=done.stopped,
    )
    analyse(report, done.records, done.seats, done.connected, stderr_text)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(format_report(report))
    return 0 if report.clean else 1


def _options(args: argparse.Namespace) -> CheckOptions:
    from wizard_arena.client.cmd_bot import SpecError, load_class, parse_arg

    if (args.spec is None) == (args.command is None):
        raise UsageError("give a bot MODULE:CLASS or --command CMDLINE (one of them)")
    if args.command is not None and args.arg:
        raise UsageError("--arg is for a MODULE:CLASS bot; put a command's options in CMDLINE")
    if args.spec is not None:
        target, sep, cls = args.spec.rpartition(":")
        if not sep or not target or not cls:
            raise UsageError(f"expected MODULE:CLASS or path/to/file.py:CLASS, not {args.spec!r}")
    for a in args.arg:
        try:
            parse_arg(a)
        except ValueError as e:
            raise UsageError(f"--arg: {e}") from None
    if args.command is not None:
        try:
            if not shlex.split(args.command):
                raise UsageError("--command is empty")
        except ValueError as e:
            raise UsageError(f"--command: {e}") from None
    if args.move_time <= 0:
        raise UsageError("--move-time must be positive")
    if args.connect_timeout <= 0:
        raise UsageError("--connect-timeout must be positive")
    try:
        rules = rules_from_args(args)
    except ValueError as e:
        raise UsageError(f"rules: {e}") from None
    games = args.players if args.games is None else args.games
    if games < 1:
        raise UsageError("--games must be at least 1")
    opponents = list(args.opponent) or list(DEFAULT_OPPONENTS)
    for spec in args.opponent:
        try:
            load_class(spec)
        except SpecError as e:
            raise UsageError(f"--opponent: {e}") from None
    return CheckOptions(
        label=args.spec if args.spec is not None else args.command,
        rules=rules,
        move_time=args.move_time,
        games=games,
        opponents=opponents,
        seed=args.seed,
        connect_timeout=args.connect_timeout,
    )

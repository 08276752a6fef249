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
Then it reads the game records and, for a ``MODULE:CLASS`` bot, the
Python SDK's records of the bot's decisions and faults (``wizard-arena bot
--report``; :mod:`wizard_referee.check.analysis`) and reports what went
wrong, each problem with advice:

* ``timeout``: no legal answer before the deadline (which decisions: round,
  bid or play, cards in hand, and for SDK bots how long they really took);
* ``illegal`` / ``malformed``: actions the referee rejected;
* ``disconnect`` / ``flooding``: the stream ended during a game;
* ``cancelled``: an ``AsyncBot`` decision the SDK cancelled at the deadline
  (it sent the default move, so the record shows no timeout);
* ``bot_error``: the bot raised, or returned an action that was not legal,
  and the Python SDK sent the referee's default action for it (the record
  shows a legal move; the SDK's report says what happened);
* ``hook_error``: one of the bot's ``on_*`` hooks raised (play went on);
* ``crash``: the process ended on its own with a non-zero status, or before
  its games were played (with its exit status and the last lines of its
  stderr); ``wizard-arena bot``'s status 4 after its games (the bot hit
  errors, reported as ``bot_error`` or ``hook_error``) is not a crash;
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
directory (``--folder`` another); its stdout and stderr are captured.

**Confined** (``--sandbox bwrap``, with ``--memory-limit``,
``--max-processes`` and ``--cpu-limit`` as a tournament's keys): the bot runs
as a tournament confines an entrant (:mod:`wizard_referee.sandbox`): uid
60001, its folder read-only, no network, the referee on a Unix socket bound
into its sandbox (``{server}`` is ``unix:/run/wizard-arena/referee.sock``),
a cgroup of its own entered by ``/bin/sh`` before bubblewrap's exec (this
process runs gRPC: nothing runs between fork and exec); it may write only
the folder of the SDK's records. Killed for a limit, its crash names the
limit, and the advice is that limit's.

This module is the verb and the running of the check; the analysis of what
happened is :mod:`wizard_referee.check.analysis`, the report and its advice
:mod:`wizard_referee.check.report`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import secrets
import shlex
import sys
import tempfile
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from wizard_arena.cli.rules_options import add_rules_arguments, rules_from_args
from wizard_arena.rules import Rules
from wizard_referee.check.report import CheckReport, Problem, format_report
from wizard_referee.hosting.bot_process import BotProcess, open_bot_process
from wizard_referee.hosting.confine import SOCKET_NAME, confined_address
from wizard_referee.hosting.launcher import Launcher, open_launcher
from wizard_referee.referee.grpc_setup import prepare_referee_transport
from wizard_referee.referee.logs import configure_logging, shown
from wizard_referee.referee.policy import RefereePolicy
from wizard_referee.referee.record import GameRecord
from wizard_referee.sandbox import (
    OUTPUT_LIMIT,
    UID_BASE,
    Confinement,
    Limits,
    SandboxError,
    problems,
    sweep,
)
from wizard_referee.sandbox.cli import add_sandbox_arguments, limits_from_args
from wizard_referee.sandbox.probe import unreadable

if TYPE_CHECKING:  # the referee and the SDK's client (and grpc) load in run(), after
    # the referee's listener is chosen (grpc_setup)
    from wizard_referee.check.analysis import SdkReport
    from wizard_referee.referee.arena import Arena, Session

__all__ = [
    "CheckOptions",
    "CheckReport",
    "Problem",
    "add_arguments",
    "format_report",
    "run",
    "run_check",
]

DEFAULT_OPPONENTS = ("wizard_bots.heuristic:HeuristicBot", "wizard_bots.random_bot:RandomBot")
FALLBACK_OPPONENT = "wizard_bots.random_bot:RandomBot"
BOT_NAME = "bot-under-test"
_EXIT_GRACE = 5.0
"""Seconds the bot has to exit by itself after its last game."""


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
    c = parser.add_argument_group("confinement (as a tournament's sandbox and limit keys)")
    add_sandbox_arguments(c, "the bot under test")
    c.add_argument(
        "--folder",
        metavar="PATH",
        help="the folder the bot runs in (default: the current one); confined, all it sees "
        "of your files, read-only",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.epilog = (
        "--command contract: {server} {name} {token} {games} in CMDLINE are replaced; "
        "without {server}, '--server HOST:PORT --name NAME --token TOKEN --games N' is "
        "appended. The environment has WIZARD_ARENA_SERVER, _NAME, _TOKEN and _GAMES. "
        "Exit status: 0 clean, 1 problems found, 2 usage error."
    )


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
    sandbox: str = "none"
    """``bwrap``: the bot runs confined (docs/untrusted-bots.md)."""
    limits: Limits = field(default_factory=Limits)
    writable: tuple[str, ...] = ()
    """Folders a confined bot may write (the SDK's report's)."""
    output_limit: int = OUTPUT_LIMIT
    """Bytes of its standard output, and of its standard error, kept."""

    @property
    def players(self) -> int:
        return self.rules.players


# -- running the check ---------------------------------------------------------------------


def _bot_command(
    args: argparse.Namespace, report: str, server: str, token: str, games: int
) -> list[str]:
    """The bot's command line; a ``MODULE:CLASS`` bot's SDK writes its
    records to ``report``."""
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
    cmd += ["--report", report]
    for a in args.arg:
        cmd += ["--arg", a]
    return cmd


def _load_opponents(specs: list[str]) -> list[Any]:
    from wizard_arena.loader import SpecError, load_class

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
    arena: Arena, sessions: list[Session], bot: BotProcess, timeout: float
) -> Session | None:
    """The bot's live session (waiting up to ``timeout`` for a (re)connection)."""
    with trio.move_on_after(timeout):
        while True:
            live = [s for s in sessions if s.alive and not s.busy]
            if live:
                return live[-1]
            if bot.returncode is not None:
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
    killed: str | None = None
    """The limit a confined bot exceeded ("out of memory: limit 512 MiB")."""


async def run_check(
    opts: CheckOptions,
    make_command: Callable[[str, str, int], list[str]],
    stdout: Path,
    stderr: Path,
) -> CheckRun:
    """Start the referee, the opponents and the bot (``make_command(server,
    token, games)``, its output to the files ``stdout`` and ``stderr``, each
    capped at ``opts.output_limit`` bytes), and referee the games."""
    players = opts.players
    bot_token = secrets.token_hex(16)
    opp_tokens = [secrets.token_hex(16) for _ in range(players - 1)]
    from wizard_referee.referee.arena import ArenaConfig

    config = ArenaConfig(
        host="127.0.0.1",
        port=0,
        rules=opts.rules,
        policy=RefereePolicy(move_time=opts.move_time, reseat_delay=0.0),
        tokens=frozenset([bot_token, *opp_tokens]),
        matchmaking=False,
    )
    classes = _load_opponents(opts.opponents)
    result = CheckRun(opponents=[c.__name__ for c in classes])
    confined = opts.sandbox == "bwrap"
    with tempfile.TemporaryDirectory(prefix="wizard-check-") as socket_dir:
        if confined:  # the bot reaches the referee over a Unix socket only
            os.chmod(socket_dir, 0o755)
            config = replace(config, unix_socket=os.path.join(socket_dir, SOCKET_NAME))
        tokens = (bot_token, opp_tokens)
        # the launcher first: it must start before gRPC runs here (see its module)
        async with open_launcher() as launcher:
            outputs = (launcher, stdout, stderr)
            await _referee_check(opts, config, tokens, classes, make_command, outputs, result)
    return result


async def _referee_check(
    opts: CheckOptions,
    config: Any,
    tokens: tuple[str, list[str]],
    classes: list[Any],
    make_command: Callable[[str, str, int], list[str]],
    outputs: tuple[Launcher, Path, Path],
    result: CheckRun,
) -> None:
    from wizard_referee.referee.arena import serve_arena

    bot_token, opp_tokens = tokens
    launcher, stdout, stderr = outputs
    socket_dir = Path(config.unix_socket).parent if config.unix_socket else None
    async with trio.open_nursery() as nursery:
        arena: Arena = await nursery.start(serve_arena, config)
        lobby = _Lobby(arena, bot_token, opp_tokens)
        for i, token in enumerate(opp_tokens):
            cls = classes[i % len(classes)]
            name = f"{cls.__name__.removesuffix('Bot').lower() or 'bot'}-{i + 1}"
            lobby.names.append(name)
            nursery.start_soon(_opponent, cls(), arena.address, name, token)
        address = confined_address() if socket_dir else arena.address
        cmd = make_command(address, bot_token, opts.games)
        async with contextlib.AsyncExitStack() as stack:
            try:
                files = (stdout, stderr)
                started = _start_bot(launcher, cmd, address, bot_token, opts, files, socket_dir)
                bot = await stack.enter_async_context(started)
            except (OSError, SandboxError, ValueError) as e:
                result.start_error = f"cannot start {cmd[0]!r}: {e}"
                nursery.cancel_scope.cancel()
                return
            try:
                await _play_games(lobby, bot, opts, result)
                # let a bot that plays N games and leaves exit by itself
                with trio.move_on_after(_EXIT_GRACE if result.connected else 0):
                    await bot.wait()
            finally:
                result.stopped = await bot.stop()
                result.killed = bot.exceeded()
                result.exit_code = None if result.stopped else bot.returncode
                nursery.cancel_scope.cancel()


def _start_bot(
    launcher: Launcher,
    cmd: list[str],
    address: str,
    token: str,
    opts: CheckOptions,
    outputs: tuple[Path, Path],
    socket_dir: Path | None = None,
) -> AbstractAsyncContextManager[BotProcess]:
    """The bot's process, started as the host starts an entrant (its output
    capped); confined (``socket_dir``: the referee's socket's folder) as the
    host confines one, its folder ``opts.workdir`` and uid UID_BASE."""
    env = dict(
        os.environ,
        WIZARD_ARENA_SERVER=address,
        WIZARD_ARENA_NAME=BOT_NAME,
        WIZARD_ARENA_TOKEN=token,
        WIZARD_ARENA_GAMES=str(opts.games),
        PYTHONUNBUFFERED="1",
    )
    confinement = None
    if socket_dir is not None:
        confinement = Confinement(
            uid=UID_BASE,
            folder=Path(opts.workdir),
            socket_dir=socket_dir,
            limits=opts.limits,
            writable=tuple(Path(w) for w in opts.writable),
        )
    stdout, stderr = outputs
    cwd = "" if confinement is not None else opts.workdir
    return open_bot_process(
        launcher, cmd, env, stdout, cwd, confinement, limit=opts.output_limit, err=stderr
    )


class _Lobby:
    """The sessions of the bot under test and of its opponents, by token."""

    def __init__(self, arena: Arena, bot_token: str, opp_tokens: list[str]) -> None:
        self.arena = arena
        self.bot_token = bot_token
        self.opp_tokens = opp_tokens
        self.names: list[str] = []
        """The opponents' names, in the order of their tokens."""
        self.by_token: dict[str, list[Session]] = {t: [] for t in [bot_token, *opp_tokens]}
        arena.on_session.append(lambda s: self.by_token[s.hello.token].append(s))

    async def opponents(self, timeout: float) -> list[Session | None]:
        """Each opponent's live session (giving one that is not connected a moment)."""
        out: list[Session | None] = []
        for t in self.opp_tokens:
            sessions = self.by_token[t]
            if not any(s.alive for s in sessions):
                with trio.move_on_after(timeout):
                    while not any(s.alive for s in sessions):
                        await self.arena.wait_for_change()
            live = [s for s in sessions if s.alive]
            out.append(live[-1] if live else None)
        return out


async def _play_games(
    lobby: _Lobby, proc: BotProcess, opts: CheckOptions, result: CheckRun
) -> None:
    """Referee the games, the bot in each seat in turn, while it stays connected."""
    players = opts.players
    for g in range(opts.games):
        wait = opts.connect_timeout if g == 0 else min(opts.connect_timeout, 10.0)
        bot = await _wait_for_session(lobby.arena, lobby.by_token[lobby.bot_token], proc, wait)
        if bot is None:
            return
        result.connected = True
        opponents = await lobby.opponents(opts.connect_timeout)
        seat = g % players
        turn = g % (players - 1)
        order = opponents[turn:] + opponents[:turn]
        order_names = lobby.names[turn:] + lobby.names[:turn]
        record = await lobby.arena.play_game(
            [*order[:seat], bot, *order[seat:]],
            names=[*order_names[:seat], BOT_NAME, *order_names[seat:]],
            game_id=f"check-{g + 1}",
            seed=f"check:{opts.seed}:{g}",
            tags={"check": True},
        )
        result.records.append(record)
        result.seats.append(seat)


def run(args: argparse.Namespace) -> int:
    prepare_referee_transport()  # before the referee loads grpc
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
        sdk_dir = Path(tmp) / "sdk"  # the SDK's records (MODULE:CLASS bots)
        sdk_dir.mkdir()
        report_path = sdk_dir / "report.jsonl"
        if opts.sandbox == "bwrap" and args.command is None:
            # the one folder a confined bot may write: the SDK's report's
            # (a --command bot has none: it writes no folder of the machine)
            if os.geteuid() == 0:
                os.chown(sdk_dir, UID_BASE, UID_BASE)
            opts = replace(opts, writable=(str(sdk_dir),))
        command = partial(_bot_command, args, str(report_path))
        done = trio.run(run_check, opts, command, out_path, err_path)
        if done.start_error:
            print(f"{prog}: error: {done.start_error}", file=sys.stderr)
            return 2
        stderr_text = err_path.read_text(errors="replace")
        sdk = _sdk_report(report_path) if args.command is None else None
    if not done.connected and done.exit_code == 2 and args.command is None:
        # 'wizard-arena bot' refused the SPEC or an --arg
        print(f"{prog}: error: the bot did not start:", file=sys.stderr)
        print("\n".join(map(shown, stderr_text.rstrip().splitlines())), file=sys.stderr)
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
    from wizard_referee.check.analysis import analyse

    analyse(report, done.records, done.seats, done.connected, stderr_text, sdk, done.killed)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(format_report(report))
    return 0 if report.clean else 1


def _sdk_report(path: Path) -> SdkReport:
    """The records ``wizard-arena bot --report`` wrote (none if it wrote none)."""
    from wizard_arena.client.results import read_report
    from wizard_referee.check.analysis import SdkReport

    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            records, total = read_report(f)
    except FileNotFoundError:
        return SdkReport()
    return SdkReport(records, total)


def _options(args: argparse.Namespace) -> CheckOptions:
    from wizard_arena.loader import SpecError, load_class, parse_arg

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
    folder = args.folder or "."
    if not Path(folder).is_dir():
        raise UsageError(f"--folder {folder} does not exist")
    if args.sandbox == "bwrap":
        _check_sandbox(Path(folder))
    return CheckOptions(
        label=args.spec if args.spec is not None else args.command,
        rules=rules,
        move_time=args.move_time,
        games=games,
        opponents=opponents,
        seed=args.seed,
        connect_timeout=args.connect_timeout,
        workdir=folder,
        sandbox=args.sandbox,
        limits=limits_from_args(args),
        output_limit=args.output_limit,
    )


def _check_sandbox(folder: Path) -> None:
    """UsageError when the bot cannot run confined here (one line each)."""
    found = [
        x.replace('sandbox = "bwrap"', "--sandbox bwrap").replace(
            'or set sandbox = "none"', "or leave out --sandbox"
        )
        for x in problems()
    ]
    if not found and os.geteuid() == 0:
        bad = unreadable([folder], depth=16)
        if bad:
            found.append(
                f"the bot's uid {UID_BASE} cannot read {', '.join(bad)}: make its folder "
                "world-readable (chmod -R o+rX)"
            )
    if found:
        raise UsageError("; ".join(found))
    with contextlib.suppress(SandboxError, OSError):
        sweep()  # the empty cgroups of a check killed with SIGKILL

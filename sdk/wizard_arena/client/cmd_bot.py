"""``wizard-arena bot``: connect a bot class to a referee server.

``SPEC`` is ``MODULE:CLASS`` (an importable module, e.g.
``wizard_bots.random_bot:RandomBot``) or ``path/to/file.py:CLASS``. The
class is built with the ``--arg key=value`` options as keyword arguments
(values are Python literals where they parse as one, else strings) and
played with :func:`wizard_arena.client.run_bot`, or with
:func:`~wizard_arena.client.serve_bot` under trio for an
:class:`~wizard_arena.client.AsyncBot`. With ``--report FILE`` the SDK's
records of each decision and fault are written to FILE as JSON lines as they
happen, the run's summary last (:mod:`wizard_arena.client.results`; this is
what ``wizard-arena check`` reads).

Without ``--games`` the bot plays until the server ends: a server that
shuts down cleanly ends the run (one line, exit status 0); a connection
lost otherwise is reconnected to for up to ``--connect-timeout`` seconds.

Exit status: 0 when the games are played, 1 when the server refuses or
drops the bot (or cannot be reached within ``--connect-timeout`` seconds),
2 for a bad SPEC or argument, 4 when the games were played but the bot
raised (or returned an action it may not play) and the SDK played the
referee's default for it, 130 on Ctrl-C.

Loading the class is :mod:`wizard_arena.loader`'s (its names are
re-exported here).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
from typing import TYPE_CHECKING, Any

from wizard_arena.client import DEFAULT_SERVER
from wizard_arena.client.results import EXIT_BOT_ERRORS
from wizard_arena.loader import SpecError, async_bot_class, load_bot, load_class, parse_arg

if TYPE_CHECKING:
    pass

__all__ = [
    "SpecError",
    "add_arguments",
    "load_bot",
    "load_class",
    "parse_arg",
    "read_token_file",
    "run",
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "spec",
        metavar="MODULE:CLASS",
        help="the bot class: module.path:Class or path/to/file.py:Class",
    )
    parser.add_argument(
        "--server",
        default=DEFAULT_SERVER,
        metavar="HOST:PORT",
        help=f"the referee server: HOST:PORT, or unix:PATH for a Unix socket (a confined "
        f"tournament entrant's; default {DEFAULT_SERVER})",
    )
    parser.add_argument("--name", help="display name (default: the bot's name or class name)")
    token = parser.add_mutually_exclusive_group()
    token.add_argument(
        "--token",
        default=os.environ.get("WIZARD_ARENA_TOKEN"),
        help="access token, if the server requires one (default: $WIZARD_ARENA_TOKEN); "
        "on a command line every local user sees it ('ps'): prefer the environment or "
        "--token-file",
    )
    token.add_argument(
        "--token-file",
        metavar="FILE",
        help="read the access token from FILE (its first line), out of sight of 'ps'",
    )
    parser.add_argument(
        "--games", type=int, metavar="N", help="stop after N games (default: until the server ends)"
    )
    parser.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        type=_arg_type,
        help="keyword argument for the bot's constructor (repeatable)",
    )
    parser.add_argument(
        "--connect-timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="keep trying to reach the server for this long (at the start and after a "
        "dropped connection) before giving up with exit status 1 (default 60)",
    )
    parser.add_argument(
        "--no-reconnect",
        dest="reconnect",
        action="store_false",
        help="give up at once when the server cannot be reached or the connection drops",
    )
    parser.add_argument(
        "--report",
        metavar="FILE",
        help="write the SDK's records of each decision and fault to FILE as JSON lines, "
        "as they happen; the last line is the run's summary",
    )
    parser.add_argument(
        "--events",
        choices=("all", "lean"),
        help="the messages to ask the referee for: every table event, or the lean stream "
        "(protocol v1.1: the requests with their complete views, round and game results); "
        "default: lean unless the bot overrides on_trick_end or on_round_end or sets "
        "event_stream",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="stop on any bot error, rejected action or disagreement with the referee",
    )
    verbosity = parser.add_mutually_exclusive_group()
    verbosity.add_argument("-v", "--verbose", action="store_true", help="also log every decision")
    verbosity.add_argument(
        "-q", "--quiet", action="store_true", help="log warnings and errors only"
    )


def _arg_type(text: str) -> tuple[str, Any]:
    try:
        return parse_arg(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def read_token_file(path: str) -> str:
    """The token in the file ``path``: its first line, without surrounding
    blanks (ValueError if that is empty)."""
    with open(path, encoding="utf-8") as f:
        token = f.readline().strip()
    if not token:
        raise ValueError(f"{path}: no token on its first line")
    return token


def run(args: argparse.Namespace) -> int:
    prog = "wizard-arena bot"
    if args.games is not None and args.games < 1:
        print(f"{prog}: error: --games must be at least 1", file=sys.stderr)
        return 2
    if not (math.isfinite(args.connect_timeout) and args.connect_timeout >= 0):
        print(
            f"{prog}: error: --connect-timeout must be a number of seconds, 0 or more",
            file=sys.stderr,
        )
        return 2
    if args.token_file is not None:
        try:
            args.token = read_token_file(args.token_file)
        except (OSError, ValueError) as e:
            print(f"{prog}: error: --token-file: {e}", file=sys.stderr)
            return 2
    try:
        bot = load_bot(args.spec, dict(args.arg))
    except SpecError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2

    try:
        report = _Report(args.report) if args.report else None
    except OSError as e:
        print(f"{prog}: error: --report: {e}", file=sys.stderr)
        return 2
    try:
        return _play(prog, bot, args, report)
    finally:
        if report is not None:
            report.close()


class _Report:
    """``--report FILE``: the client's records as JSON lines, each written
    (and flushed) as it happens, so a run that ends abruptly keeps them."""

    def __init__(self, path: str) -> None:
        self.file = open(path, "w", encoding="utf-8")  # noqa: SIM115  (closed by close())

    def write(self, item: Any) -> None:
        data = item if isinstance(item, dict) else item.to_dict()
        self.file.write(json.dumps(data) + "\n")
        self.file.flush()

    def close(self) -> None:
        self.file.close()


def _play(prog: str, bot: Any, args: argparse.Namespace, report: _Report | None) -> int:
    level = logging.DEBUG if args.verbose else logging.WARNING if args.quiet else logging.INFO
    logging.basicConfig(
        level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    if not args.verbose:
        logging.getLogger("grpc").setLevel(logging.WARNING)

    from wizard_arena.client import ArenaError, RunResult, run_bot
    from wizard_arena.client.results import summary

    options: dict[str, Any] = {
        "name": args.name,
        "token": args.token,
        "games": args.games,
        "reconnect": args.reconnect,
        "reconnect_timeout": args.connect_timeout,
        "strict": args.strict,
        "on_record": report.write if report is not None else None,
        "keep_records": False,  # (a long run would keep one per decision)
        "event_stream": args.events,
        # serving until the server ends: its clean shutdown is that end
        "stop_at_shutdown": args.games is None,
    }
    result: RunResult | None = None
    try:
        async_bot = async_bot_class()
        if async_bot is not None and isinstance(bot, async_bot):
            import functools

            import trio

            from wizard_arena.client import serve_bot

            result = trio.run(functools.partial(serve_bot, bot, args.server, **options))
        else:
            result = run_bot(bot, args.server, **options)
    except ArenaError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    if report is not None:
        report.write(summary(result))
    games = len(result.games)
    print(
        f"{prog}: {'the server shut down; ' if result.server_shut_down else ''}"
        f"{games} game{'s' if games != 1 else ''} played, {result.decisions} decisions, "
        f"{result.bot_errors} bot errors, {result.overruns} overruns, "
        f"{result.rejections} rejected, {result.hook_errors} hook errors",
        file=sys.stderr,
    )
    if result.bot_errors or result.hook_errors:
        print(
            f"{prog}: the bot hit errors (see the log above); exit status {EXIT_BOT_ERRORS}",
            file=sys.stderr,
        )
        return EXIT_BOT_ERRORS
    return 0

"""``wizard-arena serve``: run the gRPC referee server."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from wizard_arena.cli.rules_options import add_rules_arguments, rules_from_args
from wizard_arena.cli.web_options import WebOptions, add_web_arguments, port_number
from wizard_referee.referee.grpc_setup import prepare_referee_transport
from wizard_referee.referee.listen import (
    SERVE_FIXES,
    listen_problem,
    serve_failure,
    web_line,
    web_problem,
)
from wizard_referee.referee.logs import configure_logging
from wizard_referee.referee.policy import (
    INTERNAL,
    SETTINGS,
    PolicyError,
    RefereePolicy,
    add_flags,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1; 0.0.0.0 every IPv4 address, :: or [::] "
        "every address, IPv6 and IPv4)",
    )
    parser.add_argument(
        "--port", type=port_number, default=50051, help="port (default 50051; 0: any free port)"
    )
    add_rules_arguments(parser)
    parser.add_argument(
        "--token-file",
        type=Path,
        help="file of accepted access tokens, one per line ('#' comments)",
    )
    parser.add_argument("--seed", type=int, help="base deal seed (default: random deals)")
    secret = parser.add_mutually_exclusive_group()
    secret.add_argument(
        "--bot-seed-secret",
        metavar="TEXT",
        help="the secret the bots' per-game seeds (GameStarted.bot_seed) are derived from "
        "with the game id and seat (default: a random one per server start); give one to "
        "replay games, keep it long and private when bots are not trusted",
    )
    secret.add_argument(
        "--bot-seed-secret-file",
        type=Path,
        metavar="FILE",
        help="read --bot-seed-secret from this file (its first line), out of sight of 'ps'",
    )
    add_flags(
        parser.add_argument_group("the referee's policy (the same as [tournament] keys)"),
        [name for name, s in SETTINGS.items() if s.scope != INTERNAL],  # (serve's too)
    )
    parser.add_argument(
        "--log-level",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="the least severe log events written",
    )
    parser.add_argument(
        "--log-format",
        default="auto",
        choices=["auto", "json", "console"],
        help="how log events are written to standard error: JSON lines, or for people "
        "(auto: console on a terminal, JSON otherwise)",
    )
    add_web_arguments(parser)


def read_tokens(path: Path) -> frozenset[str]:
    """Tokens from a file: one per line; blank lines and ``#`` comments ignored."""
    tokens = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            tokens.add(line.split()[0])
    if not tokens:
        raise ValueError(f"{path}: no tokens in the file")
    return frozenset(tokens)


def read_bot_seed_secret(args: argparse.Namespace) -> str | None:
    """``--bot-seed-secret``, or the first line of ``--bot-seed-secret-file``
    (``None``: neither given, the server draws one). ValueError if empty."""
    if args.bot_seed_secret_file is not None:
        lines = args.bot_seed_secret_file.read_text(encoding="utf-8").splitlines()
        text = lines[0].strip() if lines else ""
        if not text:
            raise ValueError(f"{args.bot_seed_secret_file}: the first line is empty")
        return text
    if args.bot_seed_secret is not None and not args.bot_seed_secret:
        raise ValueError("--bot-seed-secret must not be empty")
    return args.bot_seed_secret


if TYPE_CHECKING:  # the referee (and grpc) load in run(), after the listener is chosen
    from wizard_referee.referee.arena import Arena, ArenaConfig

    StartWeb = Callable[[trio.Nursery, WebOptions, Arena], Awaitable[list[str]]]


async def _main(
    config: ArenaConfig, web: WebOptions | None = None, start_web: StartWeb | None = None
) -> None:
    from wizard_referee.referee.arena import freeze_startup_objects, serve_arena

    with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
        async with trio.open_nursery() as nursery:
            arena = await nursery.start(serve_arena, config)
            urls = await start_web(nursery, web, arena) if start_web and web else []
            freeze_startup_objects()
            print(
                f"wizard-arena serving on {arena.address} ({config.rules.describe()})",
                file=sys.stderr,
                flush=True,
            )
            for url in urls:
                print(web_line(url), file=sys.stderr, flush=True)
            async for sig in signals:
                arena.log.info("signal", signal=signal.Signals(sig).name)
                nursery.cancel_scope.cancel()
                break


def run(args: argparse.Namespace) -> int:
    prepare_referee_transport()  # before the referee loads grpc
    from wizard_referee.referee.arena import ArenaConfig

    configure_logging(args.log_level, args.log_format)
    try:
        policy = RefereePolicy.from_mapping(vars(args))
    except PolicyError as e:
        print(f"error: {e.flag()}", file=sys.stderr)
        return 2
    tokens = None
    if args.token_file is not None:
        try:
            tokens = read_tokens(args.token_file)
        except (OSError, ValueError) as e:
            print(f"error: token file: {e}", file=sys.stderr)
            return 2
    try:
        rules = rules_from_args(args)
    except ValueError as e:
        print(f"error: rules: {e}", file=sys.stderr)
        return 2
    try:
        bot_seed_secret = read_bot_seed_secret(args)
    except (OSError, ValueError) as e:
        print(f"error: bot seed secret: {e}", file=sys.stderr)
        return 2
    config = ArenaConfig(
        host=args.host,
        port=args.port,
        rules=rules,
        policy=policy,
        tokens=tokens,
        seed=args.seed,
        bot_seed_secret=bot_seed_secret,
    )
    problem = listen_problem(args.host, args.port, *SERVE_FIXES)
    if problem is not None:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    web = WebOptions.from_args(args)
    start_web: StartWeb | None = None
    if web.wanted:
        problem = web_problem(web, args.port)
        if problem is not None:
            print(f"error: {problem}", file=sys.stderr)
            return 2
        from wizard_referee.web.serve import start_web as web_starter

        start_web = web_starter
    try:
        trio.run(_main, config, web, start_web)
    except (OSError, BaseExceptionGroup) as e:
        message = serve_failure(e, args.host, args.port, *SERVE_FIXES)
        if message is None:
            raise
        print(f"error: {message}", file=sys.stderr)
        return 2
    return 0

"""Running one misbehaving bot: :func:`run_kind` (blocking) and the command
line, ``python -m wizard_bots.misbehaving KIND ...`` (:func:`main`)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from typing import Any

from .behaviours import CLIENTS, FloodClient
from .bots import SlowBot
from .client import Report
from .kinds import DEFAULT_RATES, FLOOD_BURST, KINDS

__all__ = ["main", "run_kind"]


def run_kind(
    kind: str,
    server: str,
    name: str,
    *,
    token: str = "",
    games: int | None = None,
    rate: float | None = None,
    limit: int | None = None,
    seed: int | None = None,
    reconnect: bool = True,
    delay: float | None = None,
    burst: int = FLOOD_BURST,
    rule_options: Sequence[str] | None = None,
) -> Report:
    """Run one misbehaving bot until its games are played (blocking).

    ``rule_options``: what its Hello declares (``None``: every option the
    SDK plays for ``slow``, an SDK bot; none for the raw clients)."""
    if kind == "slow":
        from wizard_arena.client import ArenaError, run_bot

        bot = SlowBot(
            rate=DEFAULT_RATES["slow"] if rate is None else rate,
            delay=delay,
            limit=limit,
            seed=seed,
        )
        report = Report(kind, name)
        try:
            result = run_bot(
                bot,
                server,
                name=name,
                token=token or None,
                games=games,
                reconnect=reconnect,
                rule_options=rule_options,
            )
            report.statuses.append("OK")
        except ArenaError as e:
            report.statuses.append(e.code or "UNKNOWN")
            report.details.append(str(e))
            return report
        report.games = len(result.games)
        report.game_ids = [g.game_id for g in result.games]
        report.sessions = 1 + result.reconnects
        report.decisions = result.decisions
        report.misbehaved = bot.misbehaved
        if result.rejections:
            report.rejections["(reason not kept by the SDK)"] = result.rejections
        for f in result.faults:
            report.faults[f.code] = report.faults.get(f.code, 0) + f.count
        return report
    try:
        cls = CLIENTS[kind]
    except KeyError:
        raise ValueError(f"unknown kind {kind!r} (one of {', '.join(KINDS)})") from None
    options: dict[str, Any] = {
        "token": token,
        "games": games,
        "rate": rate,
        "limit": limit,
        "seed": seed,
        "reconnect": reconnect,
        "rule_options": tuple(rule_options or ()),
    }
    if cls is FloodClient:
        options["burst"] = burst
    return cls(server, name, **options).run()


def _parser() -> argparse.ArgumentParser:
    kinds = "\n".join(f"  {k:<14} {v}" for k, v in KINDS.items())
    p = argparse.ArgumentParser(
        prog="python -m wizard_bots.misbehaving",
        description="A bot that misbehaves on purpose (and otherwise plays random legal moves).",
        epilog=f"kinds:\n{kinds}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("kind", choices=list(KINDS), metavar="KIND", help="the misbehaviour")
    p.add_argument("--server", default="127.0.0.1:50051", metavar="HOST:PORT")
    p.add_argument("--name", help="display name (default: the kind)")
    p.add_argument("--token", default="", help="access token, if the server requires one")
    p.add_argument("--games", type=int, metavar="N", help="stop after N games (default: never)")
    p.add_argument(
        "--rate",
        type=float,
        metavar="P",
        help="probability of misbehaving per decision (per connection for wrong-version)",
    )
    p.add_argument("--limit", type=int, metavar="K", help="misbehave at most K times a game")
    p.add_argument("--seed", type=int, help="seed of the bot's choices")
    p.add_argument("--delay", type=float, metavar="S", help="slow: seconds to sleep")
    p.add_argument("--burst", type=int, default=FLOOD_BURST, help="flood: messages at once")
    p.add_argument("--no-reconnect", dest="reconnect", action="store_false")
    p.add_argument(
        "--rule-options",
        metavar="NAMES",
        help="comma-separated rule options its Hello declares, e.g. round_sizes,tricksy "
        "(default: none for the raw clients, every option the SDK plays for slow)",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    p.add_argument("-q", "--quiet", action="store_true", help="log warnings only")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.games is not None and args.games < 1:
        print("error: --games must be at least 1", file=sys.stderr)
        return 2
    if args.rate is not None and not 0.0 <= args.rate <= 1.0:
        print("error: --rate must be between 0 and 1", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    logging.getLogger("grpc").setLevel(logging.WARNING)
    name = args.name or args.kind
    try:
        report = run_kind(
            args.kind,
            args.server,
            name,
            token=args.token,
            games=args.games,
            rate=args.rate,
            limit=args.limit,
            seed=args.seed,
            reconnect=args.reconnect,
            delay=args.delay,
            burst=args.burst,
            rule_options=None
            if args.rule_options is None
            else [o for o in args.rule_options.split(",") if o],
        )
    except KeyboardInterrupt:
        return 130
    if args.json:
        print(json.dumps(report.to_dict()))
    faults = ", ".join(f"{k} x{v}" for k, v in sorted(report.faults.items())) or "none"
    print(
        f"{name} ({args.kind}): {report.games} games played, {report.cut} left, "
        f"{report.refused} refused, misbehaved {report.misbehaved} times in "
        f"{report.decisions} decisions; faults: {faults}; streams ended: "
        f"{', '.join(report.statuses) or '-'}",
        file=sys.stderr,
    )
    return 0 if report.sessions or report.refused else 1

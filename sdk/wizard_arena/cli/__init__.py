"""The ``wizard-arena`` command.

Each subcommand lives in its own module, imported only when that command
runs, so ``wizard-arena conformance`` never loads grpc. A command module
provides ``add_arguments(parser)`` and ``run(args) -> int``.
:mod:`.rules_options` holds the rule-variant flags the verbs share.

May import: the rules room, :mod:`wizard_arena` (its version) and
:mod:`wizard_arena.extras`. The verbs' modules, the server's among them, are
named in :data:`COMMANDS` by module path and imported through importlib only
when that verb runs; a verb whose extra is not installed (e.g. ``serve``
without ``[server]``) says which extra to install, in one line, exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import NoReturn

from wizard_arena.extras import MissingExtraError, require

# name -> (module, one-line help). Order is the order shown in --help.
COMMANDS: dict[str, tuple[str, str]] = {
    "demo": (
        "wizard_referee.tournament.cmd_demo",
        "server + example bots + a small round robin + ratings",
    ),
    "play": ("wizard_arena.cmd_play", "one local game: your bot classes and example bots"),
    "serve": ("wizard_referee.referee.cmd_serve", "run the gRPC referee server"),
    "bot": ("wizard_arena.client.cmd_bot", "connect a bot class (MODULE:CLASS) to a server"),
    "tournament": (
        "wizard_referee.tournament.cmd_tournament",
        "run a round-robin tournament (TOML)",
    ),
    "ladder": (
        "wizard_referee.ladder.cmd_ladder",
        "a season: entrants register, connect and improve; live and official standings",
    ),
    "compare": (
        "wizard_referee.compare.cmd_compare",
        "is bot A stronger than bot B? duplicate deals, a sequential test",
    ),
    "ratings": (
        "wizard_referee.ratings.cmd_ratings",
        "rate players from game results (JSON lines)",
    ),
    "replay": ("wizard_referee.tournament.cmd_replay", "print a recorded game trick by trick"),
    "analyse": (
        "wizard_referee.analysis.cmd_analyse",
        "grade every bid and card of stored games against a reference evaluator",
    ),
    "export": (
        "wizard_referee.tournament.cmd_export",
        "write a tournament's finished games as JSON lines (the input of ratings)",
    ),
    "web": (
        "wizard_referee.web.cmd_web",
        "web pages of a tournament: leaderboard, games, replays, entrants",
    ),
    "conformance": (
        "wizard_arena.conformance.cmd_conformance",
        "run rules test vectors (JSON files)",
    ),
    "proto": (
        "wizard_arena.protocol.cmd_proto",
        "write the protocol's .proto file(s) to a folder, for bots in other languages",
    ),
    "check": (
        "wizard_referee.check.cmd_check",
        "check a bot against misbehaviour and short deadlines",
    ),
}

#: Verbs that need an extra beyond ``server`` (which that extra installs
#: too): a plain install is told at once to install it, not ``server`` first.
EXTRA_OF = {"web": "web", "ladder": "ladder"}


def _parser() -> argparse.ArgumentParser:
    lines = "\n".join(f"  {name:<13} {text}" for name, (_, text) in COMMANDS.items())
    return argparse.ArgumentParser(
        prog="wizard-arena",
        description="Referee server, SDK and tournaments for Wizard-playing bots.",
        epilog=f"commands:\n{lines}\n\nRun 'wizard-arena COMMAND --help' for a command's options.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="wizard-arena [-h] [--version] COMMAND ...",
    )


class VerbParser(argparse.ArgumentParser):
    """A verb's argument parser: an error in the arguments is one line, the
    verb, the error and where the usage is (not the usage of every option
    first); a verb's subcommands (``ladder add``) get parsers of this class."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} ('{self.prog} --help' lists the options)\n")


def verb_parser(name: str) -> tuple[argparse.ArgumentParser, ModuleType]:
    """The argument parser of the verb *name* and the module that runs it.

    Raises :class:`~wizard_arena.extras.MissingExtraError` when the verb's
    extra is not installed. Used by :func:`main` and by the generator of the
    CLI reference (``scripts/gen_cli_reference.py``).
    """
    module_name, text = COMMANDS[name]
    if name in EXTRA_OF:  # its own extra first: it brings the server's too
        require(EXTRA_OF[name], f"wizard-arena {name}")
    module = importlib.import_module(module_name)
    parser = VerbParser(prog=f"wizard-arena {name}", description=text)
    module.add_arguments(parser)
    return parser, module


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    top = _parser()
    if not args or args[0] in ("-h", "--help"):
        top.print_help()
        return 0 if args else 2
    if args[0] == "--version":
        from wizard_arena import __version__

        print(f"wizard-arena {__version__}")
        return 0
    name = args[0]
    if name not in COMMANDS:
        top.print_usage(sys.stderr)
        print(
            f"wizard-arena: error: unknown command {name!r} (one of {', '.join(COMMANDS)})",
            file=sys.stderr,
        )
        return 2
    try:
        parser, module = verb_parser(name)
    except MissingExtraError as e:  # e.g. `serve` after a bot author's plain install
        print(f"wizard-arena {name}: {e}", file=sys.stderr)
        return 2
    ns = parser.parse_args(args[1:])
    ns.command_line = args  # as typed, for messages that say how to run it again
    try:
        return int(module.run(ns) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. piped into head: not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())

"""``wizard-arena conformance FILE...``: run rules test vectors."""

from __future__ import annotations

import argparse

from wizard_arena.conformance.vectors import main


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("files", nargs="+", metavar="FILE", help="vector files (JSON)")
    parser.add_argument("-v", "--verbose", action="store_true", help="a summary line per file")


def run(args: argparse.Namespace) -> int:
    return main(args.files, verbose=args.verbose)

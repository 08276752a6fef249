"""Command-line options for the rules of a game, shared by the commands that
set them (``play``, ``serve``, ``check``; ``tournament`` overrides its file
with the same flags)."""

from __future__ import annotations

import argparse

from wizard_arena.rules import BidRestriction, Rules

__all__ = [
    "ROUND_SIZES_HELP",
    "VARIANT_FLAGS",
    "add_rules_arguments",
    "parse_round_sizes",
    "rules_from_args",
]


#: The on/off rule variants, by flag (the Rules field is the flag with underscores).
VARIANT_FLAGS = {
    "hidden-bids": "everyone bids at once; the bids are revealed together",
    "blind-first-round": "round 1: each player sees the others' cards but not their own",
    "maximus": "Wizard Maximus: five rounds of all cards, trump C D H S then none",
    "tricksy": "whoever plays a Wizard names the trump from the next trick on",
    "lowest-score-deals": "from round 2 the player with the fewest points deals",
}
ROUND_SIZES_HELP = "a short game: cards dealt in each round, e.g. 2,4,6"


def add_rules_arguments(
    parser: argparse.ArgumentParser, *, players_help: str = "players per table, 3-6 (default 4)"
) -> None:
    """``--players``, ``--bid-restriction`` and one flag per rule variant."""
    parser.add_argument(
        "--players", type=int, default=4, choices=range(3, 7), metavar="N", help=players_help
    )
    parser.add_argument(
        "--bid-restriction",
        default="none",
        choices=[b.value for b in BidRestriction],
        help="the dealer's bid restriction (default none)",
    )
    v = parser.add_argument_group(
        "rule variants (bots must list each one in force in their Hello.rule_options)"
    )
    for flag, help_text in VARIANT_FLAGS.items():
        v.add_argument(f"--{flag}", action="store_true", help=help_text)
    v.add_argument("--round-sizes", metavar="N,N,...", help=ROUND_SIZES_HELP)


def parse_round_sizes(text: str) -> tuple[int, ...]:
    """``"2,4,6"`` -> ``(2, 4, 6)``; ValueError with a readable message otherwise.

    >>> parse_round_sizes("2, 4,6")
    (2, 4, 6)
    """
    parts = [p.strip() for p in text.split(",")]
    try:
        return tuple(int(p) for p in parts)
    except ValueError:
        raise ValueError(
            f"--round-sizes must be whole numbers separated by commas, not {text!r}"
        ) from None


def rules_from_args(args: argparse.Namespace) -> Rules:
    """The Rules the options ask for; ValueError (the core's message) for a
    combination that cannot work."""
    sizes = parse_round_sizes(args.round_sizes) if args.round_sizes is not None else None
    return Rules(
        players=args.players,
        bid_restriction=BidRestriction(args.bid_restriction),
        hidden_bids=args.hidden_bids,
        blind_first_round=args.blind_first_round,
        maximus=args.maximus,
        tricksy=args.tricksy,
        lowest_score_deals=args.lowest_score_deals,
        hand_sizes=sizes,
    )

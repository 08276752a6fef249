"""Command-line options for the rules of a game, shared by the commands that
set them (``play``, ``serve``, ``check``; ``tournament`` overrides its file
with the same flags)."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from wizard_arena.rules import BidRestriction, Rules
from wizard_arena.rules.laws import VARIANT_OPTIONS

__all__ = [
    "BID_RESTRICTION_HELP",
    "ROUND_SIZES_HELP",
    "RULE_KEYS",
    "VARIANT_FLAGS",
    "add_rules_arguments",
    "parse_round_sizes",
    "rules_from_args",
    "rules_from_mapping",
]

#: The settings that make the rules (the keys of ``Rules.to_dict()``).
RULE_KEYS: tuple[str, ...] = ("players", "bid_restriction", *VARIANT_OPTIONS)


#: The on/off rule variants, by flag (the Rules field is the flag with underscores).
VARIANT_FLAGS = {
    "hidden-bids": "everyone bids at once; the bids are revealed together before the first card",
    "reveal-bids-after-tricks": "with --hidden-bids: the bids are revealed only after the "
    "round's tricks (Hungarian)",
    "blind-first-round": "round 1: each player sees the others' cards but not their own",
    "maximus": "Wizard Maximus: five rounds of all cards, trump C D H S then none",
    "tricksy": "Tricksy Wizard: whoever plays a Wizard names the trump from the next trick on",
    "tricksy-suited": "Tricksy Wizard with suited Wizards (Italian): the four Wizards carry "
    "the four suits and a Wizard makes its suit trump at once",
    "lowest-score-deals": "from round 2 the player with the fewest points deals",
    "first-dealer-by-draw": "the first dealer is the player who draws the highest card "
    "(Finnish; ties draw again)",
}
ROUND_SIZES_HELP = "a short game: cards dealt in each round, e.g. 2,4,6"
#: The dealer's bid restrictions, with the names players use for them.
BID_RESTRICTION_HELP = (
    "the dealer's bid restriction: none (the default); dealer_not_equal, the "
    '"+/-" rule: the sum of the bids may not equal the tricks (in Oh Hell also '
    '"screw the dealer"); canadian, the Canadian rule of Wizard tournaments: '
    "the same, only while the dealer leads on points, and a bid of 0 always allowed"
)


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
        help=BID_RESTRICTION_HELP,
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


def rules_from_mapping(settings: Mapping[str, Any]) -> Rules:
    """The Rules set by the rule keys of ``settings`` (``players``,
    ``bid_restriction``, ``round_sizes`` and one per variant flag; other keys
    are the caller's and are ignored, and a missing or ``None`` one keeps its
    default): the ``vars()`` of parsed :func:`add_rules_arguments` options,
    or a tournament's ``[tournament]`` section. ``round_sizes`` is a list of
    numbers or, as given on the command line, text (``"2,4,6"``). ValueError
    (the core's message) for a combination that cannot work."""
    data = {k: settings[k] for k in RULE_KEYS if settings.get(k) is not None}
    sizes = data.get("round_sizes")
    if isinstance(sizes, str):
        data["round_sizes"] = parse_round_sizes(sizes)
    return Rules.from_dict(data)


def rules_from_args(args: argparse.Namespace) -> Rules:
    """The Rules the options ask for; ValueError (the core's message) for a
    combination that cannot work."""
    return rules_from_mapping(vars(args))

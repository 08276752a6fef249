"""The rule variants the tests play, named once.

:data:`VARIANTS` has a table for each variant option and the combinations
the referee's end-to-end tests play (tests/test_variants.py plays each over
gRPC; the bots', CLI, spectator and rollout tests reuse it).
:data:`MORE_VARIANTS` adds the base rules, the bid restrictions and further
combinations for the in-process tests, which can afford more tables
(:func:`pick` chooses some of them by name; :data:`EVERY_OPTION` is the
tables that play every option at least once).
"""

from __future__ import annotations

from wizard_arena.rules import BidRestriction, Rules

VARIANTS: dict[str, Rules] = {
    "hidden_bids": Rules(players=4, hidden_bids=True),
    "blind_first_round": Rules(players=3, blind_first_round=True),
    "maximus": Rules(players=5, maximus=True),
    "tricksy": Rules(players=3, tricksy=True),
    "lowest_score_deals": Rules(players=6, lowest_score_deals=True),
    "round_sizes": Rules(players=4, hand_sizes=(3, 1, 4, 1, 5, 9)),
    "combined": Rules(
        players=3,
        hidden_bids=True,
        blind_first_round=True,
        tricksy=True,
        lowest_score_deals=True,
        hand_sizes=(1, 5, 9, 13),
    ),
    "tricksy_suited": Rules(players=4, tricksy_suited=True),
    "reveal_bids_after_tricks": Rules(players=4, hidden_bids=True, reveal_bids_after_tricks=True),
    "first_dealer_by_draw": Rules(players=5, first_dealer_by_draw=True),
    "combined_forms": Rules(
        players=3,
        hidden_bids=True,
        reveal_bids_after_tricks=True,
        blind_first_round=True,
        tricksy_suited=True,
        lowest_score_deals=True,
        first_dealer_by_draw=True,
        hand_sizes=(1, 5, 9, 13),
    ),
}

MORE_VARIANTS: dict[str, Rules] = {
    **VARIANTS,
    "base": Rules(players=4),
    "dealer_not_equal": Rules(players=3, bid_restriction=BidRestriction.DEALER_NOT_EQUAL),
    "canadian": Rules(players=5, bid_restriction=BidRestriction.CANADIAN),
    "short_rounds": Rules(players=4, hand_sizes=(2, 4, 6)),
    "maximus_tricksy": Rules(
        players=4,
        maximus=True,
        tricksy=True,
        lowest_score_deals=True,
        bid_restriction=BidRestriction.CANADIAN,
    ),
    "maximus_tricksy_hidden": Rules(players=4, maximus=True, tricksy=True, hidden_bids=True),
    "maximus_suited_after_tricks": Rules(
        players=4,
        maximus=True,
        tricksy_suited=True,
        hidden_bids=True,
        reveal_bids_after_tricks=True,
        first_dealer_by_draw=True,
    ),
    "blind_tricksy_canadian": Rules(
        players=4,
        blind_first_round=True,
        tricksy=True,
        bid_restriction=BidRestriction.CANADIAN,
        hand_sizes=(1, 2, 3, 15, 4),
    ),
    "new_forms_to_twenty": Rules(
        players=3,
        hidden_bids=True,
        reveal_bids_after_tricks=True,
        blind_first_round=True,
        tricksy_suited=True,
        first_dealer_by_draw=True,
        hand_sizes=(1, 7, 20),
    ),
}


def pick(*names: str) -> dict[str, Rules]:
    """The tables of :data:`MORE_VARIANTS` named, in that order."""
    return {name: MORE_VARIANTS[name] for name in names}


#: Every option at least once, and the combinations the referee's tests play:
#: the whole random games of the fold, the SDK's driver and the environments.
EVERY_OPTION = pick(
    "base",
    "dealer_not_equal",
    "canadian",
    "hidden_bids",
    "reveal_bids_after_tricks",
    "blind_first_round",
    "maximus",
    "tricksy",
    "tricksy_suited",
    "lowest_score_deals",
    "first_dealer_by_draw",
    "round_sizes",
    "combined",
    "combined_forms",
    "maximus_tricksy_hidden",
)

"""The rules core: a pure, standard-library-only model of Wizard.

This package is the single place where a rule of the game is written. The
referee server, the SDK, the example bots and the conformance runner all use
it. It imports nothing outside the Python standard library and keeps no
global random state: every deal comes from a seeded :class:`random.Random`
or from explicit hands.

May import: the standard library only, and its own modules by relative
import; nothing else of ours (tests/test_architecture.py).
"""

from .actions import (
    Action,
    Bid,
    BidMade,
    CardPlayed,
    ChooseTrump,
    Event,
    GameOver,
    Phase,
    Play,
    RoundResult,
    RoundScored,
    RoundStarted,
    Trick,
    TrickWon,
    TrumpChosen,
    action_text,
    default_action,
)
from .cards import (
    ALL_CARDS,
    FULL_DECK,
    JESTER,
    RANKS,
    SUITED_CARDS,
    SUITED_WIZARD_DECK,
    SUITED_WIZARDS,
    WIZARD,
    Card,
    Suit,
    format_cards,
    parse_cards,
)
from .deal import dealer_of_draw, draw_first_dealer, draw_value
from .errors import (
    BidForbiddenError,
    BidOutOfRangeError,
    CardNotInHandError,
    DealError,
    MustFollowSuitError,
    NotYourTurnError,
    RuleError,
    TrumpChoiceError,
    WrongPhaseError,
)
from .game import Game
from .laws import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    BidRestriction,
    Rules,
    allowed_bids,
    forbidden_bid,
    legal_cards,
    rank_totals,
    score,
    suit_to_follow,
    trick_winner,
)
from .view import SeatView, bids_hidden, compute_legal_actions

__all__ = [
    "ALL_CARDS",
    "FULL_DECK",
    "JESTER",
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "RANKS",
    "SUITED_CARDS",
    "SUITED_WIZARDS",
    "SUITED_WIZARD_DECK",
    "WIZARD",
    "Action",
    "Bid",
    "BidForbiddenError",
    "BidMade",
    "BidOutOfRangeError",
    "BidRestriction",
    "Card",
    "CardNotInHandError",
    "CardPlayed",
    "ChooseTrump",
    "DealError",
    "Event",
    "Game",
    "GameOver",
    "MustFollowSuitError",
    "NotYourTurnError",
    "Phase",
    "Play",
    "RoundResult",
    "RoundScored",
    "RoundStarted",
    "RuleError",
    "Rules",
    "SeatView",
    "Suit",
    "Trick",
    "TrickWon",
    "TrumpChoiceError",
    "TrumpChosen",
    "WrongPhaseError",
    "action_text",
    "allowed_bids",
    "bids_hidden",
    "compute_legal_actions",
    "dealer_of_draw",
    "default_action",
    "draw_first_dealer",
    "draw_value",
    "forbidden_bid",
    "format_cards",
    "legal_cards",
    "parse_cards",
    "rank_totals",
    "score",
    "suit_to_follow",
    "trick_winner",
]

"""Errors raised for actions that break the rules.

Every refused action raises a subclass of :class:`RuleError`; the game state
is exactly unchanged afterwards. Each class has a stable :attr:`~RuleError.code`
(used on the wire as the reason of an action-rejected message).

>>> err = NotYourTurnError(2, "bid 1", "seat 0 is to act")
>>> str(err)
'seat 2: bid 1 refused: not your turn: seat 0 is to act'
>>> err.code
'not_your_turn'
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "BidForbiddenError",
    "BidOutOfRangeError",
    "CardNotInHandError",
    "DealError",
    "MustFollowSuitError",
    "NotYourTurnError",
    "RuleError",
    "TrumpChoiceError",
    "WrongPhaseError",
]


class RuleError(ValueError):
    """An action was refused because it breaks the rules."""

    code: ClassVar[str] = "rule_error"
    summary: ClassVar[str] = "refused"

    def __init__(self, seat: int, action: str, reason: str) -> None:
        self.seat = seat
        self.action = action
        self.reason = reason
        super().__init__(f"seat {seat}: {action} refused: {self.summary}: {reason}")


class WrongPhaseError(RuleError):
    """The action is of the wrong kind for the game's phase (e.g. a bid while cards are played)."""

    code = "wrong_phase"
    summary = "wrong phase"


class NotYourTurnError(RuleError):
    """Another seat is to act."""

    code = "not_your_turn"
    summary = "not your turn"


class CardNotInHandError(RuleError):
    """The card played is not in the seat's hand."""

    code = "card_not_in_hand"
    summary = "card not in hand"


class MustFollowSuitError(RuleError):
    """The seat holds a card of the suit to follow and played another suited card."""

    code = "must_follow_suit"
    summary = "must follow suit"


class BidOutOfRangeError(RuleError):
    """The bid is below 0 or above the number of cards dealt."""

    code = "bid_out_of_range"
    summary = "bid out of range"


class BidForbiddenError(RuleError):
    """The bid is in range but the bid restriction forbids it for this seat."""

    code = "bid_forbidden"
    summary = "bid forbidden by the bid restriction"


class TrumpChoiceError(RuleError):
    """A trump choice that is not allowed: none is pending, or it is not this seat's to make."""

    code = "trump_choice_not_allowed"
    summary = "trump choice not allowed"


class DealError(ValueError):
    """An explicit deal that cannot come from the deck (wrong sizes, too many copies of a card)."""

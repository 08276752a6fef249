"""The codes of the protocol: why an action was rejected, what a seat was
faulted for, and which messages a bot chose to receive.

All three are :class:`enum.StrEnum`: a member *is* its string (``FaultCode.TIMEOUT
== "timeout"``), so records, JSON, logs and the wire keep the plain strings
(docs/protocol-reference.md, "ActionRejected reasons" and "Fault codes", lists
exactly these).

>>> RejectCode("not_your_turn") is RejectCode.NOT_YOUR_TURN
True
>>> f"{FaultCode.TIMEOUT}", FaultCode.TIMEOUT == "timeout"
('timeout', True)
"""

from __future__ import annotations

import enum

__all__ = ["EventStream", "FaultCode", "RejectCode"]


class RejectCode(enum.StrEnum):
    """The reason of an ``ActionRejected`` (on the wire: ``REJECT_REASON_<NAME>``).

    The first seven are the rules core's :attr:`wizard_arena.rules.RuleError.code`
    values (the rules room imports nothing of ours, so it keeps them as text);
    the last two are the referee's own."""

    WRONG_PHASE = "wrong_phase"
    NOT_YOUR_TURN = "not_your_turn"
    CARD_NOT_IN_HAND = "card_not_in_hand"
    MUST_FOLLOW_SUIT = "must_follow_suit"
    BID_OUT_OF_RANGE = "bid_out_of_range"
    BID_FORBIDDEN = "bid_forbidden"
    TRUMP_CHOICE_NOT_ALLOWED = "trump_choice_not_allowed"
    UNKNOWN_REQUEST = "unknown_request"
    """A request id never issued to the bot, while a request is open."""
    MALFORMED = "malformed"
    """No choice, a choice of the wrong kind, a malformed card, bytes that do
    not decode, a second hello."""


class FaultCode(enum.StrEnum):
    """What a seat is faulted for: in the game record (``faults``, and a move's
    ``fault`` when the referee played it) and in ``GameOver.faults``."""

    TIMEOUT = "timeout"
    """No valid answer before the deadline; the default action was played."""
    ILLEGAL = "illegal"
    """An action the rules refuse (rejected; the bot could retry in time)."""
    MALFORMED = "malformed"
    """A message that did not decode, an action without a usable choice, or
    an action quoting a request id that was never issued."""
    DISCONNECT = "disconnect"
    """The connection dropped (once per drop)."""
    FLOODING = "flooding"
    """The bot sent messages faster than the inbound queue allows; cut off."""
    CRASH = "crash"
    """A bot process the tournament launched exited during the game (the
    tournament records it instead of the seat's disconnect), or the seat's
    entrant runs no more (it never connected, or crashed past its restarts)
    and the default action played it."""


class EventStream(enum.StrEnum):
    """Which messages a bot receives (``Hello.event_stream``, protocol v1.1;
    on the wire ``EVENT_STREAM_<NAME>``; unset reads as ``ALL``)."""

    ALL = "all"
    """Everything: the table's public events as they happen (RoundStarted,
    TrumpChosen, BidMade, CardPlayed, TrickWon, RoundScored) besides the
    bot's own messages. What every v1.0 bot gets."""
    LEAN = "lean"
    """Only what a bot deciding from each request's complete view needs:
    GameStarted, DecisionRequest, ActionRejected, RoundScored, GameOver."""

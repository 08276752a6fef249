"""Protocol messages as plain domain values.

These are the messages of ``proto/wizard_arena/v1/arena.proto`` expressed
with the rules core's types. :mod:`wizard_arena.protocol.wire` is the only module that
converts between them and protobuf; the server and the client work with
these values only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wizard_arena.bot import GameInfo
from wizard_arena.protocol.codes import EventStream, RejectCode
from wizard_arena.rules import Action, Card, Event, Rules, SeatView, Suit

__all__ = [
    "PROTOCOL_MINOR_VERSION",
    "PROTOCOL_VERSIONS",
    "REJECT_CODES",
    "SERVER_SHUTTING_DOWN",
    "ActionMsg",
    "ActionRejected",
    "BotMsg",
    "ClockProbe",
    "ClockProbeReply",
    "DecisionRequest",
    "EventStream",
    "FaultSummary",
    "GameEnd",
    "GameInfo",
    "Hello",
    "RoundStart",
    "ServerInfo",
    "ServerMsg",
    "TableEvent",
    "Welcome",
]

#: Protocol versions this package speaks (major versions: the Hello's range).
PROTOCOL_VERSIONS: tuple[int, ...] = (1,)
#: The minor version of the highest of them: 2, v1.2 (Hello.clock_probes and
#: the network credit; v1.1 added Hello.event_stream).
PROTOCOL_MINOR_VERSION = 2

#: Reason codes of ActionRejected (:class:`wizard_arena.protocol.codes.RejectCode`):
#: the rules core's RuleError codes, plus ``unknown_request`` (late, duplicate
#: or wrong request id) and ``malformed`` (no choice, a choice of the wrong
#: kind, a malformed card).
REJECT_CODES: tuple[str, ...] = tuple(RejectCode)

#: The details of the UNAVAILABLE status that ends every stream when the
#: server shuts down cleanly (not lost: a bot may take it as the end).
SERVER_SHUTTING_DOWN = "server shutting down"


# -- bot -> server ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hello:
    """The first message of a bot."""

    bot_name: str
    min_version: int = 1
    max_version: int = 1
    token: str = ""
    sdk_name: str = ""
    sdk_version: str = ""
    rule_options: tuple[str, ...] = ()
    resume_token: str = ""
    """The Welcome.resume_token of a lost stream, to take the seat back."""
    event_stream: EventStream = EventStream.ALL
    """The messages the bot wants (v1.1): all, or the lean stream."""
    clock_probes: bool = False
    """Whether the bot asks for clock probes (v1.2), and so for a network credit."""


@dataclass(frozen=True, slots=True)
class ActionMsg:
    """A bot's answer to a decision request.

    ``action`` is ``None`` when the message carried no usable choice; then
    ``error`` says why (the referee rejects it as ``malformed``)."""

    request_id: str
    action: Action | None
    error: str = ""


@dataclass(frozen=True, slots=True)
class ClockProbeReply:
    """A bot's answer to a :class:`ClockProbe` (v1.2), quoting its id."""

    id: str


BotMsg = Hello | ActionMsg | ClockProbeReply


# -- server -> bot ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Welcome:
    version: int
    session_id: str
    server_version: str
    resume_token: str = ""
    """Secret for this session: present it in Hello.resume_token to resume."""
    resumed: bool = False
    """True when this stream resumed an earlier session."""
    minor_version: int = 0
    """The minor version of ``version`` (0 from a v1.0 server)."""
    event_stream: EventStream = EventStream.ALL
    """The messages this stream gets (a v1.0 server sends them all)."""
    clock_probes: bool = False
    """Whether this stream gets clock probes (false from a v1.0 or v1.1 server)."""


@dataclass(frozen=True, slots=True)
class RoundStart:
    """A round was dealt; ``hand`` is the receiving seat's own hand only.

    In a blind first round ``hand`` is empty and ``others_hands`` holds every
    seat's cards by seat (the receiving seat's own entry empty); otherwise
    ``others_hands`` is empty."""

    game_id: str
    round: int
    dealer: int
    cards: int
    hand: tuple[Card, ...]
    turned_card: Card | None
    trump: Suit | None
    trump_pending: bool
    others_hands: tuple[tuple[Card, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class TableEvent:
    """A public event of the rules core (trump chosen, bid, card, trick, round scored)."""

    game_id: str
    event: Event


@dataclass(frozen=True, slots=True)
class DecisionRequest:
    """The seat must act. ``view`` carries the legal actions and ``time_left``
    (the move time); ``time_bank`` is the seat's time bank left and
    ``network_credit`` the decision's credit for the network's round trip
    (v1.2), in seconds: the referee's deadline is the three together, from
    when it sent the request."""

    request_id: str
    game_id: str
    view: SeatView
    time_bank: float = 0.0
    network_credit: float = 0.0


@dataclass(frozen=True, slots=True)
class ClockProbe:
    """A clock probe (v1.2): answer at once with a :class:`ClockProbeReply`."""

    id: str


@dataclass(frozen=True, slots=True)
class ActionRejected:
    request_id: str
    game_id: str
    code: str
    message: str
    time_left: float


@dataclass(frozen=True, slots=True)
class FaultSummary:
    seat: int
    code: str
    count: int
    detail: str


@dataclass(frozen=True, slots=True)
class GameEnd:
    game_id: str
    totals: tuple[int, ...]
    ranks: tuple[int, ...]
    faults: tuple[FaultSummary, ...] = ()


ServerMsg = (
    Welcome
    | GameInfo
    | RoundStart
    | TableEvent
    | DecisionRequest
    | ActionRejected
    | GameEnd
    | ClockProbe
)


@dataclass(frozen=True, slots=True)
class ServerInfo:
    server_version: str
    protocol_versions: tuple[int, ...]
    rules: Rules
    move_time: float
    token_required: bool
    rule_options: tuple[str, ...] = field(default=())
    minor_version: int = 0
    """The minor version of the highest protocol version (0 from a v1.0 server)."""
    lag_credit_cap: float = 0.0
    """The most network credit a decision gets, in seconds (0: none; v1.2)."""

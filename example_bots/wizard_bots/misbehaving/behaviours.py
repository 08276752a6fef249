"""The misbehaving raw clients, one per kind (:data:`CLIENTS`), and the
deliberately broken messages they send. This is the one place that builds
broken protobuf messages (through ``wire.pb``).
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any, ClassVar, Final

from wizard_arena.bot import decide
from wizard_arena.protocol import wire
from wizard_arena.protocol.messages import ActionMsg, DecisionRequest, GameInfo, Hello
from wizard_arena.rules import Phase

from .bots import IllegalBot
from .client import RawClient
from .kinds import FLOOD_BURST, OVERSIZED_BYTES, WRONG_VERSIONS

__all__ = [
    "CLIENTS",
    "DisconnectClient",
    "FloodClient",
    "IllegalClient",
    "MalformedClient",
    "NeverAnswerClient",
    "OversizedClient",
    "WrongVersionClient",
    "malformed_message",
    "oversized_message",
]

log = logging.getLogger("wizard_bots.misbehaving")


class IllegalClient(RawClient):
    """Plays an :class:`IllegalBot`, sending its choices unchecked; after a
    rejection it answers legally."""

    kind = "illegal"

    def __init__(self, server: str, name: str, **options: Any) -> None:
        super().__init__(server, name, **options)
        self.bot = IllegalBot(rate=self.rate, limit=self.limit, seed=self.rng.randrange(2**32))

    def on_game_start(self, info: GameInfo) -> None:
        self.bot.on_game_start(info)

    def answer(self, req: DecisionRequest) -> None:
        before = self.bot.misbehaved
        action = decide(self.bot, req.view)
        self.report.misbehaved += self.bot.misbehaved - before
        self.send_action(req.request_id, action)


class MalformedClient(RawClient):
    """Sends, in turn: an empty message, an action without a choice, an
    invalid card (or suit, when choosing trump), an action quoting a request
    id never issued. The referee rejects each as ``malformed``; the bot then
    answers legally."""

    kind = "malformed"
    VARIANTS: ClassVar[tuple[str, ...]] = ("empty", "no_choice", "bad_value", "unknown_id")

    def __init__(self, server: str, name: str, **options: Any) -> None:
        super().__init__(server, name, **options)
        self.sent: Counter[str] = Counter()
        self._next = 0

    def eligible(self, req: DecisionRequest) -> bool:
        return True

    def misbehave(self, req: DecisionRequest) -> None:
        variant = self.VARIANTS[self._next % len(self.VARIANTS)]
        self._next += 1
        self.sent[variant] += 1
        self.send(malformed_message(variant, req))


def malformed_message(variant: str, req: DecisionRequest) -> Any:
    """A ``BotMessage`` the referee must reject as malformed (raw protobuf).

    >>> from wizard_arena.rules import Game, Rules
    >>> g = Game(Rules(players=3), seed=2); g.deal()
    >>> req = DecisionRequest("r1", "g", g.view(g.to_act))
    >>> malformed_message("empty", req).WhichOneof("message") is None
    True
    >>> malformed_message("no_choice", req).action.WhichOneof("choice") is None
    True
    """
    pb = wire.pb
    rid = req.request_id
    if variant == "empty":
        return pb.BotMessage()
    if variant == "no_choice":
        return pb.BotMessage(action=pb.Action(request_id=rid))
    if variant == "bad_value":
        if req.view.phase is Phase.CHOOSE_TRUMP:
            return pb.BotMessage(action=pb.Action(request_id=rid, trump=pb.SUIT_UNSPECIFIED))
        bad = pb.Card(kind=pb.CARD_KIND_SUITED, suit=pb.SUIT_SPADES, rank=14)
        return pb.BotMessage(action=pb.Action(request_id=rid, card=bad))
    if variant == "unknown_id":
        legal = req.view.legal_actions[0]
        return wire.encode_bot(ActionMsg(f"{rid}-never-issued", legal))
    raise ValueError(f"unknown malformed variant {variant!r}")


def oversized_message(req: DecisionRequest, size: int = OVERSIZED_BYTES) -> Any:
    """A legal answer padded (in its request id) to ``size`` bytes.

    >>> from wizard_arena.rules import Game, Rules
    >>> g = Game(Rules(players=3), seed=2); g.deal()
    >>> req = DecisionRequest("r1", "g", g.view(g.to_act))
    >>> oversized_message(req).ByteSize() > 64 * 1024
    True
    """
    msg = wire.encode_bot(ActionMsg(req.request_id, req.view.legal_actions[0]))
    msg.action.request_id = req.request_id + "#" + "x" * size
    return msg


class OversizedClient(RawClient):
    """Sends a message over the server's 64 KiB limit. gRPC refuses it: the
    stream ends RESOURCE_EXHAUSTED and the seat is faulted ``disconnect``."""

    kind = "oversized"

    def eligible(self, req: DecisionRequest) -> bool:
        return True

    def misbehave(self, req: DecisionRequest) -> None:
        log.info("%s: sending %d bytes for %s", self.name, OVERSIZED_BYTES, req.request_id)
        self.send(oversized_message(req))
        self._doomed()


class NeverAnswerClient(RawClient):
    """Ignores decision requests at ``rate`` (``rate=1``: never answers)."""

    kind = "never-answer"

    def eligible(self, req: DecisionRequest) -> bool:
        return True

    def misbehave(self, req: DecisionRequest) -> None:
        log.info("%s: not answering %s", self.name, req.request_id)


class DisconnectClient(RawClient):
    """Drops the connection when asked to play in the middle of a trick."""

    kind = "disconnect"

    def eligible(self, req: DecisionRequest) -> bool:
        return req.view.phase is Phase.PLAY and bool(req.view.trick)

    def misbehave(self, req: DecisionRequest) -> None:
        log.info("%s: disconnecting at %s", self.name, req.request_id)
        self._cut_stream()


class FloodClient(RawClient):
    """Answers with ``burst`` copies of its (legal) answer at once. The first
    is the answer; the referee ignores the others as duplicates unless more
    than its inbound limit wait unread: then it ends the stream
    RESOURCE_EXHAUSTED and faults the seat ``flooding``."""

    kind = "flood"

    def __init__(self, server: str, name: str, *, burst: int = FLOOD_BURST, **options: Any) -> None:
        super().__init__(server, name, **options)
        self.burst = burst

    def eligible(self, req: DecisionRequest) -> bool:
        return True

    def misbehave(self, req: DecisionRequest) -> None:
        log.info("%s: sending %d copies of its answer to %s", self.name, self.burst, req.request_id)
        msg = wire.encode_bot(ActionMsg(req.request_id, self.legal_action(req)))
        self._ended_by_me = True  # if the server cuts it off
        for _ in range(self.burst):
            self.send(msg)


class WrongVersionClient(RawClient):
    """Says hello speaking versions 2..3 at ``rate`` (per connection): the
    server refuses with FAILED_PRECONDITION. Otherwise it plays normally."""

    kind = "wrong-version"

    def hello(self) -> Hello:
        hello = super().hello()
        if self.rng.random() < self.rate:
            self.report.misbehaved += 1
            lo, hi = WRONG_VERSIONS
            return Hello(
                bot_name=hello.bot_name,
                min_version=lo,
                max_version=hi,
                token=hello.token,
                sdk_name=hello.sdk_name,
                sdk_version=hello.sdk_version,
                rule_options=hello.rule_options,
            )
        return hello


#: The raw client of each kind (``slow`` is an SDK bot: :class:`SlowBot`).
CLIENTS: Final[dict[str, type[RawClient]]] = {
    "illegal": IllegalClient,
    "malformed": MalformedClient,
    "oversized": OversizedClient,
    "never-answer": NeverAnswerClient,
    "disconnect": DisconnectClient,
    "flood": FloodClient,
    "wrong-version": WrongVersionClient,
}

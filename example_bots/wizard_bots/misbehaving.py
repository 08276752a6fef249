"""Misbehaving bots: reference clients that break the rules and the protocol on purpose.

They exist to test a referee (does it fault the right seat with the right
code, and does the game go on?) and the tools around it (``wizard-arena
check``, the soak bench). Each one plays legal random moves except for its
one misbehaviour, which it commits at a configurable ``rate`` (a probability
per decision it could misbehave on; per connection for ``wrong-version``),
at most ``limit`` times a game, so that games go on.

=================  ==============================================  ==========================
kind               what it does                                    what the referee records
=================  ==============================================  ==========================
``slow``           answers after the deadline (:class:`SlowBot`,   ``timeout``
                   an SDK bot: the SDK drops the late answer)
``illegal``        plays a card it does not hold or may not        ``illegal`` (rejected; it
                   play, bids above the cards dealt                then answers legally)
                   (:class:`IllegalBot`, sent unchecked)
``malformed``      an empty ``BotMessage``, an action without a    ``malformed`` (rejected; it
                   choice, an invalid card or suit, an unknown     then answers legally)
                   request id (in turn)
``oversized``      a message over the server's 64 KiB limit        the stream ends
                                                                   RESOURCE_EXHAUSTED;
                                                                   ``disconnect``
``never-answer``   ignores the request                             ``timeout``
``disconnect``     drops the connection in the middle of a trick   ``disconnect``
``flood``          sends ``burst`` copies of its answer at once    ``flooding`` and the stream
                                                                   ends RESOURCE_EXHAUSTED
                                                                   when more than the
                                                                   server's inbound limit
                                                                   wait unread (see below)
``wrong-version``  says hello speaking protocol versions 2..3      refused at hello:
                                                                   FAILED_PRECONDITION
=================  ==============================================  ==========================

About ``flood``: the referee cuts a bot off when more than
``ArenaConfig.inbound_limit`` (64) of its messages wait unread. An idle
referee reads as fast as a Python client can send (measured: 5,000 copies
at once were all read, none cut off): the flood costs it work, and the
bot's next answers, queued behind the burst, may time out, but there is no
``flooding`` fault. A busy referee (the soak bench) or one with a small
limit (the tests use 2) falls behind and cuts the bot off.

A client whose stream ended by its own doing (oversized, disconnect, flood,
wrong version) connects again as a new session and waits for the next game;
the game it left is played on by the referee. A game cut short that way and
a refused hello each count as one of the ``games``.

Run one against a server::

    python -m wizard_bots.misbehaving KIND --server HOST:PORT --name NAME \\
        [--token T] [--games N] [--rate P] [--limit K] [--seed S] [--json]

or import it: :func:`run_kind` (blocking), or a client class from
:data:`CLIENTS` (``start()`` runs it in a thread, ``stop()`` ends it). The raw
clients are synchronous gRPC clients (one reader thread per stream) built on
:mod:`wizard_arena.protocol.wire`; this module is the one place that builds
deliberately broken protobuf messages (through ``wire.pb``).

>>> sorted(KINDS) == sorted(DEFAULT_RATES)
True
>>> bot = IllegalBot(rate=1.0, seed=1)
>>> from wizard_arena.rules import Game, Rules
>>> game = Game(Rules(players=3), seed=1)
>>> game.deal()
>>> view = game.view(game.to_act)
>>> bot.bid(view) in view.legal_bids
False
"""

from __future__ import annotations

import argparse
import json
import logging
import queue
import random
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar, Final

import grpc

from wizard_arena.bot import Bot, GameInfo, decide
from wizard_arena.protocol import wire
from wizard_arena.protocol.messages import (
    ActionMsg,
    ActionRejected,
    DecisionRequest,
    GameEnd,
    Hello,
    Welcome,
)
from wizard_arena.rules import (
    FULL_DECK,
    Action,
    Card,
    Phase,
    SeatView,
    Suit,
)

__all__ = [
    "CLIENTS",
    "DEFAULT_RATES",
    "KINDS",
    "DisconnectClient",
    "FloodClient",
    "IllegalBot",
    "IllegalClient",
    "MalformedClient",
    "NeverAnswerClient",
    "OversizedClient",
    "RawClient",
    "Report",
    "SlowBot",
    "WrongVersionClient",
    "main",
    "run_kind",
]

log = logging.getLogger("wizard_bots.misbehaving")

#: The kinds of misbehaviour, with what each does.
KINDS: Final[dict[str, str]] = {
    "slow": "answers after the deadline",
    "illegal": "plays cards it does not hold or may not play, bids too high",
    "malformed": "empty messages, actions without a choice, invalid cards, unknown request ids",
    "oversized": "a message over the server's 64 KiB limit",
    "never-answer": "ignores decision requests",
    "disconnect": "drops the connection in the middle of a trick",
    "flood": "hundreds of messages at once",
    "wrong-version": "says hello with protocol versions the server does not speak",
}

#: Default rate of each kind: the probability of misbehaving on a decision it
#: could misbehave on (``wrong-version``: on a connection).
DEFAULT_RATES: Final[dict[str, float]] = {
    "slow": 0.05,
    "illegal": 0.1,
    "malformed": 0.1,
    "oversized": 0.01,
    "never-answer": 0.05,
    "disconnect": 0.02,
    "flood": 0.01,
    "wrong-version": 0.5,
}

#: Size of the oversized message: over the referee's 64 KiB limit.
OVERSIZED_BYTES: Final = 70 * 1024
#: Messages a flood sends at once.
FLOOD_BURST: Final = 1000
#: Protocol versions a wrong-version hello claims.
WRONG_VERSIONS: Final = (2, 3)

_CLOSE_GRACE = 2.0
_CLOSE: Final = object()


# -- SDK bots -----------------------------------------------------------------------------


class _RatedBot(Bot):
    """A random legal player that misbehaves at ``rate``, ``limit`` times a game."""

    def __init__(self, rate: float, limit: int | None, seed: int | None) -> None:
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"rate must be 0..1, not {rate}")
        self.rate = rate
        self.limit = limit
        self.rng = random.Random(seed)
        self.misbehaved = 0
        """Misbehaviours committed, over all games."""
        self.this_game = 0
        self.move_time: float | None = None

    def on_game_start(self, info: GameInfo) -> None:
        self.this_game = 0
        self.move_time = info.move_time

    def _misbehave(self) -> bool:
        if self.limit is not None and self.this_game >= self.limit:
            return False
        if self.rng.random() >= self.rate:
            return False
        self.this_game += 1
        self.misbehaved += 1
        return True

    def choose_trump(self, view: SeatView) -> Suit:
        return self.rng.choice(list(Suit))


class SlowBot(_RatedBot):
    """Answers after the deadline at ``rate``: sleeps ``delay`` seconds (by
    default one and a half times the time left, plus 50 ms) before a random
    legal answer. Under the SDK the late answer is not sent: the referee
    plays its default and records ``timeout``."""

    name = "slow"

    def __init__(
        self,
        rate: float = DEFAULT_RATES["slow"],
        delay: float | None = None,
        limit: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(rate, limit, seed)
        self.delay = delay

    def _maybe_sleep(self, view: SeatView) -> None:
        if self._misbehave():
            left = view.time_left or self.move_time or 1.0
            time.sleep(self.delay if self.delay is not None else 1.5 * left + 0.05)

    def bid(self, view: SeatView) -> int:
        self._maybe_sleep(view)
        return self.rng.choice(view.legal_bids)

    def play(self, view: SeatView) -> Card:
        self._maybe_sleep(view)
        return self.rng.choice(view.legal_cards)

    def choose_trump(self, view: SeatView) -> Suit:
        self._maybe_sleep(view)
        return super().choose_trump(view)


class IllegalBot(_RatedBot):
    """Chooses an illegal action at ``rate``: a bid above the cards dealt, a
    card of its hand it may not play (not following suit), or a card it does
    not hold. The SDK does not send such an action (it logs a bot error and
    sends the referee's default); the :class:`IllegalClient` sends it as is."""

    name = "illegal"

    def __init__(
        self,
        rate: float = DEFAULT_RATES["illegal"],
        limit: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(rate, limit, seed)

    def bid(self, view: SeatView) -> int:
        if self._misbehave():
            return view.cards_per_player + 1 + self.rng.randrange(3)
        return self.rng.choice(view.legal_bids)

    def play(self, view: SeatView) -> Card:
        if self._misbehave():
            legal = set(view.legal_cards)
            held_illegal = [c for c in dict.fromkeys(view.hand) if c not in legal]
            if held_illegal:
                return self.rng.choice(held_illegal)
            not_held = [c for c in dict.fromkeys(FULL_DECK) if c not in view.hand]
            return self.rng.choice(not_held)
        return self.rng.choice(view.legal_cards)


# -- raw clients --------------------------------------------------------------------------


@dataclass
class Report:
    """What one misbehaving bot did and saw."""

    kind: str
    name: str
    games: int = 0
    """Games played to their GameOver."""
    cut: int = 0
    """Games the bot's stream ended in (by its misbehaviour, :meth:`RawClient.stop`
    or the server); the referee played them on."""
    refused: int = 0
    """Connections refused at hello."""
    sessions: int = 0
    """Welcomes received."""
    decisions: int = 0
    misbehaved: int = 0
    rejections: dict[str, int] = field(default_factory=dict)
    """ActionRejected received, by reason code."""
    faults: dict[str, int] = field(default_factory=dict)
    """Faults the referee reported against this bot's seat (from GameOver)."""
    statuses: list[str] = field(default_factory=list)
    """How each stream ended (gRPC status names)."""
    details: list[str] = field(default_factory=list)
    """The servers' status details, for streams that ended with an error."""
    game_ids: list[str] = field(default_factory=list)
    """Every game the bot was seated at."""

    @property
    def played(self) -> int:
        """Games played, cut short or refused: what ``games`` counts."""
        return self.games + self.cut + self.refused

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class RawClient:
    """A raw gRPC bot that plays random legal actions (subclasses misbehave).

    ``run()`` blocks until ``games`` games are played (``None``: until the
    server ends the stream, or :meth:`stop`); ``start()`` runs it in a
    daemon thread and ``join()`` waits for the :class:`Report`.
    """

    kind: ClassVar[str] = "random"

    def __init__(
        self,
        server: str,
        name: str,
        *,
        token: str = "",
        games: int | None = None,
        rate: float | None = None,
        limit: int | None = None,
        seed: int | None = None,
        reconnect: bool = True,
    ) -> None:
        rate = DEFAULT_RATES.get(self.kind, 0.0) if rate is None else rate
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"rate must be 0..1, not {rate}")
        if games is not None and games < 1:
            raise ValueError("games must be at least 1")
        self.server = server
        self.name = name
        self.token = token
        self.games = games
        self.rate = rate
        self.limit = limit
        self.rng = random.Random(seed if seed is not None else f"{self.kind}:{name}")
        self.reconnect = reconnect
        self.report = Report(self.kind, name)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        # per stream
        self._out: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._call: Any = None
        self._cut = False
        self._closing = False
        self._ended_by_me = False
        # per game
        self._info: GameInfo | None = None
        self._this_game = 0
        self._pending: DecisionRequest | None = None
        self._recovered: set[str] = set()

    # -- lifecycle --------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self._stopping.is_set() or (
            self.games is not None and self.report.played >= self.games
        )

    def run(self) -> Report:
        failures = 0
        while not self.done:
            status = self._session()
            if self.done or not self.reconnect:
                break
            if status == "OK" or self._ended_by_me:
                failures = 0
                self._stopping.wait(0.05 + 0.1 * random.random())  # not self.rng: keep its draws
                continue
            failures += 1  # the server ended it, or could not be reached
            if failures > 3:
                break
            self._stopping.wait(0.5 * failures)
        return self.report

    def start(self) -> RawClient:
        self._thread = threading.Thread(target=self.run, name=f"bot-{self.name}", daemon=True)
        self._thread.start()
        return self

    def join(self, timeout: float | None = None) -> Report:
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                raise TimeoutError(f"bot {self.name} still running after {timeout} s")
        return self.report

    def stop(self) -> None:
        """End the run: cancel the current stream (as a client that quits)."""
        self._stopping.set()
        with self._lock:
            call = self._call
        if call is not None:
            call.cancel()

    # -- one stream -----------------------------------------------------------------------------

    def hello(self) -> Hello:
        return Hello(
            bot_name=self.name,
            token=self.token,
            sdk_name="wizard-bots-misbehaving",
            sdk_version=self.kind,
        )

    def send(self, msg: Any) -> None:
        """Send a protobuf ``BotMessage`` as it is."""
        self._out.put(msg)

    def send_action(self, request_id: str, action: Action | None) -> None:
        self.send(wire.encode_bot(ActionMsg(request_id, action)))

    def _requests(self, out: queue.SimpleQueue[Any]) -> Iterator[Any]:
        while True:
            item = out.get()
            if item is _CLOSE:
                return
            yield item

    def _session(self) -> str:
        out: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._out = out
        self._cut = self._closing = self._ended_by_me = False
        self._info = self._pending = None
        hello = self.hello()
        if (hello.min_version, hello.max_version) == WRONG_VERSIONS:
            self._ended_by_me = True
        out.put(wire.encode_bot(hello))
        channel = grpc.insecure_channel(self.server)
        timer: threading.Timer | None = None
        status = "UNKNOWN"
        details = ""
        try:
            call = wire.stub(channel).Play(self._requests(out))
            with self._lock:
                self._call = call
            if self._stopping.is_set():
                call.cancel()
            try:
                for raw in call:
                    self._handle(raw)
                    if self._cut:
                        break
                    if self._closing and timer is None:
                        timer = threading.Timer(_CLOSE_GRACE, call.cancel)
                        timer.daemon = True
                        timer.start()
                if self._cut:
                    status = "CANCELLED"
                else:
                    status = call.code().name
                    details = call.details() or ""
            except grpc.RpcError as e:
                code = e.code()
                status = code.name if isinstance(code, grpc.StatusCode) else str(code)
                details = e.details() or ""
        finally:
            out.put(_CLOSE)
            if timer is not None:
                timer.cancel()
            with self._lock:
                call, self._call = self._call, None
            if call is not None:
                call.cancel()
            channel.close()
        if self._info is not None:
            # the stream ended mid-game (by the bot's doing, stop() or the server):
            # the referee plays the game on without this bot
            self.report.cut += 1
            self._info = None
        if status == "FAILED_PRECONDITION":
            self.report.refused += 1
        self.report.statuses.append(status)
        if details and status not in ("OK", "CANCELLED"):
            self.report.details.append(details)
        log.debug("%s: stream ended %s %s", self.name, status, details)
        return status

    def _leave(self) -> None:
        """Half-close: no more games on this stream."""
        if not self._closing:
            self._closing = True
            self._out.put(_CLOSE)

    def _doomed(self) -> None:
        """The server is about to end the stream: answer nothing more (and
        cancel it if it has not ended within a grace period)."""
        self._closing = self._ended_by_me = True

    def _cut_stream(self) -> None:
        """Drop the connection at once, in the middle of the game."""
        self._cut = self._ended_by_me = True
        with self._lock:
            call = self._call
        if call is not None:
            call.cancel()

    # -- messages -------------------------------------------------------------------------------

    def _handle(self, raw: Any) -> None:
        try:
            msg = wire.decode_server(raw)
        except wire.WireError as e:
            log.warning("%s: undecodable server message: %s", self.name, e)
            return
        if isinstance(msg, DecisionRequest):
            self.report.decisions += 1
            self._pending = msg
            if self._closing:
                return
            if self.eligible(msg) and self._roll():
                self.report.misbehaved += 1
                self._this_game += 1
                self.misbehave(msg)
            else:
                self.answer(msg)
        elif isinstance(msg, ActionRejected):
            rej = self.report.rejections
            rej[msg.code] = rej.get(msg.code, 0) + 1
            self._recover(msg)
        elif isinstance(msg, GameInfo):
            self._info = msg
            self._this_game = 0
            self._recovered.clear()
            self.report.game_ids.append(msg.game_id)
            self.on_game_start(msg)
        elif isinstance(msg, GameEnd):
            info = self._info
            if info is None or info.game_id != msg.game_id:
                return
            self._info = self._pending = None
            self.report.games += 1
            for f in msg.faults:
                if f.seat == info.seat:
                    self.report.faults[f.code] = self.report.faults.get(f.code, 0) + f.count
            if self.done:
                self._leave()
        elif isinstance(msg, Welcome):
            self.report.sessions += 1

    def _roll(self) -> bool:
        if self.limit is not None and self._this_game >= self.limit:
            return False
        return self.rng.random() < self.rate

    def _recover(self, msg: ActionRejected) -> None:
        """After a rejection, answer the open request legally (once)."""
        req = self._pending
        if req is None or msg.time_left <= 0 or req.request_id in self._recovered:
            return
        if msg.request_id not in (req.request_id, "") and msg.code != "unknown_request":
            return
        self._recovered.add(req.request_id)
        self.send_action(req.request_id, self.legal_action(req))

    # -- behaviour: overridden by the misbehaving kinds -------------------------------------------

    def on_game_start(self, info: GameInfo) -> None:
        """A game starts."""

    def legal_action(self, req: DecisionRequest) -> Action:
        return self.rng.choice(req.view.legal_actions)

    def answer(self, req: DecisionRequest) -> None:
        """The normal answer: a random legal action."""
        self.send_action(req.request_id, self.legal_action(req))

    def eligible(self, req: DecisionRequest) -> bool:
        """Whether the bot can misbehave on this request."""
        return False

    def misbehave(self, req: DecisionRequest) -> None:
        """Misbehave on ``req`` (instead of :meth:`answer`)."""
        self.answer(req)


class IllegalClient(RawClient):
    """Plays an :class:`IllegalBot`, sending its choices unchecked; after a
    rejection it answers legally."""

    kind = "illegal"

    def __init__(self, server: str, name: str, **options: Any) -> None:
        super().__init__(server, name, **options)
        self.bot = IllegalBot(rate=self.rate, limit=self.limit, seed=self.rng.randrange(2**32))

    def _handle(self, raw: Any) -> None:
        before = self.bot.misbehaved
        super()._handle(raw)
        self.report.misbehaved += self.bot.misbehaved - before

    def on_game_start(self, info: GameInfo) -> None:
        self.bot.on_game_start(info)

    def answer(self, req: DecisionRequest) -> None:
        action = decide(self.bot, req.view)
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


# -- running one ---------------------------------------------------------------------------------


def run_kind(
    kind: str,
    server: str,
    name: str,
    *,
    token: str = "",
    games: int | None = None,
    rate: float | None = None,
    limit: int | None = None,
    seed: int | None = None,
    reconnect: bool = True,
    delay: float | None = None,
    burst: int = FLOOD_BURST,
) -> Report:
    """Run one misbehaving bot until its games are played (blocking)."""
    if kind == "slow":
        from wizard_arena.client import ArenaError, run_bot

        bot = SlowBot(
            rate=DEFAULT_RATES["slow"] if rate is None else rate,
            delay=delay,
            limit=limit,
            seed=seed,
        )
        report = Report(kind, name)
        try:
            result = run_bot(
                bot, server, name=name, token=token or None, games=games, reconnect=reconnect
            )
            report.statuses.append("OK")
        except ArenaError as e:
            report.statuses.append(e.code or "UNKNOWN")
            report.details.append(str(e))
            return report
        report.games = len(result.games)
        report.game_ids = [g.game_id for g in result.games]
        report.sessions = 1 + result.reconnects
        report.decisions = result.decisions
        report.misbehaved = bot.misbehaved
        if result.rejections:
            report.rejections["(reason not kept by the SDK)"] = result.rejections
        for f in result.faults:
            report.faults[f.code] = report.faults.get(f.code, 0) + f.count
        return report
    try:
        cls = CLIENTS[kind]
    except KeyError:
        raise ValueError(f"unknown kind {kind!r} (one of {', '.join(KINDS)})") from None
    options: dict[str, Any] = {
        "token": token,
        "games": games,
        "rate": rate,
        "limit": limit,
        "seed": seed,
        "reconnect": reconnect,
    }
    if cls is FloodClient:
        options["burst"] = burst
    return cls(server, name, **options).run()


def _parser() -> argparse.ArgumentParser:
    kinds = "\n".join(f"  {k:<14} {v}" for k, v in KINDS.items())
    p = argparse.ArgumentParser(
        prog="python -m wizard_bots.misbehaving",
        description="A bot that misbehaves on purpose (and otherwise plays random legal moves).",
        epilog=f"kinds:\n{kinds}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("kind", choices=list(KINDS), metavar="KIND", help="the misbehaviour")
    p.add_argument("--server", default="127.0.0.1:50051", metavar="HOST:PORT")
    p.add_argument("--name", help="display name (default: the kind)")
    p.add_argument("--token", default="", help="access token, if the server requires one")
    p.add_argument("--games", type=int, metavar="N", help="stop after N games (default: never)")
    p.add_argument(
        "--rate",
        type=float,
        metavar="P",
        help="probability of misbehaving per decision (per connection for wrong-version)",
    )
    p.add_argument("--limit", type=int, metavar="K", help="misbehave at most K times a game")
    p.add_argument("--seed", type=int, help="seed of the bot's choices")
    p.add_argument("--delay", type=float, metavar="S", help="slow: seconds to sleep")
    p.add_argument("--burst", type=int, default=FLOOD_BURST, help="flood: messages at once")
    p.add_argument("--no-reconnect", dest="reconnect", action="store_false")
    p.add_argument("--json", action="store_true", help="print the report as JSON on stdout")
    p.add_argument("-q", "--quiet", action="store_true", help="log warnings only")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.games is not None and args.games < 1:
        print("error: --games must be at least 1", file=sys.stderr)
        return 2
    if args.rate is not None and not 0.0 <= args.rate <= 1.0:
        print("error: --rate must be between 0 and 1", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    logging.getLogger("grpc").setLevel(logging.WARNING)
    name = args.name or args.kind
    try:
        report = run_kind(
            args.kind,
            args.server,
            name,
            token=args.token,
            games=args.games,
            rate=args.rate,
            limit=args.limit,
            seed=args.seed,
            reconnect=args.reconnect,
            delay=args.delay,
            burst=args.burst,
        )
    except KeyboardInterrupt:
        return 130
    if args.json:
        print(json.dumps(report.to_dict()))
    faults = ", ".join(f"{k} x{v}" for k, v in sorted(report.faults.items())) or "none"
    print(
        f"{name} ({args.kind}): {report.games} games played, {report.cut} left, "
        f"{report.refused} refused, misbehaved {report.misbehaved} times in "
        f"{report.decisions} decisions; faults: {faults}; streams ended: "
        f"{', '.join(report.statuses) or '-'}",
        file=sys.stderr,
    )
    return 0 if report.sessions or report.refused else 1


if __name__ == "__main__":
    sys.exit(main())

"""The misbehaving kit's raw client: :class:`RawClient` plays random legal
actions over as many streams as it takes to play its games, one
:class:`wizard_arena.testing.RawBot` per stream, and keeps a :class:`Report`.
Its subclasses (:mod:`.behaviours`) misbehave at a rate.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from wizard_arena.protocol.messages import (
    ActionRejected,
    DecisionRequest,
    GameEnd,
    GameInfo,
    Hello,
    ServerMsg,
    Welcome,
)
from wizard_arena.rules import Action
from wizard_arena.testing import RawBot

from .kinds import DEFAULT_RATES, WRONG_VERSIONS

__all__ = ["RawClient", "Report"]

log = logging.getLogger("wizard_bots.misbehaving")

#: Seconds a stream may take to end after the bot left (or doomed it) before it is cancelled.
CLOSE_GRACE = 2.0


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

    ``rule_options`` go in its ``Hello.rule_options`` (none by default, as
    a v1 bot written from the .proto alone sends); it plays the actions the
    referee offers, so it can play under any options it declares.
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
        rule_options: Sequence[str] = (),
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
        self.rule_options = tuple(rule_options)
        self.report = Report(self.kind, name)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        # per stream
        self._stream: RawBot | None = None
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
            stream = self._stream
        if stream is not None:
            stream.disconnect()

    # -- one stream -----------------------------------------------------------------------------

    def hello(self) -> Hello:
        return Hello(
            bot_name=self.name,
            token=self.token,
            sdk_name="wizard-bots-misbehaving",
            sdk_version=self.kind,
            rule_options=self.rule_options,
        )

    def send(self, msg: Any) -> None:
        """Send a protobuf ``BotMessage`` (or bytes) as it is."""
        if self._stream is not None:
            self._stream.send_raw(msg)

    def send_action(self, request_id: str, action: Action | None) -> None:
        if self._stream is not None:
            self._stream.send_action(request_id, action)

    def _session(self) -> str:
        self._closing = self._ended_by_me = False
        self._info = self._pending = None
        hello = self.hello()
        if (hello.min_version, hello.max_version) == WRONG_VERSIONS:
            self._ended_by_me = True
        stream = RawBot(
            self.server,
            self.name,
            games=None,
            rng=self.rng,
            on_request=self._on_request,
            on_message=self._on_message,
            record=False,
        )
        stream.hello = hello
        with self._lock:
            self._stream = stream
        if self._stopping.is_set():
            stream.disconnect()
        try:
            stream.run()
        finally:
            with self._lock:
                self._stream = None
        status = getattr(stream.status, "name", str(stream.status))
        details = stream.details
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
        """Half-close: no more games on this stream (cancelled if it has not
        ended within a grace period)."""
        if not self._closing:
            self._closing = True
            if self._stream is not None:
                self._stream.close_send()
                self._stream.cancel_after(CLOSE_GRACE)

    def _doomed(self) -> None:
        """The server is about to end the stream: answer nothing more (and
        cancel it if it has not ended within a grace period)."""
        self._closing = self._ended_by_me = True
        if self._stream is not None:
            self._stream.cancel_after(CLOSE_GRACE)

    def _cut_stream(self) -> None:
        """Drop the connection at once, in the middle of the game."""
        self._ended_by_me = True
        if self._stream is not None:
            self._stream.disconnect()

    # -- messages -------------------------------------------------------------------------------

    def _on_request(self, stream: RawBot, msg: DecisionRequest) -> bool:
        self.report.decisions += 1
        self._pending = msg
        if self._closing:
            return True
        if self.eligible(msg) and self._roll():
            self.report.misbehaved += 1
            self._this_game += 1
            self.misbehave(msg)
        else:
            self.answer(msg)
        return True

    def _on_message(self, stream: RawBot, msg: ServerMsg) -> None:
        if isinstance(msg, ActionRejected):
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

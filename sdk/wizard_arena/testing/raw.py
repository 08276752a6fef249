"""The scripted raw gRPC client: one ``Play`` stream, driven message by message.

:class:`RawBot` is a real gRPC client (the synchronous grpc API, its stream
read in a thread of its own, or in the caller's with :meth:`RawBot.run`)
built on :mod:`wizard_arena.protocol.wire`, with none of the SDK's care: it
sends what it is told, when it is told. By default it greets the server and
answers every decision with a random legal action; its options and hooks
make it misbehave on purpose (sleep, illegal cards, wrong request ids,
messages before the Hello or instead of it, bytes that are not protobuf, bad
versions or tokens, leaving mid-trick). It records every message it
receives, raw and decoded (unless ``record=False``), and the status the
stream ended with.

The tests use it directly; the misbehaving-bots kit
(:mod:`wizard_bots.misbehaving`) runs one per connection.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc

from wizard_arena.protocol import wire
from wizard_arena.protocol.messages import (
    ActionMsg,
    DecisionRequest,
    EventStream,
    GameEnd,
    GameInfo,
    Hello,
    ServerMsg,
)
from wizard_arena.rules import Action
from wizard_arena.testing.inbox import Inbox

__all__ = ["MessageHook", "RawBot", "Received", "RequestHook", "run_bots"]

log = logging.getLogger("wizard_arena.testing")

_CLOSE = object()


def _serialize(msg: Any) -> bytes:
    return msg if isinstance(msg, bytes) else bytes(msg.SerializeToString())


@dataclass
class Received:
    """One message as the bot received it."""

    at: float
    """``time.monotonic()`` on arrival."""
    raw: Any
    """The protobuf ``ServerMessage``."""
    msg: ServerMsg | None
    """The decoded message (``None`` if it did not decode; see ``error``)."""
    error: str = ""


RequestHook = Callable[["RawBot", DecisionRequest], bool]
MessageHook = Callable[["RawBot", ServerMsg], None]


class RawBot(Inbox):
    """A scripted bot on one ``Play`` stream.

    ``first``: raw ``BotMessage`` values (or bytes, sent as they are) sent
    before anything else (instead of the Hello when ``hello=False``).
    ``think``: seconds to sleep before each answer (or a function of the
    request giving them). ``games``: close the stream cleanly after this many
    GameOver messages (``None``: stay until the server ends the stream).
    ``on_request(bot, request) -> bool``: called for each decision request
    before the default answer; return True when the hook answered (or
    deliberately did not). ``on_message(bot, msg)``: called for every
    decoded message. ``rule_options``: the Hello's (none by default, as a
    bot written for the base game); ``sdk_name`` and ``sdk_version`` too;
    ``event_stream`` (all, as a v1.0 bot, by default; or the lean stream);
    ``clock_probes`` (v1.2: ask for them; off by default, and a probe is not
    answered unless a hook answers it).
    ``rng``: the random source of the default answers (by default seeded
    with ``seed``, or the name). ``record=False`` keeps no message (a long
    run); ``received`` and ``sent`` stay empty.
    """

    def __init__(
        self,
        address: str,
        name: str = "raw",
        *,
        hello: bool = True,
        first: list[Any] | None = None,
        token: str = "",
        min_version: int = 1,
        max_version: int = 1,
        think: float | Callable[[DecisionRequest], float] = 0.0,
        games: int | None = 1,
        seed: int | None = None,
        rng: random.Random | None = None,
        on_request: RequestHook | None = None,
        on_message: MessageHook | None = None,
        rule_options: tuple[str, ...] = (),
        sdk_name: str = "tests-raw-bot",
        sdk_version: str = "0",
        record: bool = True,
        event_stream: EventStream = EventStream.ALL,
        clock_probes: bool = False,
    ) -> None:
        self.address = address
        self.name = name
        self.hello = Hello(
            bot_name=name,
            min_version=min_version,
            max_version=max_version,
            token=token,
            sdk_name=sdk_name,
            sdk_version=sdk_version,
            rule_options=rule_options,
            event_stream=event_stream,
            clock_probes=clock_probes,
        )
        self.send_hello = hello
        self.first = list(first or [])
        self.think = think
        self.games = games
        self.rng = rng if rng is not None else random.Random(seed if seed is not None else name)
        self.on_request = on_request
        self.on_message = on_message
        self.record = record
        self.received: list[Received] = []
        self.sent: list[Any] = []
        self.status: grpc.StatusCode | None = None
        self.details = ""
        self.done = threading.Event()
        self.games_over = 0
        self.info: GameInfo | None = None
        """The GameStarted of the current (latest) game."""
        self.state: dict[str, Any] = {}
        """Free space for hooks."""
        self._out: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._send_closed = False
        self._cut = False
        self._lock = threading.Lock()
        self._channel: grpc.Channel | None = None
        self._call: Any = None
        self._timer: threading.Timer | None = None
        self._thread: threading.Thread | None = None

    # -- sending --------------------------------------------------------------------

    def send_raw(self, msg: Any) -> None:
        """Send a protobuf ``BotMessage`` as it is."""
        if not self._send_closed:
            if self.record:
                self.sent.append(msg)
            self._out.put(msg)

    def send_bytes(self, data: bytes) -> None:
        """Send ``data`` as one message, as it is (it need not decode)."""
        self.send_raw(data)

    def send_action(self, request_id: str, action: Action | None) -> None:
        self.send_raw(wire.encode_bot(ActionMsg(request_id, action)))

    def close_send(self) -> None:
        """Half-close: end the request stream cleanly (the bot leaves)."""
        if not self._send_closed:
            self._send_closed = True
            self._out.put(_CLOSE)

    def disconnect(self) -> None:
        """Cancel the call abruptly, as a crashing client would. The stream
        ends ``CANCELLED`` without reading another message."""
        self._send_closed = True
        self._cut = True
        self._out.put(_CLOSE)
        with self._lock:
            call = self._call
        if call is not None:
            call.cancel()

    def cancel_after(self, seconds: float) -> None:
        """Cancel the call if the stream has not ended within ``seconds``
        (once: a later call does not move the deadline)."""
        with self._lock:
            if self._timer is not None or self.done.is_set():
                return
            self._timer = threading.Timer(seconds, self._cancel_call)
            self._timer.daemon = True
            self._timer.start()

    def _cancel_call(self) -> None:
        with self._lock:
            call = self._call
        if call is not None:
            call.cancel()

    def _requests(self) -> Iterator[Any]:
        while True:
            item = self._out.get()
            if item is _CLOSE:
                return
            yield item

    # -- lifecycle ------------------------------------------------------------------

    def _open(self) -> None:
        self._channel = grpc.insecure_channel(self.address)
        for m in self.first:
            self.send_raw(m)
        if self.send_hello:
            self.send_raw(wire.encode_bot(self.hello))
        # the stream sends protobuf messages serialized, and bytes as they are
        play = self._channel.stream_stream(
            f"/{wire.SERVICE_NAME}/Play",
            request_serializer=_serialize,
            response_deserializer=wire.pb.ServerMessage.FromString,
        )
        call: Any = play(self._requests())
        with self._lock:
            self._call = call
        if self._cut:  # disconnect() came first
            call.cancel()

    def start(self) -> RawBot:
        """Open the stream and read it in a thread of its own."""
        self._open()
        self._thread = threading.Thread(target=self._run, name=f"bot-{self.name}", daemon=True)
        self._thread.start()
        return self

    def run(self) -> RawBot:
        """Open the stream and read it in this thread, until it ends."""
        self._open()
        self._run()
        return self

    def join(self, timeout: float = 30.0) -> RawBot:
        if not self.done.wait(timeout):
            raise TimeoutError(f"bot {self.name} still running after {timeout} s")
        return self

    def _run(self) -> None:
        call = self._call
        try:
            for raw in call:
                self._handle(raw)
                if self._cut:
                    break
            if self._cut:
                self.status, self.details = grpc.StatusCode.CANCELLED, "disconnected by the bot"
            else:
                self.status = call.code()
                self.details = call.details() or ""
        except grpc.RpcError as e:
            self.status = e.code()
            self.details = e.details() or ""
        except Exception as e:  # a bug in a hook: fail loudly in the test
            log.exception("%s: client error", self.name)
            self.status = grpc.StatusCode.UNKNOWN
            self.details = f"client error: {type(e).__name__}: {e}"
            call.cancel()
        finally:
            self._finish()

    def _finish(self) -> None:
        self._send_closed = True
        self._out.put(_CLOSE)
        with self._lock:
            timer, self._timer = self._timer, None
            call = self._call
        if timer is not None:
            timer.cancel()
        if call is not None:
            call.cancel()  # no-op on a stream that ended
        if self._channel is not None:
            self._channel.close()
        self.done.set()

    def _handle(self, raw: Any) -> None:
        try:
            msg = wire.decode_server(raw)
        except wire.WireError as e:
            log.warning("%s: undecodable server message: %s", self.name, e)
            if self.record:
                self.received.append(Received(time.monotonic(), raw, None, str(e)))
            return
        if self.record:
            self.received.append(Received(time.monotonic(), raw, msg))
        if isinstance(msg, GameInfo):
            self.info = msg
        if self.on_message is not None:
            self.on_message(self, msg)
        if isinstance(msg, DecisionRequest):
            if self.on_request is not None and self.on_request(self, msg):
                return
            think = self.think(msg) if callable(self.think) else self.think
            if think:
                time.sleep(think)
            self.send_action(msg.request_id, self.random_action(msg))
        elif isinstance(msg, GameEnd):
            self.games_over += 1
            if self.games is not None and self.games_over >= self.games:
                self.close_send()

    def random_action(self, req: DecisionRequest) -> Action:
        return self.rng.choice(req.view.legal_actions)

    # -- what was received ------------------------------------------------------------

    def messages(self, kind: type | tuple[type, ...] | None = None) -> list[Any]:
        return [r.msg for r in self.received if kind is None or isinstance(r.msg, kind)]

    def __repr__(self) -> str:
        return f"<RawBot {self.name} status={self.status} received={len(self.received)}>"


def run_bots(bots: list[RawBot], timeout: float = 60.0) -> list[RawBot]:
    """Start ``bots`` (in order) and wait for all of them to finish."""
    for b in bots:
        b.start()
    end = time.monotonic() + timeout
    for b in bots:
        b.join(max(0.1, end - time.monotonic()))
    return bots

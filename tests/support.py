"""Test support for the referee server: a scripted raw gRPC bot and a server thread.

:class:`RawBot` is a real gRPC client (the synchronous grpc API, its stream
read in a thread of its own) built on :mod:`wizard_arena.protocol.wire`. By default it
greets the server and answers every decision with a random legal action; its
options and hooks make it misbehave on purpose (sleep, illegal cards, wrong
request ids, messages before the Hello, bad versions or tokens, leaving
mid-trick). It records every message it receives, raw and decoded, and the
status the stream ended with.

:class:`ServerThread` runs :func:`wizard_referee.referee.arena.serve_arena` under
``trio.run`` in a background thread, so tests stay plain synchronous code.
(trio's MockClock must not be used here: the real gRPC thread runs beside
it, so tests use real, short deadlines.)
"""

from __future__ import annotations

import asyncio
import json
import queue
import random
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import trio

from wizard_arena.bot import GameInfo
from wizard_arena.protocol import wire
from wizard_arena.protocol.messages import (
    ActionMsg,
    ActionRejected,
    DecisionRequest,
    GameEnd,
    Hello,
    RoundStart,
    ServerMsg,
    Welcome,
)
from wizard_arena.rules import Action
from wizard_referee.referee.arena import Arena, ArenaConfig, serve_arena
from wizard_referee.referee.record import GameRecord

__all__ = ["RawBot", "Received", "ServerThread", "run_aio_bots", "run_bots", "spawn_aio_bots"]

_CLOSE = object()


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


class RawBot:
    """A scripted bot on one ``Play`` stream.

    ``first``: raw ``BotMessage`` values sent before anything else (instead
    of the Hello when ``hello=False``). ``think``: seconds to sleep before
    each answer (or a function of the request giving them). ``games``: close
    the stream cleanly after this many GameOver messages (``None``: stay
    until the server ends the stream).
    ``on_request(bot, request) -> bool``: called for each decision request
    before the default answer; return True when the hook answered (or
    deliberately did not). ``on_message(bot, msg)``: called for every
    decoded message. ``rule_options``: the Hello's (none by default, as a
    bot written for the base game).
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
        on_request: RequestHook | None = None,
        on_message: MessageHook | None = None,
        rule_options: tuple[str, ...] = (),
    ) -> None:
        self.address = address
        self.name = name
        self.hello = Hello(
            bot_name=name,
            min_version=min_version,
            max_version=max_version,
            token=token,
            sdk_name="tests-raw-bot",
            sdk_version="0",
            rule_options=rule_options,
        )
        self.send_hello = hello
        self.first = list(first or [])
        self.think = think
        self.games = games
        self.rng = random.Random(seed if seed is not None else name)
        self.on_request = on_request
        self.on_message = on_message
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
        self._out: queue.Queue[Any] = queue.Queue()
        self._send_closed = False
        self._channel: grpc.Channel | None = None
        self._call: Any = None
        self._thread: threading.Thread | None = None

    # -- sending --------------------------------------------------------------------

    def send_raw(self, msg: Any) -> None:
        """Send a protobuf ``BotMessage`` as it is."""
        if not self._send_closed:
            self.sent.append(msg)
            self._out.put(msg)

    def send_action(self, request_id: str, action: Action | None) -> None:
        self.send_raw(wire.encode_bot(ActionMsg(request_id, action)))

    def close_send(self) -> None:
        """Half-close: end the request stream cleanly (the bot leaves)."""
        if not self._send_closed:
            self._send_closed = True
            self._out.put(_CLOSE)

    def disconnect(self) -> None:
        """Cancel the call abruptly, as a crashing client would."""
        self._send_closed = True
        self._out.put(_CLOSE)
        if self._call is not None:
            self._call.cancel()

    def _requests(self) -> Iterator[Any]:
        while True:
            item = self._out.get()
            if item is _CLOSE:
                return
            yield item

    # -- lifecycle ------------------------------------------------------------------

    def start(self) -> RawBot:
        self._channel = grpc.insecure_channel(self.address)
        for m in self.first:
            self.send_raw(m)
        if self.send_hello:
            self.send_raw(wire.encode_bot(self.hello))
        self._call = wire.stub(self._channel).Play(self._requests())
        self._thread = threading.Thread(target=self._run, name=f"bot-{self.name}", daemon=True)
        self._thread.start()
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
            self.status = call.code()
            self.details = call.details() or ""
        except grpc.RpcError as e:
            self.status = e.code()
            self.details = e.details() or ""
        except Exception as e:  # a bug in a hook: fail loudly in the test
            self.status = grpc.StatusCode.UNKNOWN
            self.details = f"client error: {type(e).__name__}: {e}"
            call.cancel()
        finally:
            self._send_closed = True
            self._out.put(_CLOSE)
            if self._channel is not None:
                self._channel.close()
            self.done.set()

    def _handle(self, raw: Any) -> None:
        try:
            msg = wire.decode_server(raw)
        except wire.WireError as e:
            self.received.append(Received(time.monotonic(), raw, None, str(e)))
            return
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

    @property
    def welcome(self) -> Welcome | None:
        got = self.messages(Welcome)
        return got[0] if got else None

    @property
    def rejections(self) -> list[ActionRejected]:
        return self.messages(ActionRejected)

    @property
    def requests(self) -> list[DecisionRequest]:
        return self.messages(DecisionRequest)

    @property
    def game_ends(self) -> list[GameEnd]:
        return self.messages(GameEnd)

    @property
    def round_starts(self) -> list[RoundStart]:
        return self.messages(RoundStart)

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


class ServerThread:
    """``serve_arena(config)`` running in trio in a background thread.

    >>> with ServerThread(ArenaConfig()) as server:   # doctest: +SKIP
    ...     RawBot(server.address).start()
    """

    def __init__(self, config: ArenaConfig) -> None:
        self.config = config
        self.arena: Arena | None = None
        self.error: BaseException | None = None
        self._token: trio.lowlevel.TrioToken | None = None
        self._cancel: trio.CancelScope | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._main, name="trio-server", daemon=True)

    def _main(self) -> None:
        async def main() -> None:
            self._token = trio.lowlevel.current_trio_token()
            with trio.CancelScope() as scope:
                self._cancel = scope
                async with trio.open_nursery() as nursery:
                    self.arena = await nursery.start(serve_arena, self.config)
                    self._ready.set()

        try:
            trio.run(main)
        except BaseException as e:
            self.error = e
        finally:
            self._ready.set()

    def __enter__(self) -> ServerThread:
        self._thread.start()
        if not self._ready.wait(20) or self.arena is None:
            raise RuntimeError(f"the server did not start: {self.error!r}")
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self, timeout: float = 20.0) -> None:
        if self._thread.is_alive() and self._cancel is not None:
            scope = self._cancel
            self.call(scope.cancel)
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise RuntimeError("the server thread did not stop")
        if self.error is not None:
            raise RuntimeError(f"the server failed: {self.error!r}") from self.error

    @property
    def address(self) -> str:
        assert self.arena is not None
        return self.arena.address

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run ``fn(*args)`` in the server's trio thread and return its result."""
        return trio.from_thread.run_sync(fn, *args, trio_token=self._token)

    def records(self) -> list[GameRecord]:
        assert self.arena is not None
        arena = self.arena
        return self.call(lambda: list(arena.records))

    def wait_records(self, n: int, timeout: float = 60.0) -> list[GameRecord]:
        """Wait until ``n`` games have ended; return the records."""
        end = time.monotonic() + timeout
        while True:
            recs = self.records()
            if len(recs) >= n:
                return recs
            if time.monotonic() > end:
                raise TimeoutError(f"{len(recs)} of {n} games ended within {timeout} s")
            time.sleep(0.02)


# -- many random bots in a process of their own ---------------------------------------------


async def _aio_bot(address: str, name: str) -> dict[str, Any]:
    """One random bot on grpc.aio: plays until its first GameOver, then leaves."""
    rng = random.Random(name)
    out: asyncio.Queue[Any] = asyncio.Queue()
    out.put_nowait(wire.encode_bot(Hello(bot_name=name, sdk_name="tests-aio-bot")))
    result: dict[str, Any] = {"name": name, "games": [], "ends": [], "faults": []}

    async def requests() -> AsyncIterator[Any]:
        while True:
            item = await out.get()
            if item is None:
                return
            yield item

    async with grpc.aio.insecure_channel(address) as channel:
        call = wire.stub(channel).Play(requests())
        try:
            async for raw in call:
                msg = wire.decode_server(raw)
                if isinstance(msg, DecisionRequest):
                    action = rng.choice(msg.view.legal_actions)
                    out.put_nowait(wire.encode_bot(ActionMsg(msg.request_id, action)))
                elif isinstance(msg, GameInfo):
                    result["games"].append(msg.game_id)
                elif isinstance(msg, GameEnd):
                    result["ends"].append(msg.game_id)
                    result["faults"] += [[f.seat, f.code] for f in msg.faults]
                    out.put_nowait(None)
            result["status"] = (await call.code()).name
        except grpc.aio.AioRpcError as e:
            result["status"] = e.code().name
            result["details"] = e.details()
    return result


async def run_aio_bots(address: str, count: int, prefix: str = "aio") -> list[dict[str, Any]]:
    """``count`` random bots at once; each plays one game. Returns one summary per bot."""
    return list(await asyncio.gather(*(_aio_bot(address, f"{prefix}{i}") for i in range(count))))


def spawn_aio_bots(
    address: str, count: int, prefix: str = "aio", timeout: float = 120.0
) -> list[dict[str, Any]]:
    """Run :func:`run_aio_bots` in a child process (its own GIL and core)."""
    proc = subprocess.run(
        [sys.executable, "-m", "tests.support", address, str(count), prefix],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=Path(__file__).resolve().parent.parent,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"bots process failed ({proc.returncode}):\n{proc.stderr}")
    result: list[dict[str, Any]] = json.loads(proc.stdout)
    return result


if __name__ == "__main__":
    # python -m tests.support ADDRESS COUNT [PREFIX]: random bots, one game each, JSON out
    _address, _count = sys.argv[1], int(sys.argv[2])
    _prefix = sys.argv[3] if len(sys.argv) > 3 else "aio"
    print(json.dumps(asyncio.run(run_aio_bots(_address, _count, _prefix))))

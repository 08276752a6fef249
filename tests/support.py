"""Test support for the referee server: a server thread, and random bots in a process of their own.

The scripted raw gRPC bot is :class:`wizard_arena.testing.RawBot` (re-exported
here with :func:`~wizard_arena.testing.run_bots`).

:class:`ServerThread` runs :func:`wizard_referee.referee.arena.serve_arena` under
``trio.run`` in a background thread, so tests stay plain synchronous code.
(trio's MockClock must not be used here: the real gRPC thread runs beside
it, so tests use real, short deadlines.)
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import grpc
import trio

from wizard_arena.bot import GameInfo
from wizard_arena.protocol import wire
from wizard_arena.protocol.messages import ActionMsg, DecisionRequest, GameEnd, Hello
from wizard_arena.testing import RawBot, Received, run_bots
from wizard_referee.referee.arena import Arena, ArenaConfig, serve_arena
from wizard_referee.referee.record import GameRecord

__all__ = ["RawBot", "Received", "ServerThread", "run_aio_bots", "run_bots", "spawn_aio_bots"]


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

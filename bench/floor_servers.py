"""The floor servers of bench_server.py: the same service and messages as
the referee, without its rules, to show what the transport (and, for
``bridge``, the referee's own trio <-> grpc.aio bridge) alone costs.

    python bench/floor_servers.py --mode table|pingpong|bridge [--players 4] [--lean]

prints ``floor serving on HOST:PORT`` to standard error once serving
(bench_server.py starts it as a subprocess and reads that line). See
bench_server.py for what each mode does.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import signal
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

if (
    "--mode=bridge" in sys.argv
    or any(  # before grpc loads, as in the referee
        a == "--mode" and b == "bridge" for a, b in zip(sys.argv, sys.argv[1:], strict=False)
    )
):
    # the architecture's floor runs on the referee's own transport settings:
    # grpc core's listener chosen as a referee's process chooses it; the plain
    # grpc.aio floors keep grpc's defaults, as any grpc.aio server would
    from wizard_referee.referee.grpc_setup import prepare_referee_transport

    prepare_referee_transport()

import grpc

import wizard_arena.protocol.wire as wire
from wizard_arena.protocol.messages import (
    DecisionRequest,
    Hello,
    ServerInfo,
    TableEvent,
    Welcome,
)
from wizard_arena.rules import Game, Phase, Rules

PLAYERS = 4


def canned_messages(players: int) -> tuple[Any, Any]:
    """A real mid-game DecisionRequest and a CardPlayed event, as protobuf."""
    rng = random.Random(7)
    game = Game(Rules(players=players), seed=7)
    target = game.rules.rounds // 2 + 1
    while True:
        if game.phase is Phase.DEAL:
            game.deal()
            continue
        if game.round == target and game.phase is Phase.PLAY and len(game.trick) == 1:
            break
        game.apply(game.to_act, rng.choice(game.legal_actions()))  # type: ignore[arg-type]
    seat = game.to_act
    assert seat is not None
    view = game.view(seat).with_time_left(5.0)
    request = wire.encode_server(DecisionRequest("floor-1", "floor", view))
    event = wire.encode_server(TableEvent("floor", game.events[-1]))
    return request, event


# -- the floor server -------------------------------------------------------------------


class _FloorStream:
    def __init__(self) -> None:
        self.out: asyncio.Queue[Any] = asyncio.Queue()
        self.table: _FloorTable | None = None
        self.seat = 0


class _FloorTable:
    """One table of floor traffic: ``sends[i]`` queues a message for seat i.
    The request is this table's copy of the canned one, passed through
    ``encode`` (e.g. serialized once); ``event`` goes out as it is."""

    def __init__(
        self,
        number: int,
        sends: Sequence[Callable[[Any], None]],
        request: Any,
        event: Any,
        encode: Callable[[Any], Any] = lambda m: m,
        lean: bool = False,
    ) -> None:
        self.sends = sends
        self.lean = lean
        self.to_act = 0
        own = type(request)()
        own.CopyFrom(request)
        own.decision_request.game_id = f"floor-table-{number}"
        self.request = encode(own)
        self.event = event

    def start(self) -> None:
        self.sends[0](self.request)

    def on_action(self, seat: int) -> None:
        if seat != self.to_act:
            return
        if not self.lean:
            for send in self.sends:
                send(self.event)
        self.to_act = (self.to_act + 1) % len(self.sends)
        self.sends[self.to_act](self.request)


class FloorServicer:
    """WizardArena with no game: ``table`` or ``pingpong`` traffic of real message sizes."""

    def __init__(self, mode: str, players: int, lean: bool = False) -> None:
        self.mode = mode
        self.players = players
        self.lean = lean
        self.request, self.event = canned_messages(players)
        self.waiting: list[_FloorStream] = []
        self.tables = 0
        self.streams = 0
        self.welcome = wire.encode_server(Welcome(1, "floor", "floor"))

    async def GetServerInfo(self, request: Any, context: Any) -> Any:
        return wire.encode_server_info(
            ServerInfo("floor", (1,), Rules(players=self.players), 5.0, False)
        )

    async def Play(self, request_iterator: AsyncIterator[Any], context: Any) -> None:
        stream = _FloorStream()
        self.streams += 1
        own_request = type(self.request)()
        own_request.CopyFrom(self.request)
        own_request.decision_request.game_id = f"floor-stream-{self.streams}"
        reader = asyncio.ensure_future(self._read(request_iterator, stream, own_request))
        try:
            while True:
                item = await stream.out.get()
                if item is None:
                    return
                await context.write(item)
        finally:
            reader.cancel()

    async def _read(self, it: AsyncIterator[Any], stream: _FloorStream, own: Any) -> None:
        try:
            parse = wire.pb.BotMessage.FromString  # Play yields bytes (wire.add_servicer)
            async for raw in it:
                msg = parse(raw)
                kind = msg.WhichOneof("message")
                if kind == "hello":
                    stream.out.put_nowait(self.welcome)
                    if self.mode == "pingpong":
                        stream.out.put_nowait(own)
                    else:
                        self.waiting.append(stream)
                        if len(self.waiting) >= self.players:
                            seats, self.waiting = (
                                self.waiting[: self.players],
                                self.waiting[self.players :],
                            )
                            self.tables += 1
                            sends = [s.out.put_nowait for s in seats]
                            table = _FloorTable(
                                self.tables, sends, self.request, self.event, lean=self.lean
                            )
                            for i, s in enumerate(seats):
                                s.table, s.seat = table, i
                            table.start()
                elif self.mode == "pingpong":
                    stream.out.put_nowait(own)
                elif stream.table is not None:
                    stream.table.on_action(stream.seat)
        finally:
            stream.out.put_nowait(None)


async def serve_floor(mode: str, players: int, lean: bool = False) -> None:
    server = grpc.aio.server()
    wire.add_servicer(FloorServicer(mode, players, lean), server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(f"floor serving on 127.0.0.1:{port}", file=sys.stderr, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop(0.5)


# -- the architecture's floor: the same traffic through the referee's bridge -------------


async def serve_floor_bridge(players: int, lean: bool = False) -> None:
    """``floor-table`` traffic, but the table logic runs in trio on the main
    thread and every message crosses the referee's own bridge
    (:mod:`wizard_referee.referee.bridge`: grpc.aio in a background thread), exactly
    as in the arena; messages are canned protobuf, as in the floor. What the
    prescribed architecture costs before any rule or view is computed."""
    import trio

    from wizard_referee.referee.bridge import Bridge, Connection

    class PassThrough(Bridge):
        def _encode(self, msg: Any) -> Any:
            return msg  # canned: already serialized

    request, pb_event = canned_messages(players)
    event: Any = pb_event.SerializeToString()
    welcome: Any = wire.encode_server_bytes(Welcome(1, "floor", "floor"))
    waiting: list[Connection] = []
    table_of: dict[Connection, tuple[_FloorTable, int]] = {}

    tables = 0

    async def reader(conn: Connection) -> None:
        nonlocal tables, waiting
        while True:
            try:
                msg = await conn.receive()
            except (trio.EndOfChannel, trio.ClosedResourceError):
                return
            if isinstance(msg, Hello):
                conn.send(welcome)
                waiting.append(conn)
                if len(waiting) >= players:
                    seats, waiting = waiting[:players], waiting[players:]
                    tables += 1
                    table = _FloorTable(
                        tables,
                        [c.send for c in seats],
                        request,
                        event,
                        encode=lambda m: m.SerializeToString(),
                        lean=lean,
                    )
                    for i, c in enumerate(seats):
                        table_of[c] = (table, i)
                    table.start()
            elif conn in table_of:
                table, seat = table_of[conn]
                table.on_action(seat)

    async with trio.open_nursery() as nursery:
        info = ServerInfo("floor", (1,), Rules(players=players), 5.0, False)
        bridge = PassThrough(info, lambda conn: nursery.start_soon(reader, conn), 64, 64 * 1024)
        port = await bridge.start("127.0.0.1", 0)
        print(f"floor serving on 127.0.0.1:{port}", file=sys.stderr, flush=True)
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                break
        await bridge.stop(0.5)
        nursery.cancel_scope.cancel()


# -- the bots ---------------------------------------------------------------------------


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=["table", "pingpong", "bridge"], default="table")
    ap.add_argument("--players", type=int, default=PLAYERS)
    ap.add_argument(
        "--lean",
        action="store_true",
        help="table and bridge modes: the request alone, no event (the lean stream's traffic)",
    )
    args = ap.parse_args()
    if args.mode == "bridge":
        import trio

        trio.run(serve_floor_bridge, args.players, args.lean)
    else:
        asyncio.run(serve_floor(args.mode, args.players, args.lean))


if __name__ == "__main__":
    main()

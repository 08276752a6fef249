"""The seat contract, on both seats: the gRPC stream's trio side
(:class:`~wizard_referee.referee.bridge.Connection`, its asyncio side
replaced by a recorder) and the in-memory seat
(:class:`~wizard_referee.referee.memory.MemorySeat`) behave alike for the
referee: messages both ways, the end of a stream, a bot that leaves before
its first message is read, flooding, ``route``. The mock-clock tests run the
referee on in-memory seats; they hold for gRPC only because of this."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import trio

from wizard_arena.protocol.messages import ActionMsg, Hello, ServerMsg, Welcome
from wizard_arena.rules import Bid
from wizard_referee.referee.bridge import Connection, StreamClose
from wizard_referee.referee.memory import MemorySeat
from wizard_referee.referee.seat import CloseCode, Malformed, Seat, SeatBase

from .memory_bots import on_mock_clock


class BotEnd:
    """The bot's side of a seat, as a test drives it."""

    seat: SeatBase
    closed_with: tuple[CloseCode, str] | None

    def send(self, msg: Any) -> None: ...
    def leave(self) -> None: ...
    def received(self) -> list[ServerMsg]: ...


class MemoryEnd(BotEnd):
    def __init__(self, inbound_limit: int) -> None:
        self.seat = self.memory = MemorySeat(inbound_limit=inbound_limit)

    @property  # type: ignore[override]
    def closed_with(self) -> tuple[CloseCode, str] | None:
        return self.memory.bot.closed_with

    def send(self, msg: Any) -> None:
        self.memory.bot.send(msg)

    def leave(self) -> None:
        self.memory.bot.leave()

    def received(self) -> list[ServerMsg]:
        out = []
        while True:
            try:
                out.append(self.memory._outbox.receive_nowait())
            except (trio.WouldBlock, trio.EndOfChannel):
                return out


class GrpcEnd(BotEnd):
    """A :class:`Connection` whose asyncio side records what trio hands it
    (the messages to write, the status) as its Play handler would take them."""

    def __init__(self, inbound_limit: int) -> None:
        self.out: list[ServerMsg] = []
        self.closed_with = None
        self.left = False
        self.seat = Connection(self, "c1", "ipv4:test", inbound_limit)  # type: ignore[arg-type]

    def _to_aio(self, fn: Callable[..., None], item: Any) -> None:
        if self.closed_with is not None:
            return  # the handler takes nothing after a close
        if isinstance(item, StreamClose):
            self.closed_with = (item.code, item.details)
        else:
            self.out.append(item)

    def send(self, msg: Any) -> None:
        if not self.left:  # (after a half-close gRPC reads nothing more)
            self.seat._deliver(msg)

    def leave(self) -> None:
        self.left = True
        self.seat._bot_left("the bot closed the stream")

    def received(self) -> list[ServerMsg]:
        out, self.out = self.out, []
        return out


@pytest.fixture(params=["memory", "grpc"])
def end(request: pytest.FixtureRequest) -> Callable[..., BotEnd]:
    def make(inbound_limit: int = 64) -> BotEnd:
        return MemoryEnd(inbound_limit) if request.param == "memory" else GrpcEnd(inbound_limit)

    return make


def test_messages_flow_both_ways_and_the_close_comes_after_them(end: Any) -> None:
    @on_mock_clock
    async def run() -> None:
        bot = end()
        seat = bot.seat
        ended: list[Seat] = []
        seat.on_closed = ended.append
        bot.send(Hello("me"))
        bot.send(Malformed("garbled"))
        assert await seat.receive() == Hello("me")
        assert await seat.receive() == Malformed("garbled")
        seat.send(Welcome(1, "s1", "0"))
        seat.close(CloseCode.FAILED_PRECONDITION, "no")
        seat.close(CloseCode.UNAVAILABLE, "again")  # once closed, nothing changes
        seat.send(Welcome(1, "s2", "0"))  # after the close: dropped
        assert seat.closed and seat.close_reason == "closed by server: FAILED_PRECONDITION no"
        assert ended == [seat]
        assert bot.received() == [Welcome(1, "s1", "0")]
        assert bot.closed_with == (CloseCode.FAILED_PRECONDITION, "no")
        bot.send(Hello("again"))  # nothing is delivered any more
        with pytest.raises(trio.EndOfChannel):
            await seat.receive()

    run()


def test_a_bot_that_leaves_ends_its_stream_with_ok_once_its_first_message_is_read(
    end: Any,
) -> None:
    @on_mock_clock
    async def run() -> None:
        bot = end()
        seat = bot.seat
        bot.send(Hello("me"))
        bot.leave()
        assert seat.closed and seat.close_reason == "the bot closed the stream"
        assert bot.closed_with is None  # its first message is unread: the reader decides
        assert await seat.receive() == Hello("me")
        with pytest.raises(trio.EndOfChannel):
            await seat.receive()
        assert bot.closed_with == (CloseCode.OK, "")

    run()


def test_a_bot_that_leaves_once_read_ends_with_ok_at_once(end: Any) -> None:
    @on_mock_clock
    async def run() -> None:
        bot = end()
        bot.send(Hello("me"))
        assert await bot.seat.receive() == Hello("me")
        bot.leave()
        assert bot.closed_with == (CloseCode.OK, "")

    run()


def test_a_refusal_reaches_a_bot_that_left_before_it_was_read(end: Any) -> None:
    bot = end()
    bot.send(Hello("me"))
    bot.leave()
    bot.seat.close(CloseCode.UNAUTHENTICATED, "missing access token")
    assert bot.closed_with == (CloseCode.UNAUTHENTICATED, "missing access token")


def test_a_bot_sending_faster_than_the_referee_reads_is_cut_off(end: Any) -> None:
    @on_mock_clock
    async def run() -> None:
        bot = end(inbound_limit=3)
        seat = bot.seat
        for i in range(4):
            bot.send(ActionMsg(f"r{i}", Bid(0)))
        assert seat.flooded and seat.closed
        why = "inbound queue full (3 messages): the bot sent faster than the referee reads"
        assert bot.closed_with == (CloseCode.RESOURCE_EXHAUSTED, why)
        got = [await seat.receive() for _ in range(3)]
        assert got == [ActionMsg(f"r{i}", Bid(0)) for i in range(3)]

    run()


def test_route_takes_a_message_only_while_none_is_queued(end: Any) -> None:
    """Seat.route is offered each message as it arrives, while no earlier
    message waits in the queue (so the reader still sees them in order)."""

    @on_mock_clock
    async def run() -> None:
        bot = end()
        seat = bot.seat
        offered: list[object] = []

        def route(msg: object) -> bool:
            offered.append(msg)
            return isinstance(msg, ActionMsg) and msg.request_id == "take"

        seat.route = route
        take, keep = ActionMsg("take", Bid(0)), ActionMsg("keep", Bid(0))
        bot.send(take)  # taken: not queued
        bot.send(keep)  # declined: queued
        bot.send(take)  # not offered: a message is queued before it
        assert offered == [take, keep]
        assert await seat.receive() is keep
        assert await seat.receive() is take
        bot.send(take)  # nothing queued: offered, and taken, again
        assert offered == [take, keep, take]
        seat.route = None
        bot.send(take)
        assert await seat.receive() is take
        # a message taken by route counts as read: a leave now ends with OK
        seat.route = route
        fresh = end()
        fresh.seat.route = route
        fresh.send(take)
        fresh.leave()
        assert fresh.closed_with == (CloseCode.OK, "")

    run()

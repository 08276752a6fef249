"""Hardening against hostile or broken clients: bytes that do not decode,
resume tokens, memory held for strangers, clients that stop reading or
answering (issue #10, items 1-4)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from wizard_arena import wire
from wizard_arena.core import Rules
from wizard_arena.protocol import ActionRejected, DecisionRequest, Hello
from wizard_referee.arena import ArenaConfig

from .support import RawBot, ServerThread, run_bots


@pytest.fixture
def serve() -> Iterator[Any]:
    servers: list[ServerThread] = []

    def start(**kw: Any) -> ServerThread:
        kw.setdefault("move_time", 5.0)
        kw.setdefault("rules", Rules(players=3))
        kw.setdefault("shutdown_grace", 0.2)
        server = ServerThread(ArenaConfig(**kw)).__enter__()
        servers.append(server)
        return server

    yield start
    for s in servers:
        s.stop()


def wait_for(cond: Any, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise TimeoutError("condition not met")
        time.sleep(0.01)


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (payloads under 128 bytes)."""
    assert len(payload) < 128
    return bytes([number << 3 | 2, len(payload)]) + payload


#: A Hello (min and max version 1) whose bot_name is not valid UTF-8.
BAD_UTF8_HELLO = field(1, b"\x08\x01\x10\x01" + field(3, b"\xffab"))
#: Not a protobuf message: a length that runs past the end.
TRUNCATED = bytes.fromhex("0a056162")


# -- 1. bytes that do not decode ---------------------------------------------------------------


@pytest.mark.parametrize("first", [TRUNCATED, BAD_UTF8_HELLO], ids=["truncated", "bad-utf8"])
def test_a_first_message_that_does_not_decode_is_invalid_argument(serve: Any, first: bytes) -> None:
    server = serve()
    bot = RawBot(server.address, "garbled", hello=False, first=[first]).start().join(20)
    assert bot.status == grpc.StatusCode.INVALID_ARGUMENT
    assert bot.details.startswith("the first message must be a Hello: ")
    assert "does not decode as a BotMessage" in bot.details
    assert bot.received == []
    arena = server.arena
    assert arena is not None
    wait_for(lambda: not server.call(lambda: len(arena.connections)))
    assert server.call(lambda: len(arena.sessions)) == 0


def test_bytes_that_do_not_decode_mid_game_are_rejected_as_malformed(serve: Any) -> None:
    """Both kinds of bad bytes are answered with ``malformed`` and faulted
    once each; the stream stays open and the bot plays the game to the end."""

    def garble(bot: RawBot, req: DecisionRequest) -> bool:
        if not bot.state.get("garbled"):
            bot.state["garbled"] = True
            bot.send_bytes(TRUNCATED)
            bot.send_bytes(BAD_UTF8_HELLO)
        return False  # and answer as usual

    server = serve()
    bad = RawBot(server.address, "garbler", on_request=garble)
    bots = run_bots([bad, RawBot(server.address, "b1"), RawBot(server.address, "b2")])
    assert all(b.status == grpc.StatusCode.OK for b in bots), bots
    (rec,) = server.wait_records(1)
    seat = rec.names.index("garbler")
    assert rec.faults[seat] == {"malformed": 2}
    assert "does not decode as a BotMessage" in rec.fault_details[seat]["malformed"]
    rejected = [m for m in bad.messages(ActionRejected)]
    assert [(r.code, r.request_id) for r in rejected] == [("malformed", "")] * 2
    assert "String field had bad UTF-8" in rejected[1].message
    assert all(mv.fault is None for rr in rec.rounds for mv in rr.moves)
    assert len(bad.game_ends) == 1


def test_decode_bot_bytes() -> None:
    hello = Hello("me", rule_options=("tricksy",))
    raw = wire.encode_bot(hello).SerializeToString()
    assert wire.decode_bot_bytes(raw) == hello
    for bad in (TRUNCATED, BAD_UTF8_HELLO, b""):
        with pytest.raises(wire.WireError):
            wire.decode_bot_bytes(bad)

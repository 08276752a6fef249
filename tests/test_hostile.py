"""Attacks of a hostile outside tester, written from proto/ and the protocol's
pages (docs/protocol.md, docs/protocol-reference.md) alone, that the other
hardening tests (test_hardening, test_misbehaving, test_resilience*,
test_server_streams) do not cover: each checks an answer the protocol doc
promises, over real gRPC."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from wizard_arena.protocol import wire
from wizard_arena.protocol.messages import DecisionRequest
from wizard_arena.rules import Rules

from .support import RawBot, run_bots, scaled

#: short games (rounds of 1 and 2 cards) at tables of three
RULES = Rules(players=3, hand_sizes=(1, 2))
OPTIONS = ("round_sizes",)
SERVER_DEFAULTS = {"rules": RULES, "move_time": 10.0}


def _bot(address: str, name: str, **kw: Any) -> RawBot:
    return RawBot(address, name, rule_options=OPTIONS, **kw)


@pytest.mark.e2e
def test_a_message_over_the_size_limit_mid_game_is_faulted_for_what_it_was(serve: Any) -> None:
    """gRPC ends the call of a bot that sends a message over the size limit
    (RESOURCE_EXHAUSTED) as if the bot had half-closed: the seat's
    ``disconnect`` fault must not say the bot closed its stream, while a bot
    that does half-close is faulted for just that."""
    server = serve()

    def oversized(bot: RawBot, req: DecisionRequest) -> bool:
        bot.send_raw(wire.pb.BotMessage(action=wire.pb.Action(request_id="x" * 70_000, bid=0)))
        return True

    def leave(bot: RawBot, req: DecisionRequest) -> bool:
        bot.close_send()
        return True

    big = _bot(server.address, "big", on_request=oversized)
    leaver = _bot(server.address, "leaver", on_request=leave)
    other = _bot(server.address, "other")
    run_bots([big, leaver, other], timeout=scaled(60))
    assert big.status == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert leaver.status == other.status == grpc.StatusCode.OK
    (rec,) = server.wait_records(1)
    assert rec.status == "finished"
    details = {rec.names[s]: d for s, d in enumerate(rec.fault_details)}
    assert details["big"] == {
        "disconnect": "the stream was cut: the bot cancelled its call, its connection "
        "dropped, or it sent a message larger than 65536 bytes"
    }
    assert details["leaver"] == {"disconnect": "the bot closed the stream"}
    assert details["other"] == {}


@pytest.mark.e2e
def test_a_hostile_name_reaches_the_table_bounded_and_printable(serve: Any) -> None:
    """A Hello.bot_name of 60,000 characters with escapes and newlines would go
    into every seat's GameStarted, the record and each log line of the bot's
    moves: the referee keeps its first 64 characters, made printable (and an
    empty name is the session id)."""
    server = serve()
    hostile = "eve\x1b[2J\n\u202e" + "x" * 60_000
    bots = [_bot(server.address, n) for n in (hostile, "b", "")]
    run_bots(bots, timeout=scaled(60))
    assert all(b.status == grpc.StatusCode.OK for b in bots)
    shown = "eve?[2J??" + "x" * 55
    for b in bots:
        assert b.info is not None and shown in b.info.names
    (rec,) = server.wait_records(1)
    assert shown in rec.names and bots[2].welcome is not None
    assert bots[2].welcome.session_id in rec.names


@pytest.mark.e2e
def test_a_refusal_quotes_a_hostile_list_of_rule_options_bounded(serve: Any) -> None:
    """A bot refused for its rule options is told which ones it gave: of
    hundreds of long names (50 KB), only the first 200 characters come back in the
    status details (they travel in the trailers)."""
    server = serve()
    hostile = tuple(f"opt{i}\n" + "y" * 100 for i in range(500))
    bot = RawBot(server.address, "options", rule_options=hostile)
    run_bots([bot], timeout=scaled(30))
    assert bot.status == grpc.StatusCode.FAILED_PRECONDITION
    assert "round_sizes" in bot.details and "opt0?yyy" in bot.details
    assert bot.details.endswith(" ...) do not include them") and len(bot.details) < 500

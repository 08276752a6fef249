"""The referee over real gRPC, continued: refused streams, a bot that leaves mid-
trick, server info / health / reflection, shutdown of a real wizard-arena
serve, and records; and on in-memory seats, one table failing (its seat's
transport raising) while the others go on, and the log's decision lines."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from wizard_arena import __version__
from wizard_arena.bot import GameInfo
from wizard_arena.protocol import wire
from wizard_arena.protocol.messages import (
    DecisionRequest,
    Hello,
    ServerMsg,
)
from wizard_arena.rules import (
    Bid,
    Phase,
    Rules,
    action_text,
    default_action,
)
from wizard_referee.referee.cmd_serve import read_tokens
from wizard_referee.referee.memory import MemorySeat
from wizard_referee.referee.policy import RefereePolicy
from wizard_referee.referee.record import (
    GameRecord,
    RecordLog,
    verify_record,
)
from wizard_referee.referee.seat import CloseCode
from wizard_referee.referee.table import SeatSpec, run_table

from .conftest import LogSink
from .memory_bots import MemBot, memory_arena, on_mock_clock, play, start, wait_until
from .support import (
    RawBot,
    ServerThread,
    game_of,
    record_of,
    replay,
    run_bots,
    scaled,
    seat_of,
    wait_for,
)

pytestmark = pytest.mark.timeout(120)

# -- refused streams --------------------------------------------------------------------


def _refused(server: ServerThread, **kw: Any) -> RawBot:
    return RawBot(server.address, "refused", **kw).start().join(20)


@pytest.mark.e2e
def test_action_before_hello_is_refused(serve: Any) -> None:
    server = serve()
    bot = _refused(server, hello=False, first=[wire.encode_bot(_action("r1"))])
    assert bot.status == grpc.StatusCode.INVALID_ARGUMENT
    assert "Hello" in bot.details
    assert bot.received == []


@pytest.mark.e2e
def test_empty_first_message_is_refused(serve: Any) -> None:
    server = serve()
    bot = _refused(server, hello=False, first=[wire.pb.BotMessage()])
    assert bot.status == grpc.StatusCode.INVALID_ARGUMENT
    assert bot.received == []


@pytest.mark.e2e
def test_unsupported_version_is_refused(serve: Any) -> None:
    server = serve()
    bot = _refused(server, min_version=2, max_version=3)
    assert bot.status == grpc.StatusCode.FAILED_PRECONDITION
    assert "unsupported protocol version" in bot.details
    assert "2..3" in bot.details and "speaks 1" in bot.details


@pytest.mark.e2e
def test_tokens(serve: Any, tmp_path: Path) -> None:
    path = tmp_path / "tokens.txt"
    path.write_text("# bots allowed\nalpha-123  # alice\n\nbeta-456\n")
    tokens = read_tokens(path)
    assert tokens == {"alpha-123", "beta-456"}
    server = serve(tokens=tokens)
    bad = _refused(server, token="alpha-124")
    assert bad.status == grpc.StatusCode.UNAUTHENTICATED
    assert bad.details == "invalid access token"
    missing = _refused(server)
    assert missing.status == grpc.StatusCode.UNAUTHENTICATED
    assert missing.details == "missing access token"
    good = RawBot(server.address, "good", token="beta-456").start()
    wait_for(lambda: good.welcome is not None)
    good.close_send()
    good.join(10)
    assert good.status == grpc.StatusCode.OK
    assert _server_info(server).token_required


class _Book:
    """Tokens that change while the arena runs (a ladder's registry)."""

    def __init__(self) -> None:
        self.why: dict[str, str | None] = {"good": None}

    def refusal(self, token: str) -> str | None:
        return self.why.get(token, "invalid access token")


@on_mock_clock
async def test_a_book_of_tokens_is_asked_at_each_hello() -> None:
    book = _Book()
    async with memory_arena(tokens=book) as arena, trio.open_nursery() as nursery:
        first = MemBot("a", token="good", games=None)
        await start(nursery, arena, first)
        await wait_until(lambda: first.welcome is not None)
        unknown = MemBot("b", token="nobody")
        await play(arena, unknown)
        book.why["good"] = "access token no longer valid (rotated)"
        again = MemBot("c", token="good")
        await play(arena, again)
        nursery.cancel_scope.cancel()
    assert unknown.closed_with == (CloseCode.UNAUTHENTICATED, "invalid access token")
    assert again.closed_with == (
        CloseCode.UNAUTHENTICATED,
        "access token no longer valid (rotated)",
    )


@on_mock_clock
async def test_no_hello_in_time_is_refused() -> None:
    async with memory_arena(hello_timeout=0.3) as arena:
        bot = MemBot("mute", hello=False, games=None)
        await play(arena, bot)
        assert trio.current_time() == pytest.approx(0.3)
    assert bot.closed_with == (CloseCode.INVALID_ARGUMENT, "no Hello within the hello timeout")
    assert bot.received == [] and len(arena.connections) == 0


@pytest.mark.e2e
def test_oversized_message_is_refused(serve: Any) -> None:
    server = serve()
    big = wire.encode_bot(Hello(bot_name="x" * (70 * 1024)))
    bot = _refused(server, hello=False, first=[big])
    assert bot.status == grpc.StatusCode.RESOURCE_EXHAUSTED


@pytest.mark.e2e
def test_flooding_bot_is_cut_off(serve: Any) -> None:
    server = serve(inbound_limit=8)
    flood = [wire.encode_bot(_action(f"r{i}")) for i in range(50)]
    bot = RawBot(server.address, "flood", games=None)
    bot.start()
    wait_for(lambda: bot.welcome is not None)
    for m in flood:  # in the lobby nobody reads them
        bot.send_raw(m)
    bot.join(20)
    assert bot.status == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "inbound queue full (8 messages)" in bot.details


def _action(rid: str) -> Any:
    from wizard_arena.protocol.messages import ActionMsg

    return ActionMsg(rid, Bid(0))


# -- a bot that leaves mid-trick --------------------------------------------------------------


@pytest.mark.e2e
def test_disconnect_mid_trick(serve: Any, logs: LogSink) -> None:
    server = serve(rules=Rules(players=6))

    def leave(bot: RawBot, req: DecisionRequest) -> bool:
        v = req.view
        if v.phase is Phase.PLAY and v.round >= 2 and v.trick:
            bot.state["left_at"] = (v.round, len(v.tricks), len(v.trick))
            bot.disconnect()
            return True
        return False

    bots = [RawBot(server.address, f"d{i}") for i in range(5)]
    leaver = RawBot(server.address, "leaver", on_request=leave)
    run_bots([*bots, leaver], timeout=scaled(60))
    assert leaver.status == grpc.StatusCode.CANCELLED
    rec = record_of(server, game_of(leaver))
    assert rec.status == "finished" and verify_record(rec) == []
    seat = seat_of(rec, "leaver")
    assert rec.faults[seat] == {"disconnect": 1}
    assert rec.faulted_seats == [seat]
    rnd, _, in_trick = leaver.state["left_at"]
    moves = [snap for snap in replay(rec) if snap.mv.seat == seat]
    asked = len([r for r in leaver.requests if r.game_id == rec.game_id])
    answered, defaulted = moves[: asked - 1], moves[asked - 1 :]
    assert all(snap.mv.fault is None for snap in answered)
    assert defaulted and all(snap.mv.fault == "disconnect" for snap in defaulted)
    for snap in defaulted:
        assert snap.mv.action == action_text(default_action(snap.legal))
    first = defaulted[0]
    assert first.round_index + 1 == rnd and first.trick == in_trick > 0
    for b in bots:
        assert b.status == grpc.StatusCode.OK
        assert [(f.seat, f.code) for f in b.game_ends[0].faults] == [(seat, "disconnect")]
    faults = [e for e in logs.events() if e["event"] == "fault" and e["game_id"] == rec.game_id]
    assert [(e["seat"], e["bot"], e["code"], e["level"]) for e in faults] == [
        (seat, "leaver", "disconnect", "warning")
    ]


# -- one table failing ------------------------------------------------------------------------


class BrokenTransport(MemorySeat):
    """An in-memory seat whose transport fails with an unexpected error when
    it is given its third decision request: a fault on the referee's side,
    not the bot's, which must cost its table and nothing else."""

    def __init__(self, policy: RefereePolicy) -> None:
        super().__init__(inbound_limit=policy.inbound_limit, outbound_limit=policy.outbound_limit)
        self.requests = 0

    def send(self, msg: ServerMsg) -> None:
        if isinstance(msg, DecisionRequest):
            self.requests += 1
            if self.requests == 3:
                raise RuntimeError("boom: the transport failed")
        super().send(msg)


@on_mock_clock
async def test_error_in_one_table_spares_the_others(logs: LogSink) -> None:
    async with memory_arena() as arena:
        broken = MemBot("broken", seat=BrokenTransport(arena.config.policy))
        bots = [broken, *(MemBot(f"e{i}") for i in range(5))]
        await play(arena, *bots)
        doomed = broken.messages(GameInfo)[0].game_id
        records = {r.game_id: r for r in arena.records}
        failed = records[doomed]
        assert failed.status == "aborted"
        assert failed.error == "RuntimeError: boom: the transport failed"
        # the other table finished, and the doomed table's bots were seated again
        finished = [r for r in records.values() if r.status == "finished"]
        assert len(finished) == 2 and len(records) == 3
        assert all(verify_record(r) == [] for r in finished)
        for b in bots:
            assert b.status is CloseCode.OK
            assert [e.game_id for e in b.game_ends] != [doomed] and len(b.game_ends) == 1
        (aborted,) = [e for e in logs.events() if e["event"] == "table_aborted"]
        assert aborted["game_id"] == doomed and "boom" in aborted["error"]
        # and the arena still serves
        later = [MemBot(f"later{i}") for i in range(3)]
        await play(arena, *later)
        assert all(len(b.game_ends) == 1 for b in later)


# -- server info, health, reflection ------------------------------------------------------------


def _server_info(server: ServerThread) -> Any:
    with grpc.insecure_channel(server.address) as ch:
        return wire.decode_server_info(
            wire.stub(ch).GetServerInfo(wire.server_info_request(), timeout=scaled(10))
        )


@pytest.mark.e2e
def test_get_server_info(serve: Any) -> None:
    server = serve(rules=Rules(players=5), move_time=0.75)
    info = _server_info(server)
    assert info.server_version == __version__
    assert info.protocol_versions == (1,)
    assert info.rules == Rules(players=5)
    assert info.move_time == 0.75
    assert info.token_required is False


@pytest.mark.e2e
def test_health_and_reflection(serve: Any) -> None:
    server = serve()
    with grpc.insecure_channel(server.address) as ch:
        health = health_pb2_grpc.HealthStub(ch)
        for service in ("", wire.SERVICE_NAME):
            resp = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=scaled(10))
            assert resp.status == health_pb2.HealthCheckResponse.SERVING
        with pytest.raises(grpc.RpcError) as e:
            health.Check(health_pb2.HealthCheckRequest(service="no.Such"), timeout=scaled(10))
        assert e.value.code() == grpc.StatusCode.NOT_FOUND
        refl = reflection_pb2_grpc.ServerReflectionStub(ch)
        req = reflection_pb2.ServerReflectionRequest(list_services="")
        (resp,) = list(refl.ServerReflectionInfo(iter([req]), timeout=scaled(10)))
        names = {s.name for s in resp.list_services_response.service}
        assert {
            "wizard_arena.v1.WizardArena",
            "grpc.health.v1.Health",
            "grpc.reflection.v1alpha.ServerReflection",
        } <= names
        req = reflection_pb2.ServerReflectionRequest(file_containing_symbol=wire.SERVICE_NAME)
        (resp,) = list(refl.ServerReflectionInfo(iter([req]), timeout=scaled(10)))
        assert resp.file_descriptor_response.file_descriptor_proto


# -- shutdown of a real `wizard-arena serve` ---------------------------------------------------


@pytest.mark.e2e
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_serve_shuts_down_cleanly_on_signal(sig: signal.Signals) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "wizard_arena.cli", "serve", "--port", "0"),
            *("--players", "3", "--move-time", "5", "--log-format", "json"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stderr is not None
        lines: list[str] = []
        address = ""
        for line in proc.stderr:
            lines.append(line)
            if "serving on" in line and not line.startswith("{"):
                address = line.split("serving on ", 1)[1].split()[0]
                break
        assert address, "".join(lines)
        # three bots in a game (thinking, so it is still on) and one in the lobby
        players = [RawBot(address, f"sig{i}", think=0.1, games=None).start() for i in range(3)]
        wait_for(lambda: all(b.requests or b.messages(GameInfo) for b in players))
        lobby = RawBot(address, "lobby", games=None).start()
        wait_for(lambda: lobby.welcome is not None)
        proc.send_signal(sig)
        code = proc.wait(30)
        rest = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 0, "".join(lines) + rest
    for b in [*players, lobby]:
        b.join(10)
        assert b.status == grpc.StatusCode.UNAVAILABLE, (b.name, b.status, b.details)
        assert b.details == "server shutting down"
    events = [json.loads(x) for x in (lines + rest.splitlines()) if x.startswith("{")]
    assert {"event": "signal", "signal": sig.name}.items() <= next(
        e for e in events if e["event"] == "signal"
    ).items()
    assert any(e["event"] == "stopped" for e in events)


# -- records --------------------------------------------------------------------------------


def _offline_record(seed: int) -> GameRecord:
    """A whole game refereed with no bot connected (the default policy plays)."""
    rules = Rules(players=4)
    seats = [SeatSpec(f"absent-{i}", None) for i in range(4)]
    return trio.run(lambda: run_table("g-offline", rules, seats, seed=seed))


@pytest.mark.parametrize("level", ["info", "warning"])
def test_decision_lines_follow_the_log_level(level: str) -> None:
    """A decision's info line is written at level info, and not below it
    (``serve --log-level warning``); the game is the same."""
    import structlog

    from wizard_referee.referee.logs import configure_logging

    sink = LogSink()
    configure_logging(level, "json", stream=sink)
    try:
        rules = Rules(players=3, hand_sizes=(1, 2))
        seats = [SeatSpec(f"absent-{i}", None) for i in range(3)]
        record = trio.run(lambda: run_table("g-levels", rules, seats, seed=5))
    finally:
        structlog.reset_defaults()
    moves = [m for r in record.rounds for m in r.moves]
    decisions = [e for e in sink.events() if e["event"] == "decision"]
    assert len(moves) == 3 + 3 + 3 + 6  # the bids and cards of rounds of 1 and 2 cards
    if level == "info":
        assert [(e["round"], e["seat"], e["action"]) for e in decisions] == [
            (r.round, m.seat, m.action) for r in record.rounds for m in r.moves
        ]
    else:
        assert decisions == []


def test_record_round_trip_and_tampering() -> None:
    rec = _offline_record(3)
    assert rec.status == "finished" and verify_record(rec) == []
    text = rec.to_json()
    back = GameRecord.from_json(text)
    assert back == rec and back.to_json() == text
    assert verify_record(back) == []
    # to_dict is written out by hand (for speed): it must stay what asdict gives
    assert rec.to_dict() == dataclasses.asdict(rec)
    rec.faults[1]["timeout"] = 2
    rec.rounds[0].moves[0].fault = "timeout"
    assert rec.to_dict() == dataclasses.asdict(rec)
    log = RecordLog(maxlen=2)
    for r in (back, rec, back):
        log.append(r)
    assert list(log) == [rec, back] and log[0] == rec and log[-1] == back and log[:1] == [rec]
    assert log[0] is not rec  # a copy, decoded when read

    def tampered(change: Any) -> list[str]:
        t = GameRecord.from_json(text)
        change(t)
        return verify_record(t)

    def swap_card(t: GameRecord) -> None:
        mv = next(m for m in t.rounds[4].moves if m.action.startswith("play "))
        mv.action = "play W" if mv.action != "play W" else "play J"

    def bid_more(t: GameRecord) -> None:
        mv = t.rounds[2].moves[0]
        mv.action = f"bid {int(mv.action.split()[1]) + 1}"

    def hands(t: GameRecord) -> None:
        t.rounds[3].hands[0], t.rounds[3].hands[1] = t.rounds[3].hands[1], t.rounds[3].hands[0]

    def totals(t: GameRecord) -> None:
        t.totals[1] += 10

    def result(t: GameRecord) -> None:
        t.results[5][2][0] += 10

    def seat(t: GameRecord) -> None:
        t.rounds[1].moves[0].seat = (t.rounds[1].moves[0].seat + 1) % 4

    for change in (swap_card, bid_more, hands, totals, result, seat):
        assert tampered(change), change.__name__


@on_mock_clock
async def test_serve_keeps_a_bounded_number_of_records() -> None:
    """A long-running server keeps only the latest ``keep_records`` game records."""
    async with memory_arena(rules=Rules(players=6), keep_records=2) as arena:
        await play(arena, *[MemBot(f"k{i}", games=3) for i in range(6)])
    assert arena.games_played == 3 and len(arena.records) == 2

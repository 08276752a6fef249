"""Protocol v1.1: the bot's choice of event stream (``Hello.event_stream``).

A lean bot gets GameStarted, its requests (each with the complete view),
rejections, round results and GameOver: about one message per decision,
and never a card it may not see. A v1 bot, which never sets the field, sees
no change: every message but the Welcome is byte for byte what protocol v1.0
(the buf baseline image, ``proto/v1-baseline.binpb``) describes. The SDK
asks for the lean stream unless the bot follows the play with its hooks, and
its driver plays either way.
"""

from __future__ import annotations

import threading
from collections import Counter
from functools import partial
from typing import Any

import pytest
import trio
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from wizard_arena.bot import Bot, GameInfo
from wizard_arena.client import AsyncBot, RunResult, event_stream_for, run_bot, serve_bot
from wizard_arena.client.driver import Driver
from wizard_arena.client.serve import serve_sessions
from wizard_arena.protocol import wire
from wizard_arena.protocol.messages import (
    PROTOCOL_MINOR_VERSION,
    DecisionRequest,
    EventStream,
    GameEnd,
    Hello,
    RoundStart,
    ServerInfo,
    TableEvent,
    Welcome,
)
from wizard_arena.rules import Card, CardPlayed, RoundResult, RoundScored, Rules, SeatView, Trick
from wizard_bots.random_bot import RandomBot
from wizard_referee.referee.record import verify_record

from .conftest import ROOT
from .memory_bots import MemBot, leave_at, memory_arena, on_mock_clock, play, start
from .memory_client import memory_sessions, run_blocking
from .support import RawBot, check_information, run_bots, scaled

BASELINE = ROOT / "proto" / "v1-baseline.binpb"
LEAN_KINDS = (Welcome, GameInfo, DecisionRequest, GameEnd)


def v1_0_class(name: str) -> Any:
    """The message class ``wizard_arena.v1.NAME`` as protocol v1.0 defined it
    (the image buf checks breaking changes against)."""
    images = descriptor_pb2.FileDescriptorSet.FromString(BASELINE.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for f in images.file:
        pool.Add(f)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"wizard_arena.v1.{name}"))


def lean_kinds_only(msgs: list[Any]) -> bool:
    return all(
        isinstance(m, LEAN_KINDS)
        or (isinstance(m, TableEvent) and isinstance(m.event, RoundScored))
        for m in msgs
    )


# -- the wire ---------------------------------------------------------------------------


def test_a_hello_that_does_not_choose_is_the_v1_0_hello() -> None:
    """``ALL`` is sent as unset: a bot that does not choose sends exactly the
    bytes of a v1.0 Hello, and the lean choice round-trips."""
    old = v1_0_class("BotMessage")
    plain = wire.encode_bot(Hello("b", rule_options=("tricksy",))).SerializeToString()
    v1_0 = {"min_version": 1, "max_version": 1, "bot_name": "b", "rule_options": ["tricksy"]}
    assert plain == old(hello=v1_0).SerializeToString()
    lean = Hello("b", event_stream=EventStream.LEAN)
    assert wire.decode_bot_bytes(wire.encode_bot(lean).SerializeToString()) == lean
    # a value of a later minor version reads as the stream every server sends
    future = wire.pb.BotMessage(hello=wire.pb.Hello(bot_name="b", event_stream=7))  # type: ignore[arg-type]
    assert wire.decode_bot(future).event_stream is EventStream.ALL


def test_welcome_and_server_info_carry_the_minor_version() -> None:
    w = Welcome(1, "s1", "0.1.0", "tok", False, PROTOCOL_MINOR_VERSION, EventStream.LEAN)
    assert wire.decode_server(wire.encode_server(w)) == w
    assert wire.encode_server(w).welcome.event_stream == wire.pb.EVENT_STREAM_LEAN
    everything = Welcome(1, "s1", "0.1.0", minor_version=1)
    assert wire.encode_server(everything).welcome.event_stream == wire.pb.EVENT_STREAM_ALL
    # from a v1.0 server neither field is set: the stream is all, minor version 0
    assert wire.decode_server(wire.pb.ServerMessage(welcome={"version": 1})) == Welcome(1, "", "")
    info = ServerInfo("0.1.0", (1,), Rules(players=3), 1.0, False, (), PROTOCOL_MINOR_VERSION)
    assert wire.decode_server_info(wire.encode_server_info(info)) == info
    assert PROTOCOL_MINOR_VERSION == 2


# -- the referee, in memory ---------------------------------------------------------------


@on_mock_clock
async def test_a_lean_bot_gets_about_one_message_per_decision() -> None:
    """At one table: a lean bot gets no public event (round results only),
    the v1 bots beside it get every event, and the game is the same game."""
    async with memory_arena(rules=Rules(players=3)) as arena:
        lean = MemBot("lean", event_stream=EventStream.LEAN)
        full = [MemBot("v1-a"), MemBot("v1-b")]
        (rec,) = await play(arena, lean, *full)
    assert rec.status == "finished" and verify_record(rec) == [] and rec.faulted_seats == []
    assert lean.welcome is not None and lean.welcome.event_stream is EventStream.LEAN
    assert lean.welcome.minor_version == PROTOCOL_MINOR_VERSION
    assert lean_kinds_only(lean.received)
    rounds = len(rec.rounds)
    scored = [m for m in lean.received if isinstance(m, TableEvent)]
    assert [m.event.result.round for m in scored] == list(range(1, rounds + 1))
    decisions = len(lean.requests)
    per_decision = (len(lean.received) - 1) / decisions  # (the Welcome is per session)
    assert per_decision < 1.1, per_decision
    # the game summary is complete: the last request's view and the results
    assert lean.game_ends[0].totals == tuple(rec.totals)
    # the v1 bots: all of it, as before (each card played, each bid, each trick)
    for bot in full:
        assert bot.welcome is not None and bot.welcome.event_stream is EventStream.ALL
        kinds = Counter(type(m.event).__name__ for m in bot.messages(TableEvent))
        assert kinds["CardPlayed"] == sum(len(rr.hands[0]) for rr in rec.rounds) * 3
        assert kinds["BidMade"] == 3 * rounds and kinds["RoundScored"] == rounds
        assert len(bot.round_starts) == rounds
        assert (len(bot.received) - 1) / len(bot.requests) > 5  # what the lean stream saves


@on_mock_clock
async def test_a_v1_bot_sees_no_change() -> None:
    """A bot that never sets the field gets every message; each parses with
    the v1.0 definitions with no field left over, except the Welcome's two
    new fields (which a v1.0 decoder skips)."""
    async with memory_arena(rules=Rules(players=3, hand_sizes=(1, 4, 7))) as arena:
        bots = [MemBot(f"v1-{i}", rule_options=("round_sizes",)) for i in range(3)]
        (rec,) = await play(arena, *bots)
    assert rec.status == "finished"
    old = v1_0_class("ServerMessage")
    seen = Counter()
    for msg in bots[0].received:
        data = wire.encode_server(msg).SerializeToString()
        parsed = old.FromString(data)
        which = parsed.WhichOneof("message")
        seen[which] += 1
        parsed.DiscardUnknownFields()
        if which == "welcome":
            assert parsed.SerializeToString() != data  # minor_version and event_stream
            assert parsed.welcome.session_id == bots[0].welcome.session_id
        else:
            assert parsed.SerializeToString() == data, which
    assert seen["round_started"] == 3 and seen["round_scored"] == 3
    assert seen["card_played"] == 3 * (1 + 4 + 7) and seen["trick_won"] == 12


@on_mock_clock
async def test_a_resumed_lean_seat_gets_no_round_start() -> None:
    """The game in progress, sent again on a resumed lean stream: GameStarted
    and the open request (its view says what RoundStarted would)."""

    async with memory_arena() as arena, trio.open_nursery() as n:
        leaver = MemBot("leaver", event_stream=EventStream.LEAN, on_request=leave_at(3))
        await start(n, arena, leaver, MemBot("o1"), MemBot("o2"))
        await leaver.done.wait()
        assert leaver.welcome is not None
        back = MemBot(
            "leaver", resume_token=leaver.welcome.resume_token, event_stream=EventStream.LEAN
        )
        await start(n, arena, back)
    assert back.welcome is not None and back.welcome.resumed
    assert back.welcome.event_stream is EventStream.LEAN
    assert isinstance(back.received[1], GameInfo)
    assert back.round_starts == [] and lean_kinds_only(back.received)
    (rec,) = arena.records
    assert rec.status == "finished" and back.game_ends[0].game_id == rec.game_id


@on_mock_clock
async def test_a_resuming_hello_chooses_the_stream_anew() -> None:
    """A lean bot that comes back without choosing gets every event from then on."""

    async with memory_arena() as arena, trio.open_nursery() as n:
        leaver = MemBot("leaver", event_stream=EventStream.LEAN, on_request=leave_at(2))
        await start(n, arena, leaver, MemBot("o1"), MemBot("o2"))
        await leaver.done.wait()
        assert leaver.welcome is not None
        back = MemBot("leaver", resume_token=leaver.welcome.resume_token)
        await start(n, arena, back)
    assert back.welcome is not None and back.welcome.resumed
    assert back.welcome.event_stream is EventStream.ALL
    assert back.round_starts and back.messages(TableEvent)
    assert not lean_kinds_only(back.received)


# -- the SDK ------------------------------------------------------------------------------


class Watcher(RandomBot):
    """Follows the play: asks for every event (it overrides on_trick_end)."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed=seed)
        self.tricks: list[Trick] = []
        self.rounds: list[RoundResult] = []

    def on_trick_end(self, view: SeatView, trick: Trick) -> None:
        self.tricks.append(trick)

    def on_round_end(self, view: SeatView, result: RoundResult) -> None:
        self.rounds.append(result)


class LeanAsync(AsyncBot):
    async def bid(self, view: SeatView) -> int:
        return min(view.legal_bids)

    async def play(self, view: SeatView) -> Card:
        return min(view.legal_cards)


def test_the_sdk_chooses_the_stream_from_the_bot() -> None:
    class Chooses(Watcher):
        event_stream = EventStream.LEAN

    class Asks(RandomBot):
        event_stream = "all"

    class Follows(AsyncBot):
        async def on_round_end(self, view: SeatView, result: RoundResult) -> None:
            pass

    assert event_stream_for(RandomBot()) is EventStream.LEAN
    assert event_stream_for(Bot()) is EventStream.LEAN
    assert event_stream_for(Watcher(1)) is EventStream.ALL
    assert event_stream_for(Chooses(1)) is EventStream.LEAN
    assert event_stream_for(Asks()) is EventStream.ALL
    assert event_stream_for(LeanAsync()) is EventStream.LEAN
    assert event_stream_for(Follows()) is EventStream.ALL


def _check_sdk_results(
    rules: Rules, lean: RunResult, watcher: Watcher, watched: RunResult, aio: RunResult
) -> None:
    for res in (lean, watched, aio):
        assert len(res.games) == 1 and res.mismatches == 0 and res.bot_errors == 0
        assert res.faults == [] and res.overruns == 0
        (summary,) = res.games
        assert [r.round for r in summary.results] == list(range(1, rules.rounds + 1))
    assert lean.welcome is not None and lean.welcome.event_stream is EventStream.LEAN
    assert aio.welcome is not None and aio.welcome.event_stream is EventStream.LEAN
    assert watched.welcome is not None and watched.welcome.event_stream is EventStream.ALL
    assert len(watcher.tricks) == sum(rules.round_sizes)
    assert watcher.rounds == list(watched.games[0].results)
    assert lean.games[0].results == watched.games[0].results


@on_mock_clock
async def test_the_sdk_plays_both_streams_in_memory() -> None:
    """The blocking and the trio runner over in-memory seats: a lean bot, a
    bot that follows the play (all events) and a lean AsyncBot at one table,
    with hidden bids (the one thing the fold needs the seat's own bid for)."""
    rules = Rules(players=3, hidden_bids=True, hand_sizes=(1, 3, 5, 7))
    watcher = Watcher(seed=2)
    out: dict[str, RunResult] = {}
    async with memory_arena(rules=rules) as arena:
        async with trio.open_nursery() as nursery:

            async def blocking(name: str, bot: Bot) -> None:
                out[name] = await run_blocking(bot, arena, name)

            async def aio() -> None:
                driver = Driver(RunResult(), strict=True, games=1)
                connect = memory_sessions(arena, "aio", event_stream=EventStream.LEAN)
                clock = trio.current_time
                out["aio"] = await serve_sessions(connect, LeanAsync(), driver, clock=clock)

            nursery.start_soon(blocking, "lean", RandomBot(seed=1))
            nursery.start_soon(blocking, "watcher", watcher)
            nursery.start_soon(aio)
        (rec,) = arena.records
    assert rec.status == "finished" and rec.faulted_seats == []
    _check_sdk_results(rules, out["lean"], watcher, out["watcher"], out["aio"])


@pytest.mark.e2e
def test_the_sdk_plays_both_streams_over_grpc(serve: Any) -> None:
    """run_bot (lean, and all events for a bot that follows the play) and
    serve_bot (a lean AsyncBot) over real gRPC, strict: no disagreement."""
    rules = Rules(players=3, hand_sizes=(2, 5, 9))
    server = serve(rules=rules, move_time=scaled(5.0))
    watcher = Watcher(seed=2)
    box: dict[str, RunResult] = {}

    def blocking(name: str, bot: Bot) -> None:
        box[name] = run_bot(bot, server.address, name=name, games=1, strict=True)

    async def aio() -> None:
        box["aio"] = await serve_bot(LeanAsync(), server.address, name="aio", games=1, strict=True)

    threads = [
        threading.Thread(target=blocking, args=("lean", RandomBot(seed=1)), daemon=True),
        threading.Thread(target=blocking, args=("watcher", watcher), daemon=True),
        threading.Thread(target=partial(trio.run, aio), daemon=True),
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert set(box) == {"lean", "watcher", "aio"}, box
    _check_sdk_results(rules, box["lean"], watcher, box["watcher"], box["aio"])


# -- no hidden card, over gRPC ---------------------------------------------------------------


@pytest.mark.e2e
@pytest.mark.parametrize(
    "rules",
    [
        Rules(players=3),
        Rules(players=4, blind_first_round=True, tricksy=True, hand_sizes=(1, 6, 10, 15)),
        Rules(players=3, hidden_bids=True, reveal_bids_after_tricks=True, tricksy_suited=True),
    ],
    ids=["base", "blind-tricksy", "hidden-suited"],
)
def test_a_lean_bot_never_sees_a_hidden_card(serve: Any, rules: Rules) -> None:
    """Lean raw clients over gRPC: no RoundStarted and no public event but the
    round results, and no card in any message (the views above all) that the
    seat may not see at that moment, by the record."""
    server = serve(rules=rules, seed=5)
    n = rules.players
    bots = run_bots(
        [
            RawBot(
                server.address,
                f"lean-{i}",
                event_stream=EventStream.LEAN if i else EventStream.ALL,
                rule_options=rules.options,
            )
            for i in range(n)
        ]
    )
    (rec,) = server.wait_records(1)
    assert rec.status == "finished"
    for bot in bots:
        assert check_information(bot, rec) > 0
    for bot in bots[1:]:
        msgs = [r.msg for r in bot.received]
        assert lean_kinds_only(msgs) and not any(isinstance(m, RoundStart) for m in msgs)
    full = [r.msg for r in bots[0].received]
    assert any(isinstance(m, TableEvent) and isinstance(m.event, CardPlayed) for m in full)
    # the check does catch a leak on the lean stream: a card of another seat's
    # hand put into a request's view
    b = bots[1]
    i, item = next(
        (i, r)
        for i, r in enumerate(b.received)
        if isinstance(r.msg, DecisionRequest) and r.msg.view.hand and r.msg.view.round > 1
    )
    seat = b.messages(GameInfo)[0].seat
    rr = rec.rounds[item.msg.view.round - 1]
    seen = {*rr.hands[seat], rr.turned_card, *(c.text for _, c in item.msg.view.plays)}
    secret = next(c for h in rr.hands for c in h if c not in seen)
    fake = type(item.raw)()
    fake.CopyFrom(item.raw)
    fake.decision_request.view.hand[0].CopyFrom(wire.card_to_pb(Card(secret)))
    b.received[i].raw = fake
    with pytest.raises(AssertionError, match="before it was played"):
        check_information(b, rec)

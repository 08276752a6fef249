"""The Python SDK's networking (wizard_arena.client, the ``bot`` command)
end to end against the real referee server on 127.0.0.1 (marked ``e2e``).
The protocol driver is tested without a server in test_client_driver, the
runners' deadlines on trio's virtual clock in test_client_deadlines."""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest
import trio

from wizard_arena.bot import Bot, GameInfo, GameSummary
from wizard_arena.client import (
    AsyncBot,
    AuthenticationError,
    ConnectionLostError,
    RunResult,
    VersionMismatchError,
    connection,
    open_bot_session,
    run_bot,
    serve_bot,
    server_info,
)
from wizard_arena.protocol.messages import (
    ActionMsg,
    ActionRejected,
    DecisionRequest,
    GameEnd,
)
from wizard_arena.rules import (
    Bid,
    Card,
    Phase,
    RoundResult,
    Rules,
    SeatView,
    Trick,
)
from wizard_bots.random_bot import RandomBot

from .bots.ponderer import Ponderer
from .conftest import LogSink
from .support import ServerThread, arena_config, ok, run_sdk_bots, scaled


@pytest.fixture(autouse=True)
def _log_at_warning(logs: LogSink) -> None:
    """The referee's log at level warning, as the conftest's ``serve`` fixture
    sets it: the info line of every decision is not rendered."""


# -- a real referee server in a background thread ---------------------------------------


@pytest.fixture
def server() -> Iterator[ServerThread]:
    with ServerThread(arena_config()) as s:
        yield s


class Recorder(RandomBot):
    """A random bot that records its hooks and checks the views they get."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.calls: list[str] = []
        self.problems: list[str] = []

    def bid(self, view: SeatView) -> int:
        self._check(view)
        return super().bid(view)

    def play(self, view: SeatView) -> Card:
        self._check(view)
        return super().play(view)

    def _check(self, view: SeatView) -> None:
        if not view.is_my_turn or not view.legal_actions or not view.time_left:
            self.problems.append(f"bad decision view {view}")

    def on_game_start(self, info: GameInfo) -> None:
        self.calls.append("start")
        self.info = info

    def on_trick_end(self, view: SeatView, trick: Trick) -> None:
        self.calls.append("trick")
        if view.tricks[-1] != trick or view.trick:
            self.problems.append(f"trick view {view.tricks[-1:]} for {trick}")

    def on_round_end(self, view: SeatView, result: RoundResult) -> None:
        self.calls.append("round")
        if view.results[-1] != result or view.totals != result.totals:
            self.problems.append(f"round view for {result}")

    def on_game_end(self, summary: GameSummary) -> None:
        self.calls.append("end")
        self.summary = summary


# -- end to end ---------------------------------------------------------------------------


@pytest.mark.e2e
def test_full_games_on_one_stream(server: ServerThread) -> None:
    bots = [Recorder(seed=s) for s in range(3)]
    results = ok(run_sdk_bots(bots, server.address, games=2, strict=True))
    records = server.wait_records(2)[:2]
    rounds = Rules(players=3).rounds
    for seat_bot, res in zip(bots, results, strict=True):
        assert len(res.games) == 2
        assert (res.bot_errors, res.rejections, res.mismatches, res.overruns) == (0, 0, 0, 0)
        assert res.faults == []
        assert res.welcome is not None and res.welcome.version == 1
        assert seat_bot.problems == []
        calls = seat_bot.calls
        assert calls.count("start") == 2 and calls.count("end") == 2
        assert calls.count("round") == 2 * rounds
        assert calls.count("trick") == 2 * sum(Rules(players=3).round_sizes)
    for rec in records:
        assert rec.status == "finished"
        assert all(f == {} for f in rec.faults)
    by_game = {rec.game_id: rec for rec in records}
    for res in results:
        for g in res.games:
            rec = by_game[g.game_id]
            assert list(g.totals) == rec.totals and list(g.ranks) == rec.ranks
            assert len(g.results) == rounds and g.results[-1].totals == g.totals


@pytest.mark.e2e
def test_server_info(server: ServerThread) -> None:
    info = server_info(server.address)
    assert 1 in info.protocol_versions
    assert info.rules == Rules(players=3)
    assert info.move_time == server.config.policy.move_time and not info.token_required


class Crashy(RandomBot):
    """Raises on every fifth card."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.plays = 0

    def play(self, view: SeatView) -> Card:
        self.plays += 1
        if self.plays % 5 == 0:
            return self.explode(view)
        return super().play(view)

    def explode(self, view: SeatView) -> Card:
        raise ZeroDivisionError(f"kaboom in round {view.round}")


@pytest.mark.e2e
def test_bot_exception_is_reported_and_the_game_goes_on(
    server: ServerThread, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="wizard_arena.client")
    bots: list[Bot] = [Crashy(seed=1), RandomBot(seed=2), RandomBot(seed=3)]
    t0 = time.monotonic()
    results = ok(run_sdk_bots(bots, server.address))
    took = time.monotonic() - t0
    crashy = next(r for r in results if r.bot_errors)
    assert crashy.bot_errors > 5 and crashy.defaults_sent == crashy.bot_errors
    assert len(crashy.games) == 1 and crashy.faults == []
    # reported with the traceback, naming the bot's own code, once; the repeats counted
    errors = [r for r in caplog.records if r.levelno == logging.ERROR and r.exc_info]
    assert len(errors) == 1
    again = [r.getMessage() for r in caplog.records if "the same error again" in r.getMessage()]
    assert again == [
        f"game {crashy.games[0].game_id}: the same error again (x{crashy.bot_errors - 1}): "
        f"ZeroDivisionError at test_client.py:{Crashy.explode.__code__.co_firstlineno + 1} "
        "in explode (in full above the first time; -v logs each)"
    ]
    text = caplog.text
    assert "ZeroDivisionError: kaboom in round" in text
    assert "Traceback (most recent call last)" in text and "in explode" in text
    # the default went out at once: no timeouts recorded, no waiting for deadlines
    (rec,) = server.wait_records(1)[:1]
    assert rec.status == "finished" and all(f == {} for f in rec.faults)
    assert took < crashy.bot_errors * server.config.policy.move_time


@pytest.mark.e2e
def test_version_mismatch(server: ServerThread, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "PROTOCOL_VERSIONS", (99,))
    with pytest.raises(VersionMismatchError) as err:
        run_bot(RandomBot(), server.address, games=1)
    assert err.value.code == "FAILED_PRECONDITION"
    assert "version" in str(err.value) and "99" in str(err.value)


@pytest.mark.e2e
def test_token_required() -> None:
    with ServerThread(arena_config(tokens=frozenset({"s3cret"}))) as s:
        assert server_info(s.address).token_required
        for token in (None, "wrong"):
            with pytest.raises(AuthenticationError) as err:
                run_bot(RandomBot(), s.address, token=token, games=1, reconnect=True)
            assert err.value.code == "UNAUTHENTICATED"
            assert ("missing" if token is None else "invalid") in str(err.value)

        async def greet() -> str:
            async with open_bot_session(s.address, name="ok", token="s3cret") as session:
                return session.welcome.session_id

        assert trio.run(greet)


@pytest.mark.e2e
def test_unreachable_server() -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    address = f"127.0.0.1:{port}"
    t0 = time.monotonic()
    with pytest.raises(ConnectionLostError):
        run_bot(RandomBot(), address, reconnect=False)
    with pytest.raises(ConnectionLostError):
        run_bot(RandomBot(), address, reconnect=True, reconnect_timeout=0.6)
    with pytest.raises(ConnectionLostError):
        server_info(address, timeout=1)
    assert time.monotonic() - t0 < 8


@pytest.mark.e2e
def test_reconnects_after_the_server_restarts() -> None:
    first = ServerThread(arena_config()).__enter__()
    port = first.arena.port if first.arena else 0
    address = first.address
    box: list[RunResult | BaseException] = []

    def go() -> None:
        try:
            box.append(run_bot(RandomBot(seed=9), address, name="phoenix", games=1))
        except BaseException as e:
            box.append(e)

    t = threading.Thread(target=go, daemon=True)
    t.start()
    deadline = time.monotonic() + 10
    while not (first.arena and first.arena.sessions) and time.monotonic() < deadline:
        time.sleep(0.01)
    first.stop()  # the bot's stream ends with UNAVAILABLE
    time.sleep(0.3)
    with ServerThread(arena_config(port=port)) as second:
        ok(run_sdk_bots([RandomBot(seed=1), RandomBot(seed=2)], address, games=1))
        t.join(30)
        (res,) = ok(box)
        assert len(res.games) == 1 and res.reconnects == 1
        assert second.wait_records(1)[:1][0].status == "finished"


class Interrupter(RandomBot):
    def play(self, view: SeatView) -> Card:
        if view.round == 3:
            raise KeyboardInterrupt
        return super().play(view)


@pytest.mark.e2e
def test_keyboard_interrupt_closes_the_stream(server: ServerThread) -> None:
    bots: list[Bot] = [Interrupter(seed=1), RandomBot(seed=2), RandomBot(seed=3)]
    results = run_sdk_bots(bots, server.address)
    assert isinstance(results[0], KeyboardInterrupt)
    ok(results[1:])
    (rec,) = server.wait_records(1)[:1]
    # the referee saw the stream close at once: a disconnect, not a timeout
    seat = rec.names.index("Interrupter-0")
    assert rec.status == "finished" and "disconnect" in rec.faults[seat]
    assert "timeout" not in rec.faults[seat]


# -- the trio form ------------------------------------------------------------------------


class Timed(AsyncBot):
    """An async bot that notes the time trio gives each decision, then
    answers at once, or (``decides=False``) never answers."""

    def __init__(self, decides: bool) -> None:
        self.decides = decides
        self.left: list[float] = []

    async def bid(self, view: SeatView) -> int:
        await self._think()
        return view.legal_bids[0]

    async def play(self, view: SeatView) -> Card:
        await self._think()
        return view.legal_cards[0]

    async def choose_trump(self, view: SeatView) -> Any:
        await self._think()
        return await super().choose_trump(view)

    async def _think(self) -> None:
        self.left.append(trio.current_effective_deadline() - trio.current_time())
        if not self.decides:
            await trio.sleep_forever()


@pytest.mark.e2e
def test_async_deadlines_over_grpc() -> None:
    """Over gRPC an AsyncBot's deadline is on the session's clock
    (``time.monotonic``) converted to trio's: it is ``margin`` before the
    request's ``time_left`` runs out; with ``margin`` the whole move time it
    is past when the request arrives, so the decision is cancelled at once
    and the default goes out. Nothing waits for a deadline (the runner's
    deadline logic is tested on the virtual clock in test_client_deadlines)."""
    move_time, margin = 5.0, 0.1
    rules = Rules(players=3, hand_sizes=(1, 2, 3))
    with ServerThread(arena_config(move_time=move_time, rules=rules)) as s:
        prompt, undecided = Timed(decides=True), Timed(decides=False)
        results: dict[str, RunResult] = {}

        async def main() -> None:
            async def one(name: str, bot: AsyncBot, margin: float) -> None:
                results[name] = await serve_bot(bot, s.address, name=name, games=1, margin=margin)

            # (a guard: a deadline misplaced far ahead would leave `undecided` waiting)
            with trio.fail_after(scaled(60)):
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(one, "prompt", prompt, margin)
                    nursery.start_soon(one, "undecided", undecided, move_time)
                    welcome = await nursery.start(
                        partial(serve_bot, RandomBot(seed=2), s.address, games=1)
                    )
                    assert welcome.version == 1

        trio.run(main)
        # the deadline is `margin` before time_left runs out from the arrival (less the
        # moment since), not off by the difference between the clocks
        assert all(0 < left <= move_time - margin + 1e-3 for left in prompt.left), prompt.left
        assert results["prompt"].overruns == 0
        res = results["undecided"]
        assert len(res.games) == 1 and res.decisions >= 6
        # each decision cancelled at its first checkpoint (trio: no time left at all)
        assert undecided.left == [-math.inf] * res.decisions
        assert res.overruns == res.defaults_sent == res.decisions
        (rec,) = s.wait_records(1)[:1]
        assert rec.faults == [{}, {}, {}]  # each default well within the move time


@pytest.mark.e2e
def test_async_cancel_closes_the_stream(server: ServerThread) -> None:
    async def main() -> None:
        with trio.move_on_after(0.5):
            async with trio.open_nursery() as nursery:
                for seed in range(3):
                    nursery.start_soon(
                        partial(serve_bot, Ponderer(), server.address, name=f"p{seed}")
                    )
        # cancelled mid-game: every stream is closed, so the referee finishes alone

    trio.run(main)
    (rec,) = server.wait_records(1)[:1]
    assert all("disconnect" in f for f in rec.faults)


@pytest.mark.e2e
def test_raw_session_and_rejections(server: ServerThread) -> None:
    async def main() -> list[Any]:
        seen: list[Any] = []
        async with trio.open_nursery() as nursery:
            for seed in (1, 2):
                nursery.start_soon(
                    partial(serve_bot, RandomBot(seed=seed), server.address, games=1)
                )
            async with open_bot_session(server.address, name="raw") as session:
                assert session.welcome.version == 1
                request: DecisionRequest | None = None
                sent_bad = False
                async for msg in session:
                    seen.append(msg)
                    if isinstance(msg, DecisionRequest):
                        request = msg
                        # an illegal bid at the first bid request (the deal is random: a
                        # turned Wizard makes the first request a trump choice)
                        if not sent_bad and msg.view.phase is Phase.BID:
                            sent_bad = True
                            await session.send(ActionMsg(msg.request_id, Bid(99)))
                            continue
                    elif isinstance(msg, ActionRejected):
                        assert request is not None and msg.time_left > 0
                    elif isinstance(msg, GameEnd):
                        break
                    else:
                        continue
                    assert request is not None
                    await session.send_action(request.request_id, request.view.legal_actions[0])
                session.close_sending()
        return seen

    seen = trio.run(main)
    rejections = [m for m in seen if isinstance(m, ActionRejected)]
    assert rejections and rejections[0].code == "bid_out_of_range"
    assert isinstance(seen[-1], GameEnd)
    (rec,) = server.wait_records(1)[:1]
    assert rec.faults[rec.names.index("raw")] == {"illegal": 1}

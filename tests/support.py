"""Test support for the referee server: a server thread and its settings,
the games it played (records, a record replayed through the rules core),
SDK bots each in a thread, random bots in a process of their own, the
information-leak checker, and waiting for a condition.

The scripted raw gRPC bot is :class:`wizard_arena.testing.RawBot` (re-exported
here with :func:`~wizard_arena.testing.run_bots`).

:class:`ServerThread` runs :func:`wizard_referee.referee.arena.serve_arena` under
``trio.run`` in a background thread, so tests stay plain synchronous code.
(trio's MockClock must not be used here: the real gRPC thread runs beside
it, so tests use real, short deadlines.) Tests get their servers from the
``serve`` fixture (conftest.py): seeded, stopped after the test.

:func:`check_information` fails a test if a raw bot was shown a card it may
not see (any variant), or if what it was shown differs from the record.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import grpc
import trio

from wizard_arena.bot import Bot, GameInfo
from wizard_arena.client import RunResult, run_bot
from wizard_arena.protocol import wire
from wizard_arena.protocol.messages import (
    ActionMsg,
    DecisionRequest,
    GameEnd,
    Hello,
    RoundStart,
    TableEvent,
)
from wizard_arena.rules import (
    Card,
    CardPlayed,
    Game,
    Phase,
    Rules,
    SeatView,
    TrickWon,
    bids_hidden,
)
from wizard_arena.testing import RawBot, Received, run_bots
from wizard_referee.referee.arena import Arena, ArenaConfig, serve_arena
from wizard_referee.referee.record import GameRecord, MoveRecord, parse_action

__all__ = [
    "RawBot",
    "Received",
    "ServerThread",
    "Snap",
    "arena_config",
    "cards_in",
    "check_information",
    "game_messages",
    "game_of",
    "moves_of",
    "ok",
    "played_by_round",
    "record_of",
    "replay",
    "run_aio_bots",
    "run_bots",
    "run_sdk_bots",
    "scaled",
    "seat_of",
    "spawn_aio_bots",
    "time_factor",
    "wait_for",
]


# -- time on a busy machine ------------------------------------------------------------------

#: The most a deadline is stretched (a runaway load average must not make a
#: hung test wait for hours).
MAX_TIME_FACTOR = 20.0


def time_factor() -> float:
    """How many times longer than on an idle machine a wall-clock deadline of
    a test is: the machine's share of CPU each runnable task gets, from the
    load average over the cores (1-minute and instantaneous runnable tasks,
    the larger), at least 1, at most :data:`MAX_TIME_FACTOR`; at least
    ``WIZARD_ARENA_TEST_TIME_FACTOR`` where that is set (a load that has only
    just begun is not yet in the average). Measured when called: a deadline
    is scaled as it is set."""
    import os

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    with contextlib.suppress(OSError, ValueError, IndexError):
        # "0.52 0.58 0.59 3/412 1234": the tasks runnable now (this one among them)
        running = Path("/proc/loadavg").read_text().split()[3].split("/")[0]
        load = max(load, float(running) - 1)
    factor = max(1.0, load / max(1, cores or 1))
    with contextlib.suppress(ValueError):
        factor = max(factor, float(os.environ.get("WIZARD_ARENA_TEST_TIME_FACTOR") or 1))
    return min(factor, MAX_TIME_FACTOR)


def scaled(seconds: float) -> float:
    """``seconds`` of an idle machine as a deadline on this one (:func:`time_factor`).
    Every wall-clock deadline of a test that is not itself about time is set
    through it: a test must not race the machine's load. Whole milliseconds
    (as a move time travels on the wire)."""
    return round(seconds * time_factor(), 3)


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
        records: list[GameRecord] = self.call(lambda: list(arena.records))
        return records

    def wait_records(self, n: int, timeout: float = 60.0) -> list[GameRecord]:
        """Wait until ``n`` games have ended; return the records."""
        end = time.monotonic() + scaled(timeout)
        while True:
            recs = self.records()
            if len(recs) >= n:
                return recs
            if time.monotonic() > end:
                raise TimeoutError(f"{len(recs)} of {n} games ended within {timeout} s")
            time.sleep(0.02)


def arena_config(**kw: Any) -> ArenaConfig:
    """A referee's settings for a test's own :class:`ServerThread`: tables of
    3, 2 s a move (:func:`scaled`), on 127.0.0.1 port 0, seeded like the ``serve`` fixture's
    servers (from the test's id); ``kw`` overrides any of them."""
    kw.setdefault("rules", Rules(players=3))
    kw.setdefault("move_time", scaled(2.0))
    kw.setdefault("shutdown_grace", 0.2)
    from .conftest import current_test_seed  # (not in `python -m tests.support`'s bots)

    seed = current_test_seed()
    kw.setdefault("seed", seed)
    kw.setdefault("bot_seed_secret", f"tests:{seed}")
    return ArenaConfig.build(host="127.0.0.1", port=kw.pop("port", 0), **kw)


def wait_for(cond: Callable[[], object], timeout: float = 30.0) -> None:
    """Poll ``cond`` until it is true; TimeoutError after ``timeout`` seconds
    (:func:`scaled`)."""
    end = time.monotonic() + scaled(timeout)
    while not cond():
        if time.monotonic() > end:
            raise TimeoutError("condition not met")
        time.sleep(0.01)


# -- the games a server played ----------------------------------------------------------------


def game_of(bot: RawBot) -> str:
    """The id of the first game ``bot`` was seated at."""
    games = bot.messages(GameInfo)
    assert games, f"{bot.name} was never seated: {bot.received[:3]}"
    return str(games[0].game_id)


def record_of(server: ServerThread, game_id: str) -> GameRecord:
    for r in server.records():
        if r.game_id == game_id:
            return r
    raise AssertionError(f"no record of {game_id}")


def seat_of(record: GameRecord, name: str) -> int:
    return record.names.index(name)


def moves_of(record: GameRecord, seat: int) -> list[MoveRecord]:
    return [mv for rnd in record.rounds for mv in rnd.moves if mv.seat == seat]


@dataclass(frozen=True)
class Snap:
    """The game just before one recorded move."""

    legal: tuple[Any, ...]
    trick: int
    round_index: int
    mv: Any


def replay(record: GameRecord) -> list[Snap]:
    """Replay ``record`` through the rules core, noting the state before each move."""
    game = Game(Rules.from_dict(record.rules), first_dealer=record.first_dealer)
    out = []
    for i, rr in enumerate(record.rounds):
        game.deal(
            [[Card(c) for c in h] for h in rr.hands],
            Card(rr.turned_card) if rr.turned_card else None,
        )
        for mv in rr.moves:
            out.append(Snap(tuple(game.legal_actions()), len(game.trick), i, mv))
            game.apply(mv.seat, parse_action(mv.action))
    return out


# -- SDK bots, each in a thread ------------------------------------------------------------------


def run_sdk_bots(
    bots: Sequence[Bot], address: str, games: int = 1, **kw: Any
) -> list[RunResult | BaseException]:
    """:func:`~wizard_arena.client.run_bot` for each bot in its own thread;
    each result or exception."""
    out: list[RunResult | BaseException] = [RuntimeError("not finished")] * len(bots)

    def go(i: int) -> None:
        try:
            out[i] = run_bot(
                bots[i], address, name=f"{type(bots[i]).__name__}-{i}", games=games, **kw
            )
        except BaseException as e:
            out[i] = e

    threads = [threading.Thread(target=go, args=(i,), daemon=True) for i in range(len(bots))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
        assert not t.is_alive(), "a bot did not finish"
    return out


def ok(results: Sequence[RunResult | BaseException]) -> list[RunResult]:
    """The results, raising the first exception among them."""
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return [r for r in results if isinstance(r, RunResult)]


# -- many random bots in a process of their own ---------------------------------------------


async def _aio_bot(address: str, name: str) -> dict[str, Any]:
    """One random bot on grpc.aio: plays until its first GameOver, then leaves."""
    rng = random.Random(name)
    out: asyncio.Queue[Any] = asyncio.Queue()
    # it plays any hand size, so it can sit at tables of short rounds
    hello = Hello(bot_name=name, sdk_name="tests-aio-bot", rule_options=("round_sizes",))
    out.put_nowait(wire.encode_bot(hello))
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
        timeout=scaled(timeout),
        cwd=Path(__file__).resolve().parent.parent,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"bots process failed ({proc.returncode}):\n{proc.stderr}")
    result: list[dict[str, Any]] = json.loads(proc.stdout)
    return result


# -- what a seat may see: the information-leak checker -------------------------------------

_CARD_TEXT = re.compile(r"\b(?:(?:1[0-3]|[1-9])[SHDC]|W[SHDC])\b")


def cards_in(msg: Any, path: str = "") -> Iterator[tuple[str, Card]]:
    """Every Card anywhere in a protobuf message, and every card named in its text."""
    for fd, value in msg.ListFields():
        where = f"{path}.{fd.name}"
        values = value if fd.is_repeated else [value]
        for v in values:
            if fd.message_type is not None:
                if fd.message_type.name == "Card":
                    yield where, wire.card_from_pb(v)
                else:
                    yield from cards_in(v, where)
            elif isinstance(v, str):
                for token in _CARD_TEXT.findall(v):
                    yield where, Card(token)


def played_by_round(record: GameRecord) -> list[list[tuple[int, Card]]]:
    """The cards played in each round, in order, as the rules core replays the
    record (the referee's own plays of a blind round included)."""
    game = Game(
        Rules.from_dict(record.rules), first_dealer=record.first_dealer, draw=record.draw_cards()
    )
    out = []
    for rr in record.rounds:
        start = len(game.events)
        game.deal(
            [[Card(c) for c in h] for h in rr.hands],
            Card(rr.turned_card) if rr.turned_card else None,
        )
        for mv in rr.moves:
            game.apply(mv.seat, parse_action(mv.action))
        out.append([(e.seat, e.card) for e in game.events[start:] if isinstance(e, CardPlayed)])
    return out


def game_messages(bot: RawBot, game_id: str) -> list[Received]:
    """The received items (raw and decoded) of one game, GameStarted to GameOver."""
    out: list[Received] = []
    inside = False
    for r in bot.received:
        if isinstance(r.msg, GameInfo):
            inside = r.msg.game_id == game_id
        if inside:
            out.append(r)
            if isinstance(r.msg, GameEnd):
                break
    return out


def check_information(bot: RawBot, record: GameRecord) -> int:
    """Fail if ``bot`` saw a card it may not see in the game of ``record``;
    return the cards checked (at least one).

    Every card in every message (any field, any text) must be in the seat's
    own deal, be the turned card, or have been played this round (on the
    lean stream, where no CardPlayed comes, as the record says at the
    moment of each request), or, in a
    blind first round, be another seat's card (but not its own until it is
    played). Hands, views, plays and tricks must match what the rules did
    with the record. With hidden bids no view shows another seat's bid
    before they are revealed; with tricksy_suited a suited Wizard played
    makes its suit trump at once."""
    watch = _SeatWatch(bot.name, record)
    for item in game_messages(bot, record.game_id):
        watch.see(item)
    assert watch.checked > 0, f"{bot.name} saw no card of game {record.game_id}"
    return watch.checked


class _SeatWatch:
    """What one seat has been allowed to see so far, message by message."""

    def __init__(self, name: str, record: GameRecord) -> None:
        self.name = name
        self.record = record
        self.rules = Rules.from_dict(record.rules)
        self.plays = played_by_round(record)
        self.seat: int | None = None
        self.own: Counter[Card] = Counter()
        self.visible: set[Card] = set()
        self.others: tuple[tuple[Card, ...], ...] = ()
        self.turned: Card | None = None
        self.played: list[tuple[int, Card]] = []
        self.expected: list[tuple[int, Card]] = []
        self.blind = False
        self.round = 0
        self.checked = 0
        self.lean = False
        """Whether the seat gets the lean stream (no RoundStart: the round is
        taken from the record at its first request)."""
        self.dealt: list[tuple[Card, ...]] = []
        self.play_requests: list[str] = []
        """The seat's PLAY request ids this round, in order (the lean stream)."""

    def see(self, item: Received) -> None:
        msg = item.msg
        assert msg is not None, f"{self.name}: undecodable message {item.raw} ({item.error})"
        if isinstance(msg, GameInfo):
            self.seat = msg.seat
            return
        assert self.seat is not None
        if isinstance(msg, RoundStart):
            self._round_start(msg, self.seat)
        elif isinstance(msg, DecisionRequest) and msg.view.round != self.round:
            # the lean stream (Hello.event_stream): no RoundStart, no public events
            self.lean = True
            self._new_round(msg.view.round, self.seat)
        elif isinstance(msg, TableEvent) and isinstance(msg.event, CardPlayed):
            self.played.append((msg.event.seat, msg.event.card))
            assert self.played == self.expected[: len(self.played)], (
                "plays differ from the rules' replay of the record"
            )
        if self.lean and isinstance(msg, DecisionRequest):
            self.played = self._played_by_now(msg)
        allowed = set(self.own) | self.visible | {c for _, c in self.played}
        if self.turned is not None:
            allowed.add(self.turned)
        for where, card in cards_in(item.raw):
            assert card in allowed, (
                f"{self.name} (seat {self.seat}) saw {card} in {where} of {type(msg).__name__} "
                f"in round {self.round} before it was played"
            )
            self.checked += 1
        if isinstance(msg, DecisionRequest):
            self._view(msg.view, self.seat)
        elif isinstance(msg, TableEvent) and isinstance(msg.event, TrickWon):
            cards = msg.event.trick.cards
            assert list(cards) == [c for _, c in self.played[-len(cards) :]]

    def _new_round(self, round_no: int, seat: int) -> None:
        self.round = round_no
        rr = self.record.rounds[round_no - 1]
        self.dealt = [tuple(Card(c) for c in h) for h in rr.hands]
        self.blind = self.rules.blind_first_round and round_no == 1
        if self.blind:
            self.others = tuple(() if s == seat else h for s, h in enumerate(self.dealt))
            self.own = Counter()
            self.visible = {c for h in self.others for c in h}
        else:
            self.own = Counter(self.dealt[seat])
            self.visible = set()
        self.turned = Card(rr.turned_card) if rr.turned_card else None
        self.played = []
        self.expected = self.plays[round_no - 1]
        self.play_requests = []

    def _round_start(self, msg: RoundStart, seat: int) -> None:
        self._new_round(msg.round, seat)
        if self.blind:
            assert msg.hand == (), f"round 1 is blind: {self.name} was shown its own card"
            assert msg.others_hands == self.others
        else:
            assert msg.hand == self.dealt[seat], f"round {msg.round}: hand differs from the deal"
            assert msg.others_hands == ()
        assert msg.turned_card == self.turned

    def _played_by_now(self, msg: DecisionRequest) -> list[tuple[int, Card]]:
        """On the lean stream: the cards played this round before the request,
        from the record (not from the request): before the seat's own next
        play, or (a Wizard's player naming trump) up to its last play."""
        mine = [i for i, (s, _) in enumerate(self.expected) if s == self.seat]
        if msg.view.phase is Phase.PLAY:
            if msg.request_id not in self.play_requests:
                self.play_requests.append(msg.request_id)
            upto = mine[self.play_requests.index(msg.request_id)]
        elif self.play_requests:
            upto = mine[len(self.play_requests) - 1] + 1
        else:
            upto = 0
        return self.expected[:upto]

    def _view(self, v: SeatView, seat: int) -> None:
        if self.blind:
            assert v.hand == () and v.others_hands == self.others
            assert v.phase is not Phase.PLAY, "nobody chooses a card in the blind round"
        else:
            mine = self.own - Counter(c for s, c in self.played if s == seat)
            assert Counter(v.hand) == mine, "the view's hand is not the seat's own hand"
            assert v.others_hands == ()
        assert [c for _, c in v.plays] == [c for _, c in self.played]
        assert set(v.legal_cards) <= set(v.hand)
        assert v.turned_card == self.turned
        if bids_hidden(self.rules, v.phase):
            hidden = [b for s, b in enumerate(v.bids) if s != seat]
            assert hidden == [None] * len(hidden), f"bids shown before they are revealed: {v}"
        if self.rules.tricksy_suited and v.phase is Phase.PLAY:
            printed = [c.wizard_suit for _, c in v.plays if c.wizard_suit is not None]
            if printed:  # the last suited Wizard played made its suit trump at once
                assert v.trump is printed[-1], f"trump {v.trump} after {v.plays}"


def interruptible_cli(*args: str) -> list[str]:
    """The command line of ``wizard-arena ARGS`` with Ctrl-C (SIGINT) handled
    as in a terminal. A test runner started as a background job of a
    non-interactive shell inherits SIGINT ignored (POSIX), and Python then
    installs no KeyboardInterrupt handler in the command: its Ctrl-C tests
    would hang. The command restores the handler itself, so no preexec_fn
    runs in a process whose gRPC threads are running."""
    code = (
        "import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "sys.argv[0] = 'wizard-arena'; runpy.run_module('wizard_arena.cli', run_name='__main__')"
    )
    return [sys.executable, "-c", code, *args]


def finished_games(db: str | Path) -> int:
    """The finished games in the tournament store ``db`` (a path or a URL),
    read as another process writes it; 0 while there is no store yet (an
    SQLite file is never created by looking: connecting would create it)."""
    from wizard_referee.storage import StorageError, is_url, open_database

    query = "SELECT COUNT(*) FROM games WHERE status = 'finished'"
    if not is_url(db) and not Path(db).exists():
        return 0
    with contextlib.suppress(StorageError):
        store = open_database(db, read_only=True)
        try:
            return int(store.execute(query).fetchone()[0])
        finally:
            store.close()
    return 0


def wait_for_finished_games(
    db: str | Path,
    at_least: int,
    timeout: float,
    proc: subprocess.Popen[Any] | None = None,
) -> int:
    """Poll the tournament store ``db`` (written by another process) until it
    holds ``at_least`` finished games, ``timeout`` seconds pass or ``proc``
    exits (``timeout`` :func:`scaled`); the number of finished games last seen."""
    finished, deadline = 0, time.monotonic() + scaled(timeout)
    while finished < at_least and time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            break
        time.sleep(0.1)
        finished = finished_games(db)
    return finished


def first_install_extra() -> str:
    """The extra the README's first command installs (``.[server]``)."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    found = re.search(r"```sh\n[^\n]*pip install -e '\.\[(\w+)\]'", readme)
    assert found is not None, "the README's first command installs the project with an extra"
    return found.group(1)


def load_bench(name: str) -> ModuleType:
    """``bench/NAME.py`` as a module, registered in ``sys.modules`` (its
    dataclasses look their module up there)."""
    import importlib.util

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location(name, root / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


if __name__ == "__main__":
    # python -m tests.support ADDRESS COUNT [PREFIX]: random bots, one game each, JSON out
    _address, _count = sys.argv[1], int(sys.argv[2])
    _prefix = sys.argv[3] if len(sys.argv) > 3 else "aio"
    print(json.dumps(asyncio.run(run_aio_bots(_address, _count, _prefix))))

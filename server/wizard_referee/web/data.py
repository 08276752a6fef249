"""What the pages show, as plain JSON-able data: read from a tournament's
results store (:class:`StoreData`; a comparison's is one too) or from the
finished games a running referee keeps in memory (:class:`MemoryData`). The
games list and the replays of a store are read as every store's are
(:mod:`.games`); what is the tournament's own is its withholding rule
(:meth:`StoreData.showing`), the leaderboard and the entrants' pages.

Every method here is blocking and may be slow (a query over the store, the
ratings with their bootstrap intervals, a record re-read through the rules
core): the application runs them in a worker thread
(:func:`trio.to_thread.run_sync`), never on the referee's trio loop, and
each result is cached until the store (or the referee's count of finished
games) changes. A missing or unreadable store is :class:`Unavailable`
(HTTP 503), an unknown game or entrant :class:`NotFound` (404).
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Hashable, Iterable
from pathlib import Path
from typing import Any

import trio

from wizard_referee.analysis.grade import THRESHOLDS, Graded
from wizard_referee.analysis.run import EvaluatorError, EvaluatorSpec, grade_many, resolve
from wizard_referee.analysis.summary import bot_summaries
from wizard_referee.referee.arena import Arena
from wizard_referee.referee.record import GameRecord
from wizard_referee.stats import percentile
from wizard_referee.storage import DatabaseError, GameRow, beside_store, shown
from wizard_referee.tournament.leaderboard import leaderboard_of
from wizard_referee.tournament.store import GameSpec, ResultsStore, SeatResult, StoreError
from wizard_referee.web.games import NotFound, Showing, Withheld, game_lines, replay
from wizard_referee.web.replay import record_summary, replay_json

__all__ = [
    "MAX_ID_CHARS",
    "Cache",
    "MemoryData",
    "NotFound",
    "StoreData",
    "Unavailable",
    "Withheld",
    "withheld_why",
]

#: Points on the ratings-over-games plot (a fit of the games up to each).
HISTORY_POINTS = 24
#: The longest game id or entrant name asked for: longer ones are refused
#: before any lookup (a game id is a few characters, a bot's name at most 64).
MAX_ID_CHARS = 512
#: Seconds a store found readable is not checked again for a page's HTML.
CHECK_EVERY = 1.0
#: The evaluator of the pages' analysis (docs/analysis.md): the learned
#: one, a tenth of a second of one core for a whole game.
WEB_EVALUATOR = "learned"
#: An entrant's analysis grades its latest games, at most this many.
ANALYSIS_GAMES = 100
#: Seats of games whose grades the pages keep (about 23 KiB each for a
#: 15-round game): a finished game's record never changes, so a seat's grades
#: hold whatever finishes after it and are not computed again while kept.
GRADED_SEATS = 1024


def withheld_why(game_id: str, waiting: list[str]) -> str:
    """Why ``game_id`` is not shown yet (a 403's message, a list's ``withheld``)."""
    return (
        f"game {game_id!r} is shown once every game of its deal has ended, "
        f"as its hands are theirs: {len(waiting)} still to play ({', '.join(waiting)})"
    )


class Unavailable(RuntimeError):
    """The store cannot be read (HTTP 503): missing, not a results database, corrupt."""


class Cache:
    """Results by key, each kept while its fingerprint holds (the store
    unchanged); one computation per key at a time; ``size`` keys at most.

    Nothing is kept for a request that fails (an unknown game or entrant
    raises and is not cached), and a key's lock lives only while a request
    for it is being answered: a stranger's requests for things that do not
    exist leave nothing behind."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._busy: dict[Hashable, tuple[threading.Lock, list[int]]] = {}
        """The keys being computed now: their lock and how many requests hold it."""
        self._entries: OrderedDict[Hashable, tuple[Hashable, Any]] = OrderedDict()
        self.computed = 0
        """How many values were computed (not served from the cache)."""

    def sizes(self) -> tuple[int, int]:
        """Keys cached and keys in flight (both bounded: tests/test_web_api.py)."""
        with self._lock:
            return len(self._entries), len(self._busy)

    def get(self, key: Hashable, fingerprint: Hashable, compute: Callable[[], Any]) -> Any:
        with self._lock:
            busy = self._busy.get(key)
            if busy is None:
                busy = self._busy[key] = (threading.Lock(), [0])
            busy[1][0] += 1
        try:
            with busy[0]:
                with self._lock:
                    hit = self._entries.get(key)
                    if hit is not None and hit[0] == fingerprint:
                        self._entries.move_to_end(key)
                        return hit[1]
                value = compute()
                with self._lock:
                    self.computed += 1
                    self._entries[key] = (fingerprint, value)
                    self._entries.move_to_end(key)
                    while len(self._entries) > self.size:
                        self._entries.popitem(last=False)
                return value
        finally:
            with self._lock:
                busy[1][0] -= 1
                if not busy[1][0]:
                    del self._busy[key]


def _number(x: float | None) -> float | None:
    """JSON has no NaN: an unrated entrant's rating is null."""
    return None if x is None or math.isnan(x) else round(float(x), 2)


def latency(records: list[GameRecord], name: str) -> dict[str, Any]:
    """The decisions ``name`` made itself in ``records`` (not those the
    referee made for it after a fault): count and milliseconds."""
    ms = [
        m.ms
        for r in records
        for rr in r.rounds
        for m in rr.moves
        if r.names[m.seat] == name and m.fault is None
    ]
    faulted = sum(
        1
        for r in records
        for rr in r.rounds
        for m in rr.moves
        if r.names[m.seat] == name and m.fault
    )
    return {
        "decisions": len(ms),
        "referee_played": faulted,
        "mean_ms": _number(sum(ms) / len(ms)) if ms else None,
        "p50_ms": _number(percentile(ms, 0.5)) if ms else None,
        "p95_ms": _number(percentile(ms, 0.95)) if ms else None,
        "max_ms": _number(max(ms)) if ms else None,
    }


#: A tournament game's place in its plan: its line's field -> its column.
_PLACE = {"seq": "seq", "table": "table_idx", "deal_set": "deal_set", "rotation": "rotation"}


class StoreData:
    """A tournament's results store (an SQLite file's path or a
    ``postgresql://`` URL), opened read-only for each question (a tournament
    may be writing it meanwhile: SQLite's WAL lets it, as PostgreSQL does)."""

    def __init__(self, database: str | Path, *, bootstrap: int = 1000, live: bool = False) -> None:
        self.database = str(database)
        self.where = shown(database)
        """The store as it may be printed (a URL without its password)."""
        self.name = beside_store(database, "").name
        """The file's or the database's name alone, for a page's message."""
        self.bootstrap = bootstrap
        self.live = live
        """A tournament is running in this process (``tournament --web``)."""
        self.cache = Cache()
        self.graded = Cache(GRADED_SEATS)
        """The grades of a seat of a finished game, by game id and seat: the
        pages' answers are recomputed when the store changes, its finished
        games are not graded again."""
        self._checked = -math.inf

    def _grades(self, record: GameRecord, seats: Iterable[int]) -> list[Graded]:
        """The grades of ``seats``' decisions in a finished game, by
        :data:`WEB_EVALUATOR` (an evaluator of its own for each seat: the
        same grades whichever seats are graded), each seat graded once
        while kept."""
        out: list[Graded] = []
        for seat in seats:

            def grade(seat: int = seat) -> tuple[Graded, ...]:
                done = grade_many([(record, (seat,))], _evaluator())
                return tuple(g for _, gs in done for g in gs)

            out.extend(self.graded.get((record.game_id, seat), "final", grade))
        return out

    def check(self) -> None:
        """Unavailable unless the store can be read (checked at most once
        every :data:`CHECK_EVERY` seconds while it can: a page's HTML does
        not open the store each time)."""
        if time.monotonic() - self._checked < CHECK_EVERY:
            return
        self._read(lambda store: store.summary())
        self._checked = time.monotonic()

    def _read(self, fn: Callable[[ResultsStore], Any]) -> Any:
        try:
            with ResultsStore(self.database, read_only=True) as store:
                return fn(store)
        except DatabaseError as e:
            raise Unavailable(f"{self.where}: cannot read the results ({e.reason})") from None
        except StoreError as e:
            raise Unavailable(str(e)) from None

    def _cached(self, key: Hashable, fn: Callable[[ResultsStore], Any]) -> Any:
        def read(store: ResultsStore) -> Any:
            return self.cache.get(key, store.fingerprint(), lambda: fn(store))

        return self._read(read)

    # -- the pages' data ------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        def read(store: ResultsStore) -> dict[str, Any]:
            summary = store.summary()
            games = summary["games"]
            return {
                "mode": "tournament" if self.live else "store",
                "name": summary["name"],
                "created_at": summary["created_at"],
                "games": games,
                "total": sum(games.values()),
                "in_progress": bool(games.get("pending")),
            }

        return dict(self._read(read))

    def leaderboard(self) -> dict[str, Any]:
        return dict(self._cached("leaderboard", self._leaderboard))

    def _leaderboard(self, store: ResultsStore) -> dict[str, Any]:
        config = store.tournament_config() or {}
        board = leaderboard_of(
            self._finished(store),
            bootstrap=self.bootstrap,
            exclude_faulted=bool(config.get("exclude_faulted", False)),
        )
        faults: dict[str, Counter[str]] = {}
        for sr in self._seat_results(store):
            faults.setdefault(sr.entrant, Counter()).update(sr.faults)
        rows = []
        for r in board.rows:
            row = r.as_dict()
            for k in ("rating", "low", "high", "mean_points", "vs_next", "vs_next_low"):
                row[k] = _number(row[k])
            row["vs_next_high"] = _number(row["vs_next_high"])
            row["faults"] = dict(sorted(faults.get(r.name, Counter()).items()))
            rows.append(row)
        return {
            "method": board.method,
            "games": board.games,
            "notes": list(board.notes),
            "provisional": board.provisional,
            "rows": rows,
        }

    def _finished(self, store: ResultsStore) -> list[tuple[GameSpec, list[SeatResult], bool]]:
        """The finished games that may be shown (:meth:`_sealed`), in plan order."""
        sealed = self._sealed(store)
        return [f for f in store.finished_games() if f[0].id not in sealed]

    def _seat_results(self, store: ResultsStore) -> list[SeatResult]:
        sealed = self._sealed(store)
        return [sr for sr in store.seat_results() if sr.game_id not in sealed]

    def history(self) -> dict[str, Any]:
        """Each entrant's rating after the first k finished games, at up to
        :data:`HISTORY_POINTS` values of k (Bradley-Terry, no bootstrap)."""
        return dict(self._cached("history", self._history))

    def _history(self, store: ResultsStore) -> dict[str, Any]:
        finished = self._finished(store)
        n = len(finished)
        marks = sorted({max(1, round(n * (i + 1) / HISTORY_POINTS)) for i in range(HISTORY_POINTS)})
        series: dict[str, list[float | None]] = {}
        for i, k in enumerate(marks if n else []):
            board = leaderboard_of(finished[:k], bootstrap=0)
            for row in board.rows:
                series.setdefault(row.name, [None] * len(marks))[i] = _number(row.rating)
        return {"games": marks if n else [], "series": series}

    def _sealed(self, store: ResultsStore) -> dict[str, list[str]]:
        """The one rule of what is withheld: each finished game whose deal is
        still to be played (or being played) in another game of its deal
        set, with those games. Its replay, its scores, its place in the
        ratings and every statistic made from it wait until they have ended."""
        sealed: dict[str, list[str]] = self.cache.get(
            "sealed", store.fingerprint(), store.finished_awaiting_deal
        )
        return sealed

    def showing(self, store: ResultsStore) -> Showing:
        """The tournament's part of its games' lines: withheld while their
        deal is still to be played (:meth:`_sealed`), their place in the plan."""
        sealed = self._sealed(store)

        def withheld(game_id: str, row: object) -> str | None:
            waiting = sealed.get(game_id)
            return withheld_why(game_id, waiting) if waiting else None

        def fields(row: GameRow) -> dict[str, Any]:
            own = row.own
            return {k: own[c] for k, c in _PLACE.items()}

        return Showing(withheld, fields=fields)

    def _visible_rows(self, store: ResultsStore, entrant: str | None) -> list[dict[str, Any]]:
        lines = game_lines(store.db, self.showing(store), own=tuple(_PLACE.values()), order="seq")
        return [line for line in lines if entrant is None or entrant in line["seats"]]

    def games(self, entrant: str | None = None) -> dict[str, Any]:
        def read(store: ResultsStore) -> dict[str, Any]:
            if entrant is not None and entrant not in dict(store.entrant_names()):
                raise NotFound(f"no entrant {entrant!r} in {self.name}")
            return {"games": self._visible_rows(store, entrant)}

        return dict(self._cached(("games", entrant), read))

    def game(self, game_id: str) -> dict[str, Any]:
        def read(store: ResultsStore) -> dict[str, Any]:
            def unknown() -> str:
                known = store.planned(game_id)
                why = "has not been played yet" if known else "is not in this tournament"
                return f"game {game_id!r} {why}"

            return dict(replay(store.db, game_id, self.showing(store), unknown))

        return dict(self._cached(("game", game_id), read))

    def analysis(self, game_id: str) -> dict[str, Any]:
        """Each graded bid and card of a finished game (the replay's losses),
        keyed ``round:move`` (the move's place in its round's moves),
        computed on demand by :data:`WEB_EVALUATOR` and cached."""

        def read(store: ResultsStore) -> dict[str, Any]:
            record = store.record(game_id)
            if record is None or record.status != "finished":
                raise NotFound(f"game {game_id!r} has no finished record here")
            waiting = self._sealed(store).get(game_id)
            if waiting:
                raise Withheld(withheld_why(game_id, waiting))
            evaluator = _evaluator()
            graded = self._grades(record, range(len(record.names)))
            return {
                "evaluator": evaluator[0],
                "thresholds": dict(THRESHOLDS),
                "moves": {
                    f"{g.round}:{g.index}": {
                        "seat": g.seat,
                        "kind": g.kind,
                        "chosen": g.chosen,
                        "best": g.best,
                        "loss": g.loss,
                        "grade": g.grade,
                        "options": g.options,
                    }
                    for g in graded
                },
            }

        return dict(self._cached(("analysis", game_id), read))

    def entrant_analysis(self, name: str) -> dict[str, Any]:
        """The summary of an entrant's graded decisions over its latest
        :data:`ANALYSIS_GAMES` finished games (those the pages show),
        computed on demand by :data:`WEB_EVALUATOR` and cached."""

        def read(store: ResultsStore) -> dict[str, Any]:
            if name not in dict(store.entrant_names()):
                raise NotFound(f"no entrant {name!r} in {self.name}")
            sealed = self._sealed(store)
            records = deque(
                (r for r in store.records_of(name) if r.game_id not in sealed),
                maxlen=ANALYSIS_GAMES,
            )
            evaluator = _evaluator()
            done = []
            for r in records:
                seats = [s for s, n in enumerate(r.names) if n == name]
                done.append((r, self._grades(r, seats)))
            summary = bot_summaries(done, [name]).get(name)
            return {
                "evaluator": evaluator[0],
                "thresholds": dict(THRESHOLDS),
                "games": len(records),
                "summary": summary,
            }

        return dict(self._cached(("entrant_analysis", name), read))

    def entrants(self) -> dict[str, Any]:
        """Every entrant's name, the rated ones best first, then the others by name."""
        board = self.leaderboard()

        def read(store: ResultsStore) -> list[str]:
            return [name for name, _ in store.entrant_names()]

        rated = [r["name"] for r in board["rows"]]
        rest = [n for n in self._read(read) if n not in set(rated)]
        return {"entrants": rated + rest}

    def deals_in_play(self, game_ids: list[str]) -> dict[str, list[str]]:
        """For each of ``game_ids`` (games being played), the other games of
        its deal that have not finished: its deal set's rotations share its
        hands, so what is played at one table is a look at the others'."""
        deals: dict[str, list[str]] = self._read(
            lambda store: {g: store.same_deal_unfinished(g) for g in game_ids}
        )
        return deals

    def entrant(self, name: str) -> dict[str, Any]:
        def read(store: ResultsStore) -> dict[str, Any]:
            kinds = dict(store.entrant_names())
            if name not in kinds:
                raise NotFound(f"no entrant {name!r} in {self.name}")
            mine = [sr for sr in self._seat_results(store) if sr.entrant == name]
            rounds = sum(len(s.bids) for s in mine)
            exact = sum(b == t for s in mine for b, t in zip(s.bids, s.tricks, strict=True))
            sealed = self._sealed(store)
            records = [r for r in store.records_of(name) if r.game_id not in sealed]
            game_list = self._visible_rows(store, name)
            faults: Counter[str] = Counter()
            for s in mine:
                faults.update(s.faults)
            return {
                "name": name,
                "kind": kinds[name],
                "games": len(mine),
                "rounds": rounds,
                "bid_accuracy": exact / rounds if rounds else None,
                "mean_points": sum(s.total for s in mine) / len(mine) if mine else None,
                "faults": dict(sorted(faults.items())),
                "withheld_games": sum(g.get("withheld") is not None for g in game_list),
                "latency": latency(records, name),
                "game_list": game_list,
            }

        return dict(self._cached(("entrant", name), read))


def _evaluator() -> EvaluatorSpec:
    try:
        return resolve(WEB_EVALUATOR)
    except EvaluatorError as e:
        raise Unavailable(f"no analysis here: the evaluator cannot be loaded ({e})") from None


class MemoryData:
    """The finished games a running referee keeps in memory (``serve --web``):
    no store, so no leaderboard and no entrants. Called in a worker thread;
    the records are taken from the arena on its trio loop."""

    def __init__(self, arena: Arena, referee: trio.lowlevel.TrioToken | None = None) -> None:
        self.arena = arena
        self.referee = referee
        """The referee's trio loop (None: the loop of the thread's caller)."""
        self.cache = Cache()

    def _texts(self) -> tuple[int, list[str]]:
        arena = self.arena
        return trio.from_thread.run_sync(
            lambda: (arena.games_played, arena.records.texts()), trio_token=self.referee
        )

    def info(self) -> dict[str, Any]:
        played, texts = self._texts()
        return {
            "mode": "server",
            "name": "referee " + self.arena.address,
            "games": {"finished": played},
            "kept": len(texts),
            "in_progress": True,
        }

    def games(self, entrant: str | None = None) -> dict[str, Any]:
        played, texts = self._texts()

        def read() -> dict[str, Any]:
            records = [GameRecord.from_json(t) for t in texts]
            rows = [record_summary(r) for r in reversed(records)]
            if entrant is not None:
                rows = [r for r in rows if entrant in r["seats"]]
                if not rows:
                    raise NotFound(
                        f"no entrant {entrant!r} among the {len(texts)} games kept in memory"
                    )
            return {"games": rows}

        return dict(self.cache.get(("games", entrant), played, read))

    def game(self, game_id: str) -> dict[str, Any]:
        _, texts = self._texts()
        needle = f'"game_id":{json.dumps(game_id)}'
        for text in texts:
            if needle in text:
                record = GameRecord.from_json(text)
                if record.game_id == game_id:
                    return replay_json(record)
        raise NotFound(f"game {game_id!r} is not among the {len(texts)} games kept in memory")

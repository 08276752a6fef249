"""In-process games of a comparison: a pool of worker processes, each
playing whole games with :func:`wizard_arena.local.play_local` and
returning their full records (the format of a refereed game's record, so
``wizard-arena replay`` shows them).

Each game gets fresh bot instances (built from the classes each worker
imports once), so a game's result does not depend on which worker played
it or what it played before: with the same secret, a comparison replays
exactly. There are no deadlines in-process: a bot takes the time it takes.
"""

from __future__ import annotations

import multiprocessing
import queue
import signal
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from wizard_arena.bot import Bot
from wizard_arena.local import LocalGameResult, play_local
from wizard_arena.rules import action_text
from wizard_referee.compare.plan import BotSpec, ComparePlan, PlannedGame
from wizard_referee.referee.record import GameRecord, MoveRecord, RoundRecord

__all__ = ["GamePool", "check_bot", "local_record", "play_in_process", "play_planned"]

_plan: ComparePlan | None = None
_classes: dict[str, type] = {}


def check_bot(spec: BotSpec) -> None:
    """Build the bot once here: SpecError or ValueError saying why it cannot
    play in-process (before any worker starts)."""
    from wizard_arena.loader import load_bot

    assert spec.target is not None
    bot = load_bot(spec.target, spec.kwargs)
    if not isinstance(bot, Bot):
        raise ValueError(
            f"{spec.text}: an AsyncBot plays over the referee only; give it as a "
            "command (wizard-arena bot ... --server {server}, its token from "
            "$WIZARD_ARENA_TOKEN)"
        )


def _build(spec: BotSpec) -> Bot:
    from wizard_arena.loader import load_class

    assert spec.target is not None
    cls = _classes.get(spec.target)
    if cls is None:
        cls = _classes[spec.target] = load_class(spec.target)
    bot = cls(**spec.kwargs)
    assert isinstance(bot, Bot)
    return bot


def local_record(
    result: LocalGameResult,
    game_id: str,
    seed: Any,
    *,
    started: float = 0.0,
    finished: float | None = None,
    tags: dict[str, Any] | None = None,
) -> GameRecord:
    """The full record of a game played in-process (``play_local(...,
    record=True)``), as the referee keeps one: what ``replay``, the pages
    and ``analyse`` read (``finished``: when it ended, by default when it
    started)."""
    n = result.rules.players
    faults: list[dict[str, int]] = [{} for _ in range(n)]
    details: list[dict[str, str]] = [{} for _ in range(n)]
    for f in result.faults:
        faults[f.seat][f.code] = faults[f.seat].get(f.code, 0) + 1
        details[f.seat].setdefault(f.code, f.detail)
    rounds = [
        RoundRecord(
            d.round,
            d.dealer,
            [[c.text for c in h] for h in d.hands],
            d.turned_card.text if d.turned_card is not None else None,
        )
        for d in result.deals
    ]
    for mv in result.moves:
        rounds[mv.round - 1].moves.append(
            MoveRecord(mv.seat, action_text(mv.action), round(mv.ms, 3), mv.fault)
        )
    return GameRecord(
        game_id=game_id,
        rules=result.rules.to_dict(),
        names=list(result.names),
        seed=seed,
        first_dealer=result.first_dealer,
        started_at=started,
        finished_at=started if finished is None else finished,
        status="finished",
        rounds=rounds,
        results=[
            [list(r.bids), list(r.tricks), list(r.points), list(r.totals)] for r in result.results
        ],
        totals=list(result.totals),
        ranks=list(result.ranks),
        faults=faults,
        fault_details=details,
        tags=dict(tags or {}),
        draw=[[c.text if c is not None else None for c in row] for row in result.draw],
        removed=[None] * n,
    )


def play_planned(plan: ComparePlan, game: PlannedGame) -> GameRecord:
    """Play one planned game in this process (its record's tag ``cpu_s``:
    the CPU seconds it took)."""
    started = time.time()
    cpu = time.process_time()
    bots = [_build(b) for b in game.bots]
    result = play_local(
        bots,
        plan.rules,
        seed=game.spec.seed,
        game_id=game.spec.id,
        names=game.spec.seats,
        bot_seeds=game.bot_seeds,
        record=True,
    )
    record = local_record(
        result,
        game.spec.id,
        game.spec.seed,
        started=started,
        finished=time.time(),
        tags=game.tags,
    )
    record.tags["cpu_s"] = round(time.process_time() - cpu, 3)
    return record


def _init_worker(plan: ComparePlan) -> None:
    global _plan
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _plan = plan


def _work(deal: int, side: str) -> str:
    assert _plan is not None
    try:
        return play_planned(_plan, _plan.game(deal, side)).to_json()
    except BaseException as e:  # SystemExit from a bot: report it, keep the worker
        raise RuntimeError(f"{type(e).__name__}: {e}") from None


class GamePool:
    """Worker processes (started fresh, ``spawn``) playing planned games.
    ``submit`` calls ``done(game, record)`` or ``failed(game, error)`` from
    a thread of the pool; ``close`` stops the workers at once. A worker
    that dies (a bot ended its process) fails its game and every later one
    with :class:`~concurrent.futures.process.BrokenProcessPool`."""

    def __init__(self, plan: ComparePlan, processes: int) -> None:
        self._pool = ProcessPoolExecutor(
            processes,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_init_worker,
            initargs=(plan,),
        )

    def submit(
        self,
        game: PlannedGame,
        done: Callable[[PlannedGame, GameRecord], None],
        failed: Callable[[PlannedGame, BaseException], None],
    ) -> None:
        def finished(future: Future[str]) -> None:
            if future.cancelled():
                return
            error = future.exception()
            if error is not None:
                failed(game, error)
            else:
                done(game, GameRecord.from_json(future.result()))

        try:
            self._pool.submit(_work, game.deal, game.side).add_done_callback(finished)
        except BrokenProcessPool as e:
            failed(game, e)

    def close(self) -> None:
        """Cancel the games not started; stop the ones under way."""
        processes = list((getattr(self._pool, "_processes", None) or {}).values())
        self._pool.shutdown(wait=False, cancel_futures=True)
        for proc in processes:
            if proc.is_alive():
                proc.terminate()
        for proc in processes:
            proc.join(5)


def play_in_process(comparison: Any, parallel: int, progress: Any) -> None:
    """Play the comparison's games in ``parallel`` worker processes until it
    is done (decided, or every planned game played); each finished game is
    stored at once. Keeps ``2 * parallel`` games under way, in plan order.
    ``comparison`` is a :class:`~.session.Comparison`, ``progress`` its
    :class:`~.session.Progress`."""
    from wizard_referee.compare.comparison import CompareError

    results: queue.Queue[tuple[PlannedGame, GameRecord | None, BaseException | None]]
    results = queue.Queue()
    pool = GamePool(comparison.plan, parallel)
    try:
        running = 0
        while True:
            while running < 2 * parallel:
                game = comparison.next_game()
                if game is None:
                    break
                pool.submit(
                    game,
                    lambda g, r: results.put((g, r, None)),
                    lambda g, e: results.put((g, None, e)),
                )
                running += 1
            if running == 0 or comparison.done:
                break
            try:
                game, record, error = results.get(timeout=progress.interval)
            except queue.Empty:
                progress.tick()
                continue
            running -= 1
            if isinstance(error, BrokenProcessPool):
                raise CompareError(
                    f"a worker process died while playing game {game.spec.id}: a bot that "
                    "ends its process (os._exit) or crashes the interpreter cannot play "
                    "in-process; give it as a command to play it over the referee"
                )
            if error is not None or record is None:
                raise CompareError(f"game {game.spec.id} could not be played: {error}")
            comparison.add(game, record)
            progress.tick()
    finally:
        pool.close()

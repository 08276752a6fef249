"""Grading many games, on every core: the evaluator named by module path,
built afresh for each seat of each game (so a seat's grades do not depend on
which worker graded the game, what it graded before, or which other seats
of the game are graded: an evaluator that draws random numbers, as the
Monte Carlo one does, draws them for that seat's decisions alone), the games
spread over a pool of worker processes.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from wizard_arena.loader import SpecError, load_bot, load_class
from wizard_arena.rules import Card, SeatView
from wizard_referee.analysis.grade import Evaluator, Graded, grade_record
from wizard_referee.analysis.summary import compare_split
from wizard_referee.referee.record import GameRecord

__all__ = [
    "EVALUATORS",
    "EvaluatorError",
    "EvaluatorSpec",
    "comparison_split",
    "grade_many",
    "resolve",
]

#: Short names of the evaluators: spec and its default keyword arguments.
EVALUATORS: dict[str, tuple[str, dict[str, Any]]] = {
    "montecarlo": ("wizard_bots.montecarlo:MonteCarloBot", {"samples": 32, "seed": 0}),
    "learned": ("wizard_bots.learned:LearnedBot", {}),
}

EvaluatorSpec = tuple[str, dict[str, Any]]


class EvaluatorError(ValueError):
    """An evaluator that cannot be loaded, built or asked for values."""


def resolve(name: str, kwargs: dict[str, Any] | None = None) -> EvaluatorSpec:
    """The spec and keyword arguments of evaluator ``name`` (a short name of
    :data:`EVALUATORS` or ``MODULE:CLASS``), ``kwargs`` over its defaults;
    checked by building it once here (:class:`EvaluatorError` saying why not)."""
    spec, defaults = EVALUATORS.get(name, (name, {}))
    merged = {**defaults, **(kwargs or {})}
    try:
        built = load_bot(spec, merged)
    except SpecError as e:
        raise EvaluatorError(str(e)) from None
    missing = [m for m in ("bid_values", "action_values") if not callable(getattr(built, m, None))]
    if missing:
        raise EvaluatorError(f"{spec} cannot evaluate: it has no {' or '.join(missing)}(view)")
    return spec, merged


_cls: type | None = None
_kwargs: dict[str, Any] = {}


def _init(spec: str, kwargs: dict[str, Any]) -> None:
    global _cls, _kwargs
    _cls, _kwargs = load_class(spec), kwargs


class _BySeat:
    """An evaluator of its own for each seat, built when the seat's first
    decision is valued."""

    def __init__(self, cls: type, kwargs: dict[str, Any]) -> None:
        self.cls, self.kwargs = cls, kwargs
        self.seats: dict[int, Evaluator] = {}

    def _of(self, view: SeatView) -> Evaluator:
        evaluator = self.seats.get(view.seat)
        if evaluator is None:
            evaluator = self.seats[view.seat] = self.cls(**self.kwargs)
        return evaluator

    def bid_values(self, view: SeatView) -> Mapping[int, float]:
        return self._of(view).bid_values(view)

    def action_values(self, view: SeatView) -> Mapping[Card, float]:
        return self._of(view).action_values(view)


def _grade(text: str, seats: tuple[int, ...] | None) -> list[Graded]:
    assert _cls is not None
    evaluator = _BySeat(_cls, _kwargs)
    return grade_record(GameRecord.from_json(text), evaluator, set(seats) if seats else None)


def grade_many(
    records: Iterable[tuple[GameRecord, tuple[int, ...] | None]],
    evaluator: EvaluatorSpec,
    jobs: int = 1,
    progress: Callable[[int], None] | None = None,
) -> Iterator[tuple[GameRecord, list[Graded]]]:
    """Each record graded (only the seats given with it, if any), in order,
    over ``jobs`` worker processes (1: in this process)."""
    spec, kwargs = evaluator
    if jobs <= 1:
        _init(spec, kwargs)
        for i, (record, seats) in enumerate(records, 1):
            yield record, _grade(record.to_json(), seats)
            if progress is not None:
                progress(i)
        return
    items = list(records)
    with ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_init,
        initargs=(spec, kwargs),
    ) as pool:
        futures = [pool.submit(_grade, r.to_json(), seats) for r, seats in items]
        for i, ((record, _), future) in enumerate(zip(items, futures, strict=True), 1):
            yield record, future.result()
            if progress is not None:
                progress(i)


def comparison_split(
    database: str, evaluator: str = "learned", jobs: int = 1
) -> dict[str, Any] | None:
    """A comparison's store (``compare --database``) graded at the candidate
    seat: :func:`~.summary.compare_split` of its finished games (None when
    no deal has both games). The store is read, never written."""
    from wizard_referee.tournament.store import open_existing

    with open_existing(database) as store:
        records = [
            (r, (int(r.tags["candidate_seat"]),))
            for spec in store.games("finished")
            if (r := store.record(spec.id)) is not None and r.tags.get("compare")
        ]
    graded = grade_many(records, resolve(evaluator), max(1, min(jobs, len(records))))
    return compare_split(list(graded))

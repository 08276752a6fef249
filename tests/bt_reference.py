"""Datasets on which the Bradley-Terry ratings and bootstrap intervals are
checked against reference values (tests/data/bt_reference.json), written by
the pure-Python implementation this project had before the numpy one
(``python -m tests.bt_reference`` at commit b2e5308 wrote them)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from wizard_referee.ratings.models import GameResult, bradley_terry

REFERENCE = Path(__file__).parent / "data" / "bt_reference.json"


def _pool(players: int, games: int, seed: int, sets: bool) -> list[GameResult]:
    """Random tables of 3-6; with ``sets``, runs of 1-4 games share a duplicate set."""
    rng = random.Random(seed)
    names = [f"p{k:02d}" for k in range(players)]
    skill = {n: rng.gauss(0, 1) for n in names}
    out: list[GameResult] = []
    unit = 0
    while len(out) < games:
        size = rng.randint(1, 4) if sets else 1
        table = rng.sample(names, rng.randint(3, min(6, players)))
        for _ in range(size):
            scores = tuple(10 * round(3 * skill[p] + rng.gauss(0, 4)) for p in table)
            out.append(GameResult(tuple(table), scores, unit if sets else None))
        unit += 1
    return out[:games]


def datasets() -> dict[str, tuple[list[GameResult], int, int]]:
    """name -> (games, bootstrap resamples, seed)."""
    chain = [GameResult(("A", "B"), (1, 0))] * 4 + [GameResult(("B", "C"), (2, 1))] * 3
    chain += [GameResult(("C", "B"), (5, 1))] + [GameResult(("A", "C"), (3, 3))] * 2
    sparse = [
        GameResult(("x", "y", "z"), (10, 0, -10)),
        GameResult(("x", "y", "z"), (0, 10, 20)),
        GameResult(("y", "z", "x"), (5, 5, 0)),
        GameResult(("w", "x"), (10, 0)),
    ]
    return {
        "sets": (_pool(8, 400, 3, True), 300, 7),
        "singles": (_pool(20, 2000, 4, False), 100, 2),
        "prior": (chain, 200, 1),
        "sparse": (sparse, 150, 5),
        "big-pool": (_pool(60, 1500, 9, False), 20, 3),
    }


def compute() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, (games, bootstrap, seed) in datasets().items():
        r = bradley_terry(games, bootstrap=bootstrap, seed=seed, split=False)
        out[name] = {
            "players": [p.as_dict() for p in r.players],
            "prior_used": r.prior_used,
            "bootstrap_prior_used": r.bootstrap_prior_used,
        }
    return out


if __name__ == "__main__":
    REFERENCE.write_text(json.dumps(compute(), indent=1) + "\n", encoding="utf-8")

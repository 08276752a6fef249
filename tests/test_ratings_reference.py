"""The numpy Bradley-Terry fit and bootstrap give the ratings and intervals
of the pure-Python implementation they replaced (reference values written
by it: tests/bt_reference.py), on pools with duplicate sets, single games,
resamples that need the prior, a point fit that needs it, players missing
from resamples, and 60 players."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from wizard_referee.ratings.batch import resample_counts

from .bt_reference import REFERENCE, compute

#: Elo points. The fits stop when no step exceeds 1e-6 Elo points; the two
#: implementations agree to about 1e-12.
TOLERANCE = 1e-6


def test_ratings_and_intervals_match_the_reference() -> None:
    reference = json.loads(REFERENCE.read_text(encoding="utf-8"))
    now = compute()
    assert set(now) == set(reference)
    for name, ref in reference.items():
        got = now[name]
        assert got["prior_used"] == ref["prior_used"], name
        assert got["bootstrap_prior_used"] == ref["bootstrap_prior_used"], name
        assert [p["name"] for p in got["players"]] == [p["name"] for p in ref["players"]]
        for p, q in zip(got["players"], ref["players"], strict=True):
            assert p["games"] == q["games"]
            for key in ("rating", "low", "high"):
                if q[key] is None:
                    assert p[key] is None, (name, p)
                else:
                    assert p[key] == pytest.approx(q[key], abs=TOLERANCE), (name, p["name"], key)


@pytest.mark.parametrize("units", [1, 7, 1000])
def test_resamples_are_those_of_random_choices(units: int) -> None:
    rng = random.Random(42)
    mine = np.concatenate(list(resample_counts(rng, units, 25, batch=4)))
    again = random.Random(42)
    for row in mine:
        drawn = again.choices(range(units), k=units)
        assert row.tolist() == np.bincount(drawn, minlength=units).tolist()
    assert rng.random() == again.random()  # the generator is left where choices leaves it

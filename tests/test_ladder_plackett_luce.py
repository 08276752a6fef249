"""The ladder's live ratings (ladder/plackett_luce.py): Plackett-Luce, ties ranked
as the order they leave undecided."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from openskill.models import PlackettLuce

from wizard_referee.ladder.plackett_luce import LiveModel, Rating, replay

MODEL = LiveModel()

ratings = st.tuples(st.floats(0.0, 50.0), st.floats(0.5, 9.0))


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[Rating], list[int]]:
    """3 to 6 members with any ratings and scores from a few values (ties)."""
    n = draw(st.integers(3, 6))
    prior = draw(st.lists(ratings, min_size=n, max_size=n))
    scores = draw(st.lists(st.integers(-2, 2), min_size=n, max_size=n))
    return prior, [40 * s for s in scores]


def test_a_member_below_a_tie_for_first_does_not_get_the_winners_update() -> None:
    mus = [mu for mu, _ in MODEL.rate([None] * 4, [100, 100, 0, -50])]
    assert mus[0] == pytest.approx(mus[1])
    assert mus[0] > mus[2] + 1.0 > mus[3] + 2.0


def test_identical_entries_that_tie_every_set_keep_their_mu_and_order() -> None:
    after = replay(MODEL, [((1, 2, 3, 4), (17, 17, 17, 17))] * 20)
    assert {round(mu, 9) for mu, _ in after.values()} == {MODEL.prior[0]}
    assert len({sigma for _, sigma in after.values()}) == 1
    assert all(sigma < MODEL.prior[1] for _, sigma in after.values())


@settings(max_examples=100, deadline=None)
@given(tables())
def test_with_equal_priors_the_updates_follow_the_scores(
    table: tuple[list[Rating], list[int]],
) -> None:
    _, scores = table
    after = MODEL.rate([None] * len(scores), scores)
    for (a, sa), (b, sb) in itertools.combinations(zip(after, scores, strict=True), 2):
        if sa == sb:
            assert a == pytest.approx(b, abs=1e-9)
        else:
            assert (a[0] > b[0] + 1e-6) == (sa > sb)


@settings(max_examples=100, deadline=None)
@given(tables(), st.data())
def test_scoring_more_never_gives_a_smaller_update(
    table: tuple[list[Rating], list[int]], data: st.DataObject
) -> None:
    """Any member, moved up to a better score (into a tie or past it), gains
    more than it did; a lower-scoring member never gets the update of a
    tie it did not reach."""
    prior, scores = table
    i = data.draw(st.integers(0, len(scores) - 1))
    better = [s for s in scores if s > scores[i]]
    if not better:
        return
    raised = list(scores)
    raised[i] = data.draw(st.sampled_from([*better, max(better) + 40]))
    assert MODEL.rate(prior, raised)[i][0] > MODEL.rate(prior, scores)[i][0] + 1e-9


@settings(max_examples=40, deadline=None)
@given(tables())
def test_a_tie_is_the_mean_of_the_strict_orders_that_break_it(
    table: tuple[list[Rating], list[int]],
) -> None:
    """The averaged update, computed over subsets, equals listing every
    order that breaks the ties and averaging openskill's strict updates."""
    prior, scores = table
    n = len(scores)
    reference = PlackettLuce()
    orders = [
        p
        for p in itertools.permutations(range(n))
        if all(scores[p[j]] >= scores[p[j + 1]] for j in range(n - 1))
    ]
    mean = [0.0] * n
    for order in orders:
        ranks = [order.index(i) for i in range(n)]
        rated = reference.rate([[reference.rating(*r)] for r in prior], ranks=ranks)
        for i in range(n):
            mean[i] += rated[i][0].mu / len(orders)
    assert [mu for mu, _ in MODEL.rate(prior, scores)] == pytest.approx(mean, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(tables())
def test_without_ties_it_is_openskills_plackett_luce(
    table: tuple[list[Rating], list[int]],
) -> None:
    prior, scores = table
    scores = [s * 10 + i for i, s in enumerate(scores)]  # all distinct
    reference = PlackettLuce()
    rated = reference.rate([[reference.rating(*r)] for r in prior], scores=scores)
    expected = [(t[0].mu, t[0].sigma) for t in rated]
    for got, want in zip(MODEL.rate(prior, scores), expected, strict=True):
        assert got == pytest.approx(want, abs=1e-9)

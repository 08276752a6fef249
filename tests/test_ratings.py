"""Ratings: Bradley-Terry fit, its prior and bootstrap, and provisional Elo."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import pytest

from wizard_referee.ratings.models import (
    ELO_PER_NAT,
    GameResult,
    ResultFormatError,
    bradley_terry,
    elo,
    expected_score,
    game_from_dict,
    groups,
    strongly_connected,
)


def _head_to_head(a: str, b: str, a_wins: int, b_wins: int, draws: int = 0) -> list[GameResult]:
    return (
        [GameResult((a, b), (1, 0))] * a_wins
        + [GameResult((a, b), (0, 1))] * b_wins
        + [GameResult((a, b), (5, 5))] * draws
    )


def _bisect(f: Callable[[float], float], lo: float, hi: float) -> float:
    """Root of an increasing function on [lo, hi]."""
    for _ in range(200):
        mid = (lo + hi) / 2
        if f(mid) > 0:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2


def _random_pool(players: int, games: int, seed: int) -> list[GameResult]:
    rng = random.Random(seed)
    names = [f"p{k}" for k in range(players)]
    skill = {n: rng.gauss(0, 1) for n in names}
    out = []
    for _ in range(games):
        table = rng.sample(names, rng.randint(3, min(6, players)))
        out.append(
            GameResult(tuple(table), tuple(round(3 * skill[p] + rng.gauss(0, 4)) for p in table))
        )
    return out


def _score_residuals(games: list[GameResult], ratings: dict[str, float]) -> dict[str, float]:
    """Actual minus expected pairwise score per player: all zero at the maximum likelihood."""
    res = dict.fromkeys(ratings, 0.0)
    for g in games:
        for i, a in enumerate(g.players):
            for j, b in enumerate(g.players):
                if i != j:
                    s, t = g.scores[i], g.scores[j]
                    actual = 1.0 if s > t else 0.0 if s < t else 0.5
                    res[a] += actual - expected_score(ratings[a] - ratings[b])
    return res


# --------------------------------------------------------------------------- Elo


def test_elo_worked_example_two_players() -> None:
    """1500 vs 1500, K = 32: expected 0.5 each, so the winner gains 32 * 0.5 = 16."""
    result = elo([GameResult(("w", "l"), (120, 80))], k=32)
    r = {p.name: p.rating for p in result.players}
    assert r == {"w": 1516.0, "l": 1484.0}
    assert result.provisional and result.method == "elo"
    assert all(p.low is None and p.high is None for p in result.players)
    assert any("provisional" in n for n in result.notes)


def test_elo_table_update_uses_pre_game_ratings_and_k_over_n_minus_1() -> None:
    # Three players at 1500: the winner scores 1 + 1 against expectations 0.5 + 0.5,
    # so gains K/(N-1) * 1 = 16; the middle player nets zero; the last loses 16.
    # A sequential (not simultaneous) update would give the middle player a nonzero change.
    result = elo([GameResult(("a", "b", "c"), (30, 20, 10))], k=32)
    r = {p.name: p.rating for p in result.players}
    assert r == pytest.approx({"a": 1516.0, "b": 1500.0, "c": 1484.0}, abs=1e-12)


def test_elo_draw_and_initial_ratings_and_k() -> None:
    result = elo([GameResult(("a", "b"), (50, 50))], k=10, initial={"a": 1600.0})
    r = {p.name: p.rating for p in result.players}
    ea = 1 / (1 + 10 ** (-100 / 400))
    assert r["a"] == pytest.approx(1600 + 10 * (0.5 - ea))
    assert r["b"] == pytest.approx(1500 - 10 * (0.5 - ea))
    assert [p.name for p in result.players] == ["a", "b"]


def test_elo_depends_on_order_and_counts_games() -> None:
    g1 = GameResult(("a", "b"), (1, 0))
    g2 = GameResult(("b", "c"), (1, 0))
    first = {p.name: p.rating for p in elo([g1, g2]).players}
    second = {p.name: p.rating for p in elo([g2, g1]).players}
    assert first != second
    assert {p.name: p.games for p in elo([g1, g2]).players} == {"a": 1, "b": 2, "c": 1}


# --------------------------------------------------------------------------- Bradley-Terry


def test_bt_two_players_is_the_logit_of_the_win_rate() -> None:
    """75-25 alone: 1/(1 + 10^(-d/400)) = 0.75 gives d = 400 log10(3) = 190.85,
    split symmetrically around the mean 1500."""
    result = bradley_terry(_head_to_head("A", "B", 75, 25), bootstrap=0)
    r = {p.name: p.rating for p in result.players}
    assert r["A"] - r["B"] == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert r["A"] == pytest.approx(1500 + 200 * math.log10(3), abs=1e-6)
    assert round(r["A"], 2) == 1595.42 and round(r["B"], 2) == 1404.58
    assert not result.prior_used


def test_bt_three_bot_cycle_exact_values() -> None:
    """A beats B 75-25, B beats C 75-25, C beats A 90-10 (100 two-player games a pair).

    The ±190.85 often quoted is 400*log10(3), the gap one 75-25 record implies on
    its own; a joint fit cannot give every pair that gap. Totals over 200
    comparisons each: A 85, B 100, C 115. B scores exactly half, and the
    likelihood equations are solved by A = 1500 - x, B = 1500, C = 1500 + x with
    sigma(x) + sigma(2x) = 1.15 on the Elo curve; with y = 10^(x/400) that is
    17y^3 - 3y^2 - 3y - 23 = 0, y = 1.2238862, x = 35.0964. So the ratings are
    A = 1464.90, B = 1500.00, C = 1535.10: the cycle is not symmetric because the
    90-10 record is stronger than the two 75-25 ones.
    """
    games = (
        _head_to_head("A", "B", 75, 25)
        + _head_to_head("B", "C", 75, 25)
        + _head_to_head("C", "A", 90, 10)
    )
    result = bradley_terry(games, bootstrap=0)
    r = {p.name: p.rating for p in result.players}
    assert round(r["A"], 2) == 1464.90
    assert round(r["B"], 2) == 1500.00
    assert round(r["C"], 2) == 1535.10
    y = _bisect(lambda y: 17 * y**3 - 3 * y**2 - 3 * y - 23, 1.0, 2.0)
    x = 400 * math.log10(y)
    assert x == pytest.approx(35.0964, abs=1e-4)
    assert r["C"] - 1500 == pytest.approx(x, abs=1e-6)
    assert 1500 - r["A"] == pytest.approx(x, abs=1e-6)
    assert [p.name for p in result.players] == ["C", "B", "A"]
    assert not result.prior_used


def test_bt_draws_are_half_a_win() -> None:
    # A: 3 wins + 2 draws of 6 = 4/6, so d = 400 log10(2).
    result = bradley_terry(_head_to_head("A", "B", 3, 1, draws=2), bootstrap=0)
    r = {p.name: p.rating for p in result.players}
    assert r["A"] - r["B"] == pytest.approx(400 * math.log10(2), abs=1e-6)
    # All draws: equal ratings, and that is a finite MLE (both scored against the other).
    even = bradley_terry(_head_to_head("A", "B", 0, 0, draws=3), bootstrap=0)
    assert not even.prior_used
    assert [p.rating for p in even.players] == pytest.approx([1500.0, 1500.0])


def test_bt_multiplayer_games_split_into_pairs_and_solve_the_likelihood() -> None:
    games = _random_pool(12, 600, seed=3)
    result = bradley_terry(games, bootstrap=0, tol=1e-9)
    ratings = {p.name: p.rating for p in result.players}
    assert math.fsum(ratings.values()) / len(ratings) == pytest.approx(1500.0, abs=1e-9)
    for name, residual in _score_residuals(games, ratings).items():
        assert abs(residual) < 1e-6, name
    assert [p.rating for p in result.players] == sorted(ratings.values(), reverse=True)
    played = {p.name: p.games for p in result.players}
    assert played == {n: sum(n in g.players for g in games) for n in ratings}


def test_bt_is_order_independent_including_the_bootstrap() -> None:
    games = _random_pool(6, 120, seed=5)
    shuffled = games[:]
    random.Random(9).shuffle(shuffled)
    reseated = [GameResult(g.players[::-1], g.scores[::-1]) for g in shuffled]
    a = bradley_terry(games, bootstrap=50, seed=4)
    b = bradley_terry(reseated, bootstrap=50, seed=4)
    assert a.players == b.players  # exactly equal, intervals too


def test_bt_hundreds_of_players() -> None:
    games = _random_pool(150, 6000, seed=11)
    result = bradley_terry(games, bootstrap=0)
    ratings = {p.name: p.rating for p in result.players}
    assert len(ratings) == 150
    worst = max(abs(r) for r in _score_residuals(games, ratings).values())
    assert worst < 1e-4


# --------------------------------------------------------------------------- prior


def test_connectivity_check() -> None:
    # 0 -> 1 -> 2 -> 0 (each beat the next): strongly connected.
    assert strongly_connected(3, [0, 1, 0], [1, 2, 2], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0])
    # 0 beat 1, 1 beat 2, 0 beat 2: nobody beat 0.
    assert not strongly_connected(3, [0, 1, 0], [1, 2, 2], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    # Two groups that never met.
    assert not strongly_connected(4, [0, 2], [1, 3], [0.5, 0.5], [1.0, 1.0])


def test_groups_are_the_strongly_connected_components_in_order() -> None:
    # 0 beat 1 and 2; 1 and 2 drew; 3 never met anyone of them but drew with 4.
    parts, known = groups(5, [0, 0, 1, 3], [1, 2, 2, 4], [1.0, 1.0, 0.5, 0.5], [1.0] * 4)
    assert parts == [[0], [1, 2], [3, 4]] and known == [True, False]
    # A cycle is one group; one more player beaten by all of it is another.
    parts, known = groups(4, [0, 1, 0, 0], [1, 2, 2, 3], [1.0, 1.0, 0.0, 1.0], [1.0] * 4)
    assert parts == [[0, 1, 2], [3]] and known == [True]


def test_groups_match_mutual_reachability_on_random_graphs() -> None:
    """On 300 random comparison graphs: two players share a group exactly when
    each reaches the other, no arc runs from a later group to an earlier
    one, and ``known`` is whether the earlier group reaches the next."""
    rng = random.Random(5)
    for _ in range(300):
        n = rng.randint(1, 9)
        i, j, w, m = [], [], [], []
        for a in range(n):
            for b in range(a + 1, n):
                if rng.random() < 0.5:
                    i.append(a)
                    j.append(b)
                    m.append(2.0)
                    w.append(rng.choice([0.0, 0.0, 1.0, 2.0, 2.0]))
        arcs = {(a, b) for a, b, x, y in zip(i, j, w, m, strict=True) if x > 0}
        arcs |= {(b, a) for a, b, x, y in zip(i, j, w, m, strict=True) if y - x > 0}
        reach = [{a} for a in range(n)]
        for _ in range(n):
            for a, b in arcs:
                reach[a] |= reach[b]
        parts, known = groups(n, i, j, w, m)
        where = {v: k for k, part in enumerate(parts) for v in part}
        assert sorted(where) == list(range(n))
        for a in range(n):
            for b in range(n):
                assert (where[a] == where[b]) == (b in reach[a] and a in reach[b])
        assert all(where[a] <= where[b] for a, b in arcs)
        for k, ordered in enumerate(known):
            assert ordered == (parts[k + 1][0] in reach[parts[k][0]])


def test_a_chain_of_clean_sweeps_is_an_order_and_nothing_more() -> None:
    """A always beat B, B always beat C: three groups of one. Only the order
    is known: each is rated 1500 on its own, with no interval and no
    difference to the next. (One fit with the prior rated them about 1620,
    1500 and 1380, gaps that came from the prior.)"""
    chain = _head_to_head("A", "B", 5, 0) + _head_to_head("B", "C", 5, 0)
    result = bradley_terry(chain, bootstrap=50)
    assert [(p.name, p.group, p.rating, p.low) for p in result.players] == [
        ("A", 1, 1500.0, None),
        ("B", 2, 1500.0, None),
        ("C", 3, 1500.0, None),
    ]
    assert result.groups == (("A",), ("B",), ("C",)) and result.ordered == (True, True)
    assert all(not n.same_group and n.difference is None for n in result.neighbours)
    (note,) = result.notes
    assert "only the order of 3 groups" in note
    assert "group 1 (A) outscored group 2 (B) in every comparison" in note
    assert "no rating difference across groups is given" in note
    # One loss for A to C closes the cycle: one group, pure maximum likelihood again.
    closed = bradley_terry(chain + _head_to_head("C", "A", 1, 0), bootstrap=0)
    assert not closed.prior_used and closed.notes == () and len(closed.groups) == 1
    # The one fit of old, with the prior, is still there for comparison.
    joint = bradley_terry(chain, bootstrap=0, split=False)
    assert joint.prior_used and joint.groups == (("A", "B", "C"),)
    (old,) = joint.notes
    assert "A won every comparison" in old and "C lost every comparison" in old
    assert "an imaginary player rated 1500" in old


def _two_strong_two_weak(sets: int, seed: int = 0) -> list[GameResult]:
    """Two strong bots that always outscore two weak ones; inside each pair,
    who wins is a coin toss. Duplicate sets of 4 games."""
    rng = random.Random(seed)
    out = []
    for d in range(sets):
        for _ in range(4):
            strong = [100 + rng.randrange(10), 100 + rng.randrange(10)]
            weak = [rng.randrange(10), rng.randrange(10)]
            out.append(GameResult(("s1", "s2", "w1", "w2"), (*strong, *weak), f"d{d}"))
    return out


@pytest.mark.parametrize("sets", [10, 160])
def test_groups_apart_get_no_gap_from_the_prior(sets: int) -> None:
    """The one fit with the prior rated the better of the strong pair 1967
    [1923, 2013] at 10 sets and 2190 [2177, 2203] at 160 (the weak pair about
    1050 and 815): intervals that exclude each other, a gap made by the prior
    that grows with the games. Now each pair is rated within
    itself: ratings near 1500 in both groups at any number of sets, intervals
    that hold 1500, and no difference or interval across the groups."""
    result = bradley_terry(_two_strong_two_weak(sets), bootstrap=200)
    assert [set(g) for g in result.groups] == [{"s1", "s2"}, {"w1", "w2"}]
    for p in result.players:
        assert p.low is not None and p.high is not None
        assert p.low <= 1500.0 <= p.high and abs(p.rating - 1500.0) < 100
    upper, across, lower = result.neighbours
    assert upper.same_group and lower.same_group and not across.same_group
    assert across.difference is None and across.low is None and across.los is None
    assert upper.low is not None and upper.high is not None and upper.los is not None
    assert upper.low <= upper.difference <= upper.high and 0.5 <= upper.los <= 1.0
    old = bradley_terry(_two_strong_two_weak(sets), bootstrap=200, split=False)
    top = old.players[0]
    assert top.low is not None and top.low > 1900  # the prior-made gap


def test_neighbours_difference_interval_and_likelihood_of_superiority() -> None:
    """A beats B 70-30 and B beats C 55-45 over 100 games a pair, in
    duplicate sets of 10 games: the difference A - B is 400 log10(7/3)
    = 147.2 apart from the fit's coupling, clearly positive (LOS near 1);
    B - C is small and its interval holds 0."""
    games = []
    for d in range(10):
        for k in range(10):
            games.append(GameResult(("A", "B"), (1, 0) if k < 7 else (0, 1), f"ab{d}"))
            games.append(GameResult(("B", "C"), (1, 0) if (k + d) % 20 < 11 else (0, 1), f"bc{d}"))
    games.append(GameResult(("A", "C"), (1, 0), "ac"))
    games.append(GameResult(("A", "C"), (0, 1), "ac"))
    result = bradley_terry(games, bootstrap=300, seed=3)
    ab, bc = result.neighbours
    assert (ab.upper, ab.lower, bc.upper, bc.lower) == ("A", "B", "B", "C")
    r = result.by_name()
    assert ab.difference == pytest.approx(r["A"].rating - r["B"].rating)
    assert ab.low is not None and ab.high is not None and ab.los is not None
    assert 0 < ab.low < ab.difference < ab.high and ab.los > 0.99
    assert bc.low is not None and bc.high is not None and bc.los is not None
    assert bc.low < 0 < bc.high and 0.5 < bc.los < 0.99
    none = bradley_terry(games, bootstrap=0)
    assert none.neighbours[0].difference == ab.difference and none.neighbours[0].low is None


def test_prior_is_one_virtual_draw_against_1500() -> None:
    """One game, A beats B. With one virtual draw each against a pseudo-player at
    0 (natural-log strength), symmetry gives A = +x, B = -x maximising
    log s(2x) + log s(x) + log s(-x), s the logistic function: the root of
    2 s(-2x) + s(-x) - s(x) = 0."""
    result = bradley_terry([GameResult(("A", "B"), (1, 0))], bootstrap=0, split=False)
    assert result.prior_used

    def s(t: float) -> float:
        return 1 / (1 + math.exp(-t))

    x = _bisect(lambda t: -(2 * s(-2 * t) + s(-t) - s(t)), 0.0, 5.0)
    r = result.by_name()
    assert r["A"].rating == pytest.approx(1500 + ELO_PER_NAT * x, abs=1e-6)
    assert r["B"].rating == pytest.approx(1500 - ELO_PER_NAT * x, abs=1e-6)


# --------------------------------------------------------------------------- bootstrap


def test_bootstrap_intervals_are_seeded_and_cover_the_estimate() -> None:
    games = _random_pool(5, 200, seed=1)
    a = bradley_terry(games, bootstrap=100, seed=1)
    assert a.bootstrap == 100
    assert a.players == bradley_terry(games, bootstrap=100, seed=1).players
    assert a.players != bradley_terry(games, bootstrap=100, seed=2).players
    for p in a.players:
        assert p.low is not None and p.high is not None
        assert p.low < p.rating < p.high
    none = bradley_terry(games, bootstrap=0)
    assert all(p.low is None and p.high is None for p in none.players)
    assert [p.rating for p in none.players] == [p.rating for p in a.players]


def test_bootstrap_keeps_duplicate_sets_together() -> None:
    # Each duplicate set is the same deal played both ways round: A wins one, B the other.
    # Resampling whole sets keeps A and B exactly even in every resample; resampling
    # single games does not.
    games = []
    for s in range(40):
        games.append({"players": ["A", "B"], "scores": [9, 1], "duplicate_set": s})
        games.append({"players": ["B", "A"], "scores": [9, 1], "duplicate_set": s})
    by_set = bradley_terry(games, bootstrap=200, seed=3).by_name()
    assert by_set["A"].low == pytest.approx(1500.0) and by_set["A"].high == pytest.approx(1500.0)
    loose = [{k: v for k, v in g.items() if k != "duplicate_set"} for g in games]
    by_game = bradley_terry(loose, bootstrap=200, seed=3).by_name()
    low, high = by_game["A"].low, by_game["A"].high
    assert low is not None and high is not None
    assert low < 1480 and high > 1520


def test_bootstrap_resamples_without_finite_mle_use_the_prior_and_say_so() -> None:
    # A beat B 3-1; a resample of those four games has A winning all of them with
    # probability (3/4)^4, about 0.32: no finite MLE there.
    result = bradley_terry(_head_to_head("A", "B", 3, 1), bootstrap=200, seed=0)
    assert not result.prior_used
    assert 0 < result.bootstrap_prior_used < 200
    assert any("the imaginary extra draw against a 1500 player was used" in n for n in result.notes)


# --------------------------------------------------------------------------- input


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ([1, 2], "expected a JSON object"),
        ({"scores": [1, 2]}, 'missing key "players"'),
        ({"players": "ab", "scores": [1, 2]}, '"players" must be a list'),
        ({"players": ["a"], "scores": [1]}, "at least 2 players"),
        ({"players": ["a", "b"], "scores": [1]}, "2 players but 1 scores"),
        ({"players": ["a", "a"], "scores": [1, 2]}, "listed twice in one game: a"),
        ({"players": ["a", ""], "scores": [1, 2]}, "non-empty strings"),
        ({"players": ["a", 3], "scores": [1, 2]}, "non-empty strings"),
        ({"players": ["a", "b"], "scores": [1, True]}, "finite numbers"),
        ({"players": ["a", "b"], "scores": [1, float("nan")]}, "finite numbers"),
        ({"players": ["a", "b"], "scores": [1, "2"]}, "finite numbers"),
        ({"players": ["a", "b"], "scores": [1, 2], "duplicate_set": 1.5}, "duplicate_set"),
    ],
)
def test_malformed_results_are_refused(obj: object, message: str) -> None:
    with pytest.raises(ResultFormatError, match=message):
        game_from_dict(obj)


def test_extra_keys_are_allowed() -> None:
    g = game_from_dict(
        {"players": ["a", "b"], "scores": [1, 2], "game_id": "x", "duplicate_set": "s"}
    )
    assert g == GameResult(("a", "b"), (1, 2), "s")


def test_docstring_examples() -> None:
    import doctest

    from wizard_referee.ratings import models as ratings

    assert doctest.testmod(ratings).failed == 0


def test_bt_three_bots_consistent_records_give_plus_minus_190_85() -> None:
    """The worked example: A beats B 75-25, B beats C 75-25, A beats C 90-10.

    The records are mutually consistent on the Elo curve: 75-25 is a gap of
    400*log10(3) = 190.85 and 90-10 is 400*log10(9) = 2 * 190.85, so the fit is
    exactly A = 1500 + 190.85, B = 1500, C = 1500 - 190.85.
    """
    games = (
        [GameResult(("A", "B"), (1, 0))] * 75
        + [GameResult(("A", "B"), (0, 1))] * 25
        + [GameResult(("B", "C"), (1, 0))] * 75
        + [GameResult(("B", "C"), (0, 1))] * 25
        + [GameResult(("A", "C"), (1, 0))] * 90
        + [GameResult(("A", "C"), (0, 1))] * 10
    )
    r = bradley_terry(games, bootstrap=0).by_name()
    assert r["A"].rating == pytest.approx(1690.85, abs=0.01)
    assert r["B"].rating == pytest.approx(1500.00, abs=0.01)
    assert r["C"].rating == pytest.approx(1309.15, abs=0.01)


def test_bt_single_unit_gives_no_interval() -> None:
    games = [
        GameResult(("a", "b", "c"), (30, 20, 10), duplicate_set="t0-d0"),
        GameResult(("b", "c", "a"), (30, 20, 10), duplicate_set="t0-d0"),
        GameResult(("c", "a", "b"), (30, 20, 10), duplicate_set="t0-d0"),
    ]
    result = bradley_terry(games, bootstrap=200)
    assert all(p.low is None and p.high is None for p in result.players)
    assert any("no 95% interval" in n for n in result.notes)

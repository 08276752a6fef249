"""Bradley-Terry fits of many weightings of the same comparisons at once
(numpy): the point fit and every bootstrap resample of :mod:`.models`.

The comparisons are held as entries ``(pair, unit, w, m)``: in resampling
unit ``unit`` the players of ``pair`` met ``m`` times and the first scored
``w`` (wins plus half the draws). A resample weights each unit by the number
of times it was drawn; :meth:`Comparisons.totals` sums the entries of a whole
batch of resamples into per-pair totals.

:func:`fit` runs the algorithm of :mod:`.models` on a batch: Newton's method
on the concave log-likelihood, each Newton system solved directly (dense,
one player's step held at 0 when no prior anchors the scale), a
backtracking line search, and the stopping rule "the largest step below
``tol`` Elo points", each resample on its own (a converged one is left
alone while the others go on).

:func:`resample_counts` draws the same resamples as
``random.Random(seed).choices(range(units), k=units)`` repeated: numpy's
Mersenne Twister is started from the state of the :class:`random.Random`
and draws its doubles exactly as CPython does (53 bits from two 32-bit
outputs), so the intervals are those the pure-Python implementation gave.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["Comparisons", "ConvergenceError", "fit", "resample_counts"]

Floats = NDArray[np.float64]
Ints = NDArray[np.int64]

#: Elements (resamples x players x players, about) held at once while fitting.
BATCH_ELEMENTS = 4_000_000
#: Elements of one dense block of comparisons (units x 2 pairs, single precision).
BLOCK_ELEMENTS = 4_000_000
#: Dense blocks of at most this many elements in all are kept between uses.
KEEP_ELEMENTS = 16_000_000
#: Comparisons are summed as a dense product (units x 2 pairs, by BLAS) when
#: that has at most this many elements per entry, else entry by entry.
DENSE_RATIO = 64


class ConvergenceError(RuntimeError):
    """A fit that did not converge within its iterations."""


@dataclass(frozen=True)
class Comparisons:
    n: int
    """Players 0..n-1."""
    pair_a: Ints
    """The pairs that met (a < b), P of them."""
    pair_b: Ints
    units: int
    entry_pair: Ints
    """Sorted: each pair's entries in a run."""
    entry_unit: Ints
    entry_w: Floats
    entry_m: Floats

    def totals(self, counts: Ints | None) -> tuple[Floats, Floats]:
        """Per-pair ``w`` and ``m`` for each row of ``counts`` (resamples x
        units: how often each unit was drawn), or once for all the data
        (``counts`` None: shape (1, P)). The sums are of multiples of 1/2
        far below 2**23, so exact in single precision whatever the order of
        summation."""
        pairs = len(self.pair_a)
        if counts is None:
            starts = np.searchsorted(self.entry_pair, np.arange(pairs))
            w = np.add.reduceat(self.entry_w, starts)
            m = np.add.reduceat(self.entry_m, starts)
            return w[None, :], m[None, :]
        weights = counts.astype(np.float32)
        if self.units * 2 * pairs > DENSE_RATIO * len(self.entry_unit):
            # sparse (many pairs, each unit holds few): sum the entries, pair by pair
            starts = np.searchsorted(self.entry_pair, np.arange(pairs))
            taken = weights[:, self.entry_unit]  # (B, E)
            w = np.add.reduceat(taken * self.entry_w.astype(np.float32), starts, axis=1)
            m = np.add.reduceat(taken * self.entry_m.astype(np.float32), starts, axis=1)
            return w.astype(np.float64), m.astype(np.float64)
        both = np.zeros((len(counts), 2 * pairs), dtype=np.float32)
        for lo, hi, dense in self._blocks():
            both += weights[:, lo:hi] @ dense
        return both[:, :pairs].astype(np.float64), both[:, pairs:].astype(np.float64)

    def _blocks(self) -> Iterator[tuple[int, int, NDArray[np.float32]]]:
        """The comparisons as dense (units x 2P) blocks, ``w`` then ``m`` per
        pair: kept when they are small, else made again for each use."""
        cached: list[tuple[int, int, NDArray[np.float32]]] | None = self.__dict__.get("_dense")
        if cached is not None:
            yield from cached
            return
        pairs = len(self.pair_a)
        rows = max(1, BLOCK_ELEMENTS // (2 * pairs))
        order = np.argsort(self.entry_unit, kind="stable")
        units = self.entry_unit[order]
        made = []
        for lo in range(0, self.units, rows):
            hi = min(self.units, lo + rows)
            a, b = np.searchsorted(units, [lo, hi])
            sel = order[a:b]
            dense = np.zeros((hi - lo, 2 * pairs), dtype=np.float32)
            dense[self.entry_unit[sel] - lo, self.entry_pair[sel]] = self.entry_w[sel]
            dense[self.entry_unit[sel] - lo, pairs + self.entry_pair[sel]] = self.entry_m[sel]
            made.append((lo, hi, dense))
            yield lo, hi, dense
        if self.units * 2 * pairs <= KEEP_ELEMENTS:
            self.__dict__["_dense"] = made


def resample_counts(rng: random.Random, units: int, resamples: int, batch: int) -> Iterator[Ints]:
    """Batches (at most ``batch`` rows) of unit counts, row r the counts of
    ``rng.choices(range(units), k=units)`` at the r-th call; ``rng`` is left
    where those calls would have left it."""
    version, internal, gauss = rng.getstate()
    state = np.random.RandomState()
    state.set_state(("MT19937", np.array(internal[:-1], dtype=np.uint32), internal[-1], 0, 0.0))
    done = 0
    while done < resamples:
        rows = min(batch, resamples - done)
        u = state.random_sample(rows * units)
        drawn = np.floor(u * float(units)).astype(np.int64).reshape(rows, units)
        offsets = (np.arange(rows) * units)[:, None]
        counts = np.bincount((drawn + offsets).ravel(), minlength=rows * units)
        yield counts.reshape(rows, units)
        done += rows
    _, key, pos, _, _ = state.get_state()
    rng.setstate((version, (*(int(k) for k in key), int(pos)), gauss))


def _softplus(d: Floats) -> Floats:
    result: Floats = np.maximum(d, 0.0) + np.log1p(np.exp(-np.abs(d)))
    return result


def _sigmoid(d: Floats) -> Floats:
    e = np.exp(-np.abs(d))
    result: Floats = np.where(d >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
    return result


@dataclass
class _Problem:
    """A batch of B weightings of the same pairs."""

    c: Comparisons
    w: Floats  # (B, P)
    m: Floats  # (B, P)
    prior: Floats  # (B,)
    present: NDArray[np.bool_]  # (B, n)
    ground: Ints  # (B,) the player whose step is 0 (when no prior)

    def loglik(self, theta: Floats) -> Floats:
        d = theta[:, self.c.pair_a] - theta[:, self.c.pair_b]
        total: Floats = (self.w * d - self.m * _softplus(d)).sum(axis=1)
        anchor = (0.5 * theta - _softplus(theta)) * self.present
        result: Floats = total + self.prior * anchor.sum(axis=1)
        return result

    def newton_step(self, theta: Floats) -> Floats:
        c = self.c
        rows, n = theta.shape
        d = theta[:, c.pair_a] - theta[:, c.pair_b]
        e = _sigmoid(d)
        h = self.m * e * (1.0 - e)
        grad = np.zeros((rows, n))
        grad += self.prior[:, None] * self.present * (0.5 - _sigmoid(theta))
        r = np.arange(rows)[:, None]
        np.add.at(grad, (r, c.pair_a[None, :]), self.w - self.m * e)
        np.add.at(grad, (r, c.pair_b[None, :]), (self.m - self.w) - self.m * (1.0 - e))
        q = _sigmoid(theta)
        hess = np.zeros((rows, n, n))
        hess[:, c.pair_a, c.pair_b] = -h
        hess[:, c.pair_b, c.pair_a] = -h
        diag = -hess.sum(axis=2) + self.prior[:, None] * self.present * q * (1.0 - q)
        absent = ~self.present
        diag = np.where(absent, 1.0, diag)  # no data: a step of 0
        grad = np.where(absent, 0.0, grad)
        idx = np.arange(n)
        hess[:, idx, idx] = diag
        free = self.prior == 0.0
        if free.any():  # shift invariance: hold one present player's step at 0
            b = np.nonzero(free)[0]
            g = self.ground[b]
            hess[b, g, :] = 0.0
            hess[b, :, g] = 0.0
            hess[b, g, g] = 1.0
            grad[b, g] = 0.0
        return np.asarray(np.linalg.solve(hess, grad[:, :, None])[:, :, 0], dtype=np.float64)


def fit(
    c: Comparisons,
    w: Floats,
    m: Floats,
    prior: Floats,
    theta0: Floats,
    *,
    tol: float,
    max_iter: int = 200,
) -> tuple[Floats, NDArray[np.bool_], int]:
    """Maximum-likelihood natural-log strengths of each row (the players
    with comparisons in it, centred on their mean; the others NaN), which
    players are present in each row, and the most Newton iterations a row
    needed. ``prior[r]`` > 0 adds that many virtual draws per present player
    against a pseudo-player fixed at 0; without it the caller guarantees a
    finite fit (the row's comparison graph is strongly connected)."""
    rows = w.shape[0]
    present = np.zeros((rows, c.n), dtype=bool)
    met = m > 0
    np.logical_or.at(present, (np.arange(rows)[:, None], c.pair_a[None, :]), met)
    np.logical_or.at(present, (np.arange(rows)[:, None], c.pair_b[None, :]), met)
    theta = np.where(present, theta0, 0.0)
    out = np.empty_like(theta)
    most = 0
    batch = max(1, BATCH_ELEMENTS // (c.n * c.n + len(c.pair_a) + 1))
    for lo in range(0, rows, batch):
        sl = slice(lo, lo + batch)
        problem = _Problem(c, w[sl], m[sl], prior[sl], present[sl], np.argmax(present[sl], axis=1))
        out[sl], used = _newton(problem, theta[sl].copy(), tol, max_iter)
        most = max(most, used)
    count = present.sum(axis=1, keepdims=True)
    mean = np.where(present, out, 0.0).sum(axis=1, keepdims=True) / np.maximum(count, 1)
    return np.where(present, out - mean, np.nan), present, most


def _newton(p: _Problem, theta: Floats, tol: float, max_iter: int) -> tuple[Floats, int]:
    tol_nat = tol / (400.0 / math.log(10.0))
    ll = p.loglik(theta)
    active = np.ones(theta.shape[0], dtype=bool)
    iterations = 0
    while active.any():
        iterations += 1
        if iterations > max_iter:
            raise ConvergenceError(f"Bradley-Terry fit did not converge in {max_iter} iterations")
        sub = _Problem(
            p.c, p.w[active], p.m[active], p.prior[active], p.present[active], p.ground[active]
        )
        th = theta[active]
        step = sub.newton_step(th)
        size = np.abs(step).max(axis=1)
        base = ll[active]
        t = np.ones(len(th))
        searching = np.ones(len(th), dtype=bool)
        trial = th.copy()
        ll_trial = base.copy()
        while searching.any():
            trial[searching] = th[searching] + t[searching, None] * step[searching]
            ll_trial[searching] = _rows_loglik(sub, trial, searching)
            ok = (ll_trial >= base - 1e-12 * (1.0 + np.abs(base))) | (t * size < tol_nat)
            searching &= ~ok
            t = np.where(searching, 0.5 * t, t)
        rows = np.nonzero(active)[0]
        theta[rows] = trial
        ll[rows] = ll_trial
        active[rows[t * size < tol_nat]] = False
    return theta, iterations


def _rows_loglik(p: _Problem, theta: Floats, rows: NDArray[np.bool_]) -> Floats:
    sub = _Problem(p.c, p.w[rows], p.m[rows], p.prior[rows], p.present[rows], p.ground[rows])
    return sub.loglik(theta[rows])

"""How the 6-player seating design was found, and why 4 and 6 need more than
cyclic orders played in every rotation (server/wizard_referee/tournament/seating.py).

    python scripts/search_seating.py            # about a minute

1. Exhaustive check: the complete directed graph on 4 or on 6 vertices has no
   decomposition into k - 1 Hamiltonian cycles (on 5 it has; Tillson 1980 for
   even k >= 8). So at 4 and 6 no set of cyclic orders, each played in every
   rotation, covers every ordered pair of neighbours exactly once.
2. Exact search for a 30-game design at 6 among "1-rotational" ones: member
   5 fixed, six base seatings whose members 0..4 are shifted by 0..4 (mod 5).
   Every member then sits in every seat 5 times whatever the base seatings;
   the search asks, in addition, that every ordered pair of members sit at
   every distance (1, 2, 3 seats apart) 6 times, and that for as many pairs
   of neighbouring seats as possible every ordered pair of members sit in
   them exactly once (the sharper balance the designs at 3, 4 and 5 have for
   every pair of seats). Four neighbouring pairs can; five cannot. Among the
   first solutions with four, it prints one with the most such pairs of any
   distance (7 of 15): BALANCED_6 in seating.py.

The symmetries x -> a*x + b (mod 5) keep every condition, so the first base
seating is fixed to start (5, 0, 1).
"""

from __future__ import annotations

import itertools
import sys
import time
from collections.abc import Sequence

FIXED = 5


def has_hamiltonian_decomposition(k: int) -> bool:
    """Whether the arcs of the complete directed graph on k vertices split into
    k - 1 directed Hamiltonian cycles (exhaustive, cycles through vertex 0)."""
    cycles = []
    for rest in itertools.permutations(range(1, k)):
        order = (0, *rest)
        cycles.append(frozenset((order[i], order[(i + 1) % k]) for i in range(k)))

    def extend(used: frozenset[tuple[int, int]], start: int, left: int) -> bool:
        if left == 0:
            return True
        for i in range(start, len(cycles)):
            if not used & cycles[i] and extend(used | cycles[i], i + 1, left - 1):
                return True
        return False

    return extend(frozenset(), 0, k - 1)


def _distance_diffs(row: Sequence[int], d: int) -> list[int]:
    k = len(row)
    return [
        (row[(s + d) % k] - row[s]) % 5 for s in range(k) if FIXED not in (row[s], row[(s + d) % k])
    ]


def search(orthogonal: Sequence[tuple[int, int]], limit: int = 1) -> list[list[tuple[int, ...]]]:
    """Base seatings of a 1-rotational 6-player design (see the module doc)."""
    k = 6
    rows: list[list[int]] = []
    seen: dict[tuple[int, int], set[int]] = {p: set() for p in orthogonal}
    count = {d: [0] * 5 for d in (1, 2, 3)}
    found: list[list[tuple[int, ...]]] = []

    def rec(r: int) -> bool:
        if r == k:
            found.append([tuple(x) for x in rows])
            return len(found) >= limit
        seats = [s for s in range(k) if s != r]
        for perm in itertools.permutations(range(5)):
            row = [FIXED] * k
            for s, v in zip(seats, perm, strict=True):
                row[s] = v
            if r == 0 and (row[1], row[2]) != (0, 1):
                continue
            added: list[tuple[tuple[int, int], int]] = []
            for s, t in orthogonal:
                if FIXED in (row[s], row[t]):
                    continue
                diff = (row[t] - row[s]) % 5
                if diff in seen[(s, t)] or any(a == (s, t) and b == diff for a, b in added):
                    break
                added.append(((s, t), diff))
            else:
                diffs = {d: _distance_diffs(row, d) for d in count}
                for d, ds in diffs.items():
                    for x in ds:
                        count[d][x] += 1
                if all(c <= 6 for d in count for c in count[d]):
                    for p, diff in added:
                        seen[p].add(diff)
                    rows.append(row)
                    if rec(r + 1):
                        return True
                    rows.pop()
                    for p, diff in added:
                        seen[p].discard(diff)
                for d, ds in diffs.items():
                    for x in ds:
                        count[d][x] -= 1
        return False

    rec(0)
    return found


def orthogonal_pairs(base: Sequence[Sequence[int]]) -> list[tuple[int, int]]:
    """Pairs of seats in which every ordered pair of members sits exactly once."""
    out = []
    for s, t in itertools.combinations(range(6), 2):
        diffs = [(r[t] - r[s]) % 5 for r in base if FIXED not in (r[s], r[t])]
        if len(set(diffs)) == 4:
            out.append((s, t))
    return out


def main() -> int:
    start = time.monotonic()
    for k in (4, 5, 6):
        print(f"K*_{k} splits into {k - 1} Hamiltonian cycles: {has_hamiltonian_decomposition(k)}")
    four = [(0, 1), (1, 2), (2, 3), (3, 4)]
    five = [*four, (4, 5)]
    print(f"5 neighbouring seat pairs exact: {'yes' if search(five) else 'impossible'}")
    solutions = search(four, limit=3000)
    best = max(solutions, key=lambda b: len(orthogonal_pairs(b)))
    print(f"4 neighbouring seat pairs exact: {len(solutions)} solutions looked at; best:")
    for row in best:
        print(f"    {row},")
    print(f"seat pairs exact: {orthogonal_pairs(best)}")
    print(f"({time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

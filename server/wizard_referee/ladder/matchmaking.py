"""Matchmaking: which available entries form the next table.

The policy (docs/ladder.md, "Matchmaking"), for tables of k:

1. **The anchor**: of the entries available now (connected or startable,
   not at a table), the one with the fewest finished sets; among equals
   the most uncertain (largest live sigma), then the one waiting longest.
   New and unsettled entries are seated first: their games inform most.
2. **Opponents**, seat by seat: with probability ``random_share`` (0.25)
   an available entry drawn uniformly; otherwise the one whose live
   rating (mu) is nearest the anchor's, each time it sat with a member of
   the table in their recent sets costing ``repeat_cost`` (2 points of mu)
   more; ties drawn at random.
3. **Never the same table again and again**: the last seat avoids
   completing a table that is among the last ``recent`` (3) tables of any
   member, while another entry can take it. When none can, the table is
   not formed at once: the set just ended, its members are the only ones
   free, and they would sit down together again and again while the other
   tables play on (a ladder of 4k entries would split into k groups that
   never meet). It is formed only once the anchor has waited ``patience``
   seconds (the runner sets it to half a set's usual duration), or when no
   other entry is at a table, so that none can come free.

The random share keeps the comparison graph connected whatever the field:
any two entries available at once meet with positive probability, whatever
their ratings; with the waiting rule, entries finishing their sets at
different times meet; and the anchor rule gives every entry that is
available a table within a few rounds of matchmaking, so every active
entry's sets grow without bound (:mod:`.simulate` measures both, and the
intervals' coverage).

The matchmaker is pure: no clock (the time is given), no I/O, its
randomness from the :class:`random.Random` it is given. The runner and
the simulations share it.

>>> m = Matchmaker(Policy(players=3), random.Random(1))
>>> field = [Candidate(k, mu=25.0 + k, sigma=8.0, sets=k % 2, since=0.0) for k in range(6)]
>>> table = m.table(field)
>>> len(table), 0 in table  # entry 0 (no set yet, the first waiting) anchors it
(3, True)
>>> m.table(field[:2]) is None  # too few for a table
True
>>> again = [c for c in field if c.key in table]
>>> m.table(again, now=0.5, busy=3) is None  # the same three, others at tables: wait
True
>>> sorted(m.table(again, now=m.patience, busy=3)) == sorted(table)  # waited long enough
True
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Candidate", "Matchmaker", "Policy"]


@dataclass(frozen=True)
class Candidate:
    """An entry available for a table now."""

    key: int
    mu: float
    sigma: float
    sets: int
    """Finished sets it played."""
    since: float
    """When it became available (its wait began)."""


@dataclass(frozen=True)
class Policy:
    players: int
    random_share: float = 0.25
    """Share of the opponents' seats filled by a uniform draw."""
    repeat_cost: float = 2.0
    """Points of mu added to an opponent's distance for each recent set it
    shared with a member of the table."""
    recent: int = 3
    """Tables per entry remembered: the last seat avoids repeating any of them."""
    patience: float = 1.0
    """Seconds an anchor waits before it sits down with a table it had
    recently, when other entries are at tables (the runner changes it:
    :attr:`Matchmaker.patience`)."""


class Matchmaker:
    def __init__(self, policy: Policy, rng: random.Random) -> None:
        self.policy = policy
        self.rng = rng
        self.history: dict[int, deque[frozenset[int]]] = {}
        """Each entry's last ``recent`` tables."""
        self.patience = policy.patience
        """Seconds an anchor waits rather than repeat a recent table (the
        runner keeps it at half a set's usual duration)."""

    def record(self, members: Iterable[int]) -> None:
        """A table formed (by :meth:`table`, or before a restart)."""
        table = frozenset(members)
        for m in table:
            self.history.setdefault(m, deque(maxlen=self.policy.recent)).append(table)

    def _met(self, member: int, other: int) -> int:
        return sum(1 for t in self.history.get(member, ()) if other in t)

    def table(
        self, available: Sequence[Candidate], now: float = 0.0, busy: int = 0
    ) -> list[int] | None:
        """The next table's members, in seat order (recorded), or None: fewer
        than a table are available, or the only table would repeat a recent
        one while ``busy`` entries (at tables) may come free and the anchor
        has waited less than :attr:`patience` (its wait began at ``since``;
        the time now is ``now``)."""
        k = self.policy.players
        if len(available) < k:
            return None
        anchor = min(available, key=lambda c: (c.sets, -c.sigma, c.since, c.key))
        chosen = [anchor]
        rest = [c for c in available if c is not anchor]
        self.rng.shuffle(rest)  # equal costs: drawn at random
        while len(chosen) < k:
            options = rest
            if len(chosen) == k - 1:
                keys = [c.key for c in chosen]
                seen = {t for m in keys for t in self.history.get(m, ())}
                fresh = [c for c in rest if frozenset([*keys, c.key]) not in seen]
                if not fresh and busy and now - anchor.since < self.patience:
                    return None  # wait for others to come free
                options = fresh or rest
            if self.rng.random() < self.policy.random_share:
                pick = self.rng.choice(options)
            else:
                pick = min(
                    options,
                    key=lambda c: (
                        abs(c.mu - anchor.mu)
                        + self.policy.repeat_cost * sum(self._met(m.key, c.key) for m in chosen)
                    ),
                )
            chosen.append(pick)
            rest.remove(pick)
        members = [c.key for c in chosen]
        self.rng.shuffle(members)
        self.record(members)
        return members

"""A league of earlier policies to train against: snapshots and opponent sampling.

Self-play against only the latest policy can chase its own tail: a new
version learns to beat the last one and forgets how to beat older ones. A
league keeps **snapshots** of earlier versions (:meth:`League.add` stores a
deep copy, so training the live model further in place does not change
them) and **samples** an opponent for each game from them:

- ``mode="uniform"``: every member alike (fictitious self-play);
- ``mode="pfsp"``: prioritized fictitious self-play, as AlphaStar's league:
  a member is drawn with weight ``(1 - p) ** power``, where ``p`` is the
  learner's win rate against it so far (:meth:`League.record`), so the
  members the learner still loses to come up more often. A member not yet
  played counts as ``p = 1/2`` (the win rate is ``(wins + 1) / (games + 2)``).

``capacity`` keeps only the latest members (the first one added, the
anchor, stays). The draws come from the league's own
:class:`random.Random` (``seed``), never from the global generator, so a
seeded training run samples the same opponents every time. A policy is
anything: a model's weights, a :class:`~wizard_arena.bot.Bot` factory, a
file name. Pure Python.

>>> league = League(seed=1, mode="pfsp")
>>> first = league.add({"w": [0.0]}, name="v0")
>>> second = league.add({"w": [1.0]}, name="v1")
>>> for _ in range(8):
...     league.record("v0", 1.0)  # the learner beats v0 every time
>>> league.win_rate("v0"), league.win_rate("v1")
(0.9, 0.5)
>>> sorted({league.sample().name for _ in range(20)})
['v0', 'v1']
>>> [round(w, 3) for w in league.weights()]
[0.167, 0.833]
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

__all__ = ["League", "Member"]

P = TypeVar("P")
Mode = Literal["uniform", "pfsp"]


@dataclass
class Member(Generic[P]):
    """One snapshot in the league and the learner's record against it."""

    name: str
    policy: P
    games: int = 0
    """Games recorded against this member."""
    score: float = 0.0
    """The learner's results against it: 1 a win, 1/2 a draw, 0 a loss."""

    @property
    def win_rate(self) -> float:
        """The learner's win rate against this member, ``(score + 1) / (games + 2)``."""
        return (self.score + 1.0) / (self.games + 2.0)


class League(Generic[P]):
    """Snapshots of earlier policies, and opponents sampled from them."""

    def __init__(
        self,
        seed: int | None = 0,
        *,
        mode: Mode | str = "uniform",
        power: float = 1.0,
        capacity: int | None = None,
        snapshot: Callable[[P], P] = copy.deepcopy,
    ) -> None:
        if mode not in ("uniform", "pfsp"):
            raise ValueError(f"mode is 'uniform' or 'pfsp', not {mode!r}")
        if capacity is not None and capacity < 1:
            raise ValueError("capacity must be at least 1")
        if power < 0:
            raise ValueError("power must not be negative")
        self.mode = mode
        self.power = power
        self.capacity = capacity
        self.snapshot = snapshot
        self.rng = random.Random(seed)
        self.members: list[Member[P]] = []
        self.added = 0
        """Members added so far (those dropped for ``capacity`` included)."""

    def __len__(self) -> int:
        return len(self.members)

    def add(self, policy: P, name: str | None = None) -> Member[P]:
        """Add a snapshot of ``policy`` (``snapshot(policy)``, a deep copy by
        default) as the newest member; over ``capacity``, the oldest member
        after the first leaves. The default name is ``v`` and the number of
        members added before it."""
        name = name if name is not None else f"v{self.added}"
        if any(m.name == name for m in self.members):
            raise ValueError(f"the league already has a member {name!r}")
        member = Member(name, self.snapshot(policy))
        self.members.append(member)
        self.added += 1
        if self.capacity is not None and len(self.members) > self.capacity:
            del self.members[1 if self.capacity > 1 else 0]
        return member

    def member(self, name: str) -> Member[P]:
        for m in self.members:
            if m.name == name:
                return m
        raise KeyError(name)

    @property
    def latest(self) -> Member[P]:
        if not self.members:
            raise IndexError("the league is empty")
        return self.members[-1]

    def weights(self) -> list[float]:
        """Each member's probability of being sampled (they sum to 1)."""
        if not self.members:
            return []
        if self.mode == "uniform":
            raw = [1.0] * len(self.members)
        else:
            raw = [(1.0 - m.win_rate) ** self.power for m in self.members]
        total = sum(raw)
        return [w / total for w in raw]

    def sample(self) -> Member[P]:
        """An opponent, drawn by :meth:`weights` from the league's generator."""
        if not self.members:
            raise IndexError("the league is empty: add a policy first")
        return self.rng.choices(self.members, weights=self.weights())[0]

    def record(self, member: Member[P] | str, outcome: float) -> None:
        """The learner's result in one game against ``member``: 1 a win, 0 a
        loss, 1/2 a draw (or a share between)."""
        if not 0.0 <= outcome <= 1.0:
            raise ValueError("an outcome is between 0 (a loss) and 1 (a win)")
        m = self.member(member) if isinstance(member, str) else member
        m.games += 1
        m.score += outcome

    def win_rate(self, member: Member[P] | str) -> float:
        """The learner's win rate against ``member`` (see :class:`Member`)."""
        m = self.member(member) if isinstance(member, str) else member
        return m.win_rate

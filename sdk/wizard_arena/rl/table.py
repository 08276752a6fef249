"""One game driven by action ids, for the environments: it deals by itself
between rounds and tells which rounds an action completed.

>>> table = Table(Rules(players=3), seed=1)
>>> table.to_act, table.game.round
(1, 1)
>>> table.act(table.to_act, 0)  # a bid of 0
[]
>>> while not table.over:
...     seat = table.to_act
...     scored = table.act(seat, action_id(table.game.legal_actions(seat)[0]))
>>> len(table.game.results), table.game.is_over
(20, True)
"""

from __future__ import annotations

from typing import Literal

from wizard_arena.rules import (
    Action,
    Game,
    Phase,
    RoundResult,
    RuleError,
    Rules,
    SeatView,
    action_text,
    default_action,
)

from .encoding import action_id, action_of  # noqa: F401  (action_id: doctest)

__all__ = [
    "ON_ILLEGAL",
    "IllegalActionError",
    "OnIllegal",
    "RewardKind",
    "Table",
    "check_options",
    "illegal_reward_for",
    "rank_rewards",
]

#: What an environment does with an illegal action: play the referee's
#: default action instead, as the arena does to a bot (``"default"``; the
#: step's info flags it); the same with a reward penalty (``"penalty"``); end
#: the game at once with the penalty as the offender's reward (``"terminate"``,
#: as PettingZoo's ``TerminateIllegalWrapper``); or raise IllegalActionError
#: (``"raise"``). docs/course.md weighs them.
OnIllegal = Literal["default", "penalty", "terminate", "raise"]
ON_ILLEGAL: tuple[OnIllegal, ...] = ("default", "penalty", "terminate", "raise")

#: What an environment rewards: each round's points as it is scored, or only
#: the game's final rank (+1 first .. -1 last, ties share).
RewardKind = Literal["points", "rank"]


class IllegalActionError(ValueError):
    """An action id the acting seat may not take now (the mask says which it may)."""


def illegal_reward_for(reward: RewardKind, illegal_reward: float | None) -> float:
    """The penalty of an illegal action: ``illegal_reward``, or by default what
    one trick off a bid costs (-10 points) with ``reward="points"``, the last
    place's reward (-1) with ``reward="rank"``.

    >>> illegal_reward_for("points", None), illegal_reward_for("rank", None)
    (-10.0, -1.0)
    """
    if illegal_reward is not None:
        return float(illegal_reward)
    return -10.0 if reward == "points" else -1.0


def check_options(reward: str, on_illegal: str) -> None:
    """Refuse an unknown ``reward`` or ``on_illegal`` (ValueError)."""
    if reward not in ("points", "rank"):
        raise ValueError(f"reward must be 'points' or 'rank', not {reward!r}")
    if on_illegal not in ON_ILLEGAL:
        raise ValueError(f"on_illegal must be one of {', '.join(ON_ILLEGAL)}, not {on_illegal!r}")


def rank_rewards(ranks: tuple[int, ...] | list[int]) -> list[float]:
    """+1 for rank 1 down to -1 for the last rank, linearly (ties share a rank).

    >>> [round(r, 3) for r in rank_rewards([1, 3, 2, 4])]
    [1.0, -0.333, 0.333, -1.0]
    """
    n = len(ranks)
    return [1.0 - 2.0 * (r - 1) / (n - 1) for r in ranks]


class Table:
    """A :class:`~wizard_arena.rules.Game` that deals as soon as a round is scored."""

    def __init__(self, rules: Rules, seed: int | None) -> None:
        self.rules = rules
        self.game = Game(rules, seed=seed)
        self.faults = [0] * rules.players
        """Illegal actions replaced by the default action, by seat."""
        self._deal()

    def _deal(self) -> None:
        game = self.game
        while game.phase is Phase.DEAL:
            game.deal()

    @property
    def over(self) -> bool:
        return self.game.is_over

    @property
    def to_act(self) -> int | None:
        """The seat to act (with hidden bids, the first still to bid); None when over."""
        acting = self.game.acting
        return acting[0] if acting else None

    def view(self, seat: int) -> SeatView:
        return self.game.view(seat)

    def apply(self, seat: int, action: Action) -> list[RoundResult]:
        """Apply ``seat``'s action (the rules refuse what is illegal: RuleError)
        and deal the next round if it completed one; the rounds it completed."""
        game = self.game
        done = len(game.results)
        game.apply(seat, action)
        scored = game.results[done:]
        if scored:
            self._deal()
        return scored

    def legal(self, seat: int, action: int) -> bool:
        """Whether ``seat`` may take the action with id ``action`` now."""
        try:
            return action_of(action) in self.game.legal_actions(seat)
        except ValueError:  # not an action id, or a reserved card slot
            return False

    def act(self, seat: int, action: int, on_illegal: OnIllegal = "raise") -> list[RoundResult]:
        """:meth:`apply` by action id. An illegal id raises IllegalActionError,
        or with ``on_illegal`` ``"default"`` or ``"penalty"`` counts in
        :attr:`faults` and the referee's default action is played instead (as
        the arena does; the environments add the penalty and the end of a game)."""
        try:
            return self.apply(seat, action_of(action))
        except (RuleError, ValueError) as e:
            legal = self.game.legal_actions(seat)
            if on_illegal in ("default", "penalty") and legal:
                self.faults[seat] += 1
                return self.apply(seat, default_action(legal))
            text = ", ".join(action_text(a) for a in legal)
            raise IllegalActionError(
                f"seat {seat} may not take action {action}: {e} (legal: {text})"
            ) from None

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

__all__ = ["IllegalActionError", "OnIllegal", "RewardKind", "Table", "rank_rewards"]

#: What an environment does with an illegal action: raise IllegalActionError,
#: or play the referee's default action instead (what the arena does to a bot).
OnIllegal = Literal["raise", "default"]

#: What an environment rewards: each round's points as it is scored, or only
#: the game's final rank (+1 first .. -1 last, ties share).
RewardKind = Literal["points", "rank"]


class IllegalActionError(ValueError):
    """An action id the acting seat may not take now (the mask says which it may)."""


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

    def act(self, seat: int, action: int, on_illegal: OnIllegal = "raise") -> list[RoundResult]:
        """:meth:`apply` by action id. An illegal id raises IllegalActionError,
        or with ``on_illegal="default"`` counts in :attr:`faults` and the
        referee's default action is played instead (as the arena does)."""
        try:
            return self.apply(seat, action_of(action))
        except (RuleError, ValueError) as e:
            legal = self.game.legal_actions(seat)
            if on_illegal == "default" and legal:
                self.faults[seat] += 1
                return self.apply(seat, default_action(legal))
            text = ", ".join(action_text(a) for a in legal)
            raise IllegalActionError(
                f"seat {seat} may not take action {action}: {e} (legal: {text})"
            ) from None

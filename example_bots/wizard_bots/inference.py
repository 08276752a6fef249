"""Inference from the cards played: which hidden hands explain the play so far.

A sampled deal (:mod:`wizard_bots.sampling`) fits what the seats have shown
outright (hand sizes, voids), and :func:`wizard_bots.montecarlo.bid_likelihood`
weighs it by how well it explains the bids. The cards the others have played
say more: a player short of its bid that plays low to a trick it could have
won cheaply probably could not. :func:`play_likelihood` replays the round on
a deal (:func:`~wizard_bots.sampling.game_from_view`) and, before each card
another seat played, asks the heuristic bot what it would have played from
that seat's view in the deal: a card the heuristic would have played keeps
the deal's weight, any other multiplies it by :data:`PLAY_EPS`. A deal in
which the others played as a sensible player would is more likely.
"""

from __future__ import annotations

from collections.abc import Sequence

from wizard_arena import Card, SeatView
from wizard_arena.rules import Game
from wizard_bots.heuristic import HeuristicBot
from wizard_bots.sampling import SampledDeal, game_from_view

__all__ = ["PLAY_EPS", "play_likelihood"]

#: Relative likelihood of a card the heuristic would not have played from
#: the deal's hand (the other seats are not the heuristic: they often differ).
PLAY_EPS = 0.5

_HEURISTIC = HeuristicBot()


def play_likelihood(
    view: SeatView,
    deal: SampledDeal,
    bids: Sequence[int] | None = None,
    eps: float = PLAY_EPS,
    skip: Sequence[bool] | None = None,
) -> float:
    """How well the cards the other seats played this round fit ``deal``
    (relative weight: ``eps`` to the power of the plays the heuristic would
    not have made). ``bids`` stand in for bids the view hides (see
    :func:`~wizard_bots.sampling.game_from_view`); seats with ``skip[seat]``
    (e.g. those that act at random) are not read."""
    me = view.seat
    misses = 0

    def check(game: Game, seat: int, card: Card) -> None:
        nonlocal misses
        if seat == me or (skip is not None and skip[seat]):
            return
        legal = game.legal_cards(seat)
        first = legal[0]
        if all(c == first for c in legal):
            return
        if _HEURISTIC.play(game.view(seat)) != card:
            misses += 1

    if not view.plays:
        return 1.0
    game_from_view(view, deal.hands, bids=bids, on_play=check)
    return eps**misses

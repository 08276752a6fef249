"""A rollout policy for card play that sees every hand and steers to the bid.

The Monte Carlo bot plays sampled deals out to the end of the round. With
the heuristic's play (:func:`wizard_bots.heuristic.choose_card`) in those
rollouts, every seat guesses at the cards it cannot see and lands on its bid
only about half the time, so the rollouts predict the tricks that weak play
takes. In a sampled deal every hand is known, so a rollout may as well let
each seat play as if it saw them all (as in perfect-information Monte Carlo):
:func:`steer_card` picks a card from the whole deal.

For each distinct legal card it asks whether the card would take the trick:
it must win the trick so far, and no later seat may beat it with one of its
legal cards while wanting tricks (or be forced to beat it, every legal card
of a seat that has made its bid beating it). Then:

- still short of the bid: the cheapest card that takes the trick, else the
  cheapest card that does not (a Jester last: it is worth keeping for ducking);
- bid made (or passed): the strongest card that loses, shedding what would
  take tricks later; if every card takes it, the strongest (the trick is
  lost anyway, and that card would cost a trick later).

Who wins a trick and what is legal come from the rules core
(:func:`~wizard_arena.rules.trick_winner`,
:func:`~wizard_arena.rules.legal_cards`, :meth:`Game.legal_cards`); cards
are ranked for "cheapest" and "strongest" by the heuristic's static order
(:func:`wizard_bots.heuristic.power`). The policy keeps no state and uses no
randomness.

>>> from wizard_arena.rules import Game, Phase, Rules
>>> game = Game(Rules(players=3), seed=2)
>>> game.deal()
>>> while game.phase is Phase.BID:
...     game.bid(game.acting[0], 0)
>>> steer_card(game, game.to_act) in game.legal_cards(game.to_act)
True
"""

from __future__ import annotations

from collections.abc import Sequence

from wizard_arena import Card
from wizard_arena.rules import Game, legal_cards, suit_to_follow, trick_winner
from wizard_bots.heuristic import power

__all__ = ["steer_card", "takes_trick"]


def takes_trick(game: Game, seat: int, card: Card) -> bool:
    """Whether ``card``, played by ``seat`` (the seat to act) to the current
    trick, takes it when every later seat plays to its own bid: a seat short
    of its bid beats the card if it can, a seat that has made its bid only if
    every legal card it holds beats it. Later seats are taken one at a time
    (each against ``card`` alone)."""
    return _takes(game, seat, card, {})


def _takes(game: Game, seat: int, card: Card, cache: dict[tuple[int, object], list[Card]]) -> bool:
    trick = game.trick
    trump = game.trump
    k = len(trick)
    plays = [*trick, card]
    if trick_winner(plays, trump) != k:
        return False
    n = game.players
    follow = suit_to_follow(plays)
    for i in range(k + 1, n):
        s = (game.leader + i) % n
        key = (s, follow)
        opts = cache.get(key)
        if opts is None:
            opts = legal_cards(game.hands[s], plays)
            cache[key] = opts
        if not opts or trick_winner([*plays, *opts], trump) == k:
            continue  # it cannot beat the card
        if (game.bids[s] or 0) - game.tricks_won[s] > 0:
            return False  # it wants a trick and can take this one
        if all(trick_winner([*plays, x], trump) != k for x in opts):
            return False  # it has made its bid but must beat the card
    return True


def steer_card(game: Game, seat: int) -> Card:
    """The card ``seat`` (the seat to act in ``game``, in play) plays: see the
    module's description."""
    legal = game.legal_cards(seat)
    trump = game.trump
    distinct = sorted(set(legal), key=lambda c: (power(c, trump), c.index))
    if len(distinct) == 1:
        return distinct[0]
    cache: dict[tuple[int, object], list[Card]] = {}
    takes = [_takes(game, seat, c, cache) for c in distinct]
    need = (game.bids[seat] or 0) - game.tricks_won[seat]
    if need > 0:
        for c, t in zip(distinct, takes, strict=True):
            if t:
                return c
        return _cheapest_loser(distinct)
    for c, t in zip(reversed(distinct), reversed(takes), strict=True):
        if not t:
            return c
    return distinct[-1]


def _cheapest_loser(distinct: Sequence[Card]) -> Card:
    """The weakest card, a Jester only when nothing else is left."""
    for c in distinct:
        if not c.is_jester:
            return c
    return distinct[0]

"""Positions for the bots' tests: a game set up from card texts
(:func:`position`), a game the heuristic bot played some way into
(:func:`heuristic_position`, :func:`play_view`), and a clock that moves as
it is read (:class:`TickClock`)."""

from __future__ import annotations

from collections.abc import Sequence

from wizard_arena.rules import Card, Game, Phase, Rules, SeatView, parse_cards
from wizard_bots.heuristic import HeuristicBot


def position(
    players: int,
    hands: Sequence[str],
    turned: str | None,
    bids: Sequence[int] = (),
    plays: Sequence[str] = (),
    dealer: int = 0,
) -> Game:
    """A game in round ``len(hands[0])`` with the given deal, then ``bids`` and
    ``plays`` (cards, in turn order) applied."""
    game = Game(Rules(players=players), first_dealer=dealer)
    game.round = len(parse_cards(hands[0])) - 1
    game.deal([parse_cards(h) for h in hands], None if turned is None else Card(turned))
    for b in bids:
        assert game.to_act is not None
        game.bid(game.to_act, b)
    for text in plays:
        assert game.to_act is not None
        game.play(game.to_act, Card(text))
    return game


class TickClock:
    """A clock that moves ``step`` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.step = step
        self.now = 0.0
        self.reads = 0

    def __call__(self) -> float:
        self.now += self.step
        self.reads += 1
        return self.now


def heuristic_position(seed: int, players: int, steps: int) -> Game:
    """A game ``steps`` decisions in, every seat played by the heuristic (so
    the bids are the kind a sampler weighs), stopped where a seat is to act."""
    game = Game(Rules(players=players), seed=seed)
    bot = HeuristicBot()
    game.deal()
    for _ in range(steps):
        if game.phase is Phase.DEAL:
            game.deal()
        if game.is_over:
            break
        seat = game.to_act
        assert seat is not None
        view = game.view(seat)
        if game.phase is Phase.BID:
            game.bid(seat, bot.bid(view))
        elif game.phase is Phase.PLAY:
            game.play(seat, bot.play(view))
        else:
            game.choose_trump(seat, bot.choose_trump(view))
    if game.phase is Phase.DEAL:
        game.deal()
    return game


def play_view() -> SeatView:
    """A seat's view in round 10 of a heuristic game, to play with at least
    three legal cards."""
    game = heuristic_position(3, 4, 4 * 45 + 4 + 2)  # round 10, two cards into a trick
    while game.phase is not Phase.PLAY or len(game.legal_actions()) < 3:
        seat = game.to_act
        assert seat is not None
        game.apply(seat, game.legal_actions()[0])
        if game.phase is Phase.DEAL:
            game.deal()
    assert game.to_act is not None
    return game.view(game.to_act)

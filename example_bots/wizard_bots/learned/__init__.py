"""A learned bot: bids and plays its cards with networks trained here.

:class:`LearnedBot` encodes the view it is given with the course kit's
encoder (:func:`wizard_arena.rl.encoding.encode`, the observation the
environments give) and bids the legal bid whose expected round score the
bidding network (:class:`.model.BidModel`) rates highest. It plays the legal
card the card network (:class:`.model.PlayModel`, over features of the view
and of each card: :func:`.model.card_features`) rates highest; that network
was distilled from the Monte Carlo bot's card decisions. Both are numpy only;
their weights are ``weights.npz`` in this package. It chooses trump as the
heuristic bot does (:mod:`wizard_bots.heuristic`), and in a blind first round
(its own card unseen) it bids as the heuristic does. The training script is
:mod:`.train` (``python -m wizard_bots.learned.train``; it needs the ``rl``
extra).

Run it against a server: ``wizard-arena bot wizard_bots.learned:LearnedBot``.
It needs numpy, which a plain ``pip install wizard-arena`` does not bring:
``pip install 'wizard-arena[rl]'`` (without it, importing it says so in one line).

May import: the SDK's public modules (its rules, bot API and the rl room's
encoder; the training script also the rl environments) and the heuristic bot.

>>> from wizard_arena.local import play_local
>>> from wizard_bots.random_bot import RandomBot
>>> result = play_local([LearnedBot(), RandomBot(seed=1), RandomBot(seed=2)], seed=5)
>>> result.faults, result.ranks[0]
([], 1)
"""

from __future__ import annotations

from pathlib import Path

from wizard_arena import Card, SeatView, Suit
from wizard_arena.bot import Bot
from wizard_arena.rl.encoding import encode
from wizard_bots.heuristic import HeuristicBot, blind_bid

from .model import WEIGHTS, BidModel, PlayModel, card_features

__all__ = ["LearnedBot"]

_CACHE: dict[Path, tuple[BidModel, PlayModel]] = {}


class LearnedBot(Bot):
    """Bids and plays with the learned models (``weights``: an ``.npz`` from
    the training script)."""

    name = "learned"

    def __init__(self, weights: str | Path | None = None) -> None:
        path = Path(weights) if weights is not None else WEIGHTS
        models = _CACHE.get(path)
        if models is None:
            models = _CACHE[path] = (BidModel.load(path), PlayModel.load(path))
        self.model, self.player = models
        self._heuristic = HeuristicBot()

    def bid(self, view: SeatView) -> int:
        if view.others_hands and not view.hand:  # a blind first round
            return blind_bid(view)
        return self.model.best_bid(encode(view), view.legal_bids)

    def play(self, view: SeatView) -> Card:
        return self.player.best_card(view)

    def bid_values(self, view: SeatView) -> dict[int, float]:
        """Each legal bid's expected round score (points) by the bidding
        network: the figures :meth:`bid` picks the highest of. Empty in a
        blind first round (the bot bids as the heuristic does there)."""
        if view.others_hands and not view.hand:
            return {}
        q = self.model.q(encode(view))[0]
        return {b: 100.0 * float(q[b]) for b in view.legal_bids}

    def action_values(self, view: SeatView) -> dict[Card, float]:
        """Each distinct legal card's value (points, relative to the other
        legal cards) by the card network: the figures :meth:`play` picks the
        highest of. A forced card's value is 0.0."""
        cards, x = card_features(view)
        if len(cards) == 1:
            return {cards[0]: 0.0}
        scores = self.player.scores(x)
        return {c: 100.0 * float(v) for c, v in zip(cards, scores, strict=True)}

    def choose_trump(self, view: SeatView) -> Suit:
        return self._heuristic.choose_trump(view)

"""The learned models: bids over the encoder's observation, cards over card features.

**Bids** (:class:`BidModel`).

Input: blocks of :func:`wizard_arena.rl.encoding.encode`'s vector that matter
when bidding (:data:`INPUT_BLOCKS`: the hand, the turned card, trump, every
seat's row with the bids made so far, the game and the rule variants) and two
derived views of the hand computed from them (the ranks held in the trump
suit; the ranks held in the side suits, counted). One hidden layer of ReLU
units; one output per bid 0..20: the expected points of the round for that
bid, in hundreds.

**Cards** (:class:`PlayModel`). Each distinct legal card is scored by the same
small network (one hidden layer of ReLU units, one output) from
:data:`STATE_FEATURES` of the position (the tricks still wanted, the seat's
place in the trick, what the players still to play want, ...) and
:data:`CARD_FEATURES` of the card (whether it takes the trick now, a rough
chance that it holds, the unseen cards above it, its suit's length in the
hand, ...), all computed from the :class:`~wizard_arena.rules.SeatView`
(:func:`card_features`). The output is the card's value relative to the
other legal cards, in hundreds of points; the bot plays the highest.

Nothing but numpy: the weights file is an ``.npz`` holding both models (and
the training's settings and curves).

>>> import numpy as np
>>> model = BidModel.initial(hidden=8, seed=0)
>>> from wizard_arena.rl.encoding import OBS_SIZE
>>> model.q(np.zeros((2, OBS_SIZE), np.float32)).shape
(2, 21)
>>> player = PlayModel.initial(hidden=8, seed=0)
>>> player.scores(np.zeros((3, N_CARD_INPUTS), np.float32)).shape
(3,)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from wizard_arena import Card, SeatView
from wizard_arena.rl.encoding import MAX_BID, OBS_SIZE, RULE_FEATURES, block
from wizard_arena.rules import MAX_PLAYERS, MIN_PLAYERS, WIZARD, suit_to_follow, trick_winner
from wizard_bots.heuristic import (
    Opponent,
    card_counts,
    count_slot,
    power,
    still_to_play,
    win_probability,
)

__all__ = [
    "CARD_FEATURES",
    "INPUT_BLOCKS",
    "N_CARD_INPUTS",
    "STATE_FEATURES",
    "WEIGHTS",
    "BidModel",
    "PlayModel",
    "card_features",
    "features",
    "n_features",
]

#: The committed weights, next to this module (package data).
WEIGHTS: Final = Path(__file__).with_name("weights.npz")
#: The observation blocks the model reads (of ``rules``, only the named rule
#: features it was trained with: :attr:`BidModel.rules`).
INPUT_BLOCKS: Final = ("hand", "turned", "trump", "seats", "game", "rules")
_FIXED = INPUT_BLOCKS[:-1]
_SLICES = [(block(b).offset, block(b).end) for b in _FIXED]
#: The sizes of the blocks read whole, as a weights file records them.
_FIXED_SIZES: Final = tuple(block(b).size for b in _FIXED)
_RULES = block("rules").offset
_HAND = block("hand").offset
_TRUMP = block("trump").offset
_DERIVED = 26
#: The rule features of weights files that do not name theirs: the observation
#: layout before the ``rules`` block had reserved positions (1477 positions in
#: all; its rule features are the first eleven of today's, at the same places).
_LEGACY_OBS_SIZE: Final = 1477
_LEGACY_RULES: Final = RULE_FEATURES[:11]
Array = npt.NDArray[np.float32]


def n_features(rules: tuple[str, ...] = RULE_FEATURES) -> int:
    """The bidding network's input size when it reads the rule features ``rules``."""
    return sum(e - o for o, e in _SLICES) + len(rules) + _DERIVED


#: The bidding network's input size with today's rule features.
N_FEATURES: Final = n_features()


def features(obs: Array, rules: tuple[str, ...] = RULE_FEATURES) -> Array:
    """The model's input for a batch of observations (rows of ``OBS_SIZE``),
    reading the rule features ``rules`` (by name) of the ``rules`` block."""
    obs = np.atleast_2d(obs)
    parts = [obs[:, o:e] for o, e in _SLICES]
    parts.append(obs[:, [_RULES + RULE_FEATURES.index(r) for r in rules]])
    suited = obs[:, _HAND : _HAND + 52].reshape(-1, 4, 13)
    trump = obs[:, _TRUMP : _TRUMP + 4]  # one-hot S H D C (all 0: no trump)
    in_trump = np.einsum("bs,bsr->br", trump, suited)
    side = suited.sum(axis=1) - in_trump
    parts += [in_trump, side / 3.0]
    return np.concatenate(parts, axis=1).astype(np.float32)


@dataclass
class BidModel:
    """Weights of the network; :meth:`q` gives each bid's expected points / 100."""

    w1: Array
    b1: Array
    w2: Array
    b2: Array
    rules: tuple[str, ...] = RULE_FEATURES
    """The rule features the network reads, by name (those it was trained with)."""

    @classmethod
    def initial(cls, hidden: int = 64, seed: int = 0) -> BidModel:
        rng = np.random.default_rng(seed)
        scale = np.sqrt(2.0 / N_FEATURES)
        return cls(
            (rng.standard_normal((N_FEATURES, hidden)) * scale).astype(np.float32),
            np.zeros(hidden, np.float32),
            (rng.standard_normal((hidden, MAX_BID + 1)) * np.sqrt(1.0 / hidden)).astype(np.float32),
            np.zeros(MAX_BID + 1, np.float32),
        )

    def hidden(self, x: Array) -> Array:
        return np.asarray(np.maximum(x @ self.w1 + self.b1, 0.0), np.float32)

    def q_features(self, x: Array) -> Array:
        """Outputs for model inputs ``x`` (from :func:`features`)."""
        return np.asarray(self.hidden(x) @ self.w2 + self.b2, np.float32)

    def q(self, obs: Array) -> Array:
        """Each bid's expected points / 100, for a batch of observations."""
        return self.q_features(features(obs, self.rules))

    def best_bid(self, obs: Array, legal: list[int] | tuple[int, ...]) -> int:
        """The legal bid with the highest expected points (ties: the lower)."""
        q = self.q(obs)[0]
        return max(legal, key=lambda b: (float(q[b]), -b))

    def save(self, path: Path | str, **meta: object) -> None:
        arrays: dict[str, Any] = {
            "w1": self.w1.astype(np.float16),
            "b1": self.b1,
            "w2": self.w2.astype(np.float16),
            "b2": self.b2,
            "obs_size": np.int64(OBS_SIZE),
            "blocks": np.array(INPUT_BLOCKS),
            "block_sizes": np.array(_FIXED_SIZES, np.int64),
            "rule_features": np.array(self.rules),
        }
        arrays.update({k: np.asarray(v) for k, v in meta.items()})
        np.savez_compressed(path, **arrays)

    @classmethod
    def load(cls, path: Path | str = WEIGHTS) -> BidModel:
        """The bidding network of a weights file. A file names the rule features
        it was trained with; the encoder's positions for them never move, so a
        file made before a rule variant existed loads and reads the rest. A file
        of another layout of the blocks it reads whole is refused in one line."""
        with np.load(path) as data:
            if tuple(data["blocks"]) != INPUT_BLOCKS:
                raise ValueError(f"{path}: weights for another observation layout")
            if "rule_features" in data:
                rules = tuple(str(r) for r in data["rule_features"])
                sizes = tuple(int(n) for n in data["block_sizes"])
            else:  # written before the rule features were named
                rules = _LEGACY_RULES
                sizes = _FIXED_SIZES if int(data["obs_size"]) == _LEGACY_OBS_SIZE else ()
            unknown = [r for r in rules if r not in RULE_FEATURES]
            if sizes != _FIXED_SIZES or unknown:
                what = f"rule features {', '.join(unknown)}" if unknown else "another layout"
                raise ValueError(f"{path}: weights for {what} of the observation")
            model = cls(
                data["w1"].astype(np.float32),
                data["b1"].astype(np.float32),
                data["w2"].astype(np.float32),
                data["b2"].astype(np.float32),
                rules,
            )
            if model.w1.shape[0] != n_features(rules):
                raise ValueError(f"{path}: a bidding network of another input size")
            return model


# -- card play ----------------------------------------------------------------------

#: Features of the position, the same for every candidate card.
STATE_FEATURES: Final = (
    "need_positive",
    "need_zero",
    "need_negative",
    "need_per_card",
    "need_all",
    "expected_minus_need",
    "leading",
    "last",
    "place_in_trick",
    "cards_in_hand",
    *(f"players_{n}" for n in range(MIN_PLAYERS, MAX_PLAYERS + 1)),
    "later_wanting",
    "later_need",
    "others_need",
    "winner_wants",
    "trump_in_force",
    "wizards_unseen",
    "trumps_unseen",
)
#: Features of one candidate card.
CARD_FEATURES: Final = (
    "takes_now",
    "holds",
    "holds_led",
    "wizard",
    "jester",
    "trump",
    "follows",
    "side",
    "rank",
    "power",
    "order_in_hand",
    "higher_unseen",
    "suit_length",
    "last_of_suit",
)
#: Inputs of the card network: the state's features, then the card's.
N_CARD_INPUTS: Final = len(STATE_FEATURES) + len(CARD_FEATURES)


def card_features(view: SeatView) -> tuple[list[Card], Array]:
    """The distinct legal cards of ``view`` (a play), and one input row each
    (:data:`STATE_FEATURES` then :data:`CARD_FEATURES`, each about 0..1)."""
    cards = list(dict.fromkeys(view.legal_cards))
    hand = view.hand
    trick = view.trick
    trump = view.trump
    n = view.players
    size = max(1, len(hand))
    seat = view.seat
    bid = view.bids[seat]
    need = (bid if bid is not None else 0) - view.tricks_won[seat]
    out = card_counts(view.unseen_cards())
    later = still_to_play(view)
    # the others after this seat as if it led: how each card would fare next trick
    voids = view.known_voids()
    everyone = []
    for i in range(1, n):
        s = (seat + i) % n
        b = view.bids[s]
        wanted = (b if b is not None else view.tricks_won[s] + 1) - view.tricks_won[s]
        everyone.append(Opponent(wanted, voids[s]))
    led = {c: win_probability(c, [], trump, everyone, out, size) for c in set(hand)}
    expected = sum(led[c] for c in hand)
    others_need = 0
    for s in range(n):
        b = view.bids[s]
        if s != seat and b is not None:
            others_need += max(0, b - view.tricks_won[s])
    winner_wants = 0.0
    if trick:
        w = (view.leader + trick_winner(trick, trump)) % n
        b = view.bids[w]
        winner_wants = float(b is None or b > view.tricks_won[w])
    trumps_unseen = sum(out[int(trump) * 13 : int(trump) * 13 + 13]) if trump is not None else 0
    state = [
        float(need > 0),
        float(need == 0),
        float(need < 0),
        max(-1.0, min(1.0, need / size)),
        float(need >= size),
        max(-1.0, min(1.0, (expected - need) / size)),
        float(not trick),
        float(len(trick) == n - 1),
        len(trick) / (n - 1),
        len(hand) / 20.0,
        *(float(n == k) for k in range(MIN_PLAYERS, MAX_PLAYERS + 1)),
        sum(o.need > 0 for o in later) / (n - 1),
        min(1.0, sum(max(0, o.need) for o in later) / size),
        min(1.0, others_need / size),
        winner_wants,
        float(trump is not None),
        _wizards(out) / 4.0,
        trumps_unseen / 13.0,
    ]
    lead = suit_to_follow(trick)
    order = sorted(set(hand), key=lambda c: (power(c, trump), c.index))
    rank_of = {c: i / max(1, len(order) - 1) for i, c in enumerate(order)}
    lengths: dict[object, int] = {}
    for c in hand:
        lengths[c.suit] = lengths.get(c.suit, 0) + 1
    rows = []
    for c in cards:
        suit = c.suit
        takes = trick_winner([*trick, c], trump) == len(trick)
        higher = 0
        if suit is not None and not c.is_wizard:
            base = int(suit) * 13
            higher = sum(out[base + c.rank : base + 13])
        plain = suit is not None and not c.is_wizard and not c.is_jester
        rows.append(
            [
                *state,
                float(takes),
                win_probability(c, trick, trump, later, out, size) if takes else 0.0,
                led.get(c, 0.0),
                float(c.is_wizard),
                float(c.is_jester),
                float(plain and suit is trump),
                float(plain and lead is not None and suit is lead),
                float(plain and suit is not trump and suit is not lead),
                c.rank / 13.0 if plain else 0.0,
                power(c, trump) / 100.0,
                rank_of.get(c, 0.0),
                higher / 13.0,
                lengths.get(suit, 0) / size if plain else 0.0,
                float(plain and lengths.get(suit, 0) == 1),
            ]
        )
    return cards, np.array(rows, np.float32)


def _wizards(out: list[int]) -> int:
    return out[count_slot(WIZARD)]


@dataclass
class PlayModel:
    """Weights of the card network; :meth:`scores` rates each input row."""

    w1: Array
    b1: Array
    w2: Array
    b2: Array

    @classmethod
    def initial(cls, hidden: int = 64, seed: int = 0) -> PlayModel:
        rng = np.random.default_rng(seed)
        scale = np.sqrt(2.0 / N_CARD_INPUTS)
        return cls(
            (rng.standard_normal((N_CARD_INPUTS, hidden)) * scale).astype(np.float32),
            np.zeros(hidden, np.float32),
            (rng.standard_normal(hidden) * np.sqrt(1.0 / hidden)).astype(np.float32),
            np.zeros((), np.float32),
        )

    def hidden(self, x: Array) -> Array:
        return np.asarray(np.maximum(x @ self.w1 + self.b1, 0.0), np.float32)

    def scores(self, x: Array) -> Array:
        """Each row's value (hundreds of points, relative to the other rows of its decision)."""
        return np.asarray(self.hidden(x) @ self.w2 + self.b2, np.float32)

    def best_card(self, view: SeatView) -> Card:
        """The legal card rated highest (ties: the first legal one)."""
        cards, x = card_features(view)
        if len(cards) == 1:
            return cards[0]
        return cards[int(np.argmax(self.scores(x)))]

    def arrays(self) -> dict[str, Any]:
        """The weights as the ``.npz`` keys :meth:`load` reads (``play_*``)."""
        return {
            "play_w1": self.w1.astype(np.float16),
            "play_b1": self.b1,
            "play_w2": self.w2.astype(np.float16),
            "play_b2": self.b2,
            "play_features": np.array([*STATE_FEATURES, *CARD_FEATURES]),
        }

    def copy(self) -> PlayModel:
        return PlayModel(self.w1.copy(), self.b1.copy(), self.w2.copy(), self.b2.copy())

    @classmethod
    def load(cls, path: Path | str = WEIGHTS) -> PlayModel:
        with np.load(path) as data:
            if "play_w1" not in data:
                raise ValueError(
                    f"{path}: no card-play weights (train them: wizard_bots.learned.train)"
                )
            if tuple(data["play_features"]) != (*STATE_FEATURES, *CARD_FEATURES):
                raise ValueError(f"{path}: card-play weights for other features")
            return cls(
                data["play_w1"].astype(np.float32),
                data["play_b1"].astype(np.float32),
                data["play_w2"].astype(np.float32),
                data["play_b2"].astype(np.float32),
            )

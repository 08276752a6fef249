"""The learned bidding model: a small numpy network over the encoder's observation.

Input: blocks of :func:`wizard_arena.rl.encoding.encode`'s vector that matter
when bidding (:data:`INPUT_BLOCKS`: the hand, the turned card, trump, every
seat's row with the bids made so far, the game and the rule variants) and two
derived views of the hand computed from them (the ranks held in the trump
suit; the ranks held in the side suits, counted). One hidden layer of ReLU
units; one output per bid 0..20: the expected points of the round for that
bid, in hundreds. Nothing but numpy: the weights file is an ``.npz``.

>>> import numpy as np
>>> model = BidModel.initial(hidden=8, seed=0)
>>> from wizard_arena.rl.encoding import OBS_SIZE
>>> model.q(np.zeros((2, OBS_SIZE), np.float32)).shape
(2, 21)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from wizard_arena.rl.encoding import MAX_BID, OBS_SIZE, block

__all__ = ["INPUT_BLOCKS", "WEIGHTS", "BidModel", "features"]

#: The committed weights, next to this module (package data).
WEIGHTS: Final = Path(__file__).with_name("weights.npz")
#: The observation blocks the model reads.
INPUT_BLOCKS: Final = ("hand", "turned", "trump", "seats", "game", "rules")
_SLICES = [(block(b).offset, block(b).end) for b in INPUT_BLOCKS]
_HAND = block("hand").offset
_TRUMP = block("trump").offset
_DERIVED = 26
N_FEATURES: Final = sum(e - o for o, e in _SLICES) + _DERIVED
Array = npt.NDArray[np.float32]


def features(obs: Array) -> Array:
    """The model's input for a batch of observations (rows of ``OBS_SIZE``)."""
    obs = np.atleast_2d(obs)
    parts = [obs[:, o:e] for o, e in _SLICES]
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
        return self.q_features(features(obs))

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
        }
        arrays.update({k: np.asarray(v) for k, v in meta.items()})
        np.savez_compressed(path, **arrays)

    @classmethod
    def load(cls, path: Path | str = WEIGHTS) -> BidModel:
        with np.load(path) as data:
            if int(data["obs_size"]) != OBS_SIZE or tuple(data["blocks"]) != INPUT_BLOCKS:
                raise ValueError(f"{path}: weights for another observation layout")
            return cls(
                data["w1"].astype(np.float32),
                data["b1"].astype(np.float32),
                data["w2"].astype(np.float32),
                data["b2"].astype(np.float32),
            )

"""The Gymnasium spaces of both environments: one observation, one action space.

>>> observation_space()["observation"].shape == (OBS_SIZE,)
True
>>> int(action_space().n) == ACTION_SIZE
True
"""

from __future__ import annotations

import numpy as np

from wizard_arena.extras import require

from . import PART
from .encoding import ACTION_SIZE, OBS_HIGH, OBS_LOW, OBS_SIZE

require("rl", PART, modules=("gymnasium",))
from gymnasium import spaces  # noqa: E402  (after require: one line if missing)

__all__ = ["action_space", "observation_space"]


def observation_space() -> spaces.Dict:
    """``{"observation": Box(OBS_SIZE), "action_mask": Box(ACTION_SIZE) of 0/1}``."""
    return spaces.Dict(
        {
            "observation": spaces.Box(OBS_LOW, OBS_HIGH, (OBS_SIZE,), np.float32),
            "action_mask": spaces.Box(0, 1, (ACTION_SIZE,), np.int8),
        }
    )


def action_space() -> spaces.Discrete:
    """Bids 0..20, trump S H D C, and the 64 card slots (see :mod:`.encoding`)."""
    return spaces.Discrete(ACTION_SIZE)

"""``wizard_arena.rl.wizard_v0``: the PettingZoo environment under its versioned name.

>>> e = env(players=4)
>>> e.reset(seed=0)
>>> e.possible_agents
['player_0', 'player_1', 'player_2', 'player_3']
"""

from __future__ import annotations

from .aec import WizardEnv, env, raw_env

__all__ = ["WizardEnv", "env", "raw_env"]

"""The PettingZoo AEC environment: every seat an agent, ``player_0 .. player_{n-1}``.

Use it as ``wizard_arena.rl.wizard_v0.env()`` (wrapped in PettingZoo's
order-enforcing wrapper) or :class:`WizardEnv` (raw). The agent to act is
the seat the rules core says is to act (with hidden bids, each seat still to
bid in bidding order); rounds are dealt by themselves. Each agent's
observation is ``{"observation": encode(view), "action_mask": ...}`` of its
own :class:`~wizard_arena.rules.SeatView` (:mod:`.encoding`), the mask all
zeros unless it is to act. Rewards: with ``reward="points"`` every agent
gets its points for a round at the step that completes the round; with
``reward="rank"`` only the final rank counts (+1 first .. -1 last) at the
step that ends the game; then every agent's info holds its ``total`` and
``rank``. What an illegal action does is ``on_illegal``'s choice
(docs/course.md weighs them): ``"default"`` plays the referee's default
action instead, as the arena does; ``"penalty"`` does too and adds
``illegal_reward`` to the offender's reward; ``"terminate"`` ends the game
for every agent at once, the offender's reward ``illegal_reward`` and the
others' 0 (PettingZoo's ``TerminateIllegalWrapper``); ``"raise"`` raises
:class:`IllegalActionError`. Every agent's info holds ``illegal_action``:
whether its last action was illegal (``env.unwrapped.table.faults`` counts
the replaced ones by seat). ``illegal_reward`` defaults to -10 points (one
trick off a bid), -1 with ``reward="rank"``.

>>> env = WizardEnv(players=3)
>>> env.reset(seed=1)
>>> env.agent_selection
'player_1'
>>> obs, reward, terminated, truncated, info = env.last()
>>> int(obs["action_mask"].sum())  # bids 0 and 1 in round 1
2
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from wizard_arena.extras import require
from wizard_arena.rules import Rules

from . import PART
from .encoding import ACTION_SIZE, action_mask, encode
from .spaces import action_space, observation_space
from .table import (
    IllegalActionError,
    OnIllegal,
    RewardKind,
    Table,
    check_options,
    illegal_reward_for,
    rank_rewards,
)

require("rl", PART, modules=("pettingzoo",))
from pettingzoo import AECEnv  # noqa: E402  (after require: one line if missing)
from pettingzoo.utils import wrappers  # noqa: E402

__all__ = ["IllegalActionError", "WizardEnv", "env", "raw_env"]


class WizardEnv(AECEnv):  # type: ignore[misc]
    """Wizard for ``players`` agents (or the table of ``rules``, any variant)."""

    metadata: dict[str, Any] = {
        "name": "wizard_v0",
        "render_modes": ["ansi", "human"],
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        players: int = 4,
        rules: Rules | None = None,
        reward: RewardKind = "points",
        render_mode: str | None = None,
        on_illegal: OnIllegal = "default",
        illegal_reward: float | None = None,
    ) -> None:
        super().__init__()
        check_options(reward, on_illegal)
        self.on_illegal = on_illegal
        self.illegal_reward = illegal_reward_for(reward, illegal_reward)
        self.rules = rules if rules is not None else Rules(players=players)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        self.reward_kind = reward
        self.render_mode = render_mode
        n = self.rules.players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agents = list(self.possible_agents)
        self.observation_spaces = {a: observation_space() for a in self.possible_agents}
        self.action_spaces = {a: action_space() for a in self.possible_agents}
        self._seeds = random.Random()
        self.table: Table | None = None
        self._stopped = False  # the game ended at an illegal action ("terminate")

    def observation_space(self, agent: str) -> Any:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> Any:
        return self.action_spaces[agent]

    def _seat(self, agent: str) -> int:
        return int(agent.rsplit("_", 1)[1])

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game; ``seed`` fixes it and the games of later resets."""
        if seed is not None:
            self._seeds = random.Random(seed)
            for space in self.action_spaces.values():
                space.seed(seed)
        self.table = Table(self.rules, self._seeds.getrandbits(63))
        self._stopped = False
        self.agents = list(self.possible_agents)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {"illegal_action": False} for a in self.agents}
        self._select()

    def _select(self) -> None:
        assert self.table is not None
        seat = self.table.to_act
        self.agent_selection = self.possible_agents[seat if seat is not None else 0]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        assert self.table is not None, "reset() first"
        seat = self._seat(agent)
        view = self.table.view(seat)
        # with hidden bids every seat still to bid may act: only the selected one is asked
        asked = seat == self.table.to_act and not self._stopped
        mask = action_mask(view) if asked else np.zeros(ACTION_SIZE, np.int8)
        return {"observation": encode(view), "action_mask": mask}

    def step(self, action: int | None) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        assert self.table is not None
        if action is None:
            raise IllegalActionError(f"{agent} is to act: None is no action")
        self._cumulative_rewards[agent] = 0.0
        seat = self._seat(agent)
        illegal = not self.table.legal(seat, int(action))
        self.infos[agent]["illegal_action"] = illegal
        rewards = dict.fromkeys(self.agents, 0.0)
        if illegal and self.on_illegal == "terminate":
            rewards[agent] = self.illegal_reward
            self._stopped = True
            self.terminations = dict.fromkeys(self.agents, True)
            self.rewards = rewards
            self._accumulate_rewards()
            return  # the offender's turn: its last() shows the penalty, then dead steps
        scored = self.table.act(seat, int(action), self.on_illegal)
        if illegal and self.on_illegal == "penalty":
            rewards[agent] += self.illegal_reward
        if self.reward_kind == "points":
            for result in scored:
                for s, points in enumerate(result.points):
                    rewards[self.possible_agents[s]] += float(points)
        game = self.table.game
        if game.is_over:
            if self.reward_kind == "rank":
                for s, r in enumerate(rank_rewards(game.ranks)):
                    rewards[self.possible_agents[s]] += r
            self.terminations = dict.fromkeys(self.agents, True)
            for s, a in enumerate(self.possible_agents):
                self.infos[a].update(total=game.totals[s], rank=game.ranks[s])
        self.rewards = rewards
        self._accumulate_rewards()
        self._select()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        """The table as the agent to act sees it: the text (``"ansi"``), or
        printed with None returned (``"human"``, PettingZoo's rule)."""
        if self.render_mode is None or self.table is None:
            return None
        text = render_view(self.table, self._seat(self.agent_selection))
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


def render_view(table: Table, seat: int) -> str:
    """A few lines of what ``seat`` sees."""
    v = table.view(seat)
    trump = v.trump.letter if v.trump is not None else "-"
    turned = v.turned_card.text if v.turned_card is not None else "-"
    bids = " ".join("?" if b is None else str(b) for b in v.bids)
    return (
        f"round {v.round} ({v.cards_per_player} cards), dealer {v.dealer}, phase {v.phase.value}, "
        f"turned {turned}, trump {trump}\n"
        f"bids {bids}; tricks {' '.join(map(str, v.tricks_won))}; totals "
        f"{' '.join(map(str, v.totals))}\n"
        f"seat {seat} to act; hand {' '.join(c.text for c in v.hand)}; trick "
        f"{' '.join(c.text for c in v.trick)}"
    )


def raw_env(**kwargs: Any) -> WizardEnv:
    """The environment without wrappers (see :class:`WizardEnv` for the arguments)."""
    return WizardEnv(**kwargs)


def env(**kwargs: Any) -> Any:
    """The environment in PettingZoo's order-enforcing wrapper."""
    return wrappers.OrderEnforcingWrapper(WizardEnv(**kwargs))

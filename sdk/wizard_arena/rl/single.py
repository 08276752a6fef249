"""The Gymnasium environment: one learning seat against bots of your choice.

``WizardGymEnv(opponents=[RandomBot, HeuristicBot, HeuristicBot])`` seats the
learner and three opponents (any :class:`~wizard_arena.bot.Bot` subclasses;
a class or a zero-argument factory gives a fresh bot every game, so a seeded
reset replays the game exactly; an instance is reused, told of each game by
``on_game_start``). The opponents play through the bot API as at a referee's
table: their hooks are called, and an opponent that raises or returns an
illegal action has the referee's default action played for it (counted in
``info["opponent_faults"]``).

Spaces, observation and rewards are those of the PettingZoo environment
(:mod:`.aec`): a step is one decision of the learner, and its reward is the
learner's points of every round completed until its next decision (or, with
``reward="rank"``, its final rank at the end). :meth:`WizardGymEnv.action_masks`
gives the mask for maskable policies. An illegal action of the learner
does what ``on_illegal`` says, as in the PettingZoo environment: the
referee's default action is played instead (``"default"``, as the arena
does; ``"penalty"``: with ``illegal_reward`` added to the step's reward),
the game ends at once with ``illegal_reward`` as the step's reward
(``"terminate"``), or :class:`~.table.IllegalActionError` is raised
(``"raise"``). ``info["illegal_action"]`` says whether the step's action was
illegal, ``info["illegal_actions"]`` counts them in the game.

>>> from wizard_arena.bot import Bot
>>> class Zero(Bot):
...     def bid(self, view): return min(view.legal_bids)
...     def play(self, view): return view.legal_cards[0]
>>> env = WizardGymEnv(opponents=[Zero, Zero, Zero])
>>> obs, info = env.reset(seed=4)
>>> info["seat"], obs["observation"].shape == (OBS_SIZE,)
(0, True)
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from wizard_arena.bot import Bot, GameInfo, decide
from wizard_arena.extras import require
from wizard_arena.rules import (
    Card,
    RoundResult,
    RoundScored,
    Rules,
    SeatView,
    Suit,
    TrickWon,
    default_action,
)

from . import PART
from .aec import render_view
from .encoding import ACTION_SIZE, OBS_SIZE, action_mask, encode  # noqa: F401  (OBS_SIZE: doctest)
from .spaces import action_space, observation_space
from .table import OnIllegal, RewardKind, Table, check_options, illegal_reward_for, rank_rewards

require("rl", PART, modules=("gymnasium",))
import gymnasium  # noqa: E402  (after require: one line if missing)

__all__ = ["ENV_ID", "RandomOpponent", "WizardGymEnv", "register"]

Opponent = Bot | Callable[[], Bot]


#: The environment's id in Gymnasium's registry (``gymnasium.make(ENV_ID)``
#: once :mod:`wizard_arena.rl` is imported, or
#: ``gymnasium.make("wizard_arena.rl:WizardArena/Wizard-v0")``).
ENV_ID = "WizardArena/Wizard-v0"


class RandomOpponent(Bot):
    """The default opponent: a legal action drawn at random, from the game's
    seed (``GameInfo.seed``), so a seeded reset replays the game exactly."""

    name = "random"

    def __init__(self) -> None:
        self._rng = random.Random(0)

    def on_game_start(self, info: GameInfo) -> None:
        self._rng = random.Random(info.seed)

    def bid(self, view: SeatView) -> int:
        return self._rng.choice(view.legal_bids)

    def play(self, view: SeatView) -> Card:
        return self._rng.choice(view.legal_cards)

    def choose_trump(self, view: SeatView) -> Suit:
        return self._rng.choice((Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS))


class WizardGymEnv(gymnasium.Env):
    """One learning seat (``seat``; None: a random seat each game) against
    ``opponents`` (default: :class:`RandomOpponent` in every other seat).
    The table's size: ``players`` (``gymnasium.make(ENV_ID, players=3)``),
    else ``rules.players``, else one more than the opponents, else 4."""

    metadata: dict[str, Any] = {
        "render_modes": ["ansi"],
        "render_fps": 2,
        # a vector environment resets a finished game at its next step, ignoring
        # that step's action: the last observation's mask allows every action
        "autoreset_mode": gymnasium.vector.AutoresetMode.NEXT_STEP,
    }

    def __init__(
        self,
        opponents: Sequence[Opponent] | None = None,
        rules: Rules | None = None,
        seat: int | None = 0,
        reward: RewardKind = "points",
        render_mode: str | None = None,
        on_illegal: OnIllegal = "default",
        illegal_reward: float | None = None,
        players: int | None = None,
    ) -> None:
        check_options(reward, on_illegal)
        if players is not None:
            if rules is not None and rules.players != players:
                raise ValueError(f"players={players} but the rules are for {rules.players}")
            rules = rules if rules is not None else Rules(players=players)
        if opponents is None:
            opponents = [RandomOpponent] * ((rules.players if rules is not None else 4) - 1)
        self.rules = rules if rules is not None else Rules(players=len(opponents) + 1)
        if len(opponents) != self.rules.players - 1:
            raise ValueError(
                f"{self.rules.players} players need {self.rules.players - 1} opponents, "
                f"got {len(opponents)}"
            )
        if seat is not None and not 0 <= seat < self.rules.players:
            raise ValueError(f"no seat {seat} at a {self.rules.players}-player table")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        self.opponents = list(opponents)
        self.fixed_seat = seat
        self.reward_kind = reward
        self.on_illegal = on_illegal
        self.illegal_reward = illegal_reward_for(reward, illegal_reward)
        self.render_mode = render_mode
        self.observation_space = observation_space()
        self.action_space = action_space()
        self.table: Table | None = None
        self.seat = 0
        self.bots: list[Bot | None] = []
        self.opponent_faults = 0
        self.illegal_actions = 0
        self._illegal = False  # the last step's action was illegal
        self._stopped = False  # the game ended at an illegal action ("terminate")
        self._seen = 0
        self._games = 0

    # -- the gymnasium API -----------------------------------------------------------------

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        rng = self.np_random
        n = self.rules.players
        self.table = Table(self.rules, int(rng.integers(2**63 - 1)))
        seat = self.fixed_seat
        self.seat = int(rng.integers(n)) if seat is None else seat
        others = iter(self.opponents)
        self.bots = [None if s == self.seat else _bot(next(others)) for s in range(n)]
        names = tuple("learner" if b is None else b.name for b in self.bots)
        self._games += 1
        for s, bot in enumerate(self.bots):
            if bot is not None:
                info = GameInfo(f"gym-{self._games}", self.rules, s, names)
                object.__setattr__(info, "seed", int(rng.integers(2**63 - 1)))
                bot.on_game_start(info)
        self.opponent_faults = 0
        self.illegal_actions = 0
        self._illegal = self._stopped = False
        self._seen = 0
        self._opponents_play()
        return self._observation(), self._info()

    def step(self, action: int) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        table = self.table
        assert table is not None, "reset() first"
        if self._over:
            raise RuntimeError("the game is over: reset() first")
        self._illegal = not table.legal(self.seat, int(action))
        self.illegal_actions += self._illegal
        if self._illegal and self.on_illegal == "terminate":
            self._stopped = True
            return self._observation(), self.illegal_reward, True, False, self._info()
        scored = table.act(self.seat, int(action), self.on_illegal)
        self._hooks()
        scored += self._opponents_play()
        reward = float(sum(r.points[self.seat] for r in scored))
        if self.reward_kind == "rank":
            reward = rank_rewards(table.game.ranks)[self.seat] if table.over else 0.0
        if self._illegal and self.on_illegal == "penalty":
            reward += self.illegal_reward
        return self._observation(), reward, table.over, False, self._info()

    @property
    def _over(self) -> bool:
        """The game is over, or ended at an illegal action."""
        return self._stopped or (self.table is not None and self.table.over)

    def action_masks(self) -> np.ndarray:
        """The legal actions of the learner now (1: legal), as maskable policies
        ask; at the end of a game every action (the next step resets, whatever
        is chosen: Gymnasium's next-step autoreset)."""
        assert self.table is not None, "reset() first"
        if self._over:
            return np.ones(ACTION_SIZE, np.int8)
        return action_mask(self.table.view(self.seat))

    def render(self) -> str | None:
        if self.render_mode is None or self.table is None:
            return None
        return render_view(self.table, self.seat)

    # -- the opponents -------------------------------------------------------------------------

    def _observation(self) -> dict[str, np.ndarray]:
        assert self.table is not None
        view = self.table.view(self.seat)
        return {"observation": encode(view), "action_mask": self.action_masks()}

    def _info(self) -> dict[str, Any]:
        assert self.table is not None
        game = self.table.game
        return {
            "seat": self.seat,
            "round": game.round,
            "totals": tuple(game.totals),
            "opponent_faults": self.opponent_faults,
            "illegal_action": self._illegal,
            "illegal_actions": self.illegal_actions,
        }

    def _opponents_play(self) -> list[RoundResult]:
        """The opponents' decisions until the learner is to act or the game is over."""
        table = self.table
        assert table is not None
        scored: list[RoundResult] = []
        while (seat := table.to_act) is not None and seat != self.seat:
            bot = self.bots[seat]
            assert bot is not None
            view = table.view(seat)
            try:
                scored += table.apply(seat, decide(bot, view))
            except Exception:  # the bot raised or chose what the rules refuse
                self.opponent_faults += 1
                scored += table.apply(seat, default_action(view.legal_actions))
            self._hooks()
        return scored

    def _hooks(self) -> None:
        """The opponents' ``on_trick_end`` and ``on_round_end`` for new events."""
        assert self.table is not None
        game = self.table.game
        events = game.events[self._seen :]
        self._seen = len(game.events)
        for ev in events:
            if isinstance(ev, TrickWon | RoundScored):
                for s, bot in enumerate(self.bots):
                    if bot is None:
                        continue
                    if isinstance(ev, TrickWon):
                        bot.on_trick_end(game.view(s), ev.trick)
                    else:
                        bot.on_round_end(game.view(s), ev.result)


def _bot(opponent: Opponent) -> Bot:
    return opponent if isinstance(opponent, Bot) else opponent()


def register() -> None:
    """Register :data:`ENV_ID` with Gymnasium (once; :mod:`wizard_arena.rl`
    does it on import where gymnasium is installed)."""
    if ENV_ID not in gymnasium.registry:
        gymnasium.register(ENV_ID, entry_point="wizard_arena.rl.single:WizardGymEnv")

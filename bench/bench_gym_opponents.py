"""Searching opponents in the Gymnasium environment: what each decision of
theirs costs, and whether one seed replays one game.

``WizardGymEnv(opponents=[...])`` with three Monte Carlo opponents, the learner
acting at random from a fixed generator; the same steps are run twice from
the same seed, and the two trajectories (actions, rewards, observations)
compared. Per opponent kind it prints the opponents' CPU per decision (the
process's CPU time over the steps, divided by the opponents' decisions) and
"identical" or "differ":

* ``samples4``: ``partial(MonteCarloBot, samples=4)``, a fixed number of
  sampled deals per decision (what docs/course.md recommends);
* ``default``: ``MonteCarloBot`` as constructed with no arguments, a time
  budget per decision (about 0.5 s of its 1 s ``think_time``).

    python bench/bench_gym_opponents.py [--steps 30] [--kinds samples4,default]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from functools import partial

import numpy as np

from wizard_arena.bot import Bot
from wizard_arena.rl.single import WizardGymEnv
from wizard_arena.rules import SeatView
from wizard_bots.montecarlo import MonteCarloBot

KINDS: dict[str, Callable[[], MonteCarloBot]] = {
    "samples4": partial(MonteCarloBot, samples=4),
    "default": MonteCarloBot,
}


def counted(bot: MonteCarloBot, counter: list[int]) -> MonteCarloBot:
    """``bot``, its decisions counted into ``counter[0]`` (its other hooks
    untouched, so it plays as it would)."""
    for name in ("bid", "play", "choose_trump"):
        decide = getattr(bot, name)

        def wrapped(view: SeatView, decide: Callable[[SeatView], object] = decide) -> object:
            counter[0] += 1
            return decide(view)

        setattr(bot, name, wrapped)
    return bot


def run(kind: str, steps: int, seed: int) -> tuple[list[tuple[int, float, bytes]], float, int]:
    counter = [0]
    make = KINDS[kind]

    def opponent() -> Bot:
        return counted(make(), counter)

    env = WizardGymEnv(opponents=[opponent, opponent, opponent], seat=0)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(0)
    out = []
    t0 = time.process_time()
    for _ in range(steps):
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, reward, done, _, _ = env.step(action)
        out.append((action, float(reward), obs["observation"].tobytes()))
        if done:
            obs, _ = env.reset(seed=seed + 1)
    return out, time.process_time() - t0, counter[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=30, help="learner steps per run")
    ap.add_argument("--seed", type=int, default=7, help="the environment's seed")
    ap.add_argument("--kinds", default="samples4,default", help=f"of {', '.join(KINDS)}")
    args = ap.parse_args()
    for kind in args.kinds.split(","):
        first, cpu1, n1 = run(kind, args.steps, args.seed)
        second, cpu2, n2 = run(kind, args.steps, args.seed)
        same = "identical" if first == second else "differ"
        print(
            f"{kind:9s} {args.steps} steps twice from seed {args.seed}: {same}; "
            f"CPU per opponent decision {1000 * cpu1 / n1:.1f} ms and {1000 * cpu2 / n2:.1f} ms "
            f"({n1} and {n2} decisions)"
        )


if __name__ == "__main__":
    main()

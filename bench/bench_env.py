"""The environments' speed: steps per second, and their overhead over the bare rules core.

Random legal play of full games (4 players by default, 15 rounds), measured
by the process's CPU time, in alternated runs (core, environment, core, ...)
and reported as the median of ``--pairs`` ratios:

* ``core``: the rules core alone (``Game.legal_actions``, ``Game.apply``), as
  ``bench/bench_rules.py`` drives it: decisions per CPU-second;
* ``aec``: the PettingZoo environment (``wizard_v0.env()``, order-enforcing
  wrapper included): ``env.last()`` (the acting agent's encoded observation
  and action mask), a random legal id from the mask, ``env.step``: steps per
  CPU-second (a step is a decision);
* ``gym``: the Gymnasium environment with all four seats random: the learner's
  steps per CPU-second, opponents' decisions included in the time;

and, per decision, what an observation costs: the seat's view
(``Game.view``), its encoding (``encode``) and its mask (``action_mask``).

    python bench/bench_env.py [--seconds 3] [--pairs 3] [--players 4]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections.abc import Callable

import numpy as np

from wizard_arena.bot import Bot
from wizard_arena.rl import wizard_v0
from wizard_arena.rl.encoding import action_mask, encode
from wizard_arena.rl.single import WizardGymEnv
from wizard_arena.rules import Card, Game, Phase, Rules, SeatView


def core_game(players: int, rng: random.Random) -> int:
    """One full game of random legal play on the bare core; decisions made."""
    game = Game(Rules(players=players), rng=rng)
    choice = rng.choice
    decisions = 0
    while True:
        phase = game.phase
        if phase is Phase.DEAL:
            game.deal()
            continue
        if phase is Phase.GAME_OVER:
            return decisions
        game.apply(game.to_act, choice(game.legal_actions()))  # type: ignore[arg-type]
        decisions += 1


def aec_game(players: int, rng: random.Random) -> int:
    """One full game of random legal play in the PettingZoo environment; steps."""
    env = wizard_v0.env(players=players)
    env.reset(seed=rng.getrandbits(32))
    steps = 0
    choice = rng.choice
    for _ in env.agent_iter():
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        env.step(int(choice(np.flatnonzero(obs["action_mask"]))))
        steps += 1
    return steps


class _Random(Bot):
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def bid(self, view: SeatView) -> int:
        return self.rng.choice(view.legal_bids)

    def play(self, view: SeatView) -> Card:
        return self.rng.choice(view.legal_cards)


def gym_game(players: int, rng: random.Random) -> int:
    """One full game in the Gymnasium environment, every seat random; all decisions."""
    env = WizardGymEnv([_Random(rng) for _ in range(players - 1)])
    obs, _ = env.reset(seed=rng.getrandbits(32))
    done = False
    while not done:
        obs, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return _decisions(env)


def _decisions(env: WizardGymEnv) -> int:
    """Every seat bids once and plays a card to every trick, every round (plus
    the trump choices after a turned Wizard)."""
    assert env.table is not None
    game = env.table.game
    trumps = sum(1 for e in game.events if type(e).__name__ == "TrumpChosen")
    return trumps + sum(game.players * (1 + size) for size in game.rules.round_sizes)


def rate(run: Callable[[int, random.Random], int], players: int, seconds: float) -> float:
    """Decisions per CPU-second of ``run``, over about ``seconds`` of CPU time."""
    rng = random.Random(1)
    decisions = 0
    cpu = time.process_time()
    while time.process_time() - cpu < seconds:
        decisions += run(players, rng)
    return decisions / (time.process_time() - cpu)


def observation_costs(players: int, views: int = 3000) -> dict[str, float]:
    """Microseconds per decision: the view, its encoding, its mask."""
    rng = random.Random(2)
    game = Game(Rules(players=players), rng=rng)
    seats: list[tuple[Game, int]] = []
    while len(seats) < views:
        if game.phase is Phase.GAME_OVER:
            game = Game(Rules(players=players), rng=rng)
        if game.phase is Phase.DEAL:
            game.deal()
            continue
        seat = game.to_act
        assert seat is not None
        seats.append((game.clone(), seat))
        game.apply(seat, rng.choice(game.legal_actions()))
    out = {}
    t = time.process_time()
    got = [g.view(s) for g, s in seats]
    out["view"] = (time.process_time() - t) / views * 1e6
    t = time.process_time()
    for v in got:
        encode(v)
    out["encode"] = (time.process_time() - t) / views * 1e6
    t = time.process_time()
    for v in got:
        action_mask(v)
    out["mask"] = (time.process_time() - t) / views * 1e6
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per run")
    ap.add_argument("--pairs", type=int, default=3, help="alternated runs of each")
    ap.add_argument("--players", type=int, default=4)
    args = ap.parse_args()
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, {os.cpu_count()} cpus")
    rows: dict[str, list[float]] = {"core": [], "aec": [], "gym": []}
    runs = {"core": core_game, "aec": aec_game, "gym": gym_game}
    for _ in range(args.pairs):
        for name, run in runs.items():
            rows[name].append(rate(run, args.players, args.seconds))
    print(f"{args.players} players, random legal play, full games; decisions per CPU-second")
    for name, rates in rows.items():
        print(
            f"  {name:<5} median {statistics.median(rates):>9,.0f}   runs "
            + " ".join(f"{r:,.0f}" for r in rates)
        )
    for name in ("aec", "gym"):
        ratios = [c / e for c, e in zip(rows["core"], rows[name], strict=True)]
        print(
            f"  {name} costs {statistics.median(ratios):.2f}x the core's time per decision "
            f"(median of {args.pairs} pairs: {' '.join(f'{r:.2f}' for r in ratios)})"
        )
    costs = observation_costs(args.players)
    per = 1e6 / statistics.median(rows["core"])
    print(
        f"per decision (us): core step {per:.1f}, view {costs['view']:.1f}, "
        f"encode {costs['encode']:.1f}, mask {costs['mask']:.1f}"
    )
    load = os.getloadavg()
    print(f"load average after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()

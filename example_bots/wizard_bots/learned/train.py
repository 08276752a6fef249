"""Train the learned bot's bidding model by self-play in the PettingZoo environment.

    python -m wizard_bots.learned.train                       # about 10-15 minutes on 2 cores
    python -m wizard_bots.learned.train --out example_bots/wizard_bots/learned/weights.npz
                                                    # the committed weights, made anew
    python -m wizard_bots.learned.train --iterations 1 --games 20 --out /tmp/w.npz   # a smoke run

Every seat of every game is played by the same policy: it bids with the
current model (the heuristic's bid in the first iteration), a random legal
bid instead with probability ``--epsilon`` (exploration), and plays its cards
as the heuristic does, aiming at its bid. The games run in the environment
``wizard_arena.rl.wizard_v0`` (raw, rewards = each round's points); each bid
becomes one sample: the bidder's observation (the environment's, the very
vector ``LearnedBot`` encodes at the table), the bid, and the points the
round gave it. The model (:mod:`.model`) learns, for every bid, the expected
points of the round: a contextual bandit fitted by least squares on the
chosen bid's output (Adam, minibatches, all samples of all iterations so
far). Each iteration plays ``--games`` games with the latest model, then
refits. Only numpy is needed besides the environment: the model is small
(one hidden layer) and learns in seconds per epoch on a CPU.

The games are played in ``--jobs`` processes; the result is seeded
(``--seed``) up to the processes' scheduling (the order in which samples
arrive is fixed, so one seed gives one set of weights).
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from wizard_arena.bot import decide
from wizard_arena.rl.encoding import action_id
from wizard_arena.rules import MAX_PLAYERS, MIN_PLAYERS, Bid, Phase, SeatView
from wizard_bots.heuristic import HeuristicBot, blind_bid, choose_bid, estimate_tricks

from .model import WEIGHTS, BidModel, features

__all__ = ["Samples", "Settings", "fit", "main", "play_games", "train"]


@dataclass(frozen=True)
class Settings:
    iterations: int = 4
    games: int = 1500
    """Games per iteration."""
    players: tuple[int, ...] = (4,)
    """Table sizes, in turn."""
    epsilon: float = 0.25
    hidden: int = 64
    epochs: int = 6
    batch: int = 256
    lr: float = 1e-3
    seed: int = 1
    jobs: int = 2


@dataclass
class Samples:
    """Model inputs (float16), bids and the round's points / 100."""

    x: np.ndarray
    bid: np.ndarray
    y: np.ndarray

    @classmethod
    def join(cls, parts: Sequence[Samples]) -> Samples:
        return cls(
            np.concatenate([p.x for p in parts]),
            np.concatenate([p.bid for p in parts]),
            np.concatenate([p.y for p in parts]),
        )

    def __len__(self) -> int:
        return len(self.y)


def _heuristic_bid(view: SeatView) -> int:
    n = view.players
    position = (view.seat - view.dealer - 1) % n
    before = [b for k in range(position) if (b := view.bids[(view.dealer + 1 + k) % n]) is not None]
    est = estimate_tricks(view.hand, view.trump, n, view.turned_card, before, position)
    return choose_bid(est, view.legal_bids)


def play_games(task: tuple[BidModel | None, int, int, Settings]) -> Samples:
    """Play ``games`` games of self-play (seeded by ``seed``); their bids as samples."""
    from wizard_arena.rl.aec import WizardEnv  # the rl extra

    model, seed, games, settings = task
    rng = np.random.default_rng(seed)
    player = HeuristicBot()
    xs: list[np.ndarray] = []
    bids: list[int] = []
    points: list[float] = []
    for g in range(games):
        env = WizardEnv(players=settings.players[g % len(settings.players)])
        env.reset(seed=int(rng.integers(2**62)))
        table = env.table
        assert table is not None
        pending: dict[str, tuple[np.ndarray, int]] = {}
        for agent in env.agent_iter():
            _, _, terminated, truncated, _ = env.last(observe=False)
            if terminated or truncated:
                env.step(None)
                continue
            view = table.view(int(agent.split("_")[1]))  # the agent's own view
            if view.phase is Phase.BID:  # only bids are learned: only they need the observation
                obs = env.observe(agent)["observation"]
                bid = _behaviour_bid(model, obs, view, rng, settings.epsilon)
                pending[agent] = (obs, bid)
                env.step(action_id(Bid(bid)))
            else:
                env.step(action_id(decide(player, view)))
            if any(env.rewards.values()):  # a round was scored: its points for every bid
                for a, (o, b) in pending.items():
                    xs.append(o)
                    bids.append(b)
                    points.append(env.rewards[a] / 100.0)
                pending.clear()
    x = features(np.stack(xs)).astype(np.float16)
    return Samples(x, np.array(bids, np.int64), np.array(points, np.float32))


def _behaviour_bid(
    model: BidModel | None,
    obs: np.ndarray,
    view: SeatView,
    rng: np.random.Generator,
    epsilon: float,
) -> int:
    legal = view.legal_bids
    if rng.random() < epsilon:
        return int(rng.choice(legal))
    if view.others_hands and not view.hand:
        return blind_bid(view)
    if model is None:
        return _heuristic_bid(view)
    return model.best_bid(obs, legal)


def fit(model: BidModel, data: Samples, settings: Settings, rng: np.random.Generator) -> float:
    """Least squares on the chosen bid's output, Adam; the last epoch's mean loss."""
    params = [model.w1, model.b1, model.w2, model.b2]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    step = 0
    loss = float("nan")
    b1, b2, eps = 0.9, 0.999, 1e-8
    for _ in range(settings.epochs):
        order = rng.permutation(len(data))
        total = 0.0
        for start in range(0, len(order), settings.batch):
            idx = order[start : start + settings.batch]
            x = data.x[idx].astype(np.float32)
            k = len(idx)
            h = model.hidden(x)
            q = h @ model.w2 + model.b2
            chosen = q[np.arange(k), data.bid[idx]]
            err = chosen - data.y[idx]
            total += float(err @ err)
            dq = np.zeros_like(q)
            dq[np.arange(k), data.bid[idx]] = 2.0 * err / k
            dh = (dq @ model.w2.T) * (h > 0)
            grads = [x.T @ dh, dh.sum(0), h.T @ dq, dq.sum(0)]
            step += 1
            for i, (p, g) in enumerate(zip(params, grads, strict=True)):
                m[i] = b1 * m[i] + (1 - b1) * g
                v[i] = b2 * v[i] + (1 - b2) * g * g
                mh = m[i] / (1 - b1**step)
                vh = v[i] / (1 - b2**step)
                p -= (settings.lr * mh / (np.sqrt(vh) + eps)).astype(p.dtype)
        loss = total / len(data)
    return loss


def train(settings: Settings, log: bool = True) -> BidModel:
    """Iterations of self-play and refitting; the final model."""
    rng = np.random.default_rng(settings.seed)
    model = BidModel.initial(settings.hidden, settings.seed)
    behaviour: BidModel | None = None  # the heuristic's bids first
    parts: list[Samples] = []
    jobs = max(1, settings.jobs)
    pool = multiprocessing.Pool(jobs) if jobs > 1 else None
    try:
        for it in range(settings.iterations):
            start = time.perf_counter()
            chunks = [settings.games // jobs + (i < settings.games % jobs) for i in range(jobs)]
            tasks = [
                (behaviour, settings.seed * 1_000 + it * 10 + i, c, settings)
                for i, c in enumerate(chunks)
                if c
            ]
            new = pool.map(play_games, tasks) if pool else [play_games(t) for t in tasks]
            played = time.perf_counter() - start
            parts.extend(new)
            data = Samples.join(parts)
            mean = float(np.mean(np.concatenate([p.y for p in new]))) * 100
            loss = fit(model, data, settings, rng)
            behaviour = model
            if log:
                print(
                    f"iteration {it + 1}/{settings.iterations}: {sum(chunks)} games "
                    f"({played:.0f} s), mean points per bid {mean:.1f}; fitted on "
                    f"{len(data)} samples, loss {loss:.4f} ({time.perf_counter() - start:.0f} s)",
                    flush=True,
                )
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    return model


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Train the learned bot's bidding model by self-play.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__,
    )
    d = Settings()
    ap.add_argument("--iterations", type=int, default=d.iterations)
    ap.add_argument("--games", type=int, default=d.games, help="games per iteration")
    ap.add_argument("--players", default="4", help="table sizes in turn, e.g. 3,4,5,6")
    ap.add_argument("--epsilon", type=float, default=d.epsilon, help="random bids' share")
    ap.add_argument("--hidden", type=int, default=d.hidden, help="hidden units")
    ap.add_argument("--epochs", type=int, default=d.epochs, help="epochs per iteration")
    ap.add_argument("--seed", type=int, default=d.seed)
    ap.add_argument("--jobs", type=int, default=d.jobs, help="processes playing games")
    ap.add_argument(
        "--out",
        type=Path,
        default=Path("weights.npz"),
        help="weights file (.npz; default %(default)s in the current folder: the "
        f"committed weights, {WEIGHTS.name} in the package, are written only when named)",
    )
    args = ap.parse_args(argv)
    settings = Settings(
        iterations=args.iterations,
        games=args.games,
        players=_table_sizes(ap, args.players),
        epsilon=args.epsilon,
        hidden=args.hidden,
        epochs=args.epochs,
        seed=args.seed,
        jobs=args.jobs,
    )
    out = _weights_path(ap, args.out)
    for name in ("iterations", "games", "hidden", "epochs", "jobs"):
        if getattr(settings, name) < 1:
            ap.error(f"--{name} must be at least 1")
    if not 0.0 <= settings.epsilon <= 1.0:
        ap.error("--epsilon must be between 0 and 1")
    start = time.perf_counter()
    model = train(settings)
    command = " ".join(["python -m wizard_bots.learned.train", *(argv or sys.argv[1:])])
    model.save(out, settings=repr(settings), command=command)
    print(f"saved {out} ({time.perf_counter() - start:.0f} s in all)")
    return 0


def _table_sizes(ap: argparse.ArgumentParser, text: str) -> tuple[int, ...]:
    """``--players``: table sizes, each 3..6 (refused at once, not mid-training)."""
    try:
        sizes = tuple(int(p) for p in text.split(","))
    except ValueError:
        ap.error(f"--players: table sizes separated by commas, e.g. 3,4,5,6 (not {text!r})")
    if not all(MIN_PLAYERS <= n <= MAX_PLAYERS for n in sizes):
        ap.error(f"--players: each table size must be {MIN_PLAYERS} to {MAX_PLAYERS} ({text!r})")
    return sizes


def _weights_path(ap: argparse.ArgumentParser, out: Path) -> Path:
    """``--out`` as numpy will write it (``.npz`` added), checked before the
    training: a folder that does not exist would be found only when saving."""
    if out.is_dir():
        ap.error(f"--out {out} is a folder: give a file name (e.g. {out / 'weights.npz'})")
    if out.suffix != ".npz":
        out = out.with_name(out.name + ".npz")
    if not out.parent.is_dir():
        ap.error(f"--out {out}: there is no folder {out.parent}")
    return out


if __name__ == "__main__":
    sys.exit(main())

"""Train the learned bot: its bids by self-play, its card play from the Monte Carlo bot.

    # the committed weights, made anew: the committed bids kept, card play trained;
    # 160 + 2 x 40 games: 15 minutes (26 CPU-minutes) on 2 free cores, 31 on 2
    # cores shared with other work
    # (--labels keeps the teacher's games: run again with that file in place, it
    # replays only the league's games and writes the same weights, in about 2 minutes)
    python -m wizard_bots.learned.train --bids-from example_bots/wizard_bots/learned/weights.npz \
        --teacher-games 160 --league-iterations 2 --league-games 40 --jobs 2 \
        --out example_bots/wizard_bots/learned/weights.npz --labels /tmp/labels160.npz
    # everything from scratch: the bids too (4 x 1,200 games of self-play first,
    # about 6 CPU-minutes and a few for the fits), then the card play as above
    python -m wizard_bots.learned.train --out my_weights.npz
    # a smoke run (seconds)
    python -m wizard_bots.learned.train --iterations 1 --games 20 --teacher-games 1 \
        --league-iterations 1 --league-games 1 --play-epochs 2 --jobs 1 --out /tmp/w.npz

**Bids.** Every seat of every game is played by the same policy: it bids
with the current model (the heuristic's bid in the first iteration), a
random legal bid instead with probability ``--epsilon`` (exploration), and
plays its cards as the heuristic does, aiming at its bid. The games run in
the environment ``wizard_arena.rl.wizard_v0`` (raw, rewards = each round's
points); each bid becomes one sample: the bidder's observation (the
environment's, the very vector ``LearnedBot`` encodes at the table), the
bid, and the points the round gave it. The model (:class:`.model.BidModel`)
learns, for every bid, the expected points of the round: a contextual
bandit fitted by least squares on the chosen bid's output (Adam,
minibatches, all samples of all iterations so far). Each iteration plays
``--games`` games with the latest model, then refits. ``--bids-from PATH``
skips all this and takes the bidding model of a weights file.

**Cards**, in two steps, with the bidding model bidding for every seat:

1. *Distillation.* ``--teacher-games`` games in which every seat plays the
   cards of the teacher, ``MonteCarloBot(samples=4)`` (``--teacher-samples``).
   Every card decision with a choice is labelled with the teacher's value of
   each legal card (:meth:`~wizard_bots.montecarlo.MonteCarloBot.action_values`:
   its mean round score over the sampled deals). The card network
   (:class:`.model.PlayModel`, one score per card from
   :func:`.model.card_features`) is fitted to those values, each centred on
   its decision's mean (Adam, squared error, minibatches of whole
   decisions; the centring makes only the differences between a decision's
   cards count, which is all a choice needs; the teacher's values are noisy
   estimates, and least squares averages the noise out). A tenth of the
   games (``heldout``) is never trained on: after every epoch the network's
   agreement with the teacher on them (its card is one the teacher values
   highest) and its regret (the teacher's points lost to the teacher's best
   card) are kept: the training curve.
2. *A league of earlier versions* (:mod:`wizard_arena.rl.league`).
   ``--league-iterations`` times: ``--league-games`` games, the latest
   network in two seats and a league member (drawn by ``--league-mode``;
   ``pfsp`` favours the members the learner beats least) in the other two;
   the teacher labels the learner's decisions (the positions its own play
   leads to, which the teacher's games did not show it), the network is
   refitted on everything so far, and a snapshot of it joins the league.

The weights file keeps both models, the settings, the command, the wall and
processor seconds it took and the curves (``play_curve_*``: per epoch the
training loss, the held-out loss, agreement and regret; ``play_heuristic_*``:
the heuristic bot's agreement and regret on the same held-out decisions;
``play_league_margin``: the learner's points a game over its league
opponents). ``--labels PATH`` keeps the teacher's labelled games in a file
and reads them back when they are the same games (same bids, seed and
counts): a refit with other fitting settings need not replay them.

The games are played in ``--jobs`` processes, in as many tasks whatever
``--jobs`` is (:data:`BID_TASKS`, :data:`PLAY_TASKS`), each seeded from
``--seed`` and gathered in order: one seed gives one set of weights, with
``--jobs 1`` as with ``--jobs 2``. Only numpy is
needed besides the environment (for the bids) and the example bots.
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import resource
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from wizard_arena import Card, Suit
from wizard_arena.bot import Bot, GameInfo, decide
from wizard_arena.local import play_local
from wizard_arena.rl.encoding import action_id, encode
from wizard_arena.rl.league import League
from wizard_arena.rules import MAX_PLAYERS, MIN_PLAYERS, Bid, Phase, Rules, SeatView
from wizard_bots.heuristic import HeuristicBot, blind_bid, choose_bid, estimate_tricks
from wizard_bots.montecarlo import MonteCarloBot

from .model import N_CARD_INPUTS, WEIGHTS, BidModel, PlayModel, card_features, features

__all__ = [
    "CardSamples",
    "PlaySettings",
    "Samples",
    "Settings",
    "fit",
    "fit_play",
    "label_games",
    "main",
    "play_games",
    "train",
    "train_play",
]


@dataclass(frozen=True)
class Settings:
    iterations: int = 4
    games: int = 1200
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


def _pool(jobs: int) -> Any:
    """``jobs`` worker processes (None: play here), started afresh (spawn,
    as compare's and analyse's): forked from a process whose other threads
    hold locks (gRPC's, in a test run's worker), a worker could spin or
    block for ever."""
    return multiprocessing.get_context("spawn").Pool(jobs) if jobs > 1 else None


def train(settings: Settings, log: bool = True) -> BidModel:
    """Iterations of self-play and refitting; the final model."""
    rng = np.random.default_rng(settings.seed)
    model = BidModel.initial(settings.hidden, settings.seed)
    behaviour: BidModel | None = None  # the heuristic's bids first
    parts: list[Samples] = []
    jobs = max(1, settings.jobs)
    pool = _pool(jobs)
    try:
        for it in range(settings.iterations):
            start = time.perf_counter()
            # as many tasks whatever --jobs is: the games, and so the weights,
            # depend on the seed alone
            chunks = [
                settings.games // BID_TASKS + (i < settings.games % BID_TASKS)
                for i in range(BID_TASKS)
            ]
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


# -- card play: distil the Monte Carlo bot, then a league of earlier versions ---------


@dataclass(frozen=True)
class PlaySettings:
    teacher_games: int = 160
    """Games in which every seat plays the teacher's cards (all labelled)."""
    teacher_samples: int = 4
    """The teacher: ``MonteCarloBot(samples=...)``."""
    league_iterations: int = 2
    league_games: int = 40
    """Games per league iteration: the latest network in two seats (labelled),
    a league member in the other two."""
    league_mode: str = "pfsp"
    hidden: int = 64
    epochs: int = 30
    """Epochs of the first fit; each league iteration refits for half as many."""
    batch: int = 256
    lr: float = 2e-3
    heldout: float = 0.1
    """Share of the teacher games whose decisions are held out (the curve)."""
    seed: int = 1
    jobs: int = 2
    players: tuple[int, ...] = (4,)
    round_sizes: tuple[int, ...] | None = None
    """Cards dealt in each round of the card-play games (None: the full game)."""


@dataclass
class CardSamples:
    """Card decisions: input rows (float16), the decision of each row, and the
    teacher's value of each row's card relative to its decision's mean / 100."""

    x: np.ndarray
    group: np.ndarray
    v: np.ndarray
    heuristic: np.ndarray
    """Whether the row's card is the heuristic bot's choice (a baseline)."""

    @classmethod
    def join(cls, parts: Sequence[CardSamples]) -> CardSamples:
        xs, gs, vs, hs = [], [], [], []
        offset = 0
        for p in parts:
            xs.append(p.x)
            gs.append(p.group + offset)
            vs.append(p.v)
            hs.append(p.heuristic)
            offset += p.decisions
        if not xs:
            return cls(
                np.zeros((0, N_CARD_INPUTS), np.float16),
                np.zeros(0, np.int64),
                np.zeros(0, np.float32),
                np.zeros(0, bool),
            )
        return cls(np.concatenate(xs), np.concatenate(gs), np.concatenate(vs), np.concatenate(hs))

    @property
    def decisions(self) -> int:
        return int(self.group[-1]) + 1 if len(self.group) else 0

    def __len__(self) -> int:
        return len(self.v)


class _Collector:
    """Card decisions as they are labelled (rows of a :class:`CardSamples`)."""

    def __init__(self) -> None:
        self.x: list[np.ndarray] = []
        self.v: list[np.ndarray] = []
        self.h: list[np.ndarray] = []

    def add(self, x: np.ndarray, values: Sequence[float], heuristic: int) -> None:
        v = np.asarray(values, np.float32) / 100.0
        self.x.append(x.astype(np.float16))
        self.v.append(v - v.mean())
        self.h.append(np.arange(len(v)) == heuristic)

    def samples(self) -> CardSamples:
        if not self.x:
            return CardSamples.join([])
        group = np.concatenate([np.full(len(v), i, np.int64) for i, v in enumerate(self.v)])
        return CardSamples(
            np.concatenate(self.x), group, np.concatenate(self.v), np.concatenate(self.h)
        )


class _NetBot(Bot):
    """Bids with a bidding model and plays with a card model; with a
    ``teacher``, every card decision with a choice is also labelled by it
    (and played by it when there is no card model: the teacher's own games)."""

    name = "net"

    def __init__(
        self,
        bids: BidModel,
        play: PlayModel | None,
        teacher: MonteCarloBot | None = None,
        collector: _Collector | None = None,
    ) -> None:
        self.bids = bids
        self.player = play
        self.teacher = teacher
        self.collector = collector
        self._heuristic = HeuristicBot()

    def on_game_start(self, info: GameInfo) -> None:
        if self.teacher is not None:
            self.teacher.on_game_start(info)

    def bid(self, view: SeatView) -> int:
        if view.others_hands and not view.hand:
            return blind_bid(view)
        return self.bids.best_bid(encode(view), view.legal_bids)

    def play(self, view: SeatView) -> Card:
        cards, x = card_features(view)
        if len(cards) == 1:
            return cards[0]
        if self.teacher is not None:
            values = self.teacher.action_values(view)
            v = [values[c] for c in cards]
            if self.collector is not None:
                self.collector.add(x, v, cards.index(self._heuristic.play(view)))
            if self.player is None:
                return cards[max(range(len(cards)), key=lambda i: (v[i], -i))]
        assert self.player is not None
        return cards[int(np.argmax(self.player.scores(x)))]

    def choose_trump(self, view: SeatView) -> Suit:
        return self._heuristic.choose_trump(view)


def _teacher(settings: PlaySettings, seed: int) -> MonteCarloBot:
    return MonteCarloBot(samples=settings.teacher_samples, seed=seed)


Task = tuple[BidModel, PlayModel | None, list[PlayModel], int, int, PlaySettings]


def label_games(
    task: Task,
) -> tuple[CardSamples, list[float]]:
    """Play ``games`` games from ``seed`` and label card decisions by the teacher.

    Without a card model (``None``) every seat plays the teacher's cards and
    every decision is labelled. With one, seats 0 and 2 (rotating) play it
    and are labelled; the others play ``opponents[g]``, one per game. Returns
    the samples and, per game, the labelled seats' score less the others'
    (a league's record)."""
    bids, play, opponents, seed, games, settings = task
    collector = _Collector()
    margins: list[float] = []
    for g in range(games):
        n = settings.players[g % len(settings.players)]
        game_seed = seed * 100_003 + g
        teacher_seed = game_seed * 8
        if play is None:
            bots: list[Bot] = [
                _NetBot(
                    bids,
                    None,
                    MonteCarloBot(samples=settings.teacher_samples, seed=teacher_seed + s),
                    collector,
                )
                for s in range(n)
            ]
            learners = list(range(n))
        else:
            learners = [s for s in range(n) if (s + g) % 2 == 0]
            bots = [
                _NetBot(
                    bids,
                    play,
                    MonteCarloBot(samples=settings.teacher_samples, seed=teacher_seed + s),
                    collector,
                )
                if s in learners
                else _NetBot(bids, opponents[g])
                for s in range(n)
            ]
        rules = Rules(players=n, hand_sizes=settings.round_sizes)
        result = play_local(bots, rules, seed=game_seed)
        mine = [t for s, t in enumerate(result.totals) if s in learners]
        others = [t for s, t in enumerate(result.totals) if s not in learners]
        if others:
            margins.append(float(np.mean(mine) - np.mean(others)))
    return collector.samples(), margins


def _group_centred(pred: np.ndarray, group: np.ndarray, decisions: int) -> np.ndarray:
    sums = np.bincount(group, weights=pred, minlength=decisions)
    counts = np.bincount(group, minlength=decisions)
    return np.asarray(pred - (sums / np.maximum(counts, 1))[group], np.float32)


def evaluate_play(model: PlayModel, data: CardSamples) -> tuple[float, float, float]:
    """On ``data``: the loss (mean squared error of the centred scores), the
    share of decisions where the network's card is one the teacher values
    highest, and the mean regret (teacher's points lost to its best card)."""
    if len(data) == 0:
        return float("nan"), float("nan"), float("nan")
    d = data.decisions
    pred = model.scores(data.x.astype(np.float32))
    err = _group_centred(pred, data.group, d) - data.v
    loss = float(np.mean(err * err))
    order = np.lexsort((-pred, data.group))  # by decision, best score first
    first = np.ones(len(order), bool)
    first[1:] = data.group[order][1:] != data.group[order][:-1]
    chosen = order[first]  # one row per decision: the network's card
    best = np.full(d, -np.inf)
    np.maximum.at(best, data.group, data.v)
    regret = best[data.group[chosen]] - data.v[chosen]
    return loss, float(np.mean(regret <= 1e-6)), float(np.mean(regret)) * 100


def heuristic_baseline(data: CardSamples) -> tuple[float, float]:
    """On ``data``: the heuristic's agreement with the teacher and its mean
    regret in points (as :func:`evaluate_play` gives them for the network)."""
    if len(data) == 0:
        return float("nan"), float("nan")
    best = np.full(data.decisions, -np.inf)
    np.maximum.at(best, data.group, data.v)
    rows = np.flatnonzero(data.heuristic)
    regret = best[data.group[rows]] - data.v[rows]
    return float(np.mean(regret <= 1e-6)), float(np.mean(regret)) * 100


def fit_play(
    model: PlayModel,
    data: CardSamples,
    epochs: int,
    settings: PlaySettings,
    rng: np.random.Generator,
    heldout: CardSamples | None = None,
    log: bool = True,
) -> list[tuple[float, float, float, float]]:
    """Adam on the squared error of each card's score, centred within its
    decision, against the teacher's centred value; minibatches of whole
    decisions. Per epoch: (training loss, held-out loss, agreement, regret)."""
    params = [model.w1, model.b1, model.w2, model.b2]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    step = 0
    b1, b2, eps = 0.9, 0.999, 1e-8
    starts = np.searchsorted(data.group, np.arange(data.decisions + 1))
    curve = []
    for epoch in range(epochs):
        lr = settings.lr * (0.5 * (1 + np.cos(np.pi * epoch / epochs)))  # cosine decay
        order = rng.permutation(data.decisions)
        total = 0.0
        for start in range(0, len(order), settings.batch):
            dec = np.sort(order[start : start + settings.batch])
            rows = np.concatenate([np.arange(starts[i], starts[i + 1]) for i in dec])
            group = np.searchsorted(dec, data.group[rows])
            k = len(dec)
            x = data.x[rows].astype(np.float32)
            h = model.hidden(x)
            pred = h @ model.w2 + model.b2
            err = _group_centred(pred, group, k) - data.v[rows]
            total += float(err @ err)
            g = 2.0 * _group_centred(err, group, k) / k
            dh = np.outer(g, model.w2) * (h > 0)
            grads = [x.T @ dh, dh.sum(0), h.T @ g, np.zeros((), np.float32)]
            step += 1
            for i, (p, gr) in enumerate(zip(params, grads, strict=True)):
                m[i] = b1 * m[i] + (1 - b1) * gr
                v[i] = b2 * v[i] + (1 - b2) * gr * gr
                mh = m[i] / (1 - b1**step)
                vh = v[i] / (1 - b2**step)
                p -= (lr * mh / (np.sqrt(vh) + eps)).astype(p.dtype)
        row = (total / max(1, len(data)), *evaluate_play(model, heldout or CardSamples.join([])))
        curve.append(row)
        if log and (epoch == epochs - 1 or epoch % 5 == 0):
            print(
                f"  epoch {epoch + 1}/{epochs}: loss {row[0]:.4f}; held out: loss {row[1]:.4f}, "
                f"agreement {row[2] * 100:.1f}%, regret {row[3]:.2f} points",
                flush=True,
            )
    return curve


def _run(pool: Any, tasks: list[Task]) -> list[tuple[CardSamples, list[float]]]:
    return (
        list(pool.map(label_games, tasks)) if pool is not None else [label_games(t) for t in tasks]
    )


#: Tasks of a bid iteration's self-play, and of a card-play stage: fixed, so
#: that ``--jobs 1`` and ``--jobs 2`` play the same games (the seeds are per task).
BID_TASKS = 2
PLAY_TASKS = 10


def _chunks(total: int, parts: int) -> list[int]:
    return [c for c in (total // parts + (i < total % parts) for i in range(parts)) if c]


def _labels_key(bids: BidModel, settings: PlaySettings, tasks: int) -> str:
    """What the teacher's labelled games depend on (not the fitting's settings)."""
    h = hashlib.sha256()
    for a in (bids.w1, bids.b1, bids.w2, bids.b2):
        h.update(np.ascontiguousarray(a).tobytes())
    fields = (settings.teacher_games, settings.teacher_samples, settings.seed)
    sizes = settings.round_sizes
    return f"{fields} {settings.players} {sizes} {settings.heldout} {tasks} {h.hexdigest()[:16]}"


def _load_labels(path: Path, key: str) -> tuple[CardSamples, CardSamples] | None:
    if not path.is_file():
        return None
    with np.load(path) as f:
        if str(f["key"]) != key:
            return None
        return tuple(  # type: ignore[return-value]
            CardSamples(f[f"{k}_x"], f[f"{k}_group"], f[f"{k}_v"], f[f"{k}_heuristic"])
            for k in ("train", "heldout")
        )


def _save_labels(path: Path, key: str, data: CardSamples, heldout: CardSamples) -> None:
    arrays: dict[str, Any] = {"key": np.array(key)}
    for k, d in (("train", data), ("heldout", heldout)):
        arrays.update({f"{k}_x": d.x, f"{k}_group": d.group, f"{k}_v": d.v})
        arrays[f"{k}_heuristic"] = d.heuristic
    np.savez_compressed(path, **arrays)


def train_play(
    bids: BidModel, settings: PlaySettings, log: bool = True, labels: Path | None = None
) -> tuple[PlayModel, dict[str, np.ndarray]]:
    """Distil the teacher's card play, then league iterations; the final card
    model and the training's curves (arrays to keep in the weights file).
    With ``labels``, the teacher's labelled games are kept in that file and
    read back from it when it holds the same games (to refit without
    replaying them: the games are the same for the same seed and bids)."""
    rng = np.random.default_rng(settings.seed)
    model = PlayModel.initial(settings.hidden, settings.seed)
    jobs = max(1, settings.jobs)
    pool = _pool(jobs)
    # more tasks than processes (they finish at about the same time), and
    # whole tasks held out; as many whatever --jobs is (the weights depend on
    # the seed alone)
    tasks_per_stage = PLAY_TASKS
    try:
        start = time.perf_counter()
        key = _labels_key(bids, settings, tasks_per_stage)
        cached = _load_labels(labels, key) if labels is not None else None
        if cached is not None:
            data, heldout = cached
            where = f"from {labels}"
        else:
            chunks = _chunks(settings.teacher_games, tasks_per_stage)
            tasks: list[Task] = [
                (bids, None, [], settings.seed * 1_000 + i, c, settings)
                for i, c in enumerate(chunks)
            ]
            parts = [p for p, _ in _run(pool, tasks)]
            held = max(1, round(len(parts) * settings.heldout)) if len(parts) > 1 else 0
            heldout = CardSamples.join(parts[len(parts) - held :])
            data = CardSamples.join(parts[: len(parts) - held])
            if labels is not None:
                _save_labels(labels, key, data, heldout)
            where = f"played ({time.perf_counter() - start:.0f} s)"
        train_parts = [data]
        base_agree, base_regret = heuristic_baseline(heldout)
        if log:
            print(
                f"teacher: {settings.teacher_games} games, {data.decisions} card decisions "
                f"to learn from, {heldout.decisions} held out, {where}; on those the "
                f"heuristic agrees {base_agree * 100:.1f}%, regret {base_regret:.2f} points",
                flush=True,
            )
        curve = fit_play(model, data, settings.epochs, settings, rng, heldout, log)
        stages = [0] * len(curve)
        league: League[PlayModel] = League(seed=settings.seed, mode=settings.league_mode)
        league.add(model, name="v0")
        margins_by_stage: list[float] = []
        for it in range(settings.league_iterations):
            start = time.perf_counter()
            members = [league.sample() for _ in range(settings.league_games)]
            chunks = _chunks(settings.league_games, tasks_per_stage)
            tasks = []
            first = 0
            for i, c in enumerate(chunks):
                opps = [m.policy for m in members[first : first + c]]
                tasks.append(
                    (bids, model, opps, settings.seed * 1_000 + 100 * (it + 1) + i, c, settings)
                )
                first += c
            results = _run(pool, tasks)
            margins = [mg for _, ms in results for mg in ms]
            for member, margin in zip(members, margins, strict=True):
                league.record(member, 1.0 if margin > 0 else 0.0 if margin < 0 else 0.5)
            train_parts.extend(p for p, _ in results)
            data = CardSamples.join(train_parts)
            margins_by_stage.append(float(np.mean(margins)))
            if log:
                print(
                    f"league {it + 1}/{settings.league_iterations}: {settings.league_games} games "
                    f"against {len(league)} members, {float(np.mean(margins)):+.1f} points a game "
                    f"over them; {data.decisions} decisions ({time.perf_counter() - start:.0f} s)",
                    flush=True,
                )
            more = fit_play(model, data, max(1, settings.epochs // 2), settings, rng, heldout, log)
            curve += more
            stages += [it + 1] * len(more)
            league.add(model, name=f"v{it + 1}")
    finally:
        if pool is not None:
            pool.close()
            pool.join()
    arr = np.array(curve, np.float32).reshape(-1, 4)
    curves: dict[str, np.ndarray] = {
        "play_curve_stage": np.array(stages, np.int64),
        "play_curve_train_loss": arr[:, 0],
        "play_curve_heldout_loss": arr[:, 1],
        "play_curve_agreement": arr[:, 2],
        "play_curve_regret": arr[:, 3],
        "play_league_margin": np.array(margins_by_stage, np.float32),
        "play_heuristic_agreement": np.array(base_agree, np.float32),
        "play_heuristic_regret": np.array(base_regret, np.float32),
        "play_decisions": np.array(data.decisions, np.int64),
        "play_heldout_decisions": np.array(heldout.decisions, np.int64),
    }
    return model, curves


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Train the learned bot: its bids by self-play, its card play "
        "by distilling the Monte Carlo bot and a league of earlier versions.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__,
    )
    d = Settings()
    p = PlaySettings()
    ap.add_argument(
        "--iterations", type=int, default=d.iterations, help="bids: self-play iterations"
    )
    ap.add_argument("--games", type=int, default=d.games, help="bids: games per iteration")
    ap.add_argument("--players", default="4", help="table sizes in turn, e.g. 3,4,5,6")
    ap.add_argument("--epsilon", type=float, default=d.epsilon, help="bids: random bids' share")
    ap.add_argument("--hidden", type=int, default=d.hidden, help="bids: hidden units")
    ap.add_argument("--epochs", type=int, default=d.epochs, help="bids: epochs per iteration")
    ap.add_argument(
        "--bids-from",
        type=Path,
        metavar="PATH",
        help="take the bidding model from this weights file instead of training it "
        f"(e.g. the committed {WEIGHTS.name}); only the card play is trained",
    )
    ap.add_argument(
        "--teacher-games",
        type=int,
        default=p.teacher_games,
        help="cards: games of the teacher's play, every card decision labelled",
    )
    ap.add_argument(
        "--teacher-samples",
        type=int,
        default=p.teacher_samples,
        help="cards: the teacher is MonteCarloBot(samples=N)",
    )
    ap.add_argument(
        "--league-iterations",
        type=int,
        default=p.league_iterations,
        help="cards: rounds of play against the league after distilling (0: none)",
    )
    ap.add_argument(
        "--league-games",
        type=int,
        default=p.league_games,
        help="cards: games per league iteration (the learner's decisions labelled)",
    )
    ap.add_argument(
        "--league-mode",
        choices=("uniform", "pfsp"),
        default=p.league_mode,
        help="cards: how opponents are drawn from the league (wizard_arena.rl.league)",
    )
    ap.add_argument(
        "--play-hidden", type=int, default=p.hidden, help="cards: hidden units of the network"
    )
    ap.add_argument(
        "--play-epochs",
        type=int,
        default=p.epochs,
        help="cards: epochs of the first fit (each league iteration: half as many)",
    )
    ap.add_argument(
        "--round-sizes",
        metavar="N,N,...",
        help="cards: deal only these rounds in the card-play games, e.g. 1,2,3 "
        "(short games: a quick try or a smoke run; default the full game)",
    )
    ap.add_argument(
        "--labels",
        type=Path,
        metavar="PATH",
        help="cards: keep the teacher's labelled games in this .npz, and reuse them "
        "when it holds the same games (refit without replaying; same weights)",
    )
    ap.add_argument("--seed", type=int, default=d.seed, help="seed of games, models and draws")
    ap.add_argument("--jobs", type=int, default=d.jobs, help="processes playing games")
    ap.add_argument(
        "--out",
        type=Path,
        default=Path("weights.npz"),
        help="weights file (.npz; default %(default)s in the current folder: the "
        f"committed weights, {WEIGHTS.name} in the package, are written only when named)",
    )
    args = ap.parse_args(argv)
    players = _table_sizes(ap, args.players)
    settings = Settings(
        iterations=args.iterations,
        games=args.games,
        players=players,
        epsilon=args.epsilon,
        hidden=args.hidden,
        epochs=args.epochs,
        seed=args.seed,
        jobs=args.jobs,
    )
    play = PlaySettings(
        teacher_games=args.teacher_games,
        teacher_samples=args.teacher_samples,
        league_iterations=args.league_iterations,
        league_games=args.league_games,
        league_mode=args.league_mode,
        hidden=args.play_hidden,
        epochs=args.play_epochs,
        seed=args.seed,
        jobs=args.jobs,
        players=players,
        round_sizes=_round_sizes(ap, args.round_sizes, players),
    )
    out = _weights_path(ap, args.out)
    for name in (
        *("iterations", "games", "hidden", "epochs", "jobs"),
        *("teacher_games", "teacher_samples", "league_games", "play_hidden", "play_epochs"),
    ):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.league_iterations < 0:
        ap.error("--league-iterations must be 0 or more")
    if not 0.0 <= settings.epsilon <= 1.0:
        ap.error("--epsilon must be between 0 and 1")
    bids_from: Path | None = args.bids_from
    if bids_from is not None and not bids_from.is_file():
        ap.error(f"--bids-from {bids_from}: no such file")
    start = time.perf_counter()
    if bids_from is not None:
        try:
            model = BidModel.load(bids_from)
        except (OSError, ValueError, KeyError) as e:
            ap.error(f"--bids-from {bids_from}: not a weights file with a bidding model ({e})")
        with np.load(bids_from) as data:
            bid_meta = {k: data[k] for k in ("settings", "command", "bid_command") if k in data}
        # the bidding model's own command: a file made with --bids-from names it
        bid_meta["command"] = bid_meta.get("bid_command", bid_meta.get("command", ""))
        print(f"bids: from {bids_from}", flush=True)
    else:
        model = train(settings)
        bid_meta = {}
    player, curves = train_play(model, play, labels=args.labels)
    command = " ".join(["python -m wizard_bots.learned.train", *(argv or sys.argv[1:])])
    seconds = time.perf_counter() - start
    usage = [resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu = sum(u.ru_utime + u.ru_stime for u in usage)
    model.save(
        out,
        settings=repr(settings) if bids_from is None else bid_meta.get("settings", ""),
        bid_command=command if bids_from is None else bid_meta.get("command", ""),
        play_settings=repr(play),
        command=command,
        seconds=np.float32(seconds),
        cpu_seconds=np.float32(cpu),
        **player.arrays(),
        **curves,
    )
    print(f"saved {out} ({seconds:.0f} s in all, {cpu:.0f} s of processor time)")
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


def _round_sizes(
    ap: argparse.ArgumentParser, text: str | None, players: tuple[int, ...]
) -> tuple[int, ...] | None:
    """``--round-sizes``: checked against every table size at once."""
    if text is None:
        return None
    try:
        sizes = tuple(int(p) for p in text.split(","))
        for n in players:
            Rules(players=n, hand_sizes=sizes)
    except ValueError as e:
        ap.error(f"--round-sizes {text}: {e}")
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

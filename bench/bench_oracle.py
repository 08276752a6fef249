"""What the hidden cards cost the Monte Carlo bot: 4-player self-play bid
accuracy when its search is given the true deal instead of sampled ones.

Four ``MonteCarloBot`` seats play whole standard games against each other
(fixed work: ``--samples`` deals a decision, ``--bid-effort`` times that for
bids). In each mode some of their searches are given the real hidden cards
(the other seats' hands and the undealt stock) as their one "sampled" deal:

- ``mc``: none (the bot as it is);
- ``oracle-bid``: bids and trump choices see the true deal, card play samples;
- ``oracle-play``: card play sees the true deal, bids sample;
- ``oracle``: every decision sees the true deal.

Standard rules only (the bid offsets below assume bids seen in bidding
order, and the modes split decisions by phase). The bots are otherwise
unchanged (their rollouts still play the heuristic for every seat). Each
mode plays the same deals (game seeds ``--seed`` .. ``--seed + games - 1``,
the bots' own seeds from those). Prints, per mode, bid accuracy with a 95%
interval over games (Student's t), the mean of (bids - tricks) a round,
processor time per decision (an oracle row evaluates its one deal once per
batch of draws, so its times are not a real bot's), and, for sampled bids,
how far the bids fall from the heuristic's estimate on the bidder's true
hand (what the sampler's bid likelihood assumes: ``BID_SIGMA``), overall
and by bidding position.

    python bench/bench_oracle.py --games 20 --samples 12 --bid-effort 4 --jobs 2
    python bench/bench_oracle.py --modes oracle,mc --games 4
    python bench/bench_oracle.py --modes mc --play-eps 0.2   # with inference from play
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from wizard_arena.bot import GameInfo
from wizard_arena.rules import Action, Bid, ChooseTrump, Game, Phase, Play, Rules, SeatView
from wizard_bots.heuristic import estimate_tricks
from wizard_bots.montecarlo import MonteCarloBot
from wizard_bots.sampling import SampledDeal

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_strength import estimate  # (beside this file: Student's t over games)

MODES = ("mc", "oracle-bid", "oracle-play", "oracle")
PLAYERS = 4
#: The phases whose searches see the true deal, by mode.
SEES = {
    "mc": frozenset[Phase](),
    "oracle-bid": frozenset({Phase.BID, Phase.CHOOSE_TRUMP}),
    "oracle-play": frozenset({Phase.PLAY}),
    "oracle": frozenset({Phase.BID, Phase.CHOOSE_TRUMP, Phase.PLAY}),
}


class OracleBot(MonteCarloBot):
    """A Monte Carlo bot whose searches in ``sees`` get the true deal of
    ``game`` (the experiment's referee) as their only deal."""

    def __init__(self, game: Game, sees: frozenset[Phase], **options: object) -> None:
        super().__init__(**options)  # type: ignore[arg-type]
        self.game = game
        self.sees = sees

    def _deals(
        self, view: SeatView, count: int, noise: Sequence[float] | None = None
    ) -> list[tuple[SampledDeal, int]]:
        if view.phase not in self.sees:
            return super()._deals(view, count, noise)
        g = self.game
        used = Counter(c for hand in g.dealt_hands for c in hand)
        if g.turned_card is not None:
            used[g.turned_card] += 1
        stock = tuple((Counter(g.rules.deck) - used).elements())
        return [(SampledDeal(tuple(tuple(h) for h in g.hands), stock), count)]


Result = tuple[float, float, float, list[tuple[int, float]]]
"""A game's bid accuracy, processor seconds per decision, mean (bids - tricks)
per round, and each sampled bid's distance from the heuristic's estimate
(with the bidder's position in the bidding order)."""


def play(
    mode: str, seed: int, samples: int, bid_effort: float, play_eps: float | None = None
) -> Result:
    rules = Rules(players=PLAYERS)
    game = Game(rules, seed=seed)
    names = tuple(f"mc-{i}" for i in range(PLAYERS))
    bots = [
        OracleBot(game, SEES[mode], think_time=None, samples=samples, seed=seed * 100 + i,
                  bid_effort=bid_effort, play_eps=play_eps)
        for i in range(PLAYERS)
    ]  # fmt: skip
    for seat, bot in enumerate(bots):
        bot.on_game_start(GameInfo(f"oracle-{seed}", rules, seat, names))
    offsets: list[tuple[int, float]] = []
    decisions = 0
    start = time.process_time()
    while not game.is_over:
        if game.phase is Phase.DEAL:
            game.deal()
            continue
        seat = game.acting[0]
        view = game.view(seat)
        bot = bots[seat]
        action: Action
        if game.phase is Phase.BID:
            action = Bid(bot.bid(view))
            if Phase.BID not in bot.sees:
                position = (seat - game.dealer - 1) % PLAYERS
                order = [(game.dealer + 1 + k) % PLAYERS for k in range(position)]
                before = [b for b in (game.bids[s] for s in order) if b is not None]
                estimate = estimate_tricks(
                    list(game.hands[seat]), game.trump, PLAYERS, game.turned_card, before, position
                )
                offsets.append((position, action.bid - estimate))
        elif game.phase is Phase.PLAY:
            action = Play(bot.play(view))
        else:
            action = ChooseTrump(bot.choose_trump(view))
        game.apply(seat, action)
        decisions += 1
    cpu = time.process_time() - start
    results = game.results
    exact = sum(r.bids[s] == r.tricks[s] for r in results for s in range(PLAYERS))
    surplus = sum(sum(r.bids) - sum(r.tricks) for r in results) / len(results)
    return exact / (PLAYERS * len(results)), cpu / decisions, surplus, offsets


def _task(args: tuple[str, int, int, float, float | None]) -> Result:
    return play(*args)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--modes", default=",".join(MODES), help=f"of {', '.join(MODES)}")
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--samples", type=int, default=12)
    ap.add_argument("--bid-effort", type=float, default=4.0)
    ap.add_argument("--seed", type=int, default=1000, help="the first game's seed")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument(
        "--play-eps",
        type=float,
        default=None,
        help="the bots' inference from the cards played (MonteCarloBot's play_eps; default off)",
    )
    args = ap.parse_args(argv)
    modes = args.modes.split(",")
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        ap.error(f"unknown mode(s) {', '.join(unknown)}: choose among {', '.join(MODES)}")
    print(
        f"{args.games} self-play games of 4 Monte Carlo bots, samples {args.samples}, "
        f"bid_effort {args.bid_effort:g}, seeds {args.seed}..{args.seed + args.games - 1}"
        + (f", play_eps {args.play_eps:g}" if args.play_eps is not None else "")
    )
    print(f"{'mode':<12} {'bid accuracy %':>15} {'bids-tricks/round':>18} {'cpu ms/decision':>16}")
    for mode in modes:
        tasks = [
            (mode, args.seed + g, args.samples, args.bid_effort, args.play_eps)
            for g in range(args.games)
        ]
        if args.jobs > 1:
            with multiprocessing.Pool(args.jobs) as pool:
                results = pool.map(_task, tasks)
        else:
            results = [_task(t) for t in tasks]
        accuracy = estimate([r[0] for r in results]).fmt(100)
        surplus = statistics.mean(r[2] for r in results)
        cpu = 1000 * statistics.mean(r[1] for r in results)
        print(f"{mode:<12} {accuracy:>15} {surplus:>18.2f} {cpu:>16.1f}", flush=True)
        offsets = [x for r in results for x in r[3]]
        if offsets:
            diffs = [d for _, d in offsets]
            by_position = ", ".join(
                f"{statistics.mean(d for p, d in offsets if p == k):.2f}"
                for k in range(PLAYERS)
                if any(p == k for p, _ in offsets)
            )
            print(
                f"{'':<12} sampled bids - heuristic estimate on the true hand: mean "
                f"{statistics.mean(diffs):.2f}, sd {statistics.pstdev(diffs):.2f} "
                f"({len(diffs)} bids); mean by bidding position {by_position}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())

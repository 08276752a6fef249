"""Playing strength of the example bots, by duplicate games played locally.

Each deal seed is played once for every cyclic rotation of the bots around
the table: with ``--bots montecarlo,heuristic,heuristic,heuristic`` and 50
deals that is 200 games in which every bot entry has held every seat's cards
of every deal. The deals (hands, turned cards) of a seed are the same in all
its rotations, so luck of the cards largely cancels out.

Per bot (entries with the same name are pooled) it prints the mean final
score per game, the share of tables won (per seat-game: 1 if ranked first
alone, 1/k if k seats tie for first, so an even field gives 1/players) and
the bid accuracy (share of rounds with bid = tricks taken). Each figure has a
95% confidence interval computed over the duplicate sets: every deal seed
gives one value per bot (its mean over the set's games), and the interval is
mean +- t(0.975, sets - 1) * sd / sqrt(sets). The paired difference of
mean scores between bots, set by set, is printed the same way.

A bot is one of the names below (``montecarlo`` and ``ismcts`` with
``--samples`` or ``--think-time``), or any bot spec as ``compare`` takes it,
``MODULE:CLASS`` or ``path/to/file.py:CLASS`` with constructor arguments if
needed (a student's own weights: ``"wizard_bots.learned:LearnedBot(weights='my.npz')"``);
a spec is named as written in the tables.

    python bench/bench_strength.py --bots heuristic,random --players 4 --deals 25
    python bench/bench_strength.py --bots montecarlo,heuristic,heuristic,heuristic \\
        --deals 50 --samples 8 --jobs 2
    python bench/bench_strength.py --deals 50 --jobs 2 \\
        --bots "wizard_bots.learned:LearnedBot(weights='my.npz'),heuristic,heuristic,heuristic"
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import platform
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from wizard_arena.bot import Bot
from wizard_arena.loader import SpecError, load_bot
from wizard_arena.local import play_local
from wizard_arena.rules import MAX_PLAYERS, MIN_PLAYERS, Rules
from wizard_referee.compare.plan import parse_bot
from wizard_referee.ratings import student_t

BOT_NAMES = ("random", "heuristic", "montecarlo", "ismcts", "learned")
SEARCH_BOTS = ("montecarlo", "ismcts")


@dataclass(frozen=True)
class Config:
    bots: tuple[str, ...]
    deals: int
    seed: int
    think_time: float | None
    samples: int | None
    mc_options: tuple[tuple[str, float], ...] = ()
    """Extra MonteCarloBot keyword arguments (``--mc key=value``; ISMCTSBot takes them too)."""
    ismcts_options: tuple[tuple[str, float], ...] = ()
    """Extra ISMCTSBot-only keyword arguments (``--ismcts key=value``)."""


@dataclass(frozen=True)
class SeatResult:
    """One bot entry's outcome in one game."""

    deal: int
    rotation: int
    entry: int
    bot: str
    seat: int
    score: int
    win: float
    """1/k if this seat is one of k seats ranked first, else 0."""
    exact: int
    """Rounds in which the bid was exactly the tricks taken."""
    rounds: int
    cpu_seconds: float
    """Processor time spent deciding (this entry, this game)."""
    exact_by_round: tuple[int, ...] = ()
    """1 for each round (in order) in which the bid was exactly the tricks taken, else 0."""
    decision_seconds: tuple[float, ...] = ()
    """Processor time of each decision (this entry, this game)."""


class _Timed(Bot):
    """Wraps a bot to measure its thinking time."""

    def __init__(self, inner: Bot) -> None:
        self.inner = inner
        self.name = inner.name
        self.seconds = 0.0
        self.decisions: list[float] = []

    def on_game_start(self, info: Any) -> None:
        self.inner.on_game_start(info)

    def _took(self, t: float) -> None:
        took = time.process_time() - t
        self.seconds += took
        self.decisions.append(took)

    def bid(self, view: Any) -> Any:
        t = time.process_time()
        try:
            return self.inner.bid(view)
        finally:
            self._took(t)

    def play(self, view: Any) -> Any:
        t = time.process_time()
        try:
            return self.inner.play(view)
        finally:
            self._took(t)

    def choose_trump(self, view: Any) -> Any:
        t = time.process_time()
        try:
            return self.inner.choose_trump(view)
        finally:
            self._took(t)


def make_bot(name: str, seed: int, config: Config) -> Bot:
    """A fresh bot of kind ``name``, seeded with ``seed``."""
    if name == "random":
        from wizard_bots.random_bot import RandomBot

        return RandomBot(seed=seed)
    if name == "heuristic":
        from wizard_bots.heuristic import HeuristicBot

        return HeuristicBot()
    if name == "montecarlo":
        from wizard_bots.montecarlo import MonteCarloBot

        return MonteCarloBot(
            think_time=config.think_time,
            samples=config.samples,
            seed=seed,
            **montecarlo_options(config),
        )
    if name == "ismcts":
        from wizard_bots.ismcts import ISMCTSBot

        return ISMCTSBot(
            think_time=config.think_time,
            samples=config.samples,
            seed=seed,
            **montecarlo_options(config),
            **_numbers(config.ismcts_options),
        )
    if name == "learned":
        from wizard_bots.learned import LearnedBot

        return LearnedBot()
    if is_spec(name):
        spec = parse_bot(name)
        assert spec.target is not None
        bot: Bot = load_bot(spec.target, spec.kwargs)
        return bot
    raise ValueError(f"unknown bot {name!r} (one of {', '.join(BOT_NAMES)}, or MODULE:CLASS)")


def is_spec(name: str) -> bool:
    """Whether ``name`` is a bot spec (``MODULE:CLASS(...)``), not a bot's name."""
    return name not in BOT_NAMES and parse_bot(name).is_class


def split_bots(text: str) -> list[str]:
    """``--bots``: entries separated by commas outside brackets and quotes.

    >>> split_bots("heuristic, wizard_bots.montecarlo:MonteCarloBot(samples=4, seed=1),random")
    ['heuristic', 'wizard_bots.montecarlo:MonteCarloBot(samples=4, seed=1)', 'random']
    """
    out, depth, quote, item = [], 0, "", ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(item.strip())
            item = ""
            continue
        item += ch
    out.append(item.strip())
    return [i for i in out if i]


def _order(name: str) -> tuple[int, str]:
    """The tables' order: the named bots as :data:`BOT_NAMES`, then specs."""
    return (BOT_NAMES.index(name), "") if name in BOT_NAMES else (len(BOT_NAMES), name)


def montecarlo_options(config: Config) -> dict[str, Any]:
    """MonteCarloBot keyword arguments from ``--mc key=value`` (whole numbers as ints)."""
    return _numbers(config.mc_options)


def _numbers(options: Sequence[tuple[str, float]]) -> dict[str, Any]:
    return {k: int(v) if v.is_integer() else v for k, v in options}


def parse_mc_options(items: Sequence[str]) -> tuple[tuple[str, float], ...]:
    """``key=value`` pairs of ``--mc`` (numbers only)."""
    out = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--mc wants key=value, not {item!r}")
        out.append((key.strip(), float(value)))
    return tuple(out)


def decision_times(results: Sequence[SeatResult]) -> dict[str, dict[str, float]]:
    """Per bot: processor seconds per decision (mean, p95, max, count)."""
    out = {}
    for name in sorted({r.bot for r in results}):
        times = sorted(t for r in results if r.bot == name for t in r.decision_seconds)
        if not times:
            continue
        p95 = times[min(len(times) - 1, math.ceil(0.95 * len(times)) - 1)]
        out[name] = {
            "mean": statistics.fmean(times),
            "p95": p95,
            "max": times[-1],
            "decisions": len(times),
        }
    return out


def print_decision_times(times: dict[str, dict[str, float]]) -> None:
    for name, t in times.items():
        print(
            f"time per decision {name}: mean {t['mean'] * 1000:.1f} ms, "
            f"p95 {t['p95'] * 1000:.1f} ms, max {t['max'] * 1000:.1f} ms "
            f"(processor time, {t['decisions']:.0f} decisions)"
        )


def deal_seed(seed: int, deal: int) -> int:
    return seed * 1_000_003 + deal


def play_game(config: Config, deal: int, rotation: int) -> list[SeatResult]:
    """Play deal ``deal`` with entry ``i`` of ``config.bots`` in seat ``(i + rotation) % n``."""
    n = len(config.bots)
    gseed = deal_seed(config.seed, deal)
    seats: list[_Timed | None] = [None] * n
    entry_of = [0] * n
    for i, name in enumerate(config.bots):
        seat = (i + rotation) % n
        bot_seed = (gseed * 7 + rotation) * 16 + i
        seats[seat] = _Timed(make_bot(name, bot_seed, config))
        entry_of[seat] = i
    bots = [b for b in seats if b is not None]
    result = play_local(bots, Rules(players=n), seed=gseed, hooks=False)
    if result.faults:
        raise RuntimeError(f"deal {deal} rotation {rotation}: faults {result.faults}")
    firsts = result.ranks.count(1)
    out = []
    for seat, bot in enumerate(bots):
        exact = sum(1 for r in result.results if r.bids[seat] == r.tricks[seat])
        out.append(
            SeatResult(
                deal=deal,
                rotation=rotation,
                entry=entry_of[seat],
                bot=config.bots[entry_of[seat]],
                seat=seat,
                score=result.totals[seat],
                win=1.0 / firsts if result.ranks[seat] == 1 else 0.0,
                exact=exact,
                rounds=len(result.results),
                cpu_seconds=bot.seconds,
                exact_by_round=tuple(int(r.bids[seat] == r.tricks[seat]) for r in result.results),
                decision_seconds=tuple(bot.decisions),
            )
        )
    return out


def _task(args: tuple[Config, int, int]) -> list[SeatResult]:
    return play_game(*args)


# -- statistics --------------------------------------------------------------------


def t_quantile(df: int, p: float = 0.975) -> float:
    """Student's t quantile, exact to rounding (the closed-form distribution
    function inverted, :mod:`wizard_referee.ratings.student_t`; the
    Cornish-Fisher expansion used before was 0.74% low at df = 3, 3.1% at 2).

    >>> round(t_quantile(3), 4), round(t_quantile(9), 4)
    (3.1824, 2.2622)
    """
    return student_t.t_quantile(df, p)


@dataclass(frozen=True)
class Estimate:
    mean: float
    half: float
    """Half-width of the 95% interval."""
    n: int

    def fmt(self, scale: float = 1.0, digits: int = 1) -> str:
        return f"{self.mean * scale:.{digits}f} ± {self.half * scale:.{digits}f}"


def estimate(values: Sequence[float]) -> Estimate:
    """Mean and 95% t-interval half-width over ``values`` (one per duplicate set)."""
    m = len(values)
    mean = statistics.fmean(values)
    if m < 2:
        return Estimate(mean, math.inf, m)
    sd = statistics.stdev(values)
    return Estimate(mean, t_quantile(m - 1) * sd / math.sqrt(m), m)


def summarize(results: Sequence[SeatResult]) -> dict[str, Any]:
    """Per-bot estimates and pairwise score differences, by duplicate set."""
    names = sorted({r.bot for r in results}, key=_order)
    deals = sorted({r.deal for r in results})
    per: dict[str, dict[str, list[float]]] = {
        n: {"score": [], "win": [], "accuracy": []} for n in names
    }
    for d in deals:
        rows = [r for r in results if r.deal == d]
        for n in names:
            mine = [r for r in rows if r.bot == n]
            per[n]["score"].append(statistics.fmean(r.score for r in mine))
            per[n]["win"].append(statistics.fmean(r.win for r in mine))
            per[n]["accuracy"].append(sum(r.exact for r in mine) / sum(r.rounds for r in mine))
    bots = {}
    for n in names:
        mine = [r for r in results if r.bot == n]
        bots[n] = {
            "seat_games": len(mine),
            "score": asdict(estimate(per[n]["score"])),
            "win": asdict(estimate(per[n]["win"])),
            "accuracy": asdict(estimate(per[n]["accuracy"])),
            "cpu_seconds_per_game": statistics.fmean(r.cpu_seconds for r in mine),
        }
    pairs = {}
    for i, b in enumerate(names):
        for a in names[i + 1 :]:
            diff = [x - y for x, y in zip(per[a]["score"], per[b]["score"], strict=True)]
            pairs[f"{a} - {b}"] = asdict(estimate(diff))
    return {"sets": len(deals), "bots": bots, "differences": pairs}


def print_summary(summary: dict[str, Any], games: int, players: int) -> None:
    sets = summary["sets"]
    print(f"{games} games, {players} players, {sets} duplicate sets; 95% intervals over sets")
    head = f"{'bot':<11} {'seat-games':>10} {'mean score':>16} {'tables won %':>15}"
    print(head + f" {'bid accuracy %':>15} {'cpu s/game':>10}")
    for name, b in summary["bots"].items():
        score = Estimate(**b["score"]).fmt()
        win = Estimate(**b["win"]).fmt(100)
        acc = Estimate(**b["accuracy"]).fmt(100)
        print(
            f"{name:<11} {b['seat_games']:>10} {score:>16} {win:>15} {acc:>15} "
            f"{b['cpu_seconds_per_game']:>10.2f}"
        )
    for pair, e in summary["differences"].items():
        est = Estimate(**e)
        lo, hi = est.mean - est.half, est.mean + est.half
        print(f"score difference {pair}: {est.fmt()}  (95% interval {lo:.1f} .. {hi:.1f})")


def accuracy_by_round(results: Sequence[SeatResult]) -> dict[str, list[Estimate]]:
    """Per bot, per round: bid accuracy with a 95% interval over duplicate sets."""
    names = sorted({r.bot for r in results}, key=_order)
    deals = sorted({r.deal for r in results})
    rounds = max(len(r.exact_by_round) for r in results)
    out: dict[str, list[Estimate]] = {}
    for n in names:
        per_round = []
        for k in range(rounds):
            sets = []
            for d in deals:
                mine = [r.exact_by_round[k] for r in results if r.deal == d and r.bot == n]
                sets.append(statistics.fmean(mine))
            per_round.append(estimate(sets))
        out[n] = per_round
    return out


def print_accuracy_by_round(results: Sequence[SeatResult]) -> None:
    """A table: bid accuracy % (95% interval) by round (rows) and bot (columns)."""
    table = accuracy_by_round(results)
    names = list(table)
    print("bid accuracy % by round (95% intervals over sets)")
    print(f"{'round':>5} " + " ".join(f"{n:>16}" for n in names))
    for k in range(len(next(iter(table.values())))):
        print(f"{k + 1:>5} " + " ".join(f"{table[n][k].fmt(100):>16}" for n in names))


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        description="Duplicate-game strength benchmark of the example bots.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__,
    )
    ap.add_argument(
        "--bots",
        default="heuristic,random,heuristic,random",
        help="comma-separated bots, one per seat, repeats allowed: names "
        f"({', '.join(BOT_NAMES)}) or specs MODULE:CLASS(key=value, ...); default %(default)s",
    )
    ap.add_argument(
        "--players",
        type=int,
        default=None,
        help="table size; a list of fewer bots is repeated to fill it (default: len(--bots))",
    )
    ap.add_argument("--deals", type=int, default=10, help="deal seeds (duplicate sets)")
    ap.add_argument("--seed", type=int, default=1, help="base seed of deals and bots")
    effort = ap.add_mutually_exclusive_group()
    effort.add_argument(
        "--think-time", type=float, default=None, help="montecarlo/ismcts s/decision"
    )
    effort.add_argument(
        "--samples",
        type=int,
        default=None,
        help="montecarlo deals (ismcts iterations) per decision (default 8)",
    )
    ap.add_argument(
        "--mc",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a MonteCarloBot keyword argument, e.g. bid_effort=4 (repeatable; "
        "ismcts takes it too)",
    )
    ap.add_argument(
        "--ismcts",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an ISMCTSBot-only keyword argument, e.g. exploration=0.5 (repeatable)",
    )
    ap.add_argument("--jobs", type=int, default=multiprocessing.cpu_count(), help="processes")
    ap.add_argument("--json", metavar="PATH", help="also write the raw results and summary")
    ap.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    ap = _parser()
    args = ap.parse_args(argv)

    names = split_bots(args.bots)
    for name in names:
        try:
            if name not in BOT_NAMES and not is_spec(name):
                ap.error(f"unknown bot {name!r} (one of {', '.join(BOT_NAMES)}, or MODULE:CLASS)")
            if is_spec(name):
                make_bot(name, 0, Config((name,), 1, 1, None, 1))  # refused now, not in a worker
        except (ValueError, SpecError) as e:
            ap.error(f"--bots: {e}")
    players = args.players if args.players is not None else len(names)
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        ap.error(f"players must be {MIN_PLAYERS}..{MAX_PLAYERS}")
    if len(names) > players:
        ap.error(f"{len(names)} bots for {players} seats")
    names = [names[i % len(names)] for i in range(players)]
    samples = args.samples
    if samples is None and args.think_time is None:
        samples = 8
    config = Config(
        tuple(names),
        args.deals,
        args.seed,
        args.think_time,
        samples,
        parse_mc_options(args.mc),
        parse_mc_options(args.ismcts),
    )
    tasks = [(config, d, k) for d in range(args.deals) for k in range(players)]

    results, elapsed, cpu, jobs = _play_all(tasks, args.jobs, args.quiet)
    results.sort(key=lambda r: (r.deal, r.rotation, r.seat))

    effort_txt = ""
    searchers = "/".join(n for n in SEARCH_BOTS if n in names)
    if searchers:
        effort_txt = (
            f"; {searchers} samples={samples}"
            if samples is not None
            else f"; {searchers} think_time={args.think_time}"
        )
    print(f"bots: {', '.join(names)}{effort_txt}; seed {args.seed}")
    if config.mc_options:
        print("montecarlo options: " + ", ".join(f"{k}={v:g}" for k, v in config.mc_options))
    if config.ismcts_options:
        print("ismcts options: " + ", ".join(f"{k}={v:g}" for k, v in config.ismcts_options))
    summary = summarize(results)
    print_summary(summary, len(tasks), players)
    print_accuracy_by_round(results)
    summary["decision_times"] = decision_times(results)
    print_decision_times(summary["decision_times"])
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"wall time {elapsed:.0f} s, processor time {cpu:.0f} s, {jobs} job(s), "
        f"{os.cpu_count()} cpus, load average {load:.1f}, Python {platform.python_version()}"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "command": sys.argv,
                    "config": asdict(config),
                    "games": len(tasks),
                    "wall_seconds": elapsed,
                    "cpu_seconds": cpu,
                    "summary": summary,
                    "results": [asdict(r) for r in results],
                },
                f,
                indent=1,
            )
    return 0


class _Serial:
    """A stand-in for a Pool that runs tasks in this process."""

    def __enter__(self) -> _Serial:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def imap_unordered(self, fn: Any, tasks: Sequence[Any]) -> Any:
        return map(fn, tasks)


def _play_all(
    tasks: list[Any], jobs: int, quiet: bool
) -> tuple[list[SeatResult], float, float, int]:
    """Play every game (in ``jobs`` processes): the results, wall and processor seconds."""
    start = time.perf_counter()
    cpu_start = os.times()
    results: list[SeatResult] = []
    jobs = max(1, jobs)
    with multiprocessing.Pool(jobs) if jobs > 1 else _Serial() as pool:
        for i, rows in enumerate(pool.imap_unordered(_task, tasks), 1):
            results.extend(rows)
            if not quiet:
                el = time.perf_counter() - start
                print(f"\r{i}/{len(tasks)} games, {el:.0f} s", end="", file=sys.stderr, flush=True)
    if not quiet:
        print(file=sys.stderr)
    elapsed = time.perf_counter() - start
    cpu = sum(os.times()[:4]) - sum(cpu_start[:4])
    return results, elapsed, cpu, jobs


if __name__ == "__main__":
    sys.exit(main())

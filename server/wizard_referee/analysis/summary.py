"""What graded decisions say about each bot, and about a comparison.

Per bot (:func:`bot_summaries`): the mean loss per bid and per card, overall,
by round size and by rule variant, the count of each grade, and the bid
accuracy (the share of its rounds in which it took exactly the tricks it
bid). Every mean has a 95% interval that treats the game as the unit (the
decisions of one game are not independent): the ratio estimator's
variance over games with Student's t at ``games - 1`` degrees of freedom
(:func:`clustered_mean`); none from fewer than two games.

For a comparison's store (:func:`compare_split`): per deal, how many more
expected points B's decisions lost than A's, from its bids and from its
cards, the candidate seat alone: the part of A - B that comes from bidding
and the part that comes from play, next to the measured A - B.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from wizard_arena.rules import Rules
from wizard_referee.analysis.grade import THRESHOLDS, Graded
from wizard_referee.ratings.student_t import t_quantile
from wizard_referee.referee.record import GameRecord

__all__ = ["Mean", "bot_summaries", "clustered_mean", "compare_split", "mean_text", "split_lines"]


@dataclass(frozen=True)
class Mean:
    """A mean over units (games) with its 95% interval (None: too few games)."""

    mean: float
    low: float | None
    high: float | None
    n: int
    """Items (decisions, rounds) behind the mean."""
    games: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "mean": round(self.mean, 3),
            "low": None if self.low is None else round(self.low, 3),
            "high": None if self.high is None else round(self.high, 3),
            "n": self.n,
            "games": self.games,
        }

    def text(self) -> str:
        if self.low is None or self.high is None:
            return f"{self.mean:.2f}"
        return f"{self.mean:.2f} [{self.low:.2f}, {self.high:.2f}]"


def clustered_mean(units: Sequence[tuple[float, int]]) -> Mean:
    """The mean of items grouped in units, from each unit's ``(sum, count)``:
    ``sum(sums) / sum(counts)``, with a t interval on the ratio estimator's
    variance over units (units without items are left out)."""
    units = [(s, c) for s, c in units if c > 0]
    g = len(units)
    n = sum(c for _, c in units)
    if n == 0:
        return Mean(0.0, None, None, 0, 0)
    m = sum(s for s, _ in units) / n
    if g < 2:
        return Mean(m, None, None, n, g)
    cbar = n / g
    var = sum((s - m * c) ** 2 for s, c in units) / (g * (g - 1) * cbar**2)
    half = t_quantile(g - 1) * math.sqrt(var)
    return Mean(m, m - half, m + half, n, g)


@dataclass
class _Tally:
    """Sums and counts by game of one bot's losses in one slice."""

    by_game: dict[str, list[float]] = field(default_factory=dict)

    def add(self, game: str, loss: float) -> None:
        row = self.by_game.setdefault(game, [0.0, 0])
        row[0] += loss
        row[1] += 1

    def mean(self, games: Iterable[str]) -> Mean:
        return clustered_mean([tuple(self.by_game.get(g, (0.0, 0))) for g in games])  # type: ignore[misc]


def _size_key(n: int) -> str:
    return str(n)


def bot_summaries(
    games: Sequence[tuple[GameRecord, Sequence[Graded]]], bots: Iterable[str] | None = None
) -> dict[str, dict[str, Any]]:
    """Each bot's summary (``bots``, or every bot graded), as JSON-ready dicts:
    ``games``, ``bid`` and ``card`` (``mean_loss``, ``grades``, ``by_size``,
    ``by_variant``), ``per_game`` (the loss of all its graded decisions in
    a game), ``bid_accuracy``. Decisions made by the referee for a
    faulted bot are left out."""
    want = set(bots) if bots is not None else None
    tallies: dict[tuple[str, str, str, str], _Tally] = {}
    grades: dict[tuple[str, str], dict[str, int]] = {}
    played: dict[str, list[str]] = {}
    exact: dict[str, dict[str, list[float]]] = {}
    for record, graded in games:
        variant = Rules.from_dict(record.rules).describe()
        seats_graded = {g.seat for g in graded}
        for seat, name in enumerate(record.names):
            if (want is not None and name not in want) or seat not in seats_graded:
                continue
            played.setdefault(name, []).append(record.game_id)
            hits = exact.setdefault(name, {})
            for bids, tricks, *_ in record.results:
                row = hits.setdefault(record.game_id, [0.0, 0])
                row[0] += float(bids[seat] == tricks[seat])
                row[1] += 1
        for g in graded:
            if g.fault or (want is not None and g.name not in want):
                continue
            for slice_, key in (("all", ""), ("size", _size_key(g.cards)), ("variant", variant)):
                tallies.setdefault((g.name, g.kind, slice_, key), _Tally()).add(g.game_id, g.loss)
            counts = grades.setdefault((g.name, g.kind), {n: 0 for n, _ in THRESHOLDS})
            if g.grade:
                counts[g.grade] += 1
    out: dict[str, dict[str, Any]] = {}
    for name in sorted(played):
        ids = list(dict.fromkeys(played[name]))
        summary: dict[str, Any] = {"games": len(ids)}
        mine = [k for k in tallies if k[0] == name and k[2] == "all"]
        for kind in ("bid", "card"):
            total = tallies.get((name, kind, "all", ""), _Tally())
            by: dict[str, dict[str, Any]] = {"size": {}, "variant": {}}
            for (who, k, slice_, key), tally in tallies.items():
                if who == name and k == kind and slice_ in by:
                    by[slice_][key] = tally.mean(ids).as_dict()
            summary[kind] = {
                "mean_loss": total.mean(ids).as_dict(),
                "grades": grades.get((name, kind), {n: 0 for n, _ in THRESHOLDS}),
                "by_size": dict(sorted(by["size"].items(), key=lambda kv: int(kv[0]))),
                "by_variant": dict(sorted(by["variant"].items())),
            }
        lost = [sum(tallies[key].by_game.get(i, (0.0, 0))[0] for key in mine) for i in ids]
        summary["per_game"] = clustered_mean([(x, 1) for x in lost]).as_dict()
        hits = exact.get(name, {})
        summary["bid_accuracy"] = clustered_mean(
            [(s, int(c)) for s, c in (hits.get(i, (0.0, 0)) for i in ids)]
        ).as_dict()
        out[name] = summary
    return out


def compare_split(games: Sequence[tuple[GameRecord, Sequence[Graded]]]) -> dict[str, Any] | None:
    """For a comparison's games (tags ``compare``, ``deal``, ``side``,
    ``candidate_seat``): per deal with both games graded, B's loss minus A's
    at the candidate seat, from bids and from cards, and the measured
    A - B (the candidate seat's totals); means over deals with t intervals.
    None when the games are not a comparison's."""
    by_deal: dict[int, dict[str, tuple[float, float, int]]] = {}
    names: dict[str, str] = {}
    for record, graded in games:
        tags = record.tags
        if not tags.get("compare") or record.status != "finished":
            continue
        seat = int(tags["candidate_seat"])
        side = str(tags["side"])
        names[side] = record.names[seat]
        mine = [g for g in graded if g.seat == seat and not g.fault]
        bid = sum(g.loss for g in mine if g.kind == "bid")
        card = sum(g.loss for g in mine if g.kind == "card")
        by_deal.setdefault(int(tags["deal"]), {})[side] = (bid, card, record.totals[seat])
    pairs = [d for d in by_deal.values() if "A" in d and "B" in d]
    if not pairs:
        return None

    def mean(values: list[float]) -> dict[str, Any]:
        return clustered_mean([(v, 1) for v in values]).as_dict()

    return {
        "a": names.get("A", "A"),
        "b": names.get("B", "B"),
        "deals": len(pairs),
        "points": mean([d["A"][2] - d["B"][2] for d in pairs]),
        "bidding": mean([d["B"][0] - d["A"][0] for d in pairs]),
        "play": mean([d["B"][1] - d["A"][1] for d in pairs]),
    }


def mean_text(d: dict[str, Any]) -> str:
    """A mean as :meth:`Mean.as_dict` gives it, as text (the mean and its interval)."""
    return Mean(d["mean"], d["low"], d["high"], d["n"], d["games"]).text()


def split_lines(split: dict[str, Any]) -> list[str]:
    """:func:`compare_split`'s answer as lines of text."""
    return [
        f"{split['a']} - {split['b']} over {split['deals']} deal(s), points per game: "
        f"{mean_text(split['points'])}",
        f"  from bidding (B's bid loss - A's): {mean_text(split['bidding'])}",
        f"  from play (B's card loss - A's):   {mean_text(split['play'])}",
    ]

"""The standings: each entry's live rating (:mod:`.live`, as stored after
its last set) beside its official one, the project's Bradley-Terry fit of
every game of every finished set, each set a duplicate set, with the
intervals the tournament's leaderboard prints
(:func:`wizard_referee.tournament.leaderboard.rate_results`: a bootstrap
over the sets, widened for few of them, none below 10).

The point fit takes seconds on a large season and the intervals much
longer, so a running ladder computes them apart, in a process of their
own (:func:`main`, started through the host's launcher): it writes the
point fit to a JSON file as soon as it has it, then again with the
intervals; the pages and the progress line show each with its age.
``ladder standings`` computes both at once.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wizard_referee.ladder.plackett_luce import ordinal
from wizard_referee.ladder.store import Entrant, LadderStore, StoreError, Version
from wizard_referee.storage import beside_store
from wizard_referee.tournament.leaderboard import rate_results

__all__ = [
    "failure_note",
    "find_entry",
    "main",
    "official",
    "official_files",
    "official_notes",
    "read_failure",
    "read_official",
    "rows",
    "standings_text",
    "write_failure",
    "write_json",
]


def official(store: LadderStore, bootstrap: int, seed: int = 0) -> dict[str, Any]:
    """The official ratings of the finished sets now in ``store``: a
    JSON-able dict (``entries``: label -> rating, low, high, group, rank,
    note; ``notes``; ``finished_sets``, ``games``, ``bootstrap``,
    ``computed_at`` and ``seconds``)."""
    start = time.perf_counter()
    finished, _ = store.fingerprint()
    labels = {v.id: v.label for v in store.versions()}
    games = store.rated_games(labels)
    rated, notes = rate_results(games, bootstrap=bootstrap, seed=seed)
    entries = {}
    for rank, p in enumerate(rated.players, 1):
        entries[p.name] = {
            "rank": rank,
            "rating": p.rating,
            "low": p.low,
            "high": p.high,
            "group": p.group,
            "note": notes.get(p.name, ""),
        }
    return {
        "finished_sets": finished,
        "games": len(games),
        "bootstrap": bootstrap if any(e["low"] is not None for e in entries.values()) else 0,
        "entries": entries,
        "notes": list(rated.notes),
        "groups": len(rated.groups),
        "computed_at": time.time(),
        "seconds": time.perf_counter() - start,
    }


def rows(
    versions: Sequence[Version],
    live: dict[int, tuple[float, float]],
    sets: dict[int, int],
    games: dict[int, int],
    online: dict[int, int],
    point: dict[str, Any] | None,
    intervals: dict[str, Any] | None = None,
    abandons: dict[int, int] | None = None,
) -> list[dict[str, Any]]:
    """One row per entry that is active or played a set: official rank
    first (entries without an official rating after, by live ordinal). The
    official ratings are ``point``'s (:func:`official`), their intervals
    ``intervals``' (a fit with intervals, perhaps of fewer sets; default
    ``point``'s own); ``abandons``: the sets each version left and did not
    come back to within the return window."""
    left = abandons or {}
    entries = (point or {}).get("entries", {})
    spans = (intervals if intervals is not None else point or {}).get("entries", {})
    out = []
    for v in versions:
        if not v.active and not sets.get(v.id):
            continue
        mu, sigma = live.get(v.id, (math.nan, math.nan))
        o = entries.get(v.label, {})
        span = spans.get(v.label, {})
        out.append(
            {
                "entry": v.label,
                "entrant": v.name,
                "version": v.number,
                "kind": v.kind,
                "active": v.active,
                "online": online.get(v.id, 0),
                "sets": sets.get(v.id, 0),
                "games": games.get(v.id, 0),
                "abandons": left.get(v.id, 0),
                "mu": None if math.isnan(mu) else mu,
                "sigma": None if math.isnan(sigma) else sigma,
                "ordinal": None if math.isnan(mu) else ordinal((mu, sigma)),
                "rank": o.get("rank"),
                "rating": o.get("rating"),
                "low": span.get("low") if o else None,
                "high": span.get("high") if o else None,
                "group": o.get("group"),
                "note": span.get("note", "") if o else "",
            }
        )
    out.sort(
        key=lambda r: (
            r["rank"] is None,
            r["rank"] or 0,
            -(r["ordinal"] if r["ordinal"] is not None else -math.inf),
            r["entry"],
        )
    )
    return out


_ENTRY = re.compile(r"(.+)@v(\d+)")


def find_entry(entrants: Sequence[Entrant], name: str) -> tuple[Entrant, Version | None] | str:
    """The entrant ``name`` names and, for an entry's ``NAME@vN``, that
    version; else why there is none (an unknown name or version)."""
    m = _ENTRY.fullmatch(name)
    for e in entrants:
        if e.name == name:
            return e, None
        if m is not None and e.name == m[1]:
            for v in e.versions:
                if v.number == int(m[2]):
                    return e, v
            return f"entrant {e.name!r} has no version {m[2]} (versions 1-{len(e.versions)})"
    return f"no entrant {name!r} in this ladder"


def _age(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def standings_text(
    table: list[dict[str, Any]],
    point: dict[str, Any] | None,
    intervals: dict[str, Any] | None,
    now: float,
    header: str = "",
) -> str:
    """The standings as a text table, with the official ratings' notes and
    ages (:func:`rows`); when the official fit has several groups, a line
    ``-- group 2 of 2 (order only between groups) --`` opens each, as on the
    tournament's leaderboard."""
    groups = int((point or {}).get("groups", 1))
    lines = [header] if header else []
    lines.append(
        f"{'rank':>4}  {'entry':<24} {'official (95% interval)':<26} "
        f"{'live mu +- sigma':<17} {'sets':>5} {'games':>6} {'left':>4} {'online':>6}  status"
    )
    for k, r in enumerate(table):
        if (
            groups > 1
            and r["group"] is not None
            and (k == 0 or table[k - 1]["group"] != r["group"])
        ):
            lines.append(f"      -- group {r['group']} of {groups} (order only between groups) --")
        if r["rating"] is None:
            official_cell = "-"
        elif r["low"] is not None and r["high"] is not None:
            official_cell = f"{r['rating']:7.1f} ({r['low']:.0f}-{r['high']:.0f})"
        else:
            official_cell = f"{r['rating']:7.1f} (no interval)"
        live_cell = "-" if r["mu"] is None else f"{r['mu']:6.2f} +- {r['sigma']:.2f}"
        rank = "" if r["rank"] is None else str(r["rank"])
        status = "active" if r["active"] else "retired or replaced"
        lines.append(
            f"{rank:>4}  {r['entry']:<24} {official_cell:<26} {live_cell:<17} "
            f"{r['sets']:>5} {r['games']:>6} {r['abandons']:>4} {r['online']:>6}  {status}"
        )
    lines += [f"note: {n}" for n in official_notes(point, intervals, now)]
    lines.append(
        "note: left: sets the entry left and did not come back to within the return window "
        "(the rest of each was played with its seats' default action)"
    )
    lines.append(
        "note: live ratings: OpenSkill Plackett-Luce, one update per finished set "
        "(mu +- sigma; ordered by mu - 3 sigma where there is no official rank)"
    )
    return "\n".join(lines)


def official_notes(
    point: dict[str, Any] | None, intervals: dict[str, Any] | None, now: float
) -> list[str]:
    """What the official columns are and how old: the point fit's sets and
    age, the intervals' (when they are of fewer sets), the fit's notes."""
    if point is None:
        return ["official ratings: not computed yet"]
    out = [
        f"official ratings: Bradley-Terry of {point['finished_sets']} finished set(s), "
        f"{point['games']} games, computed {_age(max(0.0, now - point['computed_at']))} ago"
    ]
    if intervals is not None and intervals.get("bootstrap"):
        stale = intervals["finished_sets"] != point["finished_sets"]
        out[0] += f"; 95% intervals from {intervals['bootstrap']} bootstrap redraws of the sets" + (
            f", computed {_age(max(0.0, now - intervals['computed_at']))} ago from "
            f"{intervals['finished_sets']} set(s)"
            if stale
            else ""
        )
    elif intervals is None:
        out[0] += "; 95% intervals: being computed"
    out += list((intervals or point)["notes"])
    return out


def write_json(path: Path, data: dict[str, Any]) -> None:
    """``data`` to ``path``, whole or not at all (a reader never sees half)."""
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as out:
        out.write(json.dumps(data))
    tmp.replace(path)


def failure_file(store: Path) -> Path:
    """Where a running ladder keeps the official ratings' last failure
    (``STORE.official-failed.json``; none once a try succeeds)."""
    return Path(f"{store}.official-failed.json")


def write_failure(store: Path, failure: dict[str, Any] | None) -> None:
    """Keep the official ratings' last failure beside ``store`` (None: they succeeded)."""
    if failure is None:
        failure_file(store).unlink(missing_ok=True)
    else:
        write_json(failure_file(store), failure)


def read_failure(store: Path) -> dict[str, Any] | None:
    """The official ratings' last failure (``error``, ``at``, ``failures``,
    ``retry_at``), or None."""
    try:
        found = json.loads(failure_file(store).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def failure_note(failure: dict[str, Any] | None, now: float) -> list[str]:
    """The official ratings' last failure as a note (none when they succeeded)."""
    if failure is None:
        return []
    retry = failure["retry_at"] - now
    tries = "try" if failure["failures"] == 1 else f"{failure['failures']} tries"
    return [
        f"official ratings: the last {tries} failed, the last "
        f"{_age(max(0.0, now - failure['at']))} ago: {failure['error']}; "
        + (f"trying again in {_age(retry)}" if retry > 0 else "trying again now")
    ]


def official_files(store: Path) -> tuple[Path, Path]:
    """Where a running ladder's official ratings are: the latest fit
    (``STORE.official.json``), and the latest with intervals
    (``STORE.intervals.json``)."""
    return Path(f"{store}.official.json"), Path(f"{store}.intervals.json")


def read_official(store: Path) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The latest official fit and the latest with intervals (None: none yet)."""
    out: list[dict[str, Any] | None] = []
    for path in official_files(store):
        try:
            out.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            out.append(None)
    return out[0], out[1]


#: The standings process's ``database`` when the store is given in :data:`STORE_ENV`
#: (a URL's password kept out of the process list).
STORE_FROM_ENV = "-"
STORE_ENV = "WIZARD_ARENA_LADDER_STORE"


def main(argv: Sequence[str] | None = None) -> int:
    """The running ladder's process of the official ratings: the point fit
    at once, then the same with the intervals (:func:`official_files`)."""
    parser = argparse.ArgumentParser(prog="python -m wizard_referee.ladder.standings")
    parser.add_argument("database", help=f"the store ({STORE_FROM_ENV}: ${STORE_ENV})")
    parser.add_argument("--files", type=Path, help="the official files' stem (default: database)")
    parser.add_argument("--bootstrap", type=int, default=1000)
    args = parser.parse_args(argv)
    target = os.environ.get(STORE_ENV, "") if args.database == STORE_FROM_ENV else args.database
    latest, with_intervals = official_files(args.files or beside_store(target, ""))
    try:
        with LadderStore.open(target, read_only=True) as store:
            write_json(latest, official(store, 0))
            if args.bootstrap > 0:
                full = official(store, args.bootstrap)
                write_json(with_intervals, full)
                write_json(latest, full)
    except StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())

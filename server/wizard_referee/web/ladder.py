"""What the pages show of a ladder (``ladder run --web``), read from its
store (read-only, in a worker thread, cached until the store changes) and
the official ratings' files its runner keeps beside it.

The games list and the replays are read as every store's are
(:mod:`.games`); what is the ladder's own is its withholding rule
(:meth:`LadderData.showing`), the standings and the entrants' versions.

The withholding rule is the web room's (docs/web.md): the games of a
duplicate set share one deal, so a game's replay, scores and place in
any statistic are withheld while its set is being played or waits for a
member (``playing``, ``suspended``); once the set is finished (or void:
its deal is never played again) they are shown. The table of a set in
progress shows who sits where and the round, until the set's last game.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

from wizard_referee.ladder import sql
from wizard_referee.ladder.standings import (
    failure_file,
    failure_note,
    find_entry,
    official_files,
    official_notes,
    read_failure,
    read_official,
    rows,
)
from wizard_referee.ladder.store import LadderStore, StoreError, Version
from wizard_referee.storage import GameRow, beside_store
from wizard_referee.web.data import Cache, NotFound, Unavailable
from wizard_referee.web.games import Showing, game_lines, replay
from wizard_referee.web.plot import ratings_svg

__all__ = ["GAMES_SHOWN", "LadderData", "set_withheld"]

#: Games listed on the games page and an entrant's page (the latest).
GAMES_SHOWN = 200
_GAME_ID = re.compile(r"s(\d+)-r(\d+)")


def set_withheld(game_id: str, set_status: str, left: int) -> str:
    """Why a game of a set that is not over is not shown yet."""
    why = (
        "its set waits for a member to return"
        if set_status == "suspended"
        else (f"{left} game(s) of its set still to play")
    )
    return (
        f"game {game_id!r} is shown once its duplicate set is complete, as the set's "
        f"other games are dealt the same hands: {why}"
    )


class LadderData:
    """A ladder's store, opened read-only for each question."""

    def __init__(self, target: str | Path) -> None:
        self.target = str(target)
        """The store: an SQLite file's path or a PostgreSQL URL."""
        self.files = beside_store(self.target, "")
        """The official ratings' files' stem (its runner keeps them there)."""
        self.cache = Cache()

    def _read(self, fn: Callable[[LadderStore], Any]) -> Any:
        try:
            with LadderStore.open(self.target, read_only=True) as store:
                return fn(store)
        except StoreError as e:  # (a query the database refused, too)
            raise Unavailable(str(e)) from None

    def _fingerprint(self, store: LadderStore) -> Hashable:
        """Finished sets, registry changes, the official files' times and
        who is online: what the answers depend on."""
        times = []
        for f in (*official_files(self.files), failure_file(self.files)):
            try:
                times.append(f.stat().st_mtime_ns)
            except OSError:
                times.append(0)
        return (store.fingerprint(), tuple(times), tuple(sorted(store.online().items())))

    def _cached(self, key: Hashable, fn: Callable[[LadderStore], Any]) -> Any:
        return self._read(
            lambda store: self.cache.get(key, self._fingerprint(store), lambda: fn(store))
        )

    def check(self) -> None:
        self._read(lambda store: store.season())

    # -- the pages' data ------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        def read(store: LadderStore) -> dict[str, Any]:
            season, _, created = store.season()
            sets = store.set_counts()
            return {
                "mode": "ladder",
                "name": season.name,
                "season": season.describe(),
                "created_at": created,
                "sets": sets,
                "games": {"finished": sum(store.game_counts().values()) // season.players},
                "in_progress": store.running() > 0,
            }

        return dict(self._read(read))

    def standings(self) -> dict[str, Any]:
        def read(store: LadderStore) -> dict[str, Any]:
            season, _, _ = store.season()
            live = {}
            for _, _, results in store.finished_sets():
                live.update({v: r for v, (_, r) in results.items()})
            point, intervals = read_official(self.files)
            failure = read_failure(self.files)
            table = rows(
                store.versions(),
                live,
                store.set_counts_by_version(),
                store.game_counts(),
                store.online(),
                point,
                intervals,
                store.abandon_counts(),
            )
            return {
                "name": season.name,
                "season": season.describe(),
                "rows": table,
                "sets": store.set_counts(),
                "notes": official_notes(point, intervals, time.time())
                + failure_note(failure, time.time()),
                "official_failure": failure,
                "groups": (point or {}).get("groups", 1),
            }

        return dict(self._cached("standings", read))

    def _labels(self, store: LadderStore) -> dict[int, str]:
        return {v.id: v.label for v in store.versions()}

    def showing(self, store: LadderStore) -> Showing:
        """The ladder's part of its games' lines: withheld while their set is
        played or waits for a member, its seats' entries' labels, the set
        and seating."""
        per_set = store.season()[0].games_per_set
        labels = self._labels(store)
        sets: dict[int, str] = {}

        def set_of(game_id: str, row: GameRow | None) -> tuple[int, str] | None:
            set_id = int(row.own["set_id"]) if row is not None else None
            if set_id is None:
                found = store.game_set(game_id)
                set_id = None if found is None else found[0]
            if set_id is None:
                return None
            if set_id not in sets:
                sets[set_id] = store.set_statuses([set_id])[set_id]
            return set_id, sets[set_id]

        def withheld(game_id: str, row: GameRow | None) -> str | None:
            found = set_of(game_id, row)
            if found is None or found[1] not in ("playing", "suspended"):
                return None
            left = per_set - len(store.stored_games(found[0]))
            return set_withheld(game_id, found[1], left)

        def fields(row: GameRow) -> dict[str, Any]:
            found = set_of(row.id, row)
            return {
                "set": int(row.own["set_id"]),
                "seating": int(row.own["seating"]),
                "set_status": None if found is None else found[1],
            }

        return Showing(withheld, names=lambda seats: [labels[v] for v in seats], fields=fields)

    def _lines(self, store: LadderStore, entrant_id: int | None) -> list[dict[str, Any]]:
        """The latest :data:`GAMES_SHOWN` games (of an entrant's versions), newest first."""
        return game_lines(
            store.db,
            self.showing(store),
            own=("set_id", "seating"),
            where="" if entrant_id is None else sql.GAMES_OF_ENTRANT,
            params={"entrant": entrant_id},
            order="finished_at DESC",
            limit=GAMES_SHOWN,
        )

    def games(self, entrant: str | None = None) -> dict[str, Any]:
        def read(store: LadderStore) -> dict[str, Any]:
            who = None if entrant is None else self._entrant(store, entrant).id
            return {"games": self._lines(store, who)}

        return dict(self._cached(("games", entrant), read))

    def game(self, game_id: str) -> dict[str, Any]:
        def read(store: LadderStore) -> dict[str, Any]:
            def unknown() -> str:
                return f"game {game_id!r} has not been played in this ladder"

            return dict(replay(store.db, game_id, self.showing(store), unknown))

        return dict(self._cached(("game", game_id), read))

    def _entrant(self, store: LadderStore, name: str) -> Any:
        """The entrant ``name`` names (an entrant's name, or an entry's
        ``NAME@vN``: NotFound for a version it does not have)."""
        found = find_entry(store.entrants(), name)
        if isinstance(found, str):
            raise NotFound(found)
        return found[0]

    def entrant(self, name: str) -> dict[str, Any]:
        def read(store: LadderStore) -> dict[str, Any]:
            e = self._entrant(store, name)
            standing = {r["entry"]: r for r in self.standings()["rows"]}
            labels = self._labels(store)
            history = store.history(e.id)
            return {
                "name": e.name,
                "kind": e.kind,
                "created_at": e.created_at,
                "retired_at": e.retired_at,
                "versions": [_version(v, standing.get(v.label)) for v in e.versions],
                "history": _history(history, labels),
                "game_list": self._lines(store, e.id),
            }

        return dict(self._cached(("entrant", name), read))

    def history_svg(self, name: str) -> str:
        """The entrant's live rating (mu) after each of its sets, a line per version."""
        return ratings_svg(self.entrant(name)["history"], x_label="sets finished in the season")

    def deals_in_play(self, game_ids: list[str]) -> dict[str, list[str]]:
        """For each game being played, the other games of its set still to
        be played: they are dealt its hands."""

        def read(store: LadderStore) -> dict[str, list[str]]:
            per_set = store.season()[0].games_per_set
            out = {}
            for gid in game_ids:
                m = _GAME_ID.fullmatch(gid)
                if m is None:
                    continue
                set_id, seating = int(m[1]), int(m[2])
                stored = store.stored_games(set_id)
                out[gid] = [
                    f"s{set_id}-r{r}" for r in range(per_set) if r != seating and r not in stored
                ]
            return out

        deals: dict[str, list[str]] = self._read(read)
        return deals


def _version(v: Version, row: dict[str, Any] | None) -> dict[str, Any]:
    r = row or {}
    return {
        "entry": v.label,
        "number": v.number,
        "created_at": v.created_at,
        "ended_at": v.ended_at,
        "active": v.active,
        "command": list(v.command) if v.command else None,
        "sets": r.get("sets", 0),
        "games": r.get("games", 0),
        "abandons": r.get("abandons", 0),
        "online": r.get("online", 0),
        "mu": r.get("mu"),
        "sigma": r.get("sigma"),
        "rating": r.get("rating"),
        "low": r.get("low"),
        "high": r.get("high"),
        "rank": r.get("rank"),
        "note": r.get("note", ""),
    }


def _history(
    history: list[tuple[int, int, tuple[float, float]]], labels: dict[int, str]
) -> dict[str, Any]:
    """``ratings_svg``'s input: the sets (their place in the season) and each
    version's mu after them (None where another version played)."""
    marks = [seq for seq, _, _ in history]
    series: dict[str, list[float | None]] = {}
    for i, (_, v, (mu, _)) in enumerate(history):
        series.setdefault(labels[v], [None] * len(marks))[i] = round(mu, 3)
    return {"games": marks, "series": series}

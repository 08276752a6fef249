"""Test support for the web pages: a results store of real games played
in-process (:func:`wizard_arena.local.play_local`) and written through the
store as a tournament writes them, and a client of the ASGI application."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import trio

from wizard_arena.local import play_local
from wizard_arena.rules import Rules
from wizard_bots.heuristic import HeuristicBot
from wizard_bots.random_bot import RandomBot
from wizard_referee.compare.local_play import local_record
from wizard_referee.referee.record import GameRecord
from wizard_referee.tournament.store import GameSpec, ResultsStore
from wizard_referee.web.app import WebState, create_app

__all__ = ["ENTRANTS", "client", "get", "json_answers", "lines_of", "make_store", "play_record"]

#: Entrant name -> bot class (three heuristic-ish, one random).
ENTRANTS: dict[str, Any] = {
    "alice": HeuristicBot,
    "bob": RandomBot,
    "carol": HeuristicBot,
    "dave": RandomBot,
}


def play_record(spec: GameSpec, rules: Rules, entrants: dict[str, Any] | None = None) -> GameRecord:
    """Play ``spec`` in-process; its full record, as the referee writes it."""
    classes = ENTRANTS if entrants is None else entrants
    bots = [classes[name]() for name in spec.seats]
    result = play_local(bots, rules, seed=spec.seed, game_id=spec.id, names=spec.seats, record=True)
    tags = {"duplicate_set": spec.duplicate_set}
    return local_record(result, spec.id, spec.seed, started=time.time(), tags=tags)


def make_store(
    path: Path,
    *,
    deal_sets: int = 2,
    rules: Rules | None = None,
    play: int | None = None,
    name: str = "web-test",
    entrants: dict[str, Any] | None = None,
) -> tuple[ResultsStore, list[GameSpec]]:
    """A store of a round robin of :data:`ENTRANTS` (or ``entrants``: name ->
    bot class) at tables of ``rules.players`` (default 3; every rotation of
    each deal), its first ``play`` games (default all) played and saved."""
    rules = rules or Rules(players=3, hand_sizes=(1, 2, 3, 4))
    classes = ENTRANTS if entrants is None else entrants
    names = list(classes)
    k = rules.players
    tables = [names[i : i + k] for i in range(len(names) - k + 1)]
    specs: list[GameSpec] = []
    for t, table in enumerate(tables):
        for d in range(deal_sets):
            for r in range(k):
                seats = tuple(table[r:] + table[:r])
                seq = len(specs)
                specs.append(
                    GameSpec(f"g{seq:03d}-t{t}d{d}r{r}", seq, t, d, r, f"7:t{t}:d{d}", seats)
                )
    store = ResultsStore(path)
    store.create(
        name,
        {"name": name, "exclude_faulted": False},
        [(n, "command", f"python -m {n}") for n in names],
        specs,
        rules.to_dict(),
    )
    for spec in specs[: len(specs) if play is None else play]:
        store.save_game(spec, play_record(spec, rules, classes))
    return store, specs


@asynccontextmanager
async def client(state: WebState) -> AsyncIterator[httpx.AsyncClient]:
    """An httpx client of the web application over ``state``, in process."""
    transport = httpx.ASGITransport(app=create_app(state))
    async with httpx.AsyncClient(transport=transport, base_url="http://web") as c:
        yield c


def get(state: WebState, *paths: str) -> list[httpx.Response]:
    """The responses to GET ``paths``, in order (one trio run)."""

    async def main() -> list[httpx.Response]:
        async with client(state) as c:
            return [await c.get(p) for p in paths]

    return trio.run(main)


def json_answers(
    urls: list[str], now: list[Any], then: list[Any], game_id: str
) -> list[tuple[str, Any, Any]]:
    """Every route's answers after a game (``game_id``) whose deal is still
    to be played was stored (``now``) and before (``then``), after the
    checks they share: the game's replay withheld (403) now, every other
    answer as it was (a route with nothing behind it 404 both times; a
    page or plot byte for byte). Left to compare: each JSON answer, now and
    then, with its URL."""
    out = []
    for url, a, b in zip(urls, now, then, strict=True):
        if url.endswith(game_id):  # its replay: withheld now, not played then
            assert a.status_code == 403 and "still to play" in a.text, url
            assert "steps" not in a.text
            continue
        if b.status_code == 404:  # nothing behind the route here
            assert a.status_code == 404, url
            continue
        assert a.status_code == b.status_code == 200, (url, a.text[:200])
        if not a.headers["content-type"].startswith("application/json"):
            assert a.content == b.content, url  # the pages and the plot
            continue
        out.append((url, a.json(), b.json()))
    return out


def lines_of(data: Any, game_id: str) -> list[dict[str, Any]]:
    """The lines of ``game_id`` in any game list of ``data``."""
    if isinstance(data, dict):
        if data.get("id") == game_id and "seats" in data:
            return [data]
        return [x for v in data.values() for x in lines_of(v, game_id)]
    if isinstance(data, list):
        return [x for v in data for x in lines_of(v, game_id)]
    return []

"""What strangers can do to the web pages and what they can learn there.

- requests for games and entrants that do not exist leave nothing behind:
  thousands of misses, and every per-request structure stays bounded;
  ids longer than any real one are refused before any lookup;
- one rule withholds a finished game whose deal is still to be played: no
  route shows anything of it (its scores, its place in the ratings, a
  statistic made from it) until its deal set has ended;
- bots are told opaque game ids, naming neither deal nor rotation;
- an entrant's name (any text) becomes a file name and a URL safely.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import trio
from starlette.routing import Route

from wizard_arena.bot import GameInfo
from wizard_arena.rules import Rules
from wizard_referee.hosting.entrants import log_name
from wizard_referee.hosting.host import bot_game_id, run_game
from wizard_referee.tournament.store import GameSpec, ResultsStore
from wizard_referee.web.app import WebState, routes
from wizard_referee.web.data import MAX_ID_CHARS, MemoryData, StoreData

from .memory_bots import MemBot, memory_arena, on_mock_clock
from .web_support import ENTRANTS, client, get, json_answers, lines_of, make_store


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[GameSpec]]:
    """A tournament under way: its first 10 games played; the 10th's deal
    (games 10 to 12) is still being played. Beside it, the same store as it
    was before the 10th game ended."""
    folder = tmp_path_factory.mktemp("running")
    path = folder / "t.sqlite"
    store, specs = make_store(path, play=10)
    store.close()
    before = folder / "before.sqlite"
    shutil.copy(path, before)
    db = sqlite3.connect(before)
    with db:
        db.execute(
            "UPDATE games SET status = 'pending', record = NULL, started_at = NULL,"
            " finished_at = NULL, faulted = 0 WHERE id = ?",
            (specs[9].id,),
        )
        db.execute("DELETE FROM seat_results WHERE game_id = ?", (specs[9].id,))
    db.close()
    return path, before, specs


def test_thousands_of_misses_leave_nothing_behind(
    running: tuple[Path, Path, list[GameSpec]],
) -> None:
    path, _, specs = running
    data = StoreData(path, bootstrap=0)
    state = WebState(store=data)
    misses = 300  # x 4 routes
    paths = [
        p
        for i in range(misses)
        for p in (
            f"/api/games/nope-{i}-{'x' * 300}",
            f"/api/entrants/nobody-{i}",
            f"/api/games?entrant=nobody-{i}",
            f"/entrants/nobody-{i}",
        )
    ]

    async def main() -> list[int]:
        async with client(state) as c:
            return [(await c.get(p)).status_code for p in paths]

    statuses = trio.run(main)
    assert statuses == [404] * len(paths)
    cached, busy = data.cache.sizes()
    assert busy == 0, "a lock per missed key was kept"
    assert cached <= data.cache.size
    assert data.cache.computed <= 4, "a miss is not cached"
    # a real game still answers, and is cached once
    (ok,) = get(state, f"/api/games/{specs[0].id}")
    assert ok.status_code == 200 and data.cache.sizes()[1] == 0


def test_an_id_longer_than_any_real_one_is_refused_before_any_lookup(
    running: tuple[Path, Path, list[GameSpec]],
) -> None:
    path, _, _ = running
    data = StoreData(path)
    long = "x" * (MAX_ID_CHARS + 1)
    answers = get(
        WebState(store=data),
        f"/api/games/{long}",
        f"/api/entrants/{long}",
        f"/api/games?entrant={long}",
        f"/games/{long}",
    )
    for r in answers:
        assert r.status_code == 404 and f"at most {MAX_ID_CHARS}" in r.text
    assert data.cache.computed == 0 and data.cache.sizes() == (0, 0)


def test_memory_data_misses_are_not_kept() -> None:
    async def main() -> None:
        async with memory_arena() as arena:
            memory = MemoryData(arena)
            async with client(WebState(arena=arena)) as c:
                for i in range(300):
                    assert (await c.get(f"/api/games/g-{i}")).status_code == 404
                    r = await c.get(f"/api/games?entrant=who-{i}")
                    assert r.status_code == 404 and "who-" in r.json()["error"]
            assert memory.cache.sizes() == (0, 0)

    trio.run(main)


# -- one rule withholds a game whose deal is still to be played ----------------------------------


def _concrete(template: str, game: str, entrant: str) -> list[str]:
    """Every URL of a route template (with a store of ENTRANTS)."""
    if "{game_id" in template:
        return [re.sub(r"\{game_id[^}]*\}", game, template)]
    if "{name" in template:
        return [re.sub(r"\{name[^}]*\}", entrant, template)]
    if template == "/api/games" or template == "/games":
        return [template, *(f"{template}?entrant={n}" for n in ENTRANTS)]
    return [template]


def _without(data: Any, game_id: str) -> Any:
    """``data`` with the line of ``game_id`` in any game list reduced to
    what every planned game shows (id, seats, table, deal set, rotation)."""
    if isinstance(data, dict):
        if data.get("id") == game_id and "seats" in data:
            return {k: data[k] for k in ("id", "seq", "seats", "table", "deal_set", "rotation")}
        return {k: _without(v, game_id) for k, v in data.items()}
    if isinstance(data, list):
        return [_without(v, game_id) for v in data]
    return data


def test_no_route_shows_anything_of_a_game_whose_deal_is_still_played(
    running: tuple[Path, Path, list[GameSpec]],
) -> None:
    """Every route answers the same as before the game ended, but for the
    game's own line, which says only that it waits (and for the count of
    finished games). The routes are read from the application: a new one
    must be added here."""
    path, before, specs = running
    sealed = specs[9]
    # no game's data: the icon, the tables-in-progress page, /metrics; the
    # tables in progress themselves: tests/test_web_api.py (a table whose deal
    # is still to be played shows only its seats and round)
    others = {"/favicon.ico", "/metrics", "/tables"}
    # a ladder's own routes (no ladder here): tests/test_ladder_web.py asks them the same
    templates = [r.path for r in routes() if isinstance(r, Route) and "ladder" not in r.path]
    urls = [
        u
        for t in templates
        if t not in others and not t.startswith("/api/tables")
        for u in _concrete(t, sealed.id, "carol")
    ]
    assert len(urls) >= 15
    now = get(WebState(store=StoreData(path, bootstrap=30)), *urls)
    then = get(WebState(store=StoreData(before, bootstrap=30)), *urls)
    # (a store behind every route: no answer of theirs is left out as a 404)
    assert not [
        u for u, r in zip(urls, then, strict=True) if r.status_code == 404 and sealed.id not in u
    ]
    for url, x, y in json_answers(urls, now, then, sealed.id):
        if url == "/api/info":
            assert x["games"]["finished"] == y["games"]["finished"] + 1
            x["games"] = y["games"]
        rows = lines_of(x, sealed.id)
        for row in rows:
            assert row["status"] == "finished" and row["totals"] is None and row["ranks"] is None
            assert specs[10].id in row["withheld"]
        if "withheld_games" in x:
            assert x.pop("withheld_games") == y.pop("withheld_games") + 1
        assert _without(x, sealed.id) == _without(y, sealed.id), url
    # once its deal set has ended, everything is shown
    done = get(WebState(store=StoreData(path)), f"/api/games/{specs[4].id}", "/api/games")
    assert done[0].status_code == 200
    assert all(g["totals"] for g in done[1].json()["games"][:9])


# -- bots are told opaque game ids ----------------------------------------------------------------


def test_a_tournament_game_id_told_to_bots_names_neither_deal_nor_rotation() -> None:
    ids = [f"t{t}-d{d}-r{r}" for t in range(2) for d in range(3) for r in range(4)]
    told = [bot_game_id("secret", g) for g in ids]
    assert len(set(told)) == len(ids)
    assert told == [bot_game_id("secret", g) for g in ids], "the same on every run"
    assert told != [bot_game_id("other", g) for g in ids]
    for t, g in zip(told, ids, strict=True):
        assert re.fullmatch(r"g-[0-9a-f]{20}", t) and g not in t


@on_mock_clock
async def test_bots_see_only_the_opaque_id_and_the_store_keeps_the_real_one() -> None:
    rules = Rules(players=3, hand_sizes=(1, 2))
    spec = GameSpec("t0-d1-r2", 5, 0, 1, 2, "7:t0:d1", ("a", "b", "c"))
    async with memory_arena(rules=rules, matchmaking=False) as arena, trio.open_nursery() as n:
        bots = [MemBot(name, rule_options=("round_sizes",)) for name in spec.seats]
        for bot in bots:
            await n.start(bot.run, arena)
        while len(arena.sessions) < 3:
            await trio.sleep(0.01)
        by_name = {s.name: s for s in arena.sessions.values()}
        seats = [by_name[name] for name in spec.seats]
        for s in seats:
            s.busy = True
        record = await run_game(arena, {}, spec, seats, {"duplicate_set": spec.duplicate_set})
        n.cancel_scope.cancel()
    told = bot_game_id(arena.bot_seed_secret, spec.id)
    assert re.fullmatch(r"g-[0-9a-f]{20}", told)  # names neither the deal nor the rotation
    assert record.game_id == spec.id and record.tags["bot_game_id"] == told
    for bot in bots:
        text = json.dumps([repr(m) for m in bot.received])
        assert spec.id not in text  # (random tokens may hold "d1" or "-r2" by chance)
        (started,) = bot.messages(GameInfo)
        assert started.game_id == told
        assert all(r.request_id.startswith(told + "-") for r in bot.requests)
        assert all(m.game_id == told for m in bot.received if hasattr(m, "game_id"))


# -- a name is any text ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["../../escaped", "a/b", "..", "100%", "#1", "x" * 300, "é ü"])
def test_an_entrant_name_becomes_a_file_name_in_the_logs_folder(name: str, tmp_path: Path) -> None:
    logs = tmp_path / "t.sqlite.logs"
    logs.mkdir()
    path = logs / log_name(name, 3)
    assert path.parent == logs and len(path.name) < 200
    path.write_text("ok")
    assert (logs / path.name).read_text() == "ok"
    assert log_name(name, 3) != log_name(name + "!", 3)


def test_names_with_slash_percent_and_hash_have_their_pages(tmp_path: Path) -> None:
    names = {"a/b": "alice", "50%": "bob", "#1 bot": "carol", "../dave": "dave"}
    entrants = {new: ENTRANTS[old] for new, old in names.items()}
    store, _ = make_store(tmp_path / "names.sqlite", deal_sets=1, entrants=entrants)
    store.close()
    from urllib.parse import quote

    state = WebState(store=StoreData(tmp_path / "names.sqlite", bootstrap=0))
    urls = [f"/api/entrants/{quote(n, safe='')}" for n in names]
    urls += [f"/entrants/{quote(n, safe='')}" for n in names]
    urls += [f"/api/games?entrant={quote(n, safe='')}" for n in names]
    answers = get(state, *urls)
    for url, r in zip(urls, answers, strict=True):
        assert r.status_code == 200, (url, r.text[:200])
    for n, r in zip(names, answers, strict=False):
        assert r.json()["name"] == n


def test_a_store_opened_read_only_leaves_nothing_beside_it(tmp_path: Path) -> None:
    good = tmp_path / "good.sqlite"
    store, _ = make_store(good, play=2)
    store.close()
    data = bytearray(good.read_bytes())
    for i in range(200, len(data), 7):
        data[i] = 0x55
    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_bytes(bytes(data))
    for bad in (corrupt, tmp_path / "garbage.sqlite"):
        if not bad.exists():
            bad.write_bytes(b"garbage" * 1000)
        (r,) = get(WebState(store=StoreData(bad)), "/api/games")
        assert r.status_code == 503
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(bad.name)) == [
            bad.name
        ]
    with pytest.raises(Exception, match="is a folder"):
        ResultsStore(tmp_path, read_only=True)

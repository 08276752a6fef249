"""The ladder's pages (``ladder run --web``): the standings with both
ratings, an entrant's page with its versions and rating over the season,
replays once a duplicate set is complete and not before (the web room's
withholding rule), through the ASGI application with httpx on trio."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from starlette.routing import Route

from wizard_arena.rules import Rules
from wizard_bots.heuristic import HeuristicBot
from wizard_bots.random_bot import RandomBot
from wizard_referee.ladder.plackett_luce import LiveModel
from wizard_referee.ladder.season import Season
from wizard_referee.ladder.standings import official, official_files, write_failure, write_json
from wizard_referee.ladder.store import LadderStore, new_token
from wizard_referee.tournament.seating import deal_seatings
from wizard_referee.tournament.store import GameSpec
from wizard_referee.web.app import WebState, routes
from wizard_referee.web.ladder import LadderData

from .web_support import get, json_answers, lines_of, play_record

RULES = Rules(players=3, hand_sizes=(1, 2, 3))
CLASSES: dict[str, Any] = {
    "alice@v1": HeuristicBot,
    "alice@v2": HeuristicBot,
    "bob@v1": RandomBot,
    "carol@v1": RandomBot,
}


def _play_set(store: LadderStore, members: list[int], labels: dict[int, str], games: int) -> int:
    set_id, deal = store.new_set(members, "test-runner", 60.0, "secret")
    names = [labels[v] for v in members]
    for r, seating in enumerate(deal_seatings(names)[:games]):
        spec = GameSpec(f"s{set_id}-r{r}", 0, set_id, 0, r, deal, seating)
        by_label = {labels[v]: v for v in members}
        store.save_game(
            set_id,
            r,
            [by_label[x] for x in seating],
            play_record(spec, RULES, CLASSES),
            runner="test-runner",
        )
    return set_id


@pytest.fixture(scope="module")
def ladder_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two finished sets of alice v1, bob and carol; alice's version 2; a set
    of v2 with 2 of its 6 games played (its deal still to be played)."""
    path = tmp_path_factory.mktemp("ladder") / "season.sqlite"
    with LadderStore.create(path, Season("web", players=3, rules=RULES)) as store:
        for name in ("alice", "bob", "carol"):
            store.add_entrant(name, token=new_token())
        store.start_runner("test-runner", "here", 1, 60.0)
        labels = {v.id: v.label for v in store.versions()}
        model = LiveModel()
        for _ in range(2):
            done = _play_set(store, [1, 2, 3], labels, 6)
            store.finish_set(done, [1, 2, 3], model.rate, runner="test-runner")
        store.add_version("alice", token=new_token())
        labels = {v.id: v.label for v in store.versions()}
        _play_set(store, [2, 4, 3], labels, 2)
        latest, with_intervals = official_files(path)
        fitted = official(store, 20)
        write_json(latest, fitted)
        write_json(with_intervals, fitted)
    return path


def test_standings_and_games_withheld_until_their_set_is_complete(ladder_path: Path) -> None:
    state = WebState(ladder=LadderData(ladder_path))
    info, standings, games, page = get(
        state, "/api/info", "/api/ladder/standings", "/api/games", "/"
    )
    assert info.json()["mode"] == "ladder" and info.json()["sets"] == {"finished": 2, "playing": 1}
    assert page.status_code == 200 and "ladder.js" in page.text
    rows = {r["entry"]: r for r in standings.json()["rows"]}
    assert sorted(rows) == ["alice@v1", "alice@v2", "bob@v1", "carol@v1"]
    assert rows["alice@v1"]["sets"] == 2 and rows["alice@v1"]["games"] == 12
    assert rows["alice@v1"]["rating"] is not None and rows["alice@v1"]["mu"] is not None
    assert not rows["alice@v1"]["active"] and rows["alice@v2"]["active"]
    assert rows["alice@v2"]["sets"] == 0 and rows["alice@v2"]["rating"] is None
    assert any("official ratings: Bradley-Terry of 2 finished set(s)" in n
               for n in standings.json()["notes"])  # fmt: skip
    listed = {g["id"]: g for g in games.json()["games"]}
    assert len(listed) == 14
    for gid in ("s3-r0", "s3-r1"):
        shown = listed[gid]
        assert shown["totals"] is None and shown["ranks"] is None
        assert "4 game(s) of its set still to play" in shown["withheld"]
    assert listed["s1-r0"]["totals"] is not None and "withheld" not in listed["s1-r0"]
    replay, sealed, missing = get(state, "/api/games/s1-r0", "/api/games/s3-r0", "/api/games/s9-r0")
    assert replay.status_code == 200 and replay.json()["steps"]
    assert (
        sealed.status_code == 403
        and "shown once its duplicate set is complete" in sealed.json()["error"]
    )
    assert missing.status_code == 404
    assert LadderData(ladder_path).deals_in_play(["s3-r2"]) == {
        "s3-r2": ["s3-r3", "s3-r4", "s3-r5"]
    }


def test_web_database_opens_a_ladders_store_running_or_not(
    ladder_path: Path, tmp_path: Path
) -> None:
    """``wizard-arena web --database`` on a ladder's store shows its season:
    in progress while a ladder process runs it, and after it stopped."""
    from wizard_referee.web.cmd_web import web_state
    from wizard_referee.web.data import Unavailable

    live = tmp_path / "running.sqlite"
    shutil.copy(ladder_path, live)
    with LadderStore.open(live) as store:
        store.start_runner("another-runner", "here", 2, 3600.0)  # (its lease runs an hour)
    running = web_state(str(live))
    assert running.ladder is not None and running.store is None
    (info,) = get(running, "/api/info")
    assert info.json()["mode"] == "ladder" and info.json()["in_progress"] is True
    stopped = tmp_path / "stopped.sqlite"
    shutil.copy(ladder_path, stopped)
    with LadderStore.open(stopped) as store:
        store.stop_runner("test-runner")
    state = web_state(str(stopped))
    info, standings, replay = get(state, "/api/info", "/api/ladder/standings", "/api/games/s1-r0")
    assert info.json()["in_progress"] is False and info.json()["sets"]["finished"] == 2
    assert len(standings.json()["rows"]) == 4 and replay.status_code == 200
    other = tmp_path / "other.sqlite"
    other.write_bytes(b"not a database at all, not even SQLite's header" * 100)
    with pytest.raises(Unavailable):
        web_state(str(other))


def test_an_entrants_page_shows_its_versions_and_rating_over_time(ladder_path: Path) -> None:
    state = WebState(ladder=LadderData(ladder_path))
    page, data, by_entry, plot, nobody, games = get(
        state,
        "/entrants/alice",
        "/api/ladder/entrants/alice",
        "/api/ladder/entrants/alice@v2",
        "/plot/ladder/alice",
        "/entrants/nobody",
        "/api/games?entrant=alice",
    )
    # a version the entrant does not have is no page of it
    unknown = get(
        state,
        "/entrants/alice@v99",
        "/api/ladder/entrants/alice@v99",
        "/plot/ladder/alice@v99",
        "/api/games?entrant=alice@v99",
    )
    assert [r.status_code for r in unknown] == [404] * 4
    assert "has no version 99" in unknown[1].json()["error"]
    assert page.status_code == 200 and "ladder_entrant.js" in page.text
    e = data.json()
    assert by_entry.json()["name"] == "alice"
    assert [v["entry"] for v in e["versions"]] == ["alice@v1", "alice@v2"]
    assert e["versions"][0]["ended_at"] is not None and e["versions"][1]["ended_at"] is None
    assert e["history"]["games"] == [1, 2] and list(e["history"]["series"]) == ["alice@v1"]
    assert len(e["game_list"]) == 14
    assert sum(1 for g in e["game_list"] if g.get("withheld")) == 2
    assert plot.headers["content-type"].startswith("image/svg+xml")
    assert "sets finished in the season" in plot.text and "alice@v1" in plot.text
    assert nobody.status_code == 404
    assert len(games.json()["games"]) == 14


def test_no_route_shows_anything_of_a_game_whose_set_is_still_played(
    ladder_path: Path, tmp_path: Path
) -> None:
    """Every route answers the same before and after a game of a set still
    being played is stored, but for that game's own line, which says only
    that it waits. The routes are read from the application: a new one is
    asked too."""
    before = tmp_path / "before.sqlite"
    shutil.copy(ladder_path, before)
    for f in official_files(ladder_path):
        shutil.copy(f, Path(f"{before}{f.name.removeprefix(ladder_path.name)}"))
    after = tmp_path / "after.sqlite"
    shutil.copy(before, after)
    for f in official_files(before):
        shutil.copy(f, Path(f"{after}{f.name.removeprefix(before.name)}"))
    with LadderStore.open(after) as store:
        labels = {v.id: v.label for v in store.versions()}
        row = store.set_row(3)
        assert row is not None
        seating = deal_seatings([labels[v] for v in row["seats"]])[2]
        spec = GameSpec("s3-r2", 0, 3, 0, 2, row["deal_seed"], seating)
        by_label = {labels[v]: v for v in row["seats"]}
        record = play_record(spec, RULES, CLASSES)
        store.save_game(3, 2, [by_label[x] for x in seating], record, runner="test-runner")
    others = {"/favicon.ico", "/metrics", "/tables"}
    urls = []
    for r in routes():
        if not isinstance(r, Route) or r.path in others or r.path.startswith("/api/tables"):
            continue
        path = re.sub(r"\{game_id[^}]*\}", "s3-r2", r.path)
        path = re.sub(r"\{name[^}]*\}", "alice", path)
        urls.append(path)
        if path in ("/api/games", "/games"):
            urls += [f"{path}?entrant={n}" for n in ("alice", "bob@v1", "carol")]
    assert len(urls) >= 15
    now = get(WebState(ladder=LadderData(after)), *urls)
    then = get(WebState(ladder=LadderData(before)), *urls)
    for url, x, y in json_answers(urls, now, then, "s3-r2"):
        for line in lines_of(x, "s3-r2"):
            assert line["totals"] is None and line["ranks"] is None and line["faulted"] is None
            assert "3 game(s) of its set still to play" in line["withheld"]
        assert _dropped(_withheld_text(x), "s3-r2") == _withheld_text(y), url


def _dropped(data: Any, game_id: str) -> Any:
    """``data`` without the line of ``game_id`` in any game list."""
    if isinstance(data, dict):
        return {k: _dropped(v, game_id) for k, v in data.items()}
    if isinstance(data, list):
        return [
            _dropped(v, game_id)
            for v in data
            if not (isinstance(v, dict) and v.get("id") == game_id and "seats" in v)
        ]
    return data


def _withheld_text(data: Any) -> Any:
    """``data`` without the count of games left in withheld lines (it drops by
    one) and without the ratings' age ("computed 0 s ago"), which moves on
    between the two stores' requests."""
    if isinstance(data, dict):
        return {k: ("withheld" if k == "withheld" else _withheld_text(v)) for k, v in data.items()}
    if isinstance(data, list):
        return [_withheld_text(v) for v in data]
    if isinstance(data, str):
        return re.sub(r"computed [^,]*? ago", "computed ago", data)
    return data


def test_the_pages_show_abandons_and_a_failing_official_fit(
    ladder_path: Path, tmp_path: Path
) -> None:
    path = tmp_path / "left.sqlite"
    shutil.copy(ladder_path, path)
    with LadderStore.open(path) as store:
        store.suspend(3, "carol@v1 not connected", "test-runner")
        assert store.abandon(3, [3])  # carol left set 3
    now = time.time()
    failure = {"error": "it cannot start", "at": now - 30, "failures": 3, "retry_at": now + 60}
    write_failure(path, failure)
    state = WebState(ladder=LadderData(path))
    standings, carol = get(state, "/api/ladder/standings", "/api/ladder/entrants/carol")
    rows = {r["entry"]: r for r in standings.json()["rows"]}
    assert rows["carol@v1"]["abandons"] == 1 and rows["bob@v1"]["abandons"] == 0
    assert carol.json()["versions"][0]["abandons"] == 1
    assert standings.json()["official_failure"]["error"] == "it cannot start"
    assert any(
        "the last 3 tries failed, the last 30 s ago: it cannot start; trying again in" in n
        for n in standings.json()["notes"]
    )
    write_failure(path, None)  # (a try succeeded)
    (standings,) = get(WebState(ladder=LadderData(path)), "/api/ladder/standings")
    assert standings.json()["official_failure"] is None

"""The web pages' JSON API (docs/web.md), through the ASGI application with
httpx on trio: the leaderboard, games, a replay equal to ``wizard-arena
replay``'s, entrants; bad input answered with the right status, never a
traceback; the store read in a worker thread, never on the trio loop."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio

from wizard_referee.tournament.cmd_replay import render
from wizard_referee.tournament.store import GameSpec, ResultsStore
from wizard_referee.web.app import WebState
from wizard_referee.web.data import StoreData

from .conftest import NEEDS_POSTGRES
from .web_support import ENTRANTS, client, get, make_store


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[GameSpec]]:
    path = tmp_path_factory.mktemp("web") / "t.sqlite"
    store, specs = make_store(path, play=10)
    store.close()
    return path, specs


def test_leaderboard_games_and_entrants(store_path: tuple[Path, list[GameSpec]]) -> None:
    path, specs = store_path
    info, board, games, mine, entrants, history = get(
        WebState(store=StoreData(path, bootstrap=50)),
        "/api/info",
        "/api/leaderboard",
        "/api/games",
        "/api/games?entrant=dave",
        "/api/entrants",
        "/api/leaderboard/history",
    )
    assert info.status_code == 200
    assert info.json()["games"] == {"finished": 10, "pending": 2}
    assert info.json()["in_progress"] is True
    rows = board.json()["rows"]
    assert {r["name"] for r in rows} == set(ENTRANTS)
    # the 10th game's deal is still to be played in games 11 and 12: not counted yet
    assert board.json()["games"] == 9
    # the leaderboard's comparison with the next row and the groups, as the table has them
    assert {"group", "vs_next", "vs_next_low", "vs_next_high", "los", "note"} <= set(rows[0])
    with ResultsStore(path, read_only=True) as store:
        shown = [s for s in store.seat_results() if s.game_id != specs[9].id]
        played = {s.entrant: 0 for s in shown}
        for s in shown:
            played[s.entrant] += 1
    assert {r["name"]: r["games"] for r in rows} == played
    assert [g["id"] for g in games.json()["games"]] == [s.id for s in specs]
    assert all("dave" in g["seats"] for g in mine.json()["games"])
    assert len(mine.json()["games"]) == sum("dave" in s.seats for s in specs)
    assert set(entrants.json()["entrants"]) == set(ENTRANTS)
    h = history.json()
    assert h["games"][-1] == 9 and set(h["series"]) == set(ENTRANTS)


def test_a_game_replays_as_the_replay_verb_prints_it(
    store_path: tuple[Path, list[GameSpec]],
) -> None:
    path, specs = store_path
    (game,) = get(WebState(store=StoreData(path)), f"/api/games/{specs[4].id}")
    assert game.status_code == 200
    data = game.json()
    with ResultsStore(path, read_only=True) as store:
        record = store.record(specs[4].id)
    assert record is not None
    text = render(record).splitlines()
    lines = [line for step in data["steps"] for line in step["text"]]
    assert [x for x in text if x.startswith("  trick ")] == [
        x for x in lines if x.startswith("  trick ")
    ]
    assert [x for x in text if " total " in x] == [x for x in lines if " total " in x]
    scores = [s for s in data["steps"] if s["kind"] == "score"]
    assert [s["totals"] for s in scores][-1] == record.totals
    # the hands are face up and shrink as the cards are played
    plays = [s for s in data["steps"] if s["kind"] == "play"]
    for s in plays:
        card = s["action"].split()[1]
        assert card not in s["hands"][s["seat"]]
        assert [s["seat"], card] in s["trick"]


def test_bad_input_is_a_clear_error(
    tmp_path: Path, store_path: tuple[Path, list[GameSpec]]
) -> None:
    path, specs = store_path
    state = WebState(store=StoreData(path))
    unknown, pending, entrant, page, page_entrant, escape, escape2 = get(
        state,
        "/api/games/nope",
        f"/api/games/{specs[-1].id}",
        "/api/entrants/nobody",
        "/games/nope",
        "/entrants/nobody",
        "/static/..%2f..%2fapp.py",
        "/static/../app.py",
    )
    assert unknown.status_code == 404 and "not in this tournament" in unknown.json()["error"]
    assert pending.status_code == 404 and "not been played" in pending.json()["error"]
    assert entrant.status_code == 404 and "nobody" in entrant.json()["error"]
    for r in (page, page_entrant):
        assert r.status_code == 404
        assert r.headers["content-type"].startswith("text/html")
        assert "Traceback" not in r.text and "<h1>404</h1>" in r.text
    for r in (escape, escape2):
        assert r.status_code == 404 and "import" not in r.text

    corrupt = tmp_path / "corrupt.sqlite"
    corrupt.write_bytes(b"this is not a database" * 100)
    missing = tmp_path / "missing.sqlite"
    for bad in (corrupt, missing):
        api, page = get(WebState(store=StoreData(bad)), "/api/leaderboard", "/")
        assert api.status_code == 503, api.text
        assert page.status_code == 503 and "<h1>503</h1>" in page.text
        assert str(bad.name) in api.json()["error"]
        assert "Traceback" not in api.text
    # a store that goes bad while served
    moved = tmp_path / "moved.sqlite"
    shutil.copy(path, moved)
    state = WebState(store=StoreData(moved))
    (ok,) = get(state, "/api/games")
    moved.write_bytes(b"garbage" * 1000)
    (gone,) = get(state, "/api/games/" + specs[0].id)
    assert ok.status_code == 200 and gone.status_code == 503


def test_a_replay_waits_for_every_game_of_its_deal(
    store_path: tuple[Path, list[GameSpec]],
) -> None:
    """The games of a deal set share one deal (every rotation of the same
    hands): a finished game's replay would show the hands of its deal's
    games still to be played, so it is withheld until they have ended."""
    path, specs = store_path
    waiting = specs[9]  # played; the other rotations of its deal are pending
    assert [s.seed for s in specs[10:]] == [waiting.seed] * 2
    state = WebState(store=StoreData(path))
    api, page, done = get(
        state, f"/api/games/{waiting.id}", f"/games/{waiting.id}", f"/api/games/{specs[4].id}"
    )
    assert api.status_code == 403, api.text
    assert "steps" not in api.json() and specs[10].id in api.json()["error"]
    assert page.status_code == 403 and "<h1>403</h1>" in page.text
    assert done.status_code == 200  # every game of that deal has ended


def test_no_store_no_leaderboard() -> None:
    (board,) = get(WebState(), "/api/leaderboard")
    assert board.status_code == 404 and "no results store" in board.json()["error"]


def test_store_work_runs_in_a_worker_thread_and_is_cached(
    store_path: tuple[Path, list[GameSpec]],
) -> None:
    """The leaderboard (ratings with bootstrap intervals) and a replay are
    computed off the trio loop's thread, once while the store is unchanged."""
    path, _ = store_path
    data = StoreData(path, bootstrap=20)
    threads: list[str] = []
    original = data._leaderboard

    def spy(store: Any) -> Any:
        threads.append(threading.current_thread().name)
        return original(store)

    data._leaderboard = spy  # type: ignore[method-assign]
    loop_thread: list[str] = []

    async def main() -> None:
        loop_thread.append(threading.current_thread().name)
        async with client(WebState(store=data)) as c:
            for _ in range(3):
                assert (await c.get("/api/leaderboard")).status_code == 200

    trio.run(main)
    assert len(threads) == 1, "computed once, then cached"
    assert threads[0] != loop_thread[0]


def test_the_web_verb_refuses_a_missing_or_corrupt_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from wizard_arena.cli import main

    assert main(["web", "--database", str(tmp_path / "none.sqlite"), "--port", "0"]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["web", "--database", str(tmp_path), "--port", "0"]) == 2
    assert "is a folder" in capsys.readouterr().err
    bad = tmp_path / "bad.sqlite"
    bad.write_text("not sqlite at all, " * 200)
    assert main(["web", "--database", str(bad), "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "not a results database" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["web", "--database", "x.sqlite", "--port", "99999"],
        ["web", "--database", "x.sqlite", "--port", "-1"],
        ["serve", "--port", "0", "--web", "70000"],
        ["serve", "--port", "0", "--metrics-port", "65536"],
        ["serve", "--port", "99999"],
    ],
)
def test_a_port_out_of_range_is_refused_by_the_parser(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """Not a traceback from the socket (nor gRPC's port modulo 65536)."""
    from wizard_arena.cli import main

    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "0 to 65535" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["serve", "--port", "18427", "--web", "18427"],
        ["serve", "--port", "0", "--web", "18427", "--metrics-port", "18427"],
    ],
)
def test_one_port_for_two_servers_is_refused_before_starting(
    argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The referee's port given to the pages too (or the pages' to
    /metrics): one line before anything starts, not a traceback once the
    second server fails to bind."""
    from wizard_arena.cli import main
    from wizard_referee.referee import cmd_serve

    # (the process's logging is left alone: it would keep capsys's stream)
    monkeypatch.setattr(cmd_serve, "configure_logging", lambda *a, **k: None)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "18427" in err and "already" in err and "Traceback" not in err


def test_pages_are_served(store_path: tuple[Path, list[GameSpec]]) -> None:
    path, specs = store_path
    pages = get(
        WebState(store=StoreData(path)),
        "/",
        "/games",
        f"/games/{specs[0].id}",
        "/entrants/alice",
        "/static/replay.js",
        "/static/common.js",
        "/plot/ratings.svg",
    )
    for r in pages[:4]:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        assert '<script type="module"' in r.text and "http" not in r.text.split("<body>")[1]
    for r in pages[4:6]:
        assert r.status_code == 200 and "javascript" in r.headers["content-type"]
        code = r.text.replace('"http://www.w3.org/2000/svg"', "")  # a namespace, not a fetch
        assert "http://" not in code and "https://" not in code  # nothing from elsewhere
    svg = pages[6]
    assert svg.headers["content-type"].startswith("image/svg+xml")
    assert svg.text.count("<polyline") == len(ENTRANTS)


def test_a_page_load_during_a_game_does_not_hold_the_referee(
    store_path: tuple[Path, list[GameSpec]],
) -> None:
    """While the leaderboard is being computed, the referee's loop goes on:
    a whole game is refereed meanwhile. The computation here waits (up to
    20 s) for that game to end: run on the trio loop it would block the very
    game it waits for, and the test would fail."""
    from wizard_arena.rules import Rules

    from .memory_bots import MemBot, memory_arena

    path, _ = store_path
    data = StoreData(path, bootstrap=20)
    game_over = threading.Event()
    waited: list[bool] = []
    original = data._leaderboard

    def slow(store: Any) -> Any:
        waited.append(game_over.wait(20))
        return original(store)

    data._leaderboard = slow  # type: ignore[method-assign]

    async def main() -> None:
        async with memory_arena(rules=Rules(players=3, hand_sizes=(1, 2, 3))) as arena:
            arena.on_game_end.append(lambda record: game_over.set())
            async with client(WebState(store=data, arena=arena)) as c, trio.open_nursery() as n:
                answers: list[httpx.Response] = []

                async def load() -> None:
                    answers.append(await c.get("/api/leaderboard"))

                n.start_soon(load)
                await trio.sleep(0.05)  # the page is loading
                for i in range(3):
                    await n.start(MemBot(f"m{i}", rule_options=("round_sizes",)).run, arena)
            assert answers[0].status_code == 200
            assert arena.games_played == 1

    trio.run(main)
    assert waited == [True], "the game ended while the leaderboard was being computed"


def test_a_table_whose_deal_is_still_to_be_played_shows_no_play(
    store_path: tuple[Path, list[GameSpec]],
) -> None:
    """A tournament's rotations of one deal share its hands: the table of
    one shows who sits where and the round, nothing played, while another
    game of its deal has not ended; the last of them shows everything."""
    from wizard_arena.rules import Game, Rules
    from wizard_referee.referee.live import LiveTable
    from wizard_referee.referee.record import GameRecord

    from .memory_bots import memory_arena

    path, specs = store_path
    running, last = specs[10], specs[11]  # specs[9], [10], [11]: one deal; 9 played
    data = StoreData(path)
    assert data.deals_in_play([running.id, specs[4].id]) == {running.id: [last.id], specs[4].id: []}

    def live(spec: GameSpec) -> LiveTable:
        game = Game(Rules(players=3, hand_sizes=(1, 2, 3, 4)), seed=1)
        game.deal()
        game.apply(game.to_act, game.legal_actions()[0])  # a bid made
        names = list(spec.seats)
        record = GameRecord.begin(spec.id, game, names, 1, "default", {})
        return LiveTable(spec.id, names, game, record)

    async def main() -> list[dict[str, Any]]:
        async with memory_arena() as arena, client(WebState(store=data, arena=arena)) as c:
            arena.live_tables[running.id] = live(running)
            arena.live_tables[specs[4].id] = live(specs[4])
            tables = (await c.get("/api/tables")).json()["tables"]
            one = (await c.get(f"/api/tables/{running.id}")).json()
            del arena.live_tables[running.id], arena.live_tables[specs[4].id]
            return [*tables, one]

    withheld, shown, one = trio.run(main)
    assert withheld["id"] == running.id and one == withheld
    assert last.id in withheld["withheld"]
    assert not {"bids", "trick", "tricks", "turned", "totals", "results"} & set(withheld)
    assert shown["id"] == specs[4].id and "withheld" not in shown
    assert shown["bids"].count(None) == 2  # one bid made, shown


def test_a_game_id_prefix_is_matched_literally(store_path: tuple[Path, list[GameSpec]]) -> None:
    """``replay``'s prefix: ``_`` and ``%`` are characters, not SQL wildcards."""
    path, specs = store_path
    with ResultsStore(path, read_only=True) as store:
        assert store.find_game_ids(specs[0].id[:3]) == [s.id for s in specs[:10]]
        assert store.find_game_ids("g_0") == [] and store.find_game_ids("%") == []


@pytest.mark.parametrize("samples", ["-5", "many"])
def test_a_bad_bootstrap_count_is_refused_by_the_parser(
    samples: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from wizard_arena.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["web", "--database", "x.sqlite", "--bootstrap", samples])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "argument --bootstrap" in err and "Traceback" not in err


def test_the_web_verb_without_its_extra_names_it_at_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plain install is told to install ``web`` (which brings ``server``),
    not ``server`` first and then ``web``."""
    from wizard_arena import extras
    from wizard_arena.cli import main

    monkeypatch.setattr(extras, "_installed", lambda module: False)
    assert main(["web", "--database", "x.sqlite"]) == 2
    err = capsys.readouterr().err
    assert "wizard-arena[web]" in err and "[server]" not in err and "Traceback" not in err


def test_the_ratings_plot_labels_neither_overlap_nor_clip() -> None:
    """Ten entrants ending on the same rating, with long names: their names
    at the lines' ends are at least a line apart, inside the plot, cut to
    fit the margin (the whole name in the tooltip)."""
    import itertools
    import re

    from wizard_referee.web.plot import LABEL_CHARS, LABEL_GAP, WIDTH, ratings_svg

    names = [f"entrant-with-a-long-name-{i}" for i in range(10)]
    svg = ratings_svg(
        {"games": [1, 2], "series": {n: [1500.0 + i, 1600.0] for i, n in enumerate(names)}}
    )
    height = float(re.search(r'height="(\d+)"', svg).group(1))  # type: ignore[union-attr]
    labels = re.findall(
        r'<text x="([\d.]+)" y="([\d.]+)"[^>]*class="label"><title>([^<]*)</title>([^<]*)</text>',
        svg,
    )
    assert [t for _, _, t, _ in labels] == names
    ys = sorted(float(y) for _, y, _, _ in labels)
    assert all(b - a >= LABEL_GAP - 0.05 for a, b in itertools.pairwise(ys))
    assert ys[0] > 0 and ys[-1] <= height
    for x, _, _, shown in labels:
        assert len(shown) <= LABEL_CHARS and float(x) + 6.5 * len(shown) <= WIDTH


@NEEDS_POSTGRES
def test_the_pages_of_a_postgresql_store_are_those_of_the_same_sqlite_one(
    store_path: tuple[Path, list[GameSpec]],
    postgres_url: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The same games stored in PostgreSQL (``web --database postgresql://``)
    answer every question as they do from SQLite."""
    path, specs = store_path
    with ResultsStore(path, read_only=True) as lite, ResultsStore(postgres_url) as pg:
        config = lite.tournament_config()
        assert config is not None
        kinds = dict(lite.entrant_names())
        rules = lite.record(specs[0].id)
        assert rules is not None
        pg.create("web-test", config, [(n, k, None) for n, k in kinds.items()], specs, rules.rules)
        for spec in specs:
            record = lite.record(spec.id)
            if record is not None:
                pg.save_game(spec, record)
    asked = [
        "/api/info",
        "/api/leaderboard",
        "/api/games",
        "/api/games?entrant=dave",
        f"/api/games/{specs[4].id}",
        f"/api/games/{specs[9].id}",  # withheld: its deal is still to be played
        "/api/entrants/alice",
        "/api/games/nope",
    ]
    lite_answers = get(WebState(store=StoreData(path, bootstrap=20)), *asked)
    pg_answers = get(WebState(store=StoreData(postgres_url, bootstrap=20)), *asked)
    for url, a, b in zip(asked, lite_answers, pg_answers, strict=True):
        assert (url, a.status_code) == (url, b.status_code)
        mine, theirs = a.json(), b.json()
        if url == "/api/info":  # (each store made when it was)
            assert mine.pop("created_at") < theirs.pop("created_at")
        assert mine == theirs, url
    assert [a.status_code for a in pg_answers][-3:] == [403, 200, 404]
    # the verb refuses a database it cannot reach, in one line, without the password
    from wizard_arena.cli import main

    missing = postgres_url.replace("postgresql://postgres@/", "postgresql://postgres:pw@/nope_")
    assert main(["web", "--database", missing, "--port", "0"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: cannot open postgresql://postgres:***@/nope_")
    assert "pw" not in line

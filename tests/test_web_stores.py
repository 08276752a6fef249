"""``wizard-arena web --database`` over every kind of store of games: a
tournament's, a comparison's and a ladder's season that is over, each
showing its games and their replays through the one reader of the games'
shared tables (web/games.py), with each store's own withholding rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from wizard_arena.rules import Rules
from wizard_bots.heuristic import HeuristicBot
from wizard_bots.random_bot import RandomBot
from wizard_referee.ladder.plackett_luce import LiveModel
from wizard_referee.ladder.season import Season
from wizard_referee.ladder.store import LadderStore, new_token
from wizard_referee.tournament.seating import deal_seatings
from wizard_referee.tournament.store import GameSpec, ResultsStore
from wizard_referee.web.cmd_web import web_state
from wizard_referee.web.replay import replay_json

from .cli_here import cli_here
from .web_support import get, make_store, play_record

RULES = Rules(players=3, hand_sizes=(1, 2))
CLASSES: dict[str, Any] = {"alice@v1": HeuristicBot, "bob@v1": RandomBot, "carol@v1": RandomBot}


def _season(path: Path, sets: int, *, finish_last: bool = True) -> list[str]:
    """A ladder's season of ``sets`` duplicate sets of alice, bob and carol,
    every game of them played (the last set finished, or still being
    played), its ladder process stopped; the games' ids."""
    ids = []
    with LadderStore.create(path, Season("over", players=3, rules=RULES)) as store:
        for name in ("alice", "bob", "carol"):
            store.add_entrant(name, token=new_token())
        store.start_runner("runner", "here", 1, 60.0)
        labels = {v.id: v.label for v in store.versions()}
        model = LiveModel()
        for n in range(sets):
            set_id, deal = store.new_set([1, 2, 3], "runner", 60.0, "secret")
            by_label = {label: v for v, label in labels.items()}
            for r, seating in enumerate(deal_seatings([labels[v] for v in (1, 2, 3)])):
                spec = GameSpec(f"s{set_id}-r{r}", 0, set_id, 0, r, deal, seating)
                versions = [by_label[x] for x in seating]
                store.save_game(
                    set_id, r, versions, play_record(spec, RULES, CLASSES), runner="runner"
                )
                ids.append(spec.id)
            if finish_last or n < sets - 1:
                store.finish_set(set_id, [1, 2, 3], model.rate, runner="runner")
        store.stop_runner("runner")
    return ids


def _games_and_replays(target: Path | str, ids: list[str]) -> tuple[Any, dict[str, Any]]:
    state = web_state(str(target), bootstrap=0)
    urls = ["/api/info", "/api/games", "/games", *(f"/api/games/{g}" for g in ids)]
    answers = get(state, *urls)
    assert [a.status_code for a in answers] == [200] * len(urls), [a.text for a in answers]
    info, games, _, *replays = answers
    assert {g["id"] for g in games.json()["games"]} == set(ids)
    for line in games.json()["games"]:
        assert line["status"] == "finished" and "withheld" not in line
        assert len(line["totals"]) == len(line["seats"]) == 3
    return info.json(), {g: r.json() for g, r in zip(ids, replays, strict=True)}


def test_web_database_shows_a_tournaments_games_and_replays(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite"
    store, specs = make_store(path, deal_sets=1, rules=RULES)
    store.close()
    info, replays = _games_and_replays(path, [s.id for s in specs])
    assert info["mode"] == "store" and info["games"] == {"finished": len(specs)}
    with ResultsStore(path, read_only=True) as store:
        record = store.record(specs[0].id)
        assert record is not None and replays[specs[0].id] == replay_json(record)


def test_web_database_shows_a_comparisons_games_and_replays(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bots = ("wizard_bots.heuristic:HeuristicBot", "wizard_bots.random_bot:RandomBot")
    opponents = ("--opponent", "wizard_bots.random_bot:RandomBot") * 2
    args = ["compare", *bots, "--players", "3", "--round-sizes", "1,2", *opponents]
    ran = cli_here([*args, "--games", "4", "--quiet"], capsys, monkeypatch, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    path = tmp_path / "compare.sqlite"
    with ResultsStore(path, read_only=True) as store:
        ids = [g.id for g in store.games("finished")]
    assert len(ids) == 4
    info, replays = _games_and_replays(path, ids)
    assert info["games"] == {"finished": 4}
    assert all(r["steps"] for r in replays.values())


def test_web_database_shows_a_ladder_season_that_is_over(tmp_path: Path) -> None:
    path = tmp_path / "over.sqlite"
    ids = _season(path, 2)
    info, replays = _games_and_replays(path, ids)
    assert info["mode"] == "ladder" and info["in_progress"] is False
    assert info["sets"] == {"finished": 2} and info["games"] == {"finished": 12}
    with LadderStore.open(path, read_only=True) as store:
        found = store.game(ids[-1])
        assert found is not None and replays[ids[-1]] == replay_json(found[0])
    state = web_state(str(path), bootstrap=0)
    (standings,) = get(state, "/api/ladder/standings")
    assert len(standings.json()["rows"]) == 3  # (the ladder's own pages, beyond the games)


def test_a_replay_is_the_same_whichever_store_holds_the_game(tmp_path: Path) -> None:
    """The same game stored by a ladder and by a tournament: one reader, one
    replay, and the same line in the games list but for each store's own
    fields (the tournament's place in its plan, the ladder's set)."""
    ladder = tmp_path / "ladder.sqlite"
    (game_id, *_) = _season(ladder, 1)
    with LadderStore.open(ladder, read_only=True) as store:
        found = store.game(game_id)
        assert found is not None
        record = found[0]
    tournament = tmp_path / "t.sqlite"
    spec = GameSpec(game_id, 0, 0, 0, 0, str(record.seed), tuple(record.names))
    with ResultsStore(tournament) as store:
        store.create("t", {"name": "t"}, [(n, "command", None) for n in record.names], [spec], {})
        store.save_game(spec, record)
    urls = ["/api/games", f"/api/games/{game_id}"]
    (l_list, l_replay), (t_list, t_replay) = (
        get(web_state(str(p)), *urls) for p in (ladder, tournament)
    )
    assert l_replay.json() == t_replay.json() == replay_json(record)
    from_ladder = next(g for g in l_list.json()["games"] if g["id"] == game_id)
    (from_tournament,) = t_list.json()["games"]
    for own in ("set", "seating", "set_status"):
        del from_ladder[own]
    for own in ("seq", "table", "deal_set", "rotation"):
        del from_tournament[own]
    assert from_ladder == from_tournament


def test_a_season_whose_last_set_is_still_played_withholds_only_it(tmp_path: Path) -> None:
    """A season stopped while its last set was being played (its games all
    stored, the set not finished): that set's games are withheld, in the list
    and as replays, the finished set's are shown."""
    path = tmp_path / "stopped.sqlite"
    ids = _season(path, 2, finish_last=False)
    state = web_state(str(path), bootstrap=0)
    games, shown, withheld = get(
        state, "/api/games", f"/api/games/{ids[0]}", f"/api/games/{ids[-1]}"
    )
    lines = {g["id"]: g for g in games.json()["games"]}
    assert all("withheld" not in lines[g] for g in ids[:6])
    assert all(lines[g]["totals"] is None and lines[g]["withheld"] for g in ids[6:])
    assert shown.status_code == 200 and withheld.status_code == 403
    assert "its set waits for a member to return" in withheld.json()["error"]

"""Every decision graded (``wizard-arena analyse``, docs/analysis.md): the
views the evaluator is given, the losses and grades, the per-bot summary,
a planted weakness found, a comparison's split, the verb."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from wizard_arena import SeatView
from wizard_arena.rules import Card, Rules
from wizard_bots.heuristic import HeuristicBot
from wizard_bots.montecarlo import MonteCarloBot
from wizard_bots.random_bot import RandomBot
from wizard_referee.analysis.grade import THRESHOLDS, decisions, grade_record, verdict
from wizard_referee.analysis.run import grade_many, resolve
from wizard_referee.analysis.summary import (
    bot_summaries,
    clustered_mean,
    compare_split,
    split_lines,
)
from wizard_referee.referee.record import GameRecord

from .analysis_games import OneTooManyBot, played, stored
from .cli_here import cli_here
from .support import played_by_round

SMALL = Rules(players=3, hand_sizes=(1, 1, 1, 2, 2, 3))


def _cards(value: Any) -> Iterator[Card]:
    """Every card anywhere in a view (any field, nested)."""
    if isinstance(value, Card):
        yield value
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from _cards(getattr(value, f.name))
    elif isinstance(value, tuple | list):
        for v in value:
            yield from _cards(v)


class Recording:
    """An evaluator that keeps every view it is given (every action worth 0
    but the first, worth 1)."""

    def __init__(self) -> None:
        self.views: list[SeatView] = []

    def bid_values(self, view: SeatView) -> Mapping[int, float]:
        self.views.append(view)
        return {b: float(i == 0) for i, b in enumerate(view.legal_bids)}

    def action_values(self, view: SeatView) -> Mapping[Card, float]:
        self.views.append(view)
        return {c: float(i == 0) for i, c in enumerate(dict.fromkeys(view.legal_cards))}


def hidden_seen(
    view: SeatView, record: GameRecord, plays: list[list[tuple[int, Card]]]
) -> set[Card]:
    """The cards of ``view`` its seat could not see: another seat's cards not
    yet played (in a blind first round, its own). ``plays``: the record's
    cards played, by round (:func:`played_by_round`)."""
    rules = Rules.from_dict(record.rules)
    dealt = [[Card(c) for c in h] for h in record.rounds[view.round - 1].hands]
    played = plays[view.round - 1]
    assert list(view.plays) == played[: len(view.plays)], "plays differ from the record"
    allowed = {c for _, c in view.plays}
    if record.rounds[view.round - 1].turned_card:
        allowed.add(Card(record.rounds[view.round - 1].turned_card or ""))
    blind = rules.blind_first_round and view.round == 1
    for seat, hand in enumerate(dealt):
        if (seat == view.seat) != blind:
            allowed.update(hand)
    return {c for c in _cards(view) if c not in allowed}


@pytest.mark.parametrize(
    "rules",
    [SMALL, Rules(players=4, blind_first_round=True, hand_sizes=(1, 2, 3)), Rules(players=5)],
    ids=["small", "blind", "five"],
)
def test_the_evaluator_never_sees_a_hidden_card(rules: Rules) -> None:
    n = rules.players
    record = played(
        [RandomBot(seed=s) for s in range(n)], [f"r{s}" for s in range(n)], rules, 3, "g"
    )
    recording = Recording()
    graded = grade_record(record, recording)
    assert len(recording.views) == len(graded) > 10
    plays = played_by_round(record)
    for view in recording.views:
        assert not hidden_seen(view, record, plays), (view.seat, view.round)
        if not (rules.blind_first_round and view.round == 1):
            assert view.others_hands == ()
    # the check finds a leak: the other seats' dealt cards put in a view
    view = next(v for v in recording.views if v.hand and not v.plays and v.round > 1)
    dealt = record.rounds[view.round - 1].hands
    leaked = tuple(() if s == view.seat else tuple(map(Card, h)) for s, h in enumerate(dealt))
    assert hidden_seen(dataclasses.replace(view, others_hands=leaked), record, plays)


def test_each_decision_has_the_view_of_its_seat_before_it() -> None:
    record = played([RandomBot(seed=s) for s in range(3)], ["a", "b", "c"], SMALL, 1, "g")
    seen = list(decisions(record))
    moves = [mv for rr in record.rounds for mv in rr.moves if not mv.action.startswith("trump")]
    assert [d.move for d in seen] == moves
    for d in seen:
        assert d.view.seat == d.move.seat and d.view.to_act == d.move.seat
        assert d.view.cards_per_player == d.cards == len(record.rounds[d.round - 1].hands[0])


def test_loss_and_grade() -> None:
    record = played([RandomBot(seed=s) for s in range(3)], ["a", "b", "c"], SMALL, 2, "g")
    graded = grade_record(record, Recording())
    for g in graded:
        # the first legal action is worth 1, the rest 0
        assert g.loss in (0.0, 1.0)
        assert (g.loss == 0.0) == (g.best == g.chosen)
    assert {g.loss for g in graded} == {0.0, 1.0}
    assert [verdict(x) for x in (0.0, 2.4, 2.5, 7.5, 19.9, 20.0)] == [
        "",
        "",
        "inaccuracy",
        "mistake",
        "mistake",
        "blunder",
    ]
    assert [n for n, _ in THRESHOLDS] == ["blunder", "mistake", "inaccuracy"]


def test_clustered_mean_interval() -> None:
    m = clustered_mean([(2.0, 2), (4.0, 2), (6.0, 2)])
    assert m.mean == pytest.approx(2.0) and (m.n, m.games) == (6, 3)
    assert m.low is not None and m.high is not None
    # per-unit means 1, 2, 3: sd 1, se 1/sqrt(3), t(2) = 4.303
    assert m.high - m.mean == pytest.approx(4.303 / 3**0.5, rel=1e-3)
    one = clustered_mean([(3.0, 3)])
    assert one.mean == 1.0 and one.low is None


def planted_games(count: int) -> list[GameRecord]:
    names = ["planted", "h1", "h2"]
    return [
        played([OneTooManyBot(), HeuristicBot(), HeuristicBot()], names, SMALL, g, f"g{g}")
        for g in range(count)
    ]


def test_a_planted_weakness_is_found() -> None:
    records = planted_games(12)
    evaluator = resolve("learned")
    done = list(grade_many([(r, None) for r in records], evaluator))
    summary = bot_summaries(done)
    planted = summary["planted"]["bid"]["by_size"]
    for fair in ("h1", "h2"):
        theirs = summary[fair]["bid"]["by_size"]
        # rounds of one: the planted bot loses far more, its interval clear of theirs
        assert planted["1"]["low"] > theirs["1"]["high"]
        # other rounds: no worse than the heuristic's by much
        assert planted["2"]["mean"] < theirs["2"]["mean"] + 5
    assert summary["planted"]["bid_accuracy"]["mean"] < summary["h1"]["bid_accuracy"]["mean"]


@pytest.mark.slow(seconds=3)
def test_the_reference_evaluator_finds_it_too() -> None:
    records = planted_games(6)
    evaluator = resolve("montecarlo", {"samples": 8})
    done = list(grade_many([(r, (0, 1)) for r in records], evaluator))
    summary = bot_summaries(done)
    assert set(summary) == {"planted", "h1"}
    assert summary["planted"]["bid"]["by_size"]["1"]["mean"] > 3 * max(
        1.0, summary["h1"]["bid"]["by_size"]["1"]["mean"]
    )


@pytest.mark.slow(seconds=8)
def test_mean_loss_orders_the_example_bots_as_their_ratings() -> None:
    # ratings (docs/strength.md): Monte Carlo above heuristic above random
    rules = Rules(players=3, hand_sizes=(1, 2, 3, 4))
    names = ["random", "heuristic", "montecarlo"]
    records = [
        played(
            [RandomBot(seed=g), HeuristicBot(), MonteCarloBot(samples=16, seed=g)],
            names,
            rules,
            g,
            f"g{g}",
        )
        for g in range(6)
    ]
    done = list(grade_many([(r, None) for r in records], resolve("montecarlo", {"samples": 8})))
    summary = bot_summaries(done)
    lost = [summary[n]["per_game"]["mean"] for n in names]
    assert lost[0] > lost[1] > lost[2], lost
    bids = [summary[n]["bid"]["mean_loss"]["mean"] for n in names]
    assert bids[0] > bids[1] > bids[2], bids


@pytest.mark.slow(seconds=4)
def test_grading_on_workers_gives_the_same_grades() -> None:
    records = planted_games(3)
    evaluator = resolve("montecarlo", {"samples": 2})
    here = [g for _, gs in grade_many([(r, None) for r in records], evaluator) for g in gs]
    there = [g for _, gs in grade_many([(r, None) for r in records], evaluator, jobs=2) for g in gs]
    assert here == there and here


def test_compare_split() -> None:
    records = []
    for deal in range(4):
        for side, bot in (("A", HeuristicBot()), ("B", OneTooManyBot())):
            name = "heuristic" if side == "A" else "planted"
            r = played(
                [bot, RandomBot(seed=deal), RandomBot(seed=deal + 9)],
                [name, "r1", "r2"],
                SMALL,
                deal,
                f"d{deal}-{side}",
            )
            r.tags.update({"compare": True, "deal": deal, "side": side, "candidate_seat": 0})
            records.append(r)
    done = list(grade_many([(r, (0,)) for r in records], resolve("learned")))
    split = compare_split(done)
    assert split is not None
    assert (split["a"], split["b"], split["deals"]) == ("heuristic", "planted", 4)
    assert split["bidding"]["mean"] > 5  # B bids worse in rounds of one
    assert split["bidding"]["n"] == 4
    assert compare_split(done[:1]) is None


def test_analyse_verb(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "t.sqlite")
    stored(db, planted_games(3))
    ran = cli_here(
        ["analyse", "g1", "-d", db, "--evaluator", "learned", "--jobs", "1"], capsys, monkeypatch
    )
    assert ran.returncode == 0, ran.stderr
    assert "g1 round  1 planted" in ran.stdout and "mean loss per bid" in ran.stdout
    ran = cli_here(
        ["analyse", "-d", db, "--bot", "planted", "--evaluator", "learned", "--json", "-j", "1"],
        capsys,
        monkeypatch,
    )
    assert ran.returncode == 0, ran.stderr
    out = json.loads(ran.stdout)
    assert set(out["bots"]) == {"planted"} and out["bots"]["planted"]["games"] == 3
    assert "decisions" not in out and out["evaluator"]["spec"].endswith("LearnedBot")
    ran = cli_here(["analyse", "nope", "-d", db, "--evaluator", "learned"], capsys, monkeypatch)
    assert ran.returncode == 2 and "no recorded game 'nope'" in ran.stderr
    ran = cli_here(
        ["analyse", "-d", db, "--evaluator", "wizard_bots.heuristic:HeuristicBot"],
        capsys,
        monkeypatch,
    )
    assert ran.returncode == 2 and "has no bid_values or action_values" in ran.stderr


def test_web_replay_and_entrant_analysis(tmp_path: Path) -> None:
    from wizard_referee.web.app import WebState
    from wizard_referee.web.data import StoreData

    from .web_support import get, make_store

    store, specs = make_store(tmp_path / "web.sqlite", deal_sets=1)
    store.close()
    gid = specs[0].id
    state = WebState(store=StoreData(tmp_path / "web.sqlite"))
    replay, graded, entrant, unknown, nobody = get(
        state,
        f"/api/games/{gid}",
        f"/api/analysis/games/{gid}",
        "/api/analysis/entrants/alice",
        "/api/analysis/games/nope",
        "/api/analysis/entrants/nobody",
    )
    assert replay.status_code == graded.status_code == entrant.status_code == 200
    moves = graded.json()["moves"]
    assert moves and graded.json()["evaluator"].endswith("LearnedBot")
    # the replay page's key of each step, as replay.js makes it: round:move
    keys: dict[str, dict[str, Any]] = {}
    move = 0
    for step in replay.json()["steps"]:
        if step["kind"] == "deal":
            move = 0
        if step["kind"] in ("bid", "play", "trump"):
            keys[f"{step['round']}:{move}"] = step
            move += 1
    for key, g in moves.items():
        step = keys[key]
        assert step["seat"] == g["seat"]
        assert step["action"] == f"{'bid' if g['kind'] == 'bid' else 'play'} {g['chosen']}"
        assert g["loss"] >= 0 and (g["loss"] == 0) == (g["best"] == g["chosen"])
    summary = entrant.json()["summary"]
    assert entrant.json()["games"] == summary["games"] > 0
    assert summary["bid"]["mean_loss"]["n"] > 0 and summary["card"]["mean_loss"]["n"] > 0
    assert unknown.status_code == 404 and nobody.status_code == 404


@pytest.mark.slow(seconds=4)
def test_analyse_a_comparisons_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "c.sqlite")
    ran = cli_here(
        [
            *["compare", "wizard_bots.heuristic:HeuristicBot", "wizard_bots.random_bot:RandomBot"],
            *["--opponent", "wizard_bots.heuristic:HeuristicBot", "--players", "3"],
            *["--round-sizes", "1,2,3", "--games", "6", "--parallel", "1", "--database", db],
        ],
        capsys,
        monkeypatch,
    )
    assert ran.returncode == 0, ran.stderr
    assert f"why: wizard-arena analyse --database {db}" in ran.stdout
    ran = cli_here(
        ["analyse", "-d", db, "--evaluator", "learned", "--json", "-j", "1"], capsys, monkeypatch
    )
    assert ran.returncode == 0, ran.stderr
    out = json.loads(ran.stdout)
    # the candidate seat alone: A's decisions in the A games, B's in the B games
    assert set(out["bots"]) == {"A", "B"}
    assert out["bots"]["A"]["games"] == out["bots"]["B"]["games"] == 3
    split = out["compare"]
    assert (split["a"], split["b"], split["deals"]) == ("A", "B", 3)
    assert set(split) >= {"points", "bidding", "play"}


def test_compare_why_reports_the_split_analyse_gives(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``compare --why`` ends its report with how much of A - B comes from
    bidding and how much from play: the split ``analyse`` gives of the same
    store with the learned evaluator (in its JSON too)."""
    db = str(tmp_path / "c.sqlite")
    argv = [
        *["compare", "wizard_bots.heuristic:HeuristicBot", "wizard_bots.random_bot:RandomBot"],
        *["--opponent", "wizard_bots.heuristic:HeuristicBot", "--players", "3"],
        *["--round-sizes", "1,2,3", "--games", "6", "--parallel", "1", "--database", db],
    ]
    ran = cli_here([*argv, "--why"], capsys, monkeypatch)
    assert ran.returncode == 0, ran.stderr
    ran_json = cli_here(["analyse", "-d", db, "--evaluator", "learned", "--json", "-j", "1"],
                        capsys, monkeypatch)  # fmt: skip
    split = json.loads(ran_json.stdout)["compare"]
    lines = ran.stdout.splitlines()
    at = lines.index("why (each decision graded by the learned evaluator; wizard-arena analyse):")
    assert [line.strip() for line in lines[at + 1 : at + 4]] == [
        line.strip() for line in split_lines(split)
    ]
    again = cli_here([*argv, "--why", "--json", "--resume"], capsys, monkeypatch)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["why"] == split


def test_the_evaluators_values_are_what_their_bots_choose_by() -> None:
    from wizard_bots.learned import LearnedBot

    learned = LearnedBot()
    mc = MonteCarloBot(samples=2, seed=0)
    blind = Rules(players=3, blind_first_round=True, hand_sizes=(1, 2))
    record = played([RandomBot(seed=s) for s in range(3)], ["a", "b", "c"], blind, 4, "g")
    bids = cards = 0
    for d in decisions(record):
        view = d.view
        if view.legal_bids:
            values = learned.bid_values(view)
            if not view.hand:  # a blind bid: not valued
                assert values == {} and mc.bid_values(view) == {}
                continue
            bids += 1
            assert sorted(values) == sorted(view.legal_bids)
            assert max(values, key=lambda b: (values[b], -b)) == learned.bid(view)
            assert sorted(mc.bid_values(view)) == sorted(view.legal_bids)
        else:
            cards += 1
            by_card = learned.action_values(view)
            assert sorted(by_card) == sorted(set(view.legal_cards))
            if len(by_card) > 1:
                assert max(by_card, key=lambda c: by_card[c]) == learned.play(view)
    assert bids and cards


def test_a_seats_grades_do_not_depend_on_the_other_seats_graded() -> None:
    # one Monte Carlo evaluator shared by every seat of a game drew each
    # decision's deals after the other seats' searches: grading one seat
    # (--bot, a comparison's candidate seat) gave its decisions other grades
    # than grading the whole game
    rules = Rules(players=3, hand_sizes=(1, 1, 1, 2, 2, 3))
    record = played([RandomBot(seed=s) for s in range(3)], ["a", "b", "c"], rules, 2, "g")
    evaluator = resolve("montecarlo", {"samples": 4})
    whole = [g for _, gs in grade_many([(record, None)], evaluator) for g in gs if g.seat == 0]
    alone = [g for _, gs in grade_many([(record, (0,))], evaluator) for g in gs]
    assert whole == alone and len(alone) > 5


def test_the_pages_grade_a_game_once_whatever_finishes_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a page's answer is kept while the store is unchanged, and a running
    # tournament changes it with every game: the pages must not grade again
    # the games already graded (an entrant's page regraded its latest 100
    # games after every game finished, at any stranger's request)
    import wizard_referee.web.data as data

    from .web_support import ENTRANTS, make_store, play_record

    graded: list[str] = []
    real = data.grade_many

    def counting(records: Any, *args: Any, **kwargs: Any) -> Any:
        records = list(records)
        graded.extend(r.game_id for r, _ in records)
        return real(records, *args, **kwargs)

    monkeypatch.setattr(data, "grade_many", counting)
    path = tmp_path / "web.sqlite"
    store, specs = make_store(path, deal_sets=2, play=3)
    web = data.StoreData(path)
    first = web.entrant_analysis("alice")
    assert sorted(graded) == sorted(s.id for s in specs[:3])
    web.analysis(specs[0].id)
    assert graded[-1] == specs[0].id
    graded.clear()
    rules = Rules(players=3, hand_sizes=(1, 2, 3, 4))  # make_store's
    for spec in specs[3:6]:  # a deal set of games alice plays in
        store.save_game(spec, play_record(spec, rules, ENTRANTS))
    store.close()
    again = web.entrant_analysis("alice")
    web.analysis(specs[0].id)
    assert again["games"] == first["games"] + 3
    assert sorted(graded) == sorted(s.id for s in specs[3:6])


class _Seen(RandomBot):
    """A random bot that keeps every view it is asked to bid or play on."""

    def __init__(self, seed: int, views: list[SeatView]) -> None:
        super().__init__(seed=seed)
        self.views = views

    def bid(self, view: SeatView) -> int:
        self.views.append(view)
        return super().bid(view)

    def play(self, view: SeatView) -> Card:
        self.views.append(view)
        return super().play(view)


@pytest.mark.parametrize(
    "rules",
    [
        Rules(players=4, hidden_bids=True, hand_sizes=(1, 2, 3)),
        Rules(players=4, hidden_bids=True, reveal_bids_after_tricks=True, hand_sizes=(2, 3)),
        Rules(players=3, tricksy=True, hand_sizes=(2, 3, 4)),
        Rules(players=3, tricksy_suited=True, hand_sizes=(2, 3, 4)),
        Rules(players=4, blind_first_round=True, hand_sizes=(1, 2)),
    ],
    ids=["hidden-bids", "bids-revealed-after", "tricksy", "tricksy-suited", "blind"],
)
def test_each_view_is_the_one_its_bot_was_given(rules: Rules) -> None:
    views: list[SeatView] = []
    n = rules.players
    record = played([_Seen(s, views) for s in range(n)], [f"s{s}" for s in range(n)], rules, 5, "g")

    def key(v: SeatView) -> tuple[int, int, int]:
        return v.round, v.seat, len(v.plays)

    rebuilt = sorted((d.view for d in decisions(record)), key=key)
    assert rebuilt == sorted(views, key=key) and rebuilt

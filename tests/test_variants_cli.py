"""Rule variants at the edges: the serve flags and tournament keys that make
the rules (and refuse combinations that cannot work), tournaments of variants,
and the records of every variant, which verify and replay."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from wizard_arena.rules import (
    Game,
    Phase,
    Rules,
)
from wizard_arena.rules.laws import VARIANT_OPTIONS
from wizard_referee.referee import cmd_serve
from wizard_referee.referee.record import GameRecord, verify_record
from wizard_referee.tournament import cmd_replay
from wizard_referee.tournament.cmd_replay import render
from wizard_referee.tournament.runner import TournamentConfig, TournamentError, run_tournament
from wizard_referee.tournament.store import ResultsStore

from .cli_here import cli_here
from .conftest import ROOT
from .support import scaled
from .variants import VARIANTS, pick

pytestmark = pytest.mark.timeout(180)


# -- combinations that cannot work -------------------------------------------------------------


def _serve_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cmd_serve.add_arguments(parser)
    return parser.parse_args(list(argv))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--hidden-bids", "--bid-restriction", "canadian"], "hidden_bids cannot be combined"),
        (["--hidden-bids", "--bid-restriction", "dealer_not_equal"], "hidden_bids cannot"),
        (["--maximus", "--round-sizes", "3,4"], "round_sizes cannot be combined with maximus"),
        (["--blind-first-round", "--round-sizes", "2,3"], "blind_first_round needs a first"),
        (["--blind-first-round", "--maximus"], "blind_first_round needs a first"),
        (["--players", "5", "--round-sizes", "1,13"], "each round deals 1..12 cards"),
        (["--round-sizes", "2,,4"], "whole numbers separated by commas"),
        (["--round-sizes", ""], "whole numbers separated by commas"),
        (["--tricksy", "--tricksy-suited"], "two forms of Tricksy Wizard"),
        (["--reveal-bids-after-tricks"], "reveal_bids_after_tricks is a reveal time"),
    ],
)
def test_serve_refuses_combinations(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    # (the process's logging is left alone: it would keep capsys's stream)
    monkeypatch.setattr(cmd_serve, "configure_logging", lambda *a, **k: None)
    assert cmd_serve.run(_serve_args(*argv, "--port", "0")) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: rules: ") and message in err
    assert "Traceback" not in err


def test_serve_flags_make_the_rules() -> None:
    args = _serve_args(
        "--players", "3", "--hidden-bids", "--blind-first-round", "--tricksy",
        "--lowest-score-deals", "--round-sizes", "1, 3,5",
    )  # fmt: skip
    rules = cmd_serve.rules_from_args(args)
    assert rules == Rules(
        players=3,
        hidden_bids=True,
        blind_first_round=True,
        tricksy=True,
        lowest_score_deals=True,
        hand_sizes=(1, 3, 5),
    )
    assert cmd_serve.rules_from_args(_serve_args("--maximus")) == Rules(maximus=True)
    assert cmd_serve.rules_from_args(_serve_args()) == Rules()
    args = _serve_args(
        "--hidden-bids", "--reveal-bids-after-tricks", "--tricksy-suited", "--first-dealer-by-draw"
    )
    assert cmd_serve.rules_from_args(args) == Rules(
        hidden_bids=True,
        reveal_bids_after_tricks=True,
        tricksy_suited=True,
        first_dealer_by_draw=True,
    )
    # one flag per variant option, named after it
    from wizard_arena.cli.rules_options import VARIANT_FLAGS

    flags = {f.replace("-", "_") for f in VARIANT_FLAGS} | {"round_sizes"}
    assert flags == set(VARIANT_OPTIONS)


def test_serve_command_refuses_without_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    proc = cli_here(["serve", "--maximus", "--round-sizes", "2"], capsys, monkeypatch)
    assert proc.returncode == 2
    assert "round_sizes cannot be combined with maximus" in proc.stderr
    assert "Traceback" not in proc.stderr


# -- tournaments -----------------------------------------------------------------------------


def _tournament(tmp: Path, **section: object) -> dict[str, Any]:
    bot = [sys.executable, "-m", "wizard_arena.cli", "bot", "wizard_bots.random_bot:RandomBot"]
    args = ["--server", "{server}", "--token", "{token}", "--name", "{name}", "--quiet"]
    return {
        "tournament": {
            "players": 3,
            "deal_sets": 1,
            "seed": 3,
            "move_time": 10.0,
            "database": str(tmp / "variants.sqlite"),
            **section,
        },
        "entrant": [{"name": f"r{i}", "command": [*bot, *args]} for i in range(3)],
    }


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"hidden_bids": True, "bid_restriction": "canadian"}, "rules: hidden_bids cannot"),
        ({"maximus": True, "round_sizes": [3]}, "rules: round_sizes cannot"),
        ({"blind_first_round": True, "round_sizes": [2, 1]}, "rules: blind_first_round"),
        ({"round_sizes": []}, "rules: round_sizes must list at least one round"),
        ({"round_sizes": [1, 40]}, "each round deals 1..20 cards"),
        ({"round_sizes": "1,2"}, "round_sizes must be a list of whole numbers"),
        ({"round_sizes": [1.5]}, "round_sizes must be a list of whole numbers"),
        ({"tricksy": "yes"}, "tricksy must be true or false"),
        ({"tricksy": True, "tricksy_suited": True}, "rules: tricksy and tricksy_suited"),
        ({"reveal_bids_after_tricks": True}, "rules: reveal_bids_after_tricks is a reveal time"),
        ({"first_dealer_by_draw": "yes"}, "first_dealer_by_draw must be true or false"),
    ],
)
def test_tournament_refuses_combinations(
    tmp_path: Path, section: dict[str, object], message: str
) -> None:
    with pytest.raises(TournamentError, match=message):
        TournamentConfig.from_dict(_tournament(tmp_path, **section))


def test_tournament_variant_keys() -> None:
    data = _tournament(Path("/nonexistent"), tricksy=True, round_sizes=[2, 4])
    config = TournamentConfig.from_dict(data)
    assert config.rules == Rules(players=3, tricksy=True, hand_sizes=(2, 4))
    key = config.plan_key()
    assert key["tricksy"] is True and key["round_sizes"] == [2, 4]
    # a base-game plan has no variant keys (tournaments stored earlier resume)
    base = TournamentConfig.from_dict(_tournament(Path("/nonexistent")))
    assert not set(base.plan_key()) & set(VARIANT_OPTIONS)
    assert config.to_dict()["round_sizes"] == (2, 4)
    json.dumps(config.to_dict())
    forms = TournamentConfig.from_dict(
        _tournament(
            Path("/nonexistent"),
            hidden_bids=True,
            reveal_bids_after_tricks=True,
            tricksy_suited=True,
            first_dealer_by_draw=True,
        )
    )
    assert forms.rules == Rules(
        players=3,
        hidden_bids=True,
        reveal_bids_after_tricks=True,
        tricksy_suited=True,
        first_dealer_by_draw=True,
    )
    key = forms.plan_key()
    for name in ("hidden_bids", "reveal_bids_after_tricks", "tricksy_suited"):
        assert key[name] is True
    assert key["first_dealer_by_draw"] is True


@pytest.mark.e2e
def test_tournament_with_variants(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    section: dict[str, object] = {
        "hidden_bids": True,
        "reveal_bids_after_tricks": True,
        "blind_first_round": True,
        "tricksy": True,
        "lowest_score_deals": True,
        "first_dealer_by_draw": True,
        "round_sizes": [1, 4, 7],
    }
    data = _tournament(tmp_path, **section)
    toml = tmp_path / "variants.toml"
    lines = ["[tournament]"] + [f"{k} = {json.dumps(v)}" for k, v in data["tournament"].items()]
    for e in data["entrant"]:
        lines += ["", "[[entrant]]", f"name = {json.dumps(e['name'])}"]
        lines.append(f"command = {json.dumps(e['command'])}")
    toml.write_text("\n".join(lines) + "\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        [sys.executable, "-m", "wizard_arena.cli", "tournament", str(toml), "--quiet"],
        capture_output=True,
        text=True,
        timeout=scaled(150),
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    rules = Rules(
        players=3,
        hidden_bids=True,
        reveal_bids_after_tricks=True,
        blind_first_round=True,
        tricksy=True,
        lowest_score_deals=True,
        first_dealer_by_draw=True,
        hand_sizes=(1, 4, 7),
    )
    header = proc.stdout.splitlines()[0]
    assert rules.describe() in header
    assert (
        "hidden_bids, reveal_bids_after_tricks, blind_first_round, tricksy, lowest_score_deals, "
        "first_dealer_by_draw, round_sizes 1,4,7" in header
    )

    db = Path(str(data["tournament"]["database"]))
    with ResultsStore(db) as store:
        games = store.games("finished")
        assert len(games) == 6  # one deal: the 6 seatings of the balanced design at 3
        records = [store.record(g.id) for g in games]
    for rec in records:
        assert rec is not None and rec.rules == rules.to_dict()
        assert verify_record(rec) == []
        assert rec.faulted_seats == []
        assert len(rec.rounds) == 3
        capsys.readouterr()
        ns = argparse.Namespace(game_id=rec.game_id, database=db, verify=True)
        assert cmd_replay.run(ns) == 0
        assert "verified, no difference" in capsys.readouterr().out
        ns.verify = False
        assert cmd_replay.run(ns) == 0
        shown = capsys.readouterr().out
        assert rules.describe() in shown and "(blind: played by the rules after the bids)" in shown
        assert "first dealer by draw: " in shown
    # the draw is recorded with each game; the games of a duplicate set share
    # their deal seed, so the same seat deals first in every rotation
    assert all(r is not None and r.draw for r in records)
    assert len({(json.dumps(r.draw), r.first_dealer) for r in records if r is not None}) == 1

    # resuming with other rules is refused: the variants are part of the plan
    other = TournamentConfig.from_dict(
        {**data, "tournament": {**data["tournament"], "tricksy": False}}
    )
    with pytest.raises(TournamentError, match="does not match the stored tournament"):
        trio.run(lambda: run_tournament(other, resume=True))
    same = TournamentConfig.from_dict(data)
    store = trio.run(lambda: run_tournament(same, resume=True))  # nothing left to play
    store.close()


@pytest.mark.e2e
def test_tournament_refuses_base_game_bot(tmp_path: Path) -> None:
    """An entrant that lists no rule options cannot join a variant tournament:
    the runner stops at once and says why."""
    data = _tournament(tmp_path, tricksy=True)
    script = tmp_path / "base_bot.py"
    script.write_text(
        "import sys\n"
        "from wizard_arena.client import run_bot\n"
        "from wizard_bots.random_bot import RandomBot\n"
        "run_bot(RandomBot(), sys.argv[1], name=sys.argv[2], token=sys.argv[3],\n"
        "        rule_options=(), reconnect=False)\n"
    )
    data["entrant"][0]["command"] = [sys.executable, str(script), "{server}", "{name}", "{token}"]
    config = TournamentConfig.from_dict(data)
    with pytest.raises(TournamentError) as err:
        trio.run(lambda: run_tournament(config))
    # at once (not after connect_timeout): a refused bot can never join
    assert str(err.value).startswith(
        "entrant r0 was refused: it cannot play the rule option(s) tricksy: "
        "the games are played with 3 players, bid restriction none, tricksy"
    )


def test_records_of_every_variant_verify_and_replay() -> None:
    """Records written from local games under every variant (and a tampered
    one) go through verify_record and render."""
    import random

    from wizard_arena.rules import action_text
    from wizard_referee.referee.record import MoveRecord, RoundRecord

    for name, rules in pick(*VARIANTS, "maximus_tricksy").items():
        rng = random.Random(name)
        drawn = rules.first_dealer_by_draw
        game = Game(rules, seed=name, first_dealer=None if drawn else 1)
        rec = GameRecord(
            name,
            rules.to_dict(),
            list("abcdef"[: rules.players]),
            name,
            game.first_dealer,
            0.0,
            draw=[[c.text if c else None for c in row] for row in game.draw],
        )
        while not game.is_over:
            if game.phase is Phase.DEAL:
                game.deal()
                rec.rounds.append(
                    RoundRecord(
                        game.round,
                        game.dealer,
                        [[c.text for c in h] for h in game.dealt_hands],
                        game.turned_card.text if game.turned_card else None,
                    )
                )
                continue
            seat = rng.choice(game.acting)
            action = rng.choice(game.legal_actions(seat))
            game.apply(seat, action)
            rec.rounds[-1].moves.append(MoveRecord(seat, action_text(action), 1.0))
        rec.results = [
            [list(r.bids), list(r.tricks), list(r.points), list(r.totals)] for r in game.results
        ]
        rec.totals, rec.ranks, rec.status = list(game.totals), list(game.ranks), "finished"
        assert verify_record(rec) == [], name
        text = render(rec)
        assert text.count("\nround ") == rules.rounds
        heads = [line for line in text.splitlines() if line.startswith("round ")]
        if rules.maximus:
            assert heads[0].endswith("turned -, trump C")
            assert heads[4].endswith("turned -, trump none")
        if rules.blind_first_round:
            assert "(blind: each player sees the others' cards, not their own)" in heads[0]
        if rules.first_dealer_by_draw:
            assert "first dealer by draw: " in text
            good = rec.draw
            rec.draw = []  # a drawn game must keep its draw
            assert any("first dealer is drawn" in p for p in verify_record(rec)), name
            rec.first_dealer = (game.first_dealer + 1) % rules.players  # not the seat drawn
            rec.draw = good
            assert any("but the draw gives" in p for p in verify_record(rec)), name
            rec.first_dealer = game.first_dealer
        if rules.tricksy_suited and any("W" in m.action for r in rec.rounds for m in r.moves):
            assert "(trump " in text
        if rules.hidden_bids:
            # the bids are recorded in arrival order: any order verifies
            rr = rec.rounds[-1]
            first = next(i for i, m in enumerate(rr.moves) if m.action.startswith("bid"))
            n = rules.players
            head, bids, rest = rr.moves[:first], rr.moves[first : first + n], rr.moves[first + n :]
            assert all(m.action.startswith("bid") for m in bids)
            rr.moves = [*head, *reversed(bids), *rest]
            assert verify_record(rec) == [], name
            rr.moves = [*head, *bids, *bids[:1], *rest]  # a seat bidding twice
            assert any("recorded" in p or "refused" in p for p in verify_record(rec)), name

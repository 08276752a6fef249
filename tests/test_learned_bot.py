"""The learned bot: its training script runs (a few steps, not the real
training), its committed weights load and beat random bots, its cards come
from its card network (not the heuristic's rules), always legal, and it
enters through the SDK's ordinary bot loading."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from wizard_arena import Bot, Card, SeatView, Suit
from wizard_arena.cli import main as cli_main
from wizard_arena.loader import load_class
from wizard_arena.local import play_local
from wizard_arena.rl.encoding import RULE_FEATURES, block, encode
from wizard_arena.rules import Game, Rules
from wizard_bots.heuristic import HeuristicBot
from wizard_bots.learned import LearnedBot
from wizard_bots.learned.model import WEIGHTS, BidModel, PlayModel, card_features, n_features
from wizard_bots.random_bot import RandomBot

from .conftest import ROOT
from .variants import EVERY_OPTION

#: Card-play training in seconds: two teacher games of three short rounds.
TINY_CARDS = ["--teacher-games", "2", "--league-iterations", "1", "--league-games", "2"]
TINY_CARDS += ["--round-sizes", "1,2,3", "--play-epochs", "2"]


def _loss(model: BidModel, data: object) -> float:
    x = data.x.astype(np.float32)  # type: ignore[attr-defined]
    q = model.q_features(x)[np.arange(len(x)), data.bid]  # type: ignore[attr-defined]
    return float(np.mean((q - data.y) ** 2))  # type: ignore[attr-defined]


def test_training_steps_learn_and_save_weights_the_bot_plays(tmp_path: Path) -> None:
    pytest.importorskip("pettingzoo", reason="training needs the rl extra")
    from wizard_bots.learned import train

    settings = train.Settings(iterations=1, games=4, jobs=1, epochs=30, hidden=16)
    data = train.play_games((None, 5, settings.games, settings))
    assert len(data) == 4 * 4 * 15  # every seat's bid in every round
    model = BidModel.initial(settings.hidden, seed=1)
    before = _loss(model, data)
    train.fit(model, data, settings, np.random.default_rng(1))
    assert _loss(model, data) < 0.5 * before
    out = tmp_path / "weights.npz"
    argv = ["--iterations", "2", "--games", "2", "--jobs", "1", *TINY_CARDS, "--out", str(out)]
    assert train.main(argv) == 0
    bot = LearnedBot(weights=out)
    result = play_local([bot, RandomBot(seed=1), RandomBot(seed=2)], seed=3)
    assert result.faults == []


def test_the_committed_weights_beat_random_bots() -> None:
    """16 seeded 4-player games, the learned bot in every seat in turn."""
    assert WEIGHTS.is_file() and WEIGHTS.stat().st_size < 200_000
    wins = 0
    margins = []
    for game in range(16):
        seat = game % 4
        bots = [RandomBot(seed=100 * game + s) for s in range(4)]
        bots[seat] = LearnedBot()
        result = play_local(bots, Rules(players=4), seed=game, hooks=False)
        assert result.faults == []
        wins += result.ranks[seat] == 1
        others = [t for s, t in enumerate(result.totals) if s != seat]
        margins.append(result.totals[seat] - max(others))
    # the heuristic bot beats random bots by about 500 points a game; the
    # learned bot must clearly do so too
    assert wins >= 14, (wins, margins)
    assert float(np.mean(margins)) > 150, margins


def test_the_bot_enters_through_the_sdk(capsys: pytest.CaptureFixture[str]) -> None:
    assert load_class("wizard_bots.learned:LearnedBot") is LearnedBot
    bots = ["wizard_bots.learned:LearnedBot", "wizard_bots.random_bot:RandomBot"]
    bots.append("wizard_bots.heuristic:HeuristicBot")
    assert cli_main(["play", *bots, "--players", "3", "--seed", "2"]) == 0
    assert "learned" in capsys.readouterr().out


def test_the_weights_are_package_data() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"wizard_bots.learned" = ["*.npz"]' in pyproject
    assert WEIGHTS.parent == ROOT / "example_bots" / "wizard_bots" / "learned"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--out", "{tmp}/no/such/folder/w.npz"], "no folder"),
        (["--out", "{tmp}"], "is a folder"),
        (["--games", "0"], "--games"),
        (["--iterations", "0"], "--iterations"),
        (["--jobs", "0"], "--jobs"),
        (["--players", "4,7"], "--players"),
        (["--players", "four"], "--players"),
        (["--epsilon", "1.5"], "--epsilon"),
        (["--bids-from", "{tmp}/none.npz"], "--bids-from"),
        (["--teacher-games", "0"], "--teacher-games"),
        (["--league-iterations", "-1"], "--league-iterations"),
        (["--round-sizes", "1,99"], "--round-sizes"),
    ],
)
def test_the_training_script_refuses_bad_arguments_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], says: str
) -> None:
    """Refused at once in one line, not a traceback after the training (a
    missing --out folder was found only when saving, up to half an hour later)."""
    pytest.importorskip("pettingzoo", reason="training needs the rl extra")
    from wizard_bots.learned import train

    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    if "--out" not in argv:  # never the package's own weights (the default), were it to train
        argv += ["--out", str(tmp_path / "w.npz")]
    with pytest.raises(SystemExit) as exit_info:
        train.main(["--iterations", "1", "--games", "2", "--jobs", "1", *argv])
    assert exit_info.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""  # no game was played
    assert says in err.strip().splitlines()[-1]


def test_the_training_script_saves_where_it_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """numpy adds .npz to a name without it; the script names the file it wrote."""
    pytest.importorskip("pettingzoo", reason="training needs the rl extra")
    from wizard_bots.learned import train

    out = tmp_path / "mine"
    argv = ["--iterations", "1", "--games", "1", "--jobs", "1", "--epochs", "1", *TINY_CARDS]
    assert train.main([*argv, "--out", str(out)]) == 0
    assert (tmp_path / "mine.npz").is_file()
    assert f"saved {tmp_path / 'mine.npz'} " in capsys.readouterr().out


def test_one_seed_gives_one_set_of_weights_whatever_the_jobs(tmp_path: Path) -> None:
    """--jobs 1 and --jobs 2 play the same games (a fixed number of seeded
    tasks), so they write the same weights (they differed: the self-play's
    games were split, and seeded, by the number of processes)."""
    pytest.importorskip("pettingzoo", reason="training needs the rl extra")
    from wizard_bots.learned import train

    argv = ["--iterations", "1", "--games", "3", "--epochs", "2", "--seed", "4", *TINY_CARDS]
    for jobs in ("1", "2"):
        assert train.main([*argv, "--jobs", jobs, "--out", str(tmp_path / f"j{jobs}")]) == 0
    one, two = np.load(tmp_path / "j1.npz"), np.load(tmp_path / "j2.npz")
    assert sorted(one.files) == sorted(two.files)
    weights = ["w1", "b1", "w2", "b2", "play_w1", "play_b1", "play_w2", "play_b2"]
    for name in weights:  # (the settings and times kept beside them differ)
        assert np.array_equal(one[name], two[name]), name


class _Recorder(Bot):
    """The heuristic bot, keeping every view it is asked to play a card on."""

    name = "recorder"

    def __init__(self) -> None:
        self.inner = HeuristicBot()
        self.views: list[SeatView] = []

    def bid(self, view: SeatView) -> int:
        return self.inner.bid(view)

    def play(self, view: SeatView) -> Card:
        self.views.append(view)
        return self.inner.play(view)

    def choose_trump(self, view: SeatView) -> Suit:
        return self.inner.choose_trump(view)


def _play_views(games: int = 3) -> list[SeatView]:
    """Card decisions with a choice, from heuristic games (3 to 6 players,
    Tricksy among them, whose Wizards name the trump)."""
    views: list[SeatView] = []
    for g in range(games):
        n = 3 + g % 4
        rec = _Recorder()
        rules = Rules(players=n, tricksy=g % 2 == 1)
        play_local([rec, *(HeuristicBot() for _ in range(n - 1))], rules, seed=40 + g)
        views += [v for v in rec.views if len(set(v.legal_cards)) > 1]
    return views


def test_the_learned_bot_plays_its_networks_card_not_the_heuristics(tmp_path: Path) -> None:
    """The card comes from the card network: the bot plays the network's
    best card, which differs from the heuristic's in some positions, and a
    network with other weights plays other cards."""
    views = _play_views()
    assert len(views) > 300
    bot = LearnedBot()
    heuristic = HeuristicBot()
    mine = [bot.play(v) for v in views]
    assert mine == [bot.player.best_card(v) for v in views]
    differ = sum(c != heuristic.play(v) for c, v in zip(mine, views, strict=True))
    assert 0.02 * len(views) < differ < 0.95 * len(views), differ
    with np.load(WEIGHTS) as data:
        arrays = dict(data)
    arrays["play_w2"] = -arrays["play_w2"]  # the network's worst card instead
    other = tmp_path / "other.npz"
    np.savez(other, **arrays)
    flipped = LearnedBot(weights=other)
    changed = sum(flipped.play(v) != c for c, v in zip(mine, views, strict=True))
    assert changed > 0.3 * len(views)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_any_card_network_plays_only_legal_cards(seed: int) -> None:
    """Masking: the network scores only the legal cards, whatever its weights."""
    model = PlayModel.initial(hidden=8, seed=seed)
    for view in _play_views(2):
        cards, x = card_features(view)
        assert cards == list(dict.fromkeys(view.legal_cards))
        assert x.shape == (len(cards), model.w1.shape[0])
        assert np.isfinite(x).all()
        assert model.best_card(view) in view.legal_cards


def test_bids_from_keeps_the_bids_and_learns_the_cards(tmp_path: Path) -> None:
    """``--bids-from``: the bidding weights are copied as they are, the card
    network is trained, and its training curve is kept in the file."""
    pytest.importorskip("pettingzoo", reason="training needs the rl extra")
    from wizard_bots.learned import train

    out = tmp_path / "w.npz"
    argv = ["--bids-from", str(WEIGHTS), "--jobs", "1", *TINY_CARDS, "--out", str(out)]
    assert train.main(argv) == 0
    with np.load(WEIGHTS) as old, np.load(out) as new:
        for key in ("w1", "b1", "w2", "b2"):
            assert np.array_equal(old[key], new[key]), key
        assert str(new["command"]).endswith(" ".join(argv))
        assert len(new["play_curve_agreement"]) == 2 + 1  # the first fit, then one league refit
        assert new["play_curve_stage"].tolist() == [0, 0, 1]
        assert len(new["play_league_margin"]) == 1
        assert float(new["cpu_seconds"]) > 0
    bot = LearnedBot(weights=out)
    assert play_local([bot, RandomBot(seed=1), RandomBot(seed=2)], seed=3).faults == []


def test_a_weights_file_without_card_play_is_refused_in_one_line(tmp_path: Path) -> None:
    old = tmp_path / "bids_only.npz"
    BidModel.initial(hidden=4).save(old)
    with pytest.raises(ValueError, match="no card-play weights"):
        LearnedBot(weights=old)


def test_weights_of_fewer_rule_features_load_and_play(tmp_path: Path) -> None:
    """Weights trained before a rule variant existed name fewer rule features:
    they load, read only those positions, and play every variant; weights
    naming a rule feature the encoder does not have are refused in one line."""
    full = BidModel.load(WEIGHTS)
    assert full.rules == RULE_FEATURES[:11]  # the committed file names none: the first eleven
    keep = [i for i, r in enumerate(full.rules) if r != "first_dealer_by_draw"]
    fixed = n_features(()) - 26  # the blocks read whole, then the rule features
    derived = range(fixed + len(full.rules), len(full.w1))
    rows = [*range(fixed), *(fixed + i for i in keep), *derived]
    older = BidModel(full.w1[rows], full.b1, full.w2, full.b2, tuple(full.rules[i] for i in keep))
    path = tmp_path / "older.npz"
    older.save(path, **PlayModel.load(WEIGHTS).arrays())
    loaded = BidModel.load(path)
    assert loaded.rules == older.rules and loaded.w1.shape[0] == n_features(older.rules)
    # where the dropped feature is 0, the older network is the same function
    game = Game(Rules(players=4), seed=11)
    game.deal()
    obs = encode(game.view(game.to_act))
    assert obs[block("rules").offset + RULE_FEATURES.index("first_dealer_by_draw")] == 0
    assert np.allclose(loaded.q(obs), full.q(obs), atol=1e-5)
    for name in ("first_dealer_by_draw", "hidden_bids"):
        rules = EVERY_OPTION[name]
        bots = [LearnedBot(weights=path), *(HeuristicBot() for _ in range(rules.players - 1))]
        assert play_local(bots, rules, seed=7).faults == []
    with np.load(path) as data:
        arrays = dict(data)
    arrays["rule_features"] = np.array([*older.rules, "a_variant_not_made_yet"])
    np.savez(tmp_path / "newer.npz", **arrays)
    with pytest.raises(ValueError, match="rule features a_variant_not_made_yet"):
        BidModel.load(tmp_path / "newer.npz")


def test_the_committed_weights_keep_their_training_curve() -> None:
    """docs/strength.md shows the curve from the file, with its command."""
    with np.load(WEIGHTS) as data:
        agreement = data["play_curve_agreement"]
        regret = data["play_curve_regret"]
        assert len(agreement) == len(regret) == len(data["play_curve_stage"]) >= 10
        assert agreement[-1] > agreement[0]
        assert regret[-1] < regret[0]
        assert "--bids-from" in str(data["command"])
        command = str(data["command"])
    for doc in (WEIGHTS.with_name("train.py"), ROOT / "docs" / "strength.md"):
        text = re.sub(r"\s*\\\\?\n\s*", " ", doc.read_text(encoding="utf-8"))
        assert command in text, doc


@pytest.mark.parametrize("name", list(EVERY_OPTION))
def test_the_learned_bot_plays_every_rule_variant_without_a_fault(name: str) -> None:
    """The card features are computed from any view: hidden bids, a blind
    first round, Tricksy's changing trump, suited Wizards, short games."""
    rules = EVERY_OPTION[name]
    bots = [LearnedBot(), *(HeuristicBot() for _ in range(rules.players - 1))]
    result = play_local(bots, rules, seed=7)
    assert result.faults == []

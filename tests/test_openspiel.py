"""Wizard as an OpenSpiel game: OpenSpiel's own random-simulation and
serialization tests in every rule variant, the observation (the course kit's
encoder, never a hidden card, no information state), and OpenSpiel's Python
ISMCTS at the table through the SDK, resampling from the seat's view alone."""

from __future__ import annotations

import random
import threading
from dataclasses import replace

import numpy as np
import pytest

pytest.importorskip("pyspiel", reason="the open_spiel extra is not installed")

import pyspiel

from wizard_arena.client import RunResult, run_bot
from wizard_arena.local import play_local
from wizard_arena.rl.encoding import OBS_SIZE, block, encode
from wizard_arena.rl.openspiel import (
    PARAMETERS,
    SHORT_NAME,
    WizardGame,
    parameters_of,
    rules_of,
    state_at,
    view_text,
)
from wizard_arena.rules import Game, Phase, Rules
from wizard_bots.heuristic import HeuristicBot
from wizard_bots.random_bot import RandomBot
from wizard_bots.sampling import consistency_problem
from wizard_bots.spiel import SpielISMCTSBot, spiel_game

from .conftest import ROOT
from .games import play_random, reshuffle_hidden
from .variants import EVERY_OPTION as VARIANTS


def _short(rules: Rules) -> Rules:
    """The variant in a short game (Maximus deals every card: it stays whole)."""
    if rules.maximus:
        return rules
    first = 1 if rules.blind_first_round else 2
    return replace(rules, hand_sizes=(first, 60 // rules.players))


@pytest.mark.parametrize("name", list(VARIANTS))
def test_openspiels_random_simulation_and_serialization_tests_pass(name: str) -> None:
    rules = _short(VARIANTS[name])
    game = pyspiel.load_game(SHORT_NAME, parameters_of(rules))
    assert isinstance(game, WizardGame) and game.rules == rules
    assert rules_of(game.get_parameters()) == rules
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


def test_the_standard_game_by_name_whole() -> None:
    game = pyspiel.load_game(SHORT_NAME)
    assert game.num_players() == 4 and game.num_distinct_actions() == 89
    assert (game.min_utility(), game.max_utility()) == (-1200.0, 1500.0)
    pyspiel.random_sim_test(game, num_sims=1, serialize=False, verbose=False)
    again = pyspiel.load_game(str(game))  # the game string names every parameter
    assert again.rules == game.rules and set(game.get_parameters()) == set(PARAMETERS)


def _dealt(game: WizardGame, seed: int) -> pyspiel.State:
    state = game.new_initial_state()
    rng = random.Random(seed)
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(rng.choices(actions, probs)[0])
        elif rng.random() < 0.05:
            return state
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    return state


def test_the_observation_is_the_encoders_and_hides_the_hidden_cards() -> None:
    game = pyspiel.load_game(SHORT_NAME, {"players": 4, "round_sizes": "3;7;15"})
    checked = changed = 0
    for seed in range(12):
        state = _dealt(game, seed)
        if state.is_terminal():
            continue
        player = state.current_player()
        view = state.view(player)
        obs = np.array(state.observation_tensor(player), np.float32)
        assert obs.shape == (OBS_SIZE,) and np.array_equal(obs, encode(view))
        assert state.observation_string(player) == view_text(view)
        # the same position with the other seats' cards dealt anew among them
        other = state_at(game, reshuffle_hidden(state.game, player, random.Random(seed)))
        assert np.array_equal(np.array(other.observation_tensor(player), np.float32), obs)
        assert other.observation_string(player) == state.observation_string(player)
        changed += str(other) != str(state)  # (the hidden hands did change)
        checked += 1
    assert checked >= 8 and changed >= 5
    observation = pyspiel.load_game(SHORT_NAME).make_py_observer()
    assert observation.dict["hand"].shape == block("hand").shape


def test_no_information_state_is_offered() -> None:
    """The encoder summarises the current view: it has no perfect recall."""
    game = pyspiel.load_game(SHORT_NAME)
    kind = game.get_type()
    assert kind.provides_observation_tensor and kind.provides_observation_string
    assert not kind.provides_information_state_tensor
    assert not kind.provides_information_state_string
    with pytest.raises(ValueError, match="without perfect recall"):
        game.make_py_observer(pyspiel.IIGObservationType(perfect_recall=True))


def test_a_state_at_a_position_plays_on_and_ends_with_its_round() -> None:
    rules = Rules(players=3, hand_sizes=(2, 3))
    core = Game(rules, seed=5)
    core.deal()
    play_random(core, random.Random(1), 2)
    state = state_at(spiel_game(rules), core, last_round=1)
    assert state.history() == [] and state.returns() == [0.0, 0.0, 0.0]
    rng = random.Random(2)
    while not state.is_terminal():
        state.apply_action(rng.choice(state.legal_actions()))
    assert state.game.round == 1 and state.game.phase is Phase.DEAL
    assert state.returns() == [float(p) for p in state.game.results[-1].points]
    assert core.phase is Phase.BID  # the position itself is untouched


# -- OpenSpiel's ISMCTS at the table ---------------------------------------------------------


def test_the_resampler_reads_the_view_alone() -> None:
    """Two states a seat cannot tell apart (only the other seats' hidden cards
    differ) resample alike from the same seed, into deals that fit the view."""
    rules = Rules(players=4, hand_sizes=(6,))
    game = spiel_game(rules)
    core = Game(rules, seed=3)
    core.deal()
    play_random(core, random.Random(3), 9)  # the bids and a few cards
    seat = core.acting[0]
    twin = reshuffle_hidden(core, seat, random.Random(4))
    assert twin.hands != core.hands
    resampled = []
    for position in (core, twin):
        bot = SpielISMCTSBot(seed=7)
        state = state_at(game, position, last_round=1)
        deals = bot._deals(state.view(seat), 4)
        states = [bot.resample(state, seat, deals=deals, game=game) for _ in range(6)]
        for s in states:  # ISMCTS's own check: the seat cannot tell them apart
            assert s.observation_string(seat) == state.observation_string(seat)
        resampled.append([str(s) for s in states])
    assert resampled[0] == resampled[1]
    assert len(set(resampled[0])) > 1  # (hidden hands do vary between samples)
    view = core.view(seat)
    for deal in SpielISMCTSBot(seed=1)._deals(view, 20):
        assert consistency_problem(view, deal) is None


def test_the_bot_decides_alike_whatever_the_hidden_cards() -> None:
    rules = Rules(players=3, hand_sizes=(5,))
    for seed in range(3):
        core = Game(rules, seed=seed)
        core.deal()
        play_random(core, random.Random(seed), 4 + seed)
        seat = core.acting[0]
        twin = reshuffle_hidden(core, seat, random.Random(seed + 10))
        a, b = SpielISMCTSBot(simulations=12, seed=seed), SpielISMCTSBot(simulations=12, seed=seed)
        assert a._search(core.view(seat)) == b._search(twin.view(seat))
        assert a.stats["resampled"] == a.stats["simulations"] == 12  # every simulation resampled


def test_the_bot_keeps_to_the_referees_clock() -> None:
    """OpenSpiel's ISMCTS runs all its simulations whatever they take; the bot
    stops them at its share of ``view.time_left`` (a clock that moves 0.1 s a
    look here: about ten of the 200 asked for in 2 s), and runs them all
    without a deadline."""
    rules = Rules(players=3, hand_sizes=(5,))
    core = Game(rules, seed=1)
    core.deal()
    play_random(core, random.Random(1), 4)
    view = core.view(core.acting[0])
    timed = SpielISMCTSBot(simulations=200, seed=1)
    ticks = iter(range(10**6))
    timed.clock = lambda: next(ticks) * 0.1
    timed._search(replace(view, time_left=2.0))
    assert 1 <= timed.stats["simulations"] <= 12, timed.stats
    free = SpielISMCTSBot(simulations=15, seed=1)
    free.clock = lambda: next(ticks) * 0.1
    free._search(replace(view, time_left=None))
    assert free.stats["simulations"] == 15


def test_openspiels_plain_mcts_refuses_the_game_as_the_course_says() -> None:
    """docs/course.md: MCTSBot wants terminal rewards; Wizard scores each round."""
    from open_spiel.python.algorithms import mcts

    game = spiel_game(Rules(players=3, hand_sizes=(1, 2)))
    evaluator = mcts.RandomRolloutEvaluator(1, np.random.RandomState(0))
    with pytest.raises(ValueError, match="Game must have terminal rewards"):
        mcts.MCTSBot(game, 2.0, 10, evaluator)
    course = (ROOT / "docs" / "course.md").read_text(encoding="utf-8")
    assert "must have terminal rewards" in " ".join(course.split())


def test_the_bot_plays_every_variant_without_faults() -> None:
    for name in ("hidden_bids", "reveal_bids_after_tricks", "tricksy", "blind_first_round"):
        rules = replace(_short(VARIANTS[name]), hand_sizes=(1, 3))
        bots = [SpielISMCTSBot(simulations=6, seed=1)]
        bots += [HeuristicBot() for _ in range(rules.players - 1)]
        assert play_local(bots, rules, seed=2).faults == [], name


@pytest.mark.e2e
def test_the_openspiel_bot_plays_at_the_arena_through_the_sdk(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve(rules=Rules(players=3, hand_sizes=(1, 2)))
    bots = [SpielISMCTSBot(simulations=6), RandomBot(), RandomBot()]
    results: list[RunResult | BaseException] = [RuntimeError("not finished")] * 3

    def go(i: int) -> None:
        try:
            results[i] = run_bot(bots[i], server.address, name=f"b{i}", games=1)
        except BaseException as e:
            results[i] = e

    threads = [threading.Thread(target=go, args=(i,), daemon=True) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    (record,) = server.wait_records(1)
    assert not [r for r in results if isinstance(r, BaseException)], results
    assert record.status == "finished" and not any(record.faults), record.faults
    assert bots[0].stats["searches"] > 0


def test_the_courses_openspiel_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/course.md's OpenSpiel example: the game loaded by name with
    variants, OpenSpiel's own checks, the sizes it prints."""
    import re

    course = (ROOT / "docs" / "course.md").read_text(encoding="utf-8")
    code = next(b for b in re.findall(r"```python\n(.*?)```", course, re.S) if "python_wizard" in b)
    exec(compile(code, "docs/course.md", "exec"), {})
    assert capsys.readouterr().out.split() == ["89", str(OBS_SIZE)]

"""The course kit's environments: the encoder (fixed layout, built from a seat's
view alone, never hidden information), the PettingZoo AEC environment under
PettingZoo's api_test in every rule variant, and the Gymnasium environment
under Gymnasium's check_env."""

from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="the rl extra is not installed")

from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

from wizard_arena.bot import Bot
from wizard_arena.rl import encoding, wizard_v0
from wizard_arena.rl.encoding import (
    ACTION_SIZE,
    CARD_SLOTS,
    OBS_HIGH,
    OBS_LOW,
    OBS_SIZE,
    action_id,
    action_mask,
    action_of,
    block,
    encode,
)
from wizard_arena.rl.single import WizardGymEnv
from wizard_arena.rl.table import IllegalActionError
from wizard_arena.rules import (
    ALL_CARDS,
    Bid,
    BidRestriction,
    ChooseTrump,
    Game,
    Play,
    Rules,
    Suit,
)
from wizard_arena.rules.laws import FLAG_OPTIONS
from wizard_bots.heuristic import HeuristicBot
from wizard_bots.random_bot import RandomBot

from .conftest import ROOT
from .games import play_random, reshuffle_hidden
from .support import scaled
from .variants import EVERY_OPTION

# -- the encoder -----------------------------------------------------------------------------


def test_action_ids_are_one_to_one() -> None:
    actions = [Bid(b) for b in range(21)] + [ChooseTrump(s) for s in Suit]
    actions += [Play(c) for c in ALL_CARDS]
    ids = [action_id(a) for a in actions]
    assert len(set(ids)) == len(ids) and max(ids) < ACTION_SIZE
    assert all(action_of(i) == a for i, a in zip(ids, actions, strict=True))
    # the card slots keep the cards' indices; slots 58..63 are reserved (Wizards with identities)
    assert [action_id(Play(c)) - encoding.CARD_BASE for c in ALL_CARDS] == list(range(58))
    for slot in range(58, CARD_SLOTS):
        with pytest.raises(ValueError, match="reserved"):
            action_of(encoding.CARD_BASE + slot)


def test_the_layout_is_contiguous_and_documented() -> None:
    end = 0
    for b in encoding.BLOCKS:
        assert b.offset == end
        end = b.end
    assert end == OBS_SIZE == len(OBS_LOW) == len(OBS_HIGH)
    course = (ROOT / "docs" / "course.md").read_text()
    assert encoding.layout_table() in course, "docs/course.md: paste layout_table() again"


def test_every_rule_variant_has_a_rule_feature_and_room_is_left() -> None:
    """A new bid restriction or rule flag needs its name appended to
    ``encoding.RULE_FEATURES`` (never inserted: positions keep their meaning);
    the ``rules`` block keeps its size while reserved positions are left."""
    wanted = {f"restriction_{r.value}" for r in BidRestriction} | set(FLAG_OPTIONS)
    missing = wanted - set(encoding.RULE_FEATURES)
    assert not missing, f"append {sorted(missing)} to wizard_arena.rl.encoding.RULE_FEATURES"
    assert len(set(encoding.RULE_FEATURES)) == len(encoding.RULE_FEATURES)
    assert block("rules").size == encoding.RULE_SLOTS > len(encoding.RULE_FEATURES)


@pytest.mark.parametrize("name", list(EVERY_OPTION))
def test_each_rule_feature_is_at_its_named_position(name: str) -> None:
    """The ``rules`` block holds each variant's value at the position of its
    name in ``RULE_FEATURES``, and zeros in the reserved positions."""
    rules = EVERY_OPTION[name]
    game = Game(rules, seed=3)
    game.deal()
    got = encode(game.view(0))[block("rules").offset : block("rules").end]
    want = np.zeros(encoding.RULE_SLOTS, np.float32)
    for i, feature in enumerate(encoding.RULE_FEATURES):
        if feature.startswith("restriction_"):
            want[i] = feature == f"restriction_{rules.bid_restriction.value}"
        else:
            want[i] = getattr(rules, feature)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("name", list(EVERY_OPTION))
def test_the_observation_never_depends_on_hidden_cards(name: str) -> None:
    rules = EVERY_OPTION[name]
    rng = random.Random(name)
    changed = 0
    for trial in range(30):
        game = Game(rules, seed=trial)
        play_random(game, rng, rng.randrange(1, 200))
        if game.is_over or game.blind:
            continue
        seat = rng.randrange(game.players)
        other = reshuffle_hidden(game, seat, rng)
        a, b = game.view(seat), other.view(seat)
        assert np.array_equal(encode(a), encode(b)), (name, trial)
        assert np.array_equal(action_mask(a), action_mask(b))
        # the check can fail: another seat's own observation did change
        neighbour = (seat + 1) % game.players
        changed += not np.array_equal(encode(game.view(neighbour)), encode(other.view(neighbour)))
    assert changed > 0


def test_the_observation_shows_what_the_seat_sees() -> None:
    game = Game(Rules(players=4), seed=5)
    play_random(game, random.Random(1), 40)  # some way into round 3 or 4
    view = game.view(game.to_act)  # type: ignore[arg-type]
    obs = encode(view)
    hand = block("hand")
    assert obs[hand.offset : hand.end].sum() == len(view.hand)
    for c in view.hand:
        assert obs[hand.offset + c.index] >= 1
    unseen = block("unseen")
    assert obs[unseen.offset : unseen.end].sum() == len(view.unseen_cards())
    seats = block("seats")
    rows = obs[seats.offset : seats.end].reshape(seats.shape)
    assert rows[:4, 0].tolist() == [1, 1, 1, 1] and rows[4:, 0].tolist() == [0, 0]
    assert rows[0, 8] == pytest.approx(view.totals[view.seat] / 100)
    assert obs.min() >= OBS_LOW.min() and np.all(obs >= OBS_LOW) and np.all(obs <= OBS_HIGH)


# -- the PettingZoo environment --------------------------------------------------------------


@pytest.mark.parametrize("name", list(EVERY_OPTION))
def test_aec_env_passes_pettingzoo_api_test(name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a Dict observation space, as PettingZoo's card games
        api_test(wizard_v0.env(rules=EVERY_OPTION[name]), num_cycles=400)


def test_aec_env_is_seeded() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seed_test(lambda: wizard_v0.env(players=3), num_cycles=200)


def _run_aec_game(env: object, rng: random.Random) -> dict[str, float]:
    totals: dict[str, float] = {}
    for agent in env.agent_iter():  # type: ignore[attr-defined]
        obs, reward, terminated, truncated, _ = env.last()  # type: ignore[attr-defined]
        totals[agent] = totals.get(agent, 0.0) + reward
        space = env.observation_space(agent)  # type: ignore[attr-defined]
        assert space.contains(obs)
        legal = np.flatnonzero(obs["action_mask"])
        action = None if terminated or truncated else int(rng.choice(legal))
        env.step(action)  # type: ignore[attr-defined]
    return totals


@pytest.mark.parametrize("name", list(EVERY_OPTION))
def test_aec_rewards_add_up_to_the_final_totals(name: str) -> None:
    env = wizard_v0.env(rules=EVERY_OPTION[name])
    env.reset(seed=7)
    rewards = _run_aec_game(env, random.Random(7))
    game = env.unwrapped.table.game
    assert game.is_over
    assert [rewards[f"player_{s}"] for s in range(game.players)] == list(game.totals)


def test_aec_rank_reward_and_illegal_actions() -> None:
    env = wizard_v0.env(players=4, reward="rank")
    env.reset(seed=2)
    rewards = _run_aec_game(env, random.Random(2))
    ranks = env.unwrapped.table.game.ranks
    assert [rewards[f"player_{s}"] for s in range(4)] == [1 - 2 * (r - 1) / 3 for r in ranks]
    strict = wizard_v0.env(players=4, on_illegal="raise")
    strict.reset(seed=2)
    with pytest.raises(IllegalActionError, match="may not take action 88"):
        strict.step(88)
    lenient = wizard_v0.env(players=4)
    lenient.reset(seed=2)
    seat = int(lenient.agent_selection.split("_")[1])
    lenient.step(88)  # a reserved card slot: the default action (bid 0) is played
    assert lenient.unwrapped.table.faults[seat] == 1
    assert lenient.unwrapped.table.game.bids[seat] == 0


class _Careless(wizard_v0.WizardEnv):
    """The environment with a mask allowing every action to the agent to act,
    so that api_test's masked sampling plays illegal actions most of the time."""

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        obs = super().observe(agent)
        if obs["action_mask"].any():
            obs["action_mask"] = np.ones_like(obs["action_mask"])
        return obs


@pytest.mark.parametrize("mode", ["default", "penalty", "terminate"])
@pytest.mark.parametrize("name", ["base", "hidden_bids", "tricksy"])
def test_api_test_passes_with_illegal_actions_in_every_mode(mode: str, name: str) -> None:
    from pettingzoo.utils import wrappers

    rules = EVERY_OPTION[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(wizard_v0.env(rules=rules, on_illegal=mode), num_cycles=100)
        careless = _Careless(rules=rules, on_illegal=mode)
        api_test(wrappers.OrderEnforcingWrapper(careless), num_cycles=100)
    table = careless.table
    assert table is not None
    # illegal actions were played: replaced (counted), or the game stopped at one
    assert sum(table.faults) > 0 if mode != "terminate" else not table.over


def test_an_illegal_action_is_flagged_and_penalised_or_ends_the_game() -> None:
    flagged = wizard_v0.env(players=4)
    flagged.reset(seed=2)
    agent = flagged.agent_selection
    flagged.step(88)  # a reserved card slot: the default action (bid 0), no penalty
    assert flagged.infos[agent]["illegal_action"] and flagged.rewards[agent] == 0

    penalised = wizard_v0.env(players=4, on_illegal="penalty")
    penalised.reset(seed=2)
    agent = penalised.agent_selection
    penalised.step(88)
    assert penalised.rewards[agent] == -10.0 and penalised.infos[agent]["illegal_action"]
    assert penalised.unwrapped.table.game.bids[int(agent[-1])] == 0  # played for it
    while penalised.agent_selection != agent:  # round 1: the others bid, then play
        legal = np.flatnonzero(penalised.observe(penalised.agent_selection)["action_mask"])
        penalised.step(int(legal[0]))
    penalised.step(int(np.flatnonzero(penalised.observe(agent)["action_mask"])[0]))
    assert not penalised.infos[agent]["illegal_action"]  # legal again

    stopped = wizard_v0.env(players=4, reward="rank", on_illegal="terminate", illegal_reward=-3)
    stopped.reset(seed=2)
    agent = stopped.agent_selection
    stopped.step(88)
    obs, reward, terminated, _, info = stopped.last()
    assert stopped.agent_selection == agent and reward == -3.0 and terminated
    assert info["illegal_action"] and not obs["action_mask"].any()
    rewards = {}
    for a in stopped.agent_iter():
        rewards[a] = stopped.last()[1]
        stopped.step(None)
    assert rewards == {f"player_{s}": -3.0 if f"player_{s}" == agent else 0.0 for s in range(4)}
    assert not stopped.unwrapped.table.over  # ended at the illegal action
    with pytest.raises(ValueError, match="on_illegal must be one of"):
        wizard_v0.env(on_illegal="ignore")  # type: ignore[arg-type]


# -- the Gymnasium environment ---------------------------------------------------------------


class _Raises(Bot):
    name = "raises"

    def bid(self, view: object) -> int:
        raise RuntimeError("no")

    def play(self, view: object) -> object:
        raise RuntimeError("no")


def test_gym_env_passes_check_env() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "no spec": not registered with gymnasium.make
        check_env(WizardGymEnv([RandomBot, HeuristicBot, HeuristicBot]))
        check_env(WizardGymEnv([HeuristicBot, RandomBot], rules=EVERY_OPTION["tricksy"], seat=None))


@pytest.mark.parametrize("name", ["base", "hidden_bids", "blind_first_round", "tricksy_suited"])
def test_gym_rewards_are_the_learners_points(name: str) -> None:
    rules = EVERY_OPTION[name]
    opponents = [HeuristicBot] * (rules.players - 2) + [_Raises]
    env = WizardGymEnv(opponents, rules=rules, seat=None)
    rng = np.random.default_rng(3)
    obs, info = env.reset(seed=3)
    total, done = 0.0, False
    while not done:
        assert np.array_equal(obs["action_mask"], env.action_masks())
        obs, reward, done, _, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        total += reward
    assert total == info["totals"][info["seat"]]
    assert info["opponent_faults"] > 0 and info["illegal_actions"] == 0
    # the same seed, the same game
    again, _ = env.reset(seed=3)
    first, _ = env.reset(seed=3)
    assert np.array_equal(again["observation"], first["observation"])


def test_the_gym_learner_is_flagged_penalised_or_stopped_at_an_illegal_action() -> None:
    rules = Rules(players=3, hand_sizes=(1, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for mode in ("penalty", "terminate"):
            check_env(WizardGymEnv(rules=rules, on_illegal=mode))
    penalised = WizardGymEnv(rules=rules, on_illegal="penalty", illegal_reward=-7)
    obs, _ = penalised.reset(seed=1)
    _, reward, done, _, info = penalised.step(88)
    assert reward == -7.0 and info["illegal_action"] and info["illegal_actions"] == 1
    assert not done  # the default action was played, the game goes on
    _, _, _, _, info = penalised.step(int(np.flatnonzero(penalised.action_masks())[0]))
    assert not info["illegal_action"] and info["illegal_actions"] == 1

    stopped = WizardGymEnv(rules=rules, on_illegal="terminate")
    stopped.reset(seed=1)
    obs, reward, done, _, info = stopped.step(88)
    assert done and reward == -10.0 and info["illegal_action"]
    assert obs["action_mask"].all()  # the next-step autoreset's mask
    assert not stopped.table.over  # type: ignore[union-attr]
    with pytest.raises(RuntimeError, match="reset"):
        stopped.step(0)
    stopped.reset(seed=1)
    _, _, done, _, info = stopped.step(int(np.flatnonzero(stopped.action_masks())[0]))
    assert not info["illegal_action"] and info["illegal_actions"] == 0


# -- the course --------------------------------------------------------------------------------


def test_the_courses_agent_plays_at_the_table() -> None:
    """docs/course.md's arena entry: a policy over the encoder's observation."""
    import re

    from wizard_arena.local import play_local

    course = (ROOT / "docs" / "course.md").read_text()
    code = next(b for b in re.findall(r"```python\n(.*?)```", course, re.S) if "MyAgent" in b)
    namespace: dict[str, object] = {}
    exec(compile(code, "docs/course.md", "exec"), namespace)
    agent = namespace["MyAgent"]
    for rules in (Rules(players=4), EVERY_OPTION["tricksy"], EVERY_OPTION["hidden_bids"]):
        bots = [agent()] + [HeuristicBot() for _ in range(rules.players - 1)]  # type: ignore[operator]
        assert play_local(bots, rules, seed=1).faults == []


def _course_block(marker: str) -> str:
    import re

    course = (ROOT / "docs" / "course.md").read_text(encoding="utf-8")
    return next(b for b in re.findall(r"```python\n(.*?)```", course, re.S) if marker in b)


def test_the_courses_searching_opponent_replays_from_one_seed() -> None:
    """docs/course.md's Monte Carlo opponent for the Gymnasium environment:
    the same seed and actions give the same 30 steps (a time-budgeted search
    would not: how far it searches depends on the machine's load)."""
    namespace: dict[str, object] = {"WizardGymEnv": WizardGymEnv, "HeuristicBot": HeuristicBot}
    exec(compile(_course_block("samples=4"), "docs/course.md", "exec"), namespace)
    env = namespace["env"]
    assert isinstance(env, WizardGymEnv)

    def steps() -> list[tuple[int, float, bytes]]:
        obs, _ = env.reset(seed=7)
        rng = np.random.default_rng(0)
        out = []
        for _ in range(30):
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            obs, reward, done, _, _ = env.step(action)
            out.append((action, float(reward), obs["observation"].tobytes()))
            if done:
                obs, _ = env.reset(seed=8)
        return out

    assert steps() == steps()


def test_the_courses_serve_and_bot_lines_say_how_they_end() -> None:
    """A reader who runs them knows when they stop: a bot leaves after
    ``--games N`` or says it plays on; the referee says it runs until stopped."""
    import re

    course = (ROOT / "docs" / "course.md").read_text(encoding="utf-8")
    lines = [
        line
        for block in re.findall(r"```sh\n(.*?)```", course, re.S)
        for line in block.splitlines()
        if re.match(r"\s*(for .*; do )?wizard-arena (serve|bot) ", line)
    ]
    assert len(lines) >= 3, lines
    for line in lines:
        comment = line.partition("#")[2]
        assert "--games" in line or "until" in comment or "stop" in comment, line


@pytest.mark.parametrize(
    ("blocked", "module"),
    [("pettingzoo", "wizard_arena.rl.wizard_v0"), ("gymnasium", "wizard_arena.rl.single")],
)
def test_a_missing_extra_fails_with_one_line_naming_it(blocked: str, module: str) -> None:
    import subprocess
    import sys

    code = (
        f"import sys; sys.modules[{blocked!r}] = None\n"
        "import wizard_arena.rl.encoding  # numpy only: the learned bot's part imports\n"
        f"import {module}\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=scaled(60)
    )
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last == (
        "wizard_arena.extras.MissingExtraError: wizard_arena.rl (the course kit's environments "
        f"and encoder, the learned bot) needs the [rl] extra (missing: {blocked}): "
        "pip install 'wizard-arena[rl]'"
    )


def test_without_numpy_the_encoder_and_the_learned_bot_name_the_rl_extra() -> None:
    """numpy is no base dependency (a bot author's plain install lacks it): the
    encoder, and so the learned bot, say which extra brings it, in one line
    from the bot verbs too (it was "No module named 'numpy'")."""
    import subprocess
    import sys

    line = (
        "wizard_arena.rl (the course kit's environments and encoder, the learned bot) needs "
        "the [rl] extra (missing: numpy): pip install 'wizard-arena[rl]'"
    )
    for module in ("wizard_arena.rl.encoding", "wizard_arena.rl.wizard_v0", "wizard_bots.learned"):
        code = f"import sys; sys.modules['numpy'] = None\nimport {module}\n"
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=scaled(60)
        )
        assert proc.returncode != 0, module
        last = proc.stderr.strip().splitlines()[-1]
        assert last == f"wizard_arena.extras.MissingExtraError: {line}", module
    code = (
        "import sys; sys.modules['numpy'] = None\n"
        "from wizard_arena.cli import main\n"
        "raise SystemExit(main(['play', 'wizard_bots.learned:LearnedBot']))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=scaled(60)
    )
    assert proc.returncode != 0
    (err,) = proc.stderr.strip().splitlines()
    assert line in err, err


# -- the ecosystem's conventions ---------------------------------------------------------------


def test_human_rendering_prints_and_returns_none(capsys: pytest.CaptureFixture[str]) -> None:
    """PettingZoo's rule (its render_test): "human" prints, "ansi" returns text."""
    from pettingzoo.test import render_test

    from wizard_arena.rl import wizard_v0

    render_test(lambda render_mode=None: wizard_v0.env(players=3, render_mode=render_mode))
    e = wizard_v0.env(players=3, render_mode="human")
    e.reset(seed=2)
    capsys.readouterr()
    assert e.render() is None and "to act" in capsys.readouterr().out
    assert wizard_v0.raw_env(players=3).metadata["render_fps"] > 0


def test_the_gymnasium_environment_is_registered() -> None:
    import gymnasium
    from gymnasium.utils.env_checker import check_env

    import wizard_arena.rl  # noqa: F401  (registers it)
    from wizard_arena.rl.single import ENV_ID

    env = gymnasium.make(ENV_ID, rules=Rules(players=3, hand_sizes=(1, 2)))
    assert env.spec is not None and env.spec.id == "WizardArena/Wizard-v0"
    check_env(env.unwrapped)
    assert env.unwrapped.metadata["render_fps"] > 0
    obs, info = gymnasium.make(ENV_ID).reset(seed=3)  # default: random opponents
    assert obs["action_mask"].any() and info["seat"] == 0
    three = gymnasium.make(ENV_ID, players=3)  # the table's size alone
    assert three.unwrapped.rules == Rules(players=3) and len(three.unwrapped.opponents) == 2
    with pytest.raises(ValueError, match="players=5 but the rules are for 3"):
        gymnasium.make(ENV_ID, players=5, rules=Rules(players=3))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vector_environments_sample_masked_actions_across_game_ends(mode: str) -> None:
    """Gymnasium 1.x's vector environments reset a finished game at the next
    step (its action ignored): the last observation's mask allows every
    action, so masked sampling never meets an empty mask (it did: 'a'
    cannot be empty)."""
    import gymnasium

    import wizard_arena.rl  # noqa: F401

    vec = gymnasium.make_vec(
        "WizardArena/Wizard-v0",
        num_envs=2,
        vectorization_mode=mode,
        rules=Rules(players=3, hand_sizes=(1, 2)),
    )
    try:
        obs, _ = vec.reset(seed=1)
        rng = np.random.default_rng(0)
        ends = 0
        for _ in range(40):
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in obs["action_mask"]])
            obs, _, terminated, _, _ = vec.step(actions)
            ends += int(terminated.sum())
        assert ends >= 4  # several games ended, and the next ones went on
    finally:
        vec.close()

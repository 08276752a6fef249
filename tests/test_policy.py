"""One RefereePolicy, validated once, made the same way by serve, tournaments
and check; one way from settings to Rules."""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

import pytest

from wizard_arena.cli.rules_options import add_rules_arguments, rules_from_mapping
from wizard_arena.rules import BidRestriction, Rules
from wizard_referee.ladder import cmd_ladder
from wizard_referee.ladder.season import Season
from wizard_referee.referee import cmd_serve
from wizard_referee.referee.arena import ArenaConfig
from wizard_referee.referee.faults import FaultPolicy
from wizard_referee.referee.policy import (
    INTERNAL,
    PROCESS,
    SEASON,
    SERVE,
    SETTINGS,
    PolicyError,
    RefereePolicy,
    names,
)
from wizard_referee.tournament.config_keys import TOURNAMENT_KEYS
from wizard_referee.tournament.runner import TournamentConfig, TournamentError

from .cli_here import cli_here

ENTRANTS = [{"name": n, "command": ["x"]} for n in "abc"]


def tournament(**section: Any) -> TournamentConfig:
    data = {"tournament": {"players": 3, **section}, "entrant": ENTRANTS}
    return TournamentConfig.from_dict(data)


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("move_time", 0, "must be positive"),
        ("move_time", math.inf, "must be a finite number of seconds, not inf"),
        ("move_time", "1", "must be a number of seconds, not '1'"),
        ("time_bank", -0.5, "must not be negative"),
        ("time_bank", math.nan, "must be a finite number of seconds, not nan"),
        ("fault_policy", "expel", "must be one of default, forfeit_round, remove, not 'expel'"),
        ("max_faults", 0, "must be at least 1"),
        ("max_faults", 2.0, "must be a whole number, not 2.0"),
        ("max_faults", True, "must be a whole number, not True"),
        ("reconnect_window", -1, "must not be negative"),
        ("max_consecutive_timeouts", -1, "must not be negative"),
        ("hello_timeout", 0, "must be positive"),
        ("inbound_limit", 0, "must be at least 1"),
        ("outbound_limit", 0, "must be at least 1"),
        ("max_message_bytes", 0, "must be positive"),
        ("max_connections", -1, "must not be negative"),
        ("max_sessions_per_token", -1, "must not be negative"),
        ("reseat_delay", -0.1, "must not be negative"),
    ],
)
def test_each_setting_is_checked_and_named(field: str, value: Any, problem: str) -> None:
    with pytest.raises(PolicyError) as err:
        RefereePolicy(**{field: value})
    assert (err.value.field, err.value.problem) == (field, problem)
    assert str(err.value) == f"{field} {problem}"
    assert err.value.flag() == f"--{field.replace('_', '-')} {problem}"
    # the same check, whoever makes the policy
    with pytest.raises(ValueError, match=f"^{field} "):
        ArenaConfig.build(**{field: value})
    if field in TournamentConfig.__dataclass_fields__:
        with pytest.raises(TournamentError, match=f"^{field} "):
            tournament(**{field: value})


def test_the_least_values_are_allowed() -> None:
    policy = RefereePolicy(
        move_time=0.001,
        time_bank=0,
        max_faults=1,
        reconnect_window=0,
        max_consecutive_timeouts=0,
        inbound_limit=1,
        outbound_limit=1,
        max_message_bytes=1,
        reseat_delay=0,
        fault_policy=FaultPolicy.REMOVE,
    )
    assert policy.fault_policy is FaultPolicy.REMOVE
    assert RefereePolicy(fault_policy="forfeit_round").fault_policy is FaultPolicy.FORFEIT_ROUND


def test_from_mapping_takes_the_policy_keys_only() -> None:
    got = RefereePolicy.from_mapping({"move_time": 2, "players": 5, "time_bank": None, "x": 1})
    assert got == RefereePolicy(move_time=2)


def test_serve_tournaments_and_configs_make_the_same_policy() -> None:
    parser = argparse.ArgumentParser()
    cmd_serve.add_arguments(parser)
    argv = ["--move-time", "2.5", "--time-bank", "4"]
    argv += ["--fault-policy", "remove", "--max-faults", "2"]
    from_flags = RefereePolicy.from_mapping(vars(parser.parse_args(argv)))
    want = RefereePolicy(move_time=2.5, time_bank=4, fault_policy="remove", max_faults=2)
    assert from_flags == want
    from_toml = tournament(move_time=2.5, time_bank=4, fault_policy="remove", max_faults=2).policy
    assert from_toml == want
    config = ArenaConfig.build(move_time=2.5, time_bank=4, fault_policy="remove", max_faults=2)
    assert config.policy == want and config == ArenaConfig(policy=want)
    assert ArenaConfig.build(port=7, seed=3) == ArenaConfig(port=7, seed=3)
    # a tournament's referee keeps the defaults it has no key for
    assert tournament().policy == RefereePolicy(reconnect_window=30.0)


def _flags(*words: str) -> dict[str, Any]:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    cmd_ladder.add_arguments(sub.add_parser("ladder"))
    return vars(parser.parse_args(["ladder", *words]))


def test_one_table_makes_every_flag_and_key_with_the_policys_default() -> None:
    """SETTINGS is the one source: every field of the policy has a row, and
    every row but the internal ones a serve flag, a [tournament] key (the
    TournamentConfig field's default the policy's) and, by its scope, a flag
    of ladder create (a season's) or ladder run (a running process's)."""
    assert set(SETTINGS) == set(RefereePolicy.__dataclass_fields__)
    serve = argparse.ArgumentParser()
    cmd_serve.add_arguments(serve)
    serve_defaults = vars(serve.parse_args([]))
    create = _flags("create", "--database", "x.sqlite")
    run = _flags("run", "--database", "x.sqlite")
    fields = TournamentConfig.__dataclass_fields__
    for name, setting in SETTINGS.items():
        if setting.scope == INTERNAL:
            assert name not in serve_defaults and name not in TOURNAMENT_KEYS, name
            continue
        assert serve_defaults[name] == setting.default, name
        if setting.scope == SERVE:  # serve's matchmaking's alone
            assert name not in TOURNAMENT_KEYS and name not in fields, name
            assert name not in create and name not in run, name
            continue
        assert fields[name].default == setting.default, name
        assert TOURNAMENT_KEYS[name].accepts(setting.default), name
        assert TOURNAMENT_KEYS[name].what == setting.what(), name
        if setting.scope == SEASON:
            assert create[name] is None and name not in run, name  # the store's stands
        else:
            assert setting.scope == PROCESS and name in run and name not in create, name
    assert run["max_sessions_per_token"] == 1  # the ladder's own default
    scopes = (SEASON, PROCESS, SERVE, INTERNAL)
    assert {n for scope in scopes for n in names(scope)} == set(SETTINGS)
    with pytest.raises(ValueError, match="not a season's setting: hello_timeout"):
        Season("s", policy={"hello_timeout": 2})


@pytest.mark.parametrize(
    ("name", "flag", "value"),
    [
        ("hello_timeout", "2.5", 2.5),
        ("max_greeting", "7", 7),
        ("max_greeting_per_peer", "3", 3),
        ("auth_backoff", "0", 0.0),
        ("max_consecutive_timeouts", "4", 4),
        ("max_message_bytes", "1000", 1000),
    ],
)
def test_a_front_door_limit_reaches_the_referee_from_every_surface(
    name: str, flag: str, value: Any
) -> None:
    want = RefereePolicy(**{name: value})
    serve = argparse.ArgumentParser()
    cmd_serve.add_arguments(serve)
    assert (
        RefereePolicy.from_mapping(vars(serve.parse_args([f"--{name.replace('_', '-')}", flag])))
        == want
    )
    assert tournament(**{name: value}).policy == want
    run = _flags("run", "--database", "x.sqlite", f"--{name.replace('_', '-')}", flag)
    assert run[name] == value


def test_a_bad_front_door_key_is_refused_as_the_flag_is() -> None:
    with pytest.raises(TournamentError, match=r"hello_timeout must be a number of seconds above 0"):
        tournament(hello_timeout=0)
    with pytest.raises(TournamentError, match=r"max_greeting must be a whole number, 0 or more"):
        tournament(max_greeting=-1)


def test_a_tournament_setting_of_the_wrong_type_is_refused() -> None:
    with pytest.raises(
        TournamentError, match=r'move_time must be a number of seconds above 0.*not "fast"'
    ):
        tournament(move_time="fast")


def test_the_command_line_and_a_tournament_make_the_same_rules() -> None:
    parser = argparse.ArgumentParser()
    add_rules_arguments(parser)
    args = parser.parse_args(
        ["--players", "3", "--hidden-bids", "--tricksy", "--round-sizes", "1,2,3"]
    )
    want = Rules(players=3, hidden_bids=True, tricksy=True, hand_sizes=(1, 2, 3))
    assert rules_from_mapping(vars(args)) == want
    assert tournament(hidden_bids=True, tricksy=True, round_sizes=[1, 2, 3]).rules == want
    assert rules_from_mapping({"players": 4, "bid_restriction": "canadian", "extra": 1}) == Rules(
        bid_restriction=BidRestriction.CANADIAN
    )
    assert rules_from_mapping(Rules(players=5, maximus=True).to_dict()) == Rules(5, maximus=True)


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["serve", "--hello-timeout", "0"], "error: --hello-timeout must be positive"),
        (["serve", "--max-greeting", "-1"], "error: --max-greeting must not be negative"),
        (
            ["ladder", "run", "--database", "none.sqlite", "--auth-backoff", "-2"],
            "error: --auth-backoff must not be negative",
        ),
        (
            ["ladder", "run", "--database", "none.sqlite", "--max-connections", "-1"],
            "error: --max-connections must not be negative",
        ),
    ],
)
def test_a_bad_limit_on_the_command_line_is_one_line(
    words: list[str],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran = cli_here(words, capsys, monkeypatch, tmp_path)
    assert ran.returncode == 2 and ran.stderr.strip() == message, ran

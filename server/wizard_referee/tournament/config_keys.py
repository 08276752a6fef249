"""The keys of a tournament file and what each accepts: one table,
:data:`TOURNAMENT_KEYS`, checked in one place (:func:`section_problems`,
:func:`entrant_problems`), so that every bad key is reported at once.

A new ``[tournament]`` key is a field of
:class:`~.tournament.TournamentConfig` plus one row here (a test checks that
the two agree); the referee's policy keys are made from its settings
(:data:`~wizard_referee.referee.policy.SETTINGS`), as ``serve``'s flags are.

>>> section_problems({"players": "four", "move_time": "fast", "database": 5})
['players must be a whole number from 3 to 6 (e.g. players = 4), not "four"', \
'database must be a file path or a postgresql:// URL, a string \
(e.g. database = "results.sqlite"), not 5', \
'move_time must be a number of seconds above 0 (e.g. move_time = 1.0), not "fast"']
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from wizard_arena.rules import BidRestriction
from wizard_referee.referee.policy import PROCESS, SEASON, SETTINGS, Setting
from wizard_referee.sandbox import SANDBOXES
from wizard_referee.tournament.seating import SEATINGS

__all__ = [
    "ENTRANT_KEYS",
    "EXECUTORS",
    "LIMIT_KEYS",
    "RESOURCE_KEYS",
    "TOURNAMENT_KEYS",
    "Key",
    "TournamentError",
    "add_executor_arguments",
    "entrant_problems",
    "listed",
    "plan_differences",
    "section_problems",
]


class TournamentError(Exception):
    """A tournament that cannot be run as configured (the message says why)."""


@dataclass(frozen=True)
class Key:
    """What one key accepts."""

    accepts: Callable[[Any], bool]
    what: str
    """Completes "KEY must be ...", e.g. ``a whole number from 3 to 6``."""
    example: str
    """A good value as written in TOML, e.g. ``4``."""


def _whole(low: int, high: int | None = None, example: str = "1") -> Key:
    def ok(v: Any) -> bool:
        return type(v) is int and v >= low and (high is None or v <= high)

    if high is not None:
        return Key(ok, f"a whole number from {low} to {high}", example)
    return Key(ok, f"a whole number, {low} or more", example)


def _seconds(*, zero: bool, example: str) -> Key:
    def ok(v: Any) -> bool:
        return type(v) in (int, float) and math.isfinite(v) and (v >= 0 if zero else v > 0)

    return Key(
        ok, "a number of seconds, 0 or more" if zero else "a number of seconds above 0", example
    )


def _flag() -> Key:
    return Key(lambda v: type(v) is bool, "true or false", "true")


def _text(what: str, example: str, *, empty: bool = False) -> Key:
    return Key(lambda v: isinstance(v, str) and (empty or v != ""), what, example)


def _choice(values: Iterable[str]) -> Key:
    options = tuple(values)
    return Key(
        lambda v: v in options and isinstance(v, str),
        "one of " + ", ".join(json.dumps(o) for o in options),
        json.dumps(options[0]),
    )


def _sizes(v: Any) -> bool:
    return v is None or (isinstance(v, list | tuple) and all(type(x) is int for x in v))


def _setting(setting: Setting) -> Key:
    """The key of one of the referee's settings: what RefereePolicy accepts."""
    return Key(lambda v: setting.problem(v) is None, setting.what(), setting.example)


#: executor name -> the module that plays a tournament with it (loaded only
#: when chosen: :func:`~.executors.load_executor`); here, beside the key that
#: names one, so the command line lists them without loading the executors
EXECUTORS: dict[str, str] = {
    "local": "wizard_referee.tournament.runner",
    "ray": "wizard_referee.cluster.tournament_play",
}


def add_executor_arguments(
    group: argparse._ArgumentGroup,
    workers_help: str = "Ray workers, each playing --parallel games at once (default: as many "
    "as the cluster's CPUs hold)",
) -> None:
    """``--executor``, ``--workers`` and ``--ray-address`` (tournament and compare): the
    executors :data:`EXECUTORS` names, listed without loading them."""
    group.add_argument(
        "--executor",
        choices=sorted(EXECUTORS),
        help="who plays the games: local (this machine, one referee; the default) or "
        "ray (warm workers on a Ray cluster; pip install 'wizard-arena[ray]')",
    )
    group.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help=workers_help,
    )
    group.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="join this Ray cluster: HOST:6379 (its head), 'ray://HOST:10001' (Ray Client) or "
        "'auto' (the one 'ray start' made on this machine); default: start Ray here with "
        "every core",
    )


#: Every ``[tournament]`` key, in the order of TournamentConfig's fields.
TOURNAMENT_KEYS: dict[str, Key] = {
    "name": _text("a non-empty string", '"league"'),
    "players": _whole(3, 6, "4"),
    "deal_sets": _whole(1, None, "2"),
    "seating": Key(
        lambda v: v is None or v in SEATINGS,
        "one of " + ", ".join(f'"{o}"' for o in SEATINGS),
        f'"{SEATINGS[0]}"',
    ),
    "bid_restriction": _choice(b.value for b in BidRestriction),
    "seed": Key(lambda v: type(v) is int, "a whole number", "1"),
    "parallel": _whole(1, None, "2"),
    "database": _text("a file path or a postgresql:// URL, a string", '"results.sqlite"'),
    "host": _text("an address to listen on, a string", '"127.0.0.1"'),
    "port": _whole(0, 65535, "50051"),
    "max_tables": _whole(1, None, "200"),
    "connect_timeout": _seconds(zero=False, example="60"),
    "output_limit": _whole(0, None, "10_000_000"),
    "exclude_faulted": _flag(),
    "workdir": _text("a folder, a string", '"bots"', empty=True),
    "hidden_bids": _flag(),
    "blind_first_round": _flag(),
    "maximus": _flag(),
    "tricksy": _flag(),
    "lowest_score_deals": _flag(),
    "round_sizes": Key(_sizes, "a list of whole numbers", "[1, 3, 5]"),
    "tricksy_suited": _flag(),
    "reveal_bids_after_tricks": _flag(),
    "first_dealer_by_draw": _flag(),
    "executor": _choice(tuple(EXECUTORS)),
    "workers": _whole(0, None, "4"),
    "ray_address": _text(
        'a Ray address, a string ("auto", "ray://HOST:10001" or HOST:PORT; empty: start one)',
        '"auto"',
        empty=True,
    ),
    "ray_working_dir": _text(
        "a folder sent to every Ray worker, a string (empty: none)", '"."', empty=True
    ),
    "sandbox": _choice(SANDBOXES),
    "bot_seed_secret": Key(
        lambda v: v is None or (isinstance(v, str) and v != ""),
        "a secret, a non-empty string (leave it out: one is drawn and stored)",
        '"a-long-random-string"',
    ),
    # the referee's policy, made from its one table of settings
    **{
        name: _setting(setting)
        for name, setting in SETTINGS.items()
        if setting.scope in (SEASON, PROCESS)
    },
}

#: The keys of an ``[[entrant]]`` table.
ENTRANT_KEYS = (
    "name",
    "command",
    "token",
    "folder",
    "memory_limit",
    "max_processes",
    "cpu_limit",
    "num_cpus",
    "num_gpus",
    "memory",
)

#: An entrant's resources on a Ray worker, per instance (executor = "ray").
RESOURCE_KEYS = ("num_cpus", "num_gpus", "memory")

#: A confined entrant's limits, per instance (sandbox = "bwrap"): what each
#: accepts, and an example.
LIMIT_KEYS: dict[str, Key] = {
    "memory_limit": _whole(16 * 2**20, None, "536_870_912"),
    "max_processes": _whole(8, None, "64"),
    "cpu_limit": Key(
        lambda v: type(v) in (int, float) and math.isfinite(v) and v >= 0.01,
        "a number of CPUs, 0.01 or more",
        "1.5",
    ),
}


def _shown(value: Any) -> str:
    """A value as TOML would write it (near enough for a message)."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)


def _unknown(kind: str, keys: Iterable[str], known: Iterable[str]) -> list[str]:
    known = list(known)
    out = []
    for key in sorted(keys):
        near = difflib.get_close_matches(key, known, n=1)
        hint = f"did you mean {near[0]}?" if near else "known: " + ", ".join(known)
        out.append(f"unknown {kind} key {key} ({hint})")
    return out


def section_problems(section: Mapping[str, Any]) -> list[str]:
    """Every unknown key and every value of the wrong type or range."""
    problems = _unknown("[tournament]", set(section) - set(TOURNAMENT_KEYS), TOURNAMENT_KEYS)
    for key, spec in TOURNAMENT_KEYS.items():
        if key in section and not spec.accepts(section[key]):
            problems.append(
                f"{key} must be {spec.what} (e.g. {key} = {spec.example}), "
                f"not {_shown(section[key])}"
            )
    return problems


def entrant_problems(entrants: Any) -> list[str]:
    """Every problem of the ``[[entrant]]`` tables (names, commands, tokens)."""
    if not isinstance(entrants, list):
        return ["[[entrant]] must be tables, one per bot (see example_bots/tournament.toml)"]
    problems: list[str] = []
    seen: set[str] = set()
    for i, e in enumerate(entrants):
        if not isinstance(e, dict) or not isinstance(e.get("name"), str) or not e["name"]:
            problems.append(f'entrant #{i + 1} needs a name (name = "my-bot")')
            continue
        label = f"entrant {e['name']!r}"
        if e["name"] in seen:
            problems.append(f"{label}: entrant names must be unique")
        seen.add(e["name"])
        problems += [
            f"{label}: {p}" for p in _unknown("entrant", set(e) - set(ENTRANT_KEYS), ENTRANT_KEYS)
        ]
        command, token = e.get("command"), e.get("token")
        if isinstance(command, str):
            try:
                command = shlex.split(command)
            except ValueError as err:
                problems.append(f"{label}: command {_shown(command)} cannot be split: {err}")
                continue
        if command is not None and (
            not isinstance(command, list)
            or not command
            or not all(isinstance(c, str) for c in command)
        ):
            problems.append(
                f"{label}: command must be a string or a list of strings, not {_shown(command)}"
            )
        if token is not None and (not isinstance(token, str) or not token):
            problems.append(f"{label}: token must be a non-empty string")
        for key in RESOURCE_KEYS:
            value = e.get(key, 0)
            if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
                what = "bytes" if key == "memory" else "a number"
                problems.append(
                    f"{label}: {key} must be {what}, 0 or more "
                    f"(e.g. {key} = {'2_000_000_000' if key == 'memory' else '0.5'}), "
                    f"not {_shown(value)}"
                )
        folder = e.get("folder")
        if folder is not None and (not isinstance(folder, str) or not folder):
            problems.append(f'{label}: folder must be a folder, a string (e.g. folder = "bots/a")')
        for key, spec in LIMIT_KEYS.items():
            if key in e and not spec.accepts(e[key]):
                problems.append(
                    f"{label}: {key} must be {spec.what} (e.g. {key} = {spec.example}), "
                    f"not {_shown(e[key])}"
                )
        if command is None and token is None:
            problems.append(f"{label} needs a command, or a token for an external bot")
    return problems


def listed(problems: list[str]) -> str:
    """One problem as it is; several as a count and one indented line each."""
    if len(problems) == 1:
        return problems[0]
    return f"{len(problems)} problems:\n" + "\n".join(f"  {p}" for p in problems)


def plan_differences(stored: dict[str, Any], given: dict[str, Any]) -> list[str]:
    """``"seed: stored 7, given 99"`` for every key of the plan that differs
    (a rule variant's key is absent when the variant is off).

    >>> plan_differences({"seed": 7, "players": 4}, {"seed": 99, "players": 4, "tricksy": True})
    ['seed: stored 7, given 99', 'tricksy: stored (not set), given true']
    """
    given = json.loads(json.dumps(given))  # as stored: tuples are lists

    def shown(d: dict[str, Any], key: str) -> str:
        return json.dumps(d[key]) if key in d else "(not set)"

    keys = list(stored) + [k for k in given if k not in stored]
    return [
        f"{k}: stored {shown(stored, k)}, given {shown(given, k)}"
        for k in keys
        if stored.get(k, _ABSENT) != given.get(k, _ABSENT)
    ]


_ABSENT = object()

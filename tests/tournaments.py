"""What the tournament tests share: entrants that run the ``bot`` verb
(:func:`entrant`), a configuration file written from dicts (:func:`write_toml`),
a small plan (:func:`plan_config`), a short tournament of deterministic
bots (:data:`TOURNEY`, :func:`det_entrants`) and what a results store holds
(:func:`seat_results`, :func:`stored_moves`)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from wizard_referee.storage import open_database
from wizard_referee.tournament.runner import TournamentConfig
from wizard_referee.tournament.store import ResultsStore

from .support import scaled

ROOT = Path(__file__).resolve().parent.parent

#: The system calls a confined bot's seccomp filter refuses that the hostile
#: bot tries (``--syscall NAME``: wizard_bots.misbehaving.hostile).
SYSCALLS = (
    "keyctl",
    "add_key",
    "request_key",
    "ptrace",
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "mount",
    "unshare",
    "setns",
    "clone",
)

#: The ``bot`` verb as an entrant's command starts it.
BOT = [sys.executable, "-m", "wizard_arena.cli", "bot"]


def entrant(name: str, target: str, *args: str) -> dict[str, object]:
    """An ``[[entrant]]`` that plays the bot class ``target`` with the ``bot`` verb."""
    return {
        "name": name,
        "command": [
            *BOT,
            target,
            "--server",
            "{server}",
            "--token",
            "{token}",
            "--name",
            "{name}",
            "--quiet",
            *args,
        ],
    }


def det_entrants(n: int) -> list[dict[str, object]]:
    """The heuristic bot and ``n - 1`` deterministic ones (tests/bots/det_bot.py)."""
    out = [entrant("heuristic", "wizard_bots.heuristic:HeuristicBot")]
    for i in range(n - 1):
        out.append(
            entrant(f"det-{i}", "tests.bots.det_bot:DeterministicBot", "--arg", f"salt=s{i}")
        )
    return out


def write_toml(
    path: Path, tournament: dict[str, object], entrants: list[dict[str, object]]
) -> Path:
    """A tournament's configuration file at ``path``."""
    lines = ["[tournament]"]
    for k, v in tournament.items():
        lines.append(f"{k} = {json.dumps(v)}")
    for e in entrants:
        lines.append("\n[[entrant]]")
        for k, v in e.items():
            lines.append(f"{k} = {json.dumps(v)}")
    path.write_text("\n".join(lines) + "\n")
    return path


def plan_config(entrants: int, players: int, deal_sets: int = 2, **kw: object) -> TournamentConfig:
    """A configuration to plan (its entrants' commands are never run)."""
    return TournamentConfig.from_dict(
        {
            "tournament": {"players": players, "deal_sets": deal_sets, "seed": 5, **kw},
            "entrant": [{"name": f"e{i}", "command": ["true"]} for i in range(entrants)],
        }
    )


def seat_results(db: str | Path) -> list[tuple[object, ...]]:
    """Every seat's result in the store ``db`` (a path or a URL), by game and seat."""
    store = open_database(db, read_only=True)
    rows = store.execute(
        "SELECT game_id, seat, entrant, total, rank, points FROM seat_results"
        " ORDER BY game_id, seat"
    ).fetchall()
    store.close()
    return [tuple(r) for r in rows]


def stored_moves(db: Path) -> dict[str, list[tuple[int, str, str | None]]]:
    """Every game's decisions (seat, action, fault), from the stored records."""
    with ResultsStore(db) as store:
        out = {}
        for spec in store.games():
            rec = store.record(spec.id)
            assert rec is not None and rec.status == "finished", spec.id
            out[spec.id] = [(m.seat, m.action, m.fault) for r in rec.rounds for m in r.moves]
    return out


# cyclic seating: 6 games per deal (the balanced design plays 30 at tables of 6)
TOURNEY = {
    "name": "det",
    # 12 short games (3 deal sets of 4 seatings, five rounds each): enough for
    # a kill to land mid-way, few enough decisions to keep the test quick
    "players": 4,
    "deal_sets": 3,
    "round_sizes": [1, 2, 3, 4, 5],
    "seating": "cyclic",
    "move_time": scaled(5.0),  # (the load as the tests are collected)
    "seed": 11,
    "parallel": 1,
}


def env_with_tests() -> dict[str, str]:
    """This environment with the repository on PYTHONPATH (bots in tests.bots)."""
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}

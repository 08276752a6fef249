"""Small tournaments played in-process, for the calibration test.

The plan is the runner's (:func:`~wizard_referee.tournament.runner.plan_games`:
its tables, its seating design, its game ids and deal seeds); each game is
played by :func:`wizard_arena.local.play_local` with the bots' per-game seeds
derived as a referee derives them (from a secret, the game id and the seat),
and the results are rated by the leaderboard's own code
(:func:`~wizard_referee.tournament.leaderboard.leaderboard_of`) and compared
by :func:`~wizard_referee.tournament.paired.paired_difference_of`. Only the
transport differs from a real tournament: no referee, no gRPC, no processes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from wizard_arena.bot import Bot
from wizard_arena.local import play_local
from wizard_referee.tournament.runner import TournamentConfig, plan_games
from wizard_referee.tournament.store import GameSpec, SeatResult

Finished = list[tuple[GameSpec, list[SeatResult], bool]]


def config(
    entrants: Sequence[str], *, seating: str, deals: int, seed: int, **section: Any
) -> TournamentConfig:
    return TournamentConfig.from_dict(
        {
            "tournament": {
                "players": len(entrants),
                "deal_sets": deals,
                "seating": seating,
                "seed": seed,
                **section,
            },
            "entrant": [{"name": name, "command": "unused"} for name in entrants],
        }
    )


def play(cfg: TournamentConfig, makers: Mapping[str, Callable[[], Bot]], secret: str) -> Finished:
    """Every planned game, played in-process; in plan order as the store gives them."""
    out: Finished = []
    rules = cfg.rules
    for spec in plan_games(cfg):
        bots = [makers[name]() for name in spec.seats]
        game = play_local(
            bots,
            rules,
            seed=spec.seed,
            game_id=spec.id,
            names=spec.seats,
            bot_seed_secret=secret,
        )
        if game.faults:
            raise AssertionError(f"{spec.id}: faults {game.faults}")
        seats = [
            SeatResult(
                spec.id,
                seat,
                name,
                game.totals[seat],
                game.ranks[seat],
                [r.bids[seat] for r in game.results],
                [r.tricks[seat] for r in game.results],
                [r.points[seat] for r in game.results],
                {},
            )
            for seat, name in enumerate(spec.seats)
        ]
        out.append((spec, seats, False))
    return out

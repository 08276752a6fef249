"""A tournament's game plan, in its results store.

The plan is made once, deterministically from the configuration and seed:
the tables (:mod:`.schedule`), for each table ``deal_sets`` deals, and for
each deal one game per seat rotation, so every entrant holds every hand of
the deal. A new tournament stores it (every game ``pending``, with its id
and deal seed) with the secret of the bots' seeds; a resumed one must
match it.
"""

from __future__ import annotations

import shlex

from wizard_arena.protocol.seeds import new_secret
from wizard_referee.tournament.config import TournamentConfig
from wizard_referee.tournament.config_keys import TournamentError, plan_differences
from wizard_referee.tournament.schedule import round_robin
from wizard_referee.tournament.seating import DEFAULT_SEATING, deal_seatings, stored_seating
from wizard_referee.tournament.store import GameSpec, ResultsStore

__all__ = ["bot_seed_secret", "open_plan", "plan_games"]


def plan_games(config: TournamentConfig) -> list[GameSpec]:
    """Every game of the tournament, in play order (deterministic)."""
    names = [e.name for e in config.entrants]
    tables = round_robin(names, config.players, seed=config.seed, max_tables=config.max_tables)
    specs: list[GameSpec] = []
    seq = 0
    for deal in range(config.deal_sets):
        for t, table in enumerate(tables):
            seed = f"{config.seed}:t{t}:d{deal}"
            for r, seating in enumerate(deal_seatings(table, config.seating or DEFAULT_SEATING)):
                specs.append(GameSpec(f"t{t}-d{deal}-r{r}", seq, t, deal, r, seed, tuple(seating)))
                seq += 1
    return specs


def open_plan(store: ResultsStore, config: TournamentConfig, specs: list[GameSpec]) -> None:
    """Store a new tournament's plan, or check that a stored one matches."""
    stored = store.tournament_config()
    if stored is None:
        entrant_rows = [
            (e.name, e.kind, shlex.join(e.command) if e.command else None) for e in config.entrants
        ]
        store.create(
            config.name,
            {
                "plan": config.plan_key(),
                "config": config.to_dict(),
                "bot_seed_secret": config.bot_seed_secret or new_secret(),
            },
            entrant_rows,
            specs,
            config.rules.to_dict(),
        )
        return
    plan = stored.get("plan") or {}
    differences = plan_differences({**plan, "seating": stored_seating(plan)}, config.plan_key())
    if differences:
        raise TournamentError(
            f"the configuration does not match the stored tournament in {store.where} "
            f"({'; '.join(differences)}): resume with the stored values, "
            "or start a new tournament with another database"
        )


def bot_seed_secret(config: TournamentConfig, store: ResultsStore) -> str:
    """The secret of the bots' seeds: the one stored with the tournament (a
    tournament stored without one gets one now). A secret given in the
    configuration must be the stored one."""
    stored = store.tournament_config() or {}
    secret = stored.get("bot_seed_secret")
    if isinstance(secret, str) and secret:
        if config.bot_seed_secret is not None and config.bot_seed_secret != secret:
            raise TournamentError(
                "bot_seed_secret differs from the one stored with the tournament: "
                "leave it out (or give the stored one) to resume"
            )
        return secret
    secret = config.bot_seed_secret or new_secret()
    store.update_config({**stored, "bot_seed_secret": secret})
    return secret

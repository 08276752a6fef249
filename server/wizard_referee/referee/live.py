"""The games being played now, as the arena lists them for spectators.

A :class:`LiveTable` is the table's own :class:`~wizard_arena.rules.Game`
(and record), registered in :attr:`Arena.live_tables
<wizard_referee.referee.arena.Arena.live_tables>` while the game runs. It
holds hidden information: whoever shows a game in progress reads it only
through :meth:`~wizard_arena.rules.Game.public_view` (the web room's
spectator view), on the trio loop that runs the table, and the hands only of
rounds that :attr:`round_ended` says are over.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import trio

from wizard_arena.rules import Game
from wizard_referee.referee.record import GameRecord

__all__ = ["LiveTable"]


@dataclass
class LiveTable:
    game_id: str
    names: list[str]
    game: Game
    """The table's game: hidden information, read through ``public_view()``."""
    record: GameRecord
    """The record so far (faults; the deals of rounds over)."""
    started_at: float = field(default_factory=time.time)
    round_ended: list[float] = field(default_factory=list)
    """trio time at which each round finished (was scored)."""

    def tick(self) -> None:
        """Note the time of a round just scored (called by the table after each step)."""
        if len(self.game.results) > len(self.round_ended):
            self.round_ended.append(trio.current_time())

"""Saying that a bot waits for a game, and for how many players.

A connected bot with no game in progress waits for the server to seat it: a
table starts when enough bots are free to fill it (``wizard-arena serve
--players N``). Nothing comes on the stream meanwhile, so the runners log it
themselves, :data:`FIRST` seconds into a wait and then every :data:`EVERY`
seconds: ``waiting for a game: tables of 4 bots, ...``. The table size is
the server's (``ServerInfo.rules.players``, asked once, when the first note
is due); the protocol has no message for the wait itself.

:class:`WaitNotes` is the schedule, free of I/O and of any clock of its own;
the blocking runner checks it from a thread, the trio runner from a task,
every :data:`POLL` seconds.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import grpc

from wizard_arena.client.connection import server_info
from wizard_arena.client.errors import ArenaError

__all__ = ["EVERY", "FIRST", "POLL", "WaitNotes", "table_size", "waiting_text"]

log = logging.getLogger("wizard_arena.client")

FIRST: float = 5.0
"""Seconds into a wait before the first note."""
EVERY: float = 30.0
"""Seconds between the notes of one wait."""
POLL: float = 1.0
"""How often a runner checks (a note may come up to this much late)."""


def waiting_text(waited: float, players: int | None) -> str:
    """The note: what the bot waits for, and how long it has waited.

    >>> waiting_text(5.2, 4)
    'waiting for a game: tables of 4 bots, started when 4 are connected and free (5 s so far)'
    >>> waiting_text(65, None)  # doctest: +ELLIPSIS
    'waiting for a game: the server starts one when enough bots are ... (65 s so far)'
    """
    so_far = f"({waited:.0f} s so far)"
    if players is None:
        return (
            "waiting for a game: the server starts one when enough bots are connected "
            f"and free {so_far}"
        )
    return (
        f"waiting for a game: tables of {players} bots, started when {players} are "
        f"connected and free {so_far}"
    )


def table_size(server: str, credentials: grpc.ChannelCredentials | None) -> int | None:
    """The players at a table of ``server`` (GetServerInfo), or None if it does not say."""
    try:
        return server_info(server, timeout=5.0, credentials=credentials).rules.players
    except ArenaError:
        return None


class WaitNotes:
    """When to say that the bot waits: ``idle`` (no game in progress, games
    still to play) is asked of the runner's driver at each :meth:`due`."""

    def __init__(self, idle: Callable[[], bool], games: Callable[[], int]) -> None:
        self.idle = idle
        self.games = games
        self.since: float | None = None
        self.key = -1
        self.said = 0

    def due(self, now: float) -> float | None:
        """The seconds waited, if a note is due at ``now`` (then it counts as said)."""
        if not self.idle():
            self.since = None
            return None
        games = self.games()  # a game played between two checks starts a new wait
        if self.since is None or games != self.key:
            self.since, self.key, self.said = now, games, 0
        waited = now - self.since
        if waited < FIRST + self.said * EVERY:
            return None
        self.said += 1
        return waited

"""The games list and a game's replay of any store of games (a
tournament's, a comparison's, a ladder's, running or over), read from the
tables every such store shares (:mod:`wizard_referee.storage.games`): one
code path, whichever store the pages show.

What a store adds is said by its data class in a :class:`Showing`: which
of its games are withheld and why (the web room's one rule, docs/web.md: a
game whose deal is still to be played in another game), what its seats are
called, and the fields of its own in a game's line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from wizard_referee.referee.record import GameRecord
from wizard_referee.storage import Database, GameRow, game_record, game_rows
from wizard_referee.web.replay import replay_json

__all__ = ["NotFound", "Showing", "Withheld", "game_lines", "replay"]


class NotFound(LookupError):
    """No such game or entrant (HTTP 404)."""


class Withheld(LookupError):
    """A finished game whose replay would show hands of games still to be
    played (the other games of its deal): HTTP 403 until they end."""


def _nothing(row: GameRow) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class Showing:
    """What a store says of its games that the shared tables do not."""

    withheld: Callable[[str, GameRow | None], str | None]
    """Why game ``id`` (its row, when listed) is withheld; None: shown."""
    names: Callable[[list[Any]], list[Any]] = list
    """Who sits where, as the pages name them, from the stored ``seats``."""
    fields: Callable[[GameRow], dict[str, Any]] = field(default=_nothing)
    """The store's own fields of a game's line (its place in the store's plan)."""


def game_lines(db: Database, showing: Showing, **query: Any) -> list[dict[str, Any]]:
    """The games of ``db`` that ``query`` asks for (:func:`.game_rows`'s
    arguments), each a line of the games list: a withheld game's totals,
    ranks and faults none, and why it is withheld."""
    out = []
    for row in game_rows(db, **query):
        line = {
            "id": row.id,
            **showing.fields(row),
            "seats": showing.names(row.seats),
            "status": row.status,
            "started_at": row.started_at,
            "finished_at": row.finished_at,
            "faulted": row.faulted,
            **row.added,
            "totals": row.totals,
            "ranks": row.ranks,
        }
        why = showing.withheld(row.id, row)
        if why:
            line.update(totals=None, ranks=None, faulted=None, withheld=why)
        out.append(line)
    return out


def replay(db: Database, game_id: str, showing: Showing, unknown: Callable[[], str]) -> Any:
    """The replay of game ``game_id`` (:func:`.replay_json`): NotFound
    (``unknown()`` says why) where it has no record, Withheld where
    ``showing`` withholds it."""
    text = game_record(db, game_id)
    if text is None:
        raise NotFound(unknown())
    why = showing.withheld(game_id, None)
    if why:  # the same hands are still to be played: not a card before they end
        raise Withheld(why)
    return replay_json(GameRecord.from_json(text))

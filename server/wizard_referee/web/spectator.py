"""The tables in progress as a spectator may see them.

Everything comes from the rules core's public view
(:meth:`wizard_arena.rules.Game.public_view`: a seat's view with no hand,
bids only once the players see them) and the seat names and fault counts:
no card of a hand leaves the server while its game runs. With a spectator
delay the hands of rounds that ended at least that long ago are shown too
(their cards have all been played by then). Once a game ends it is no longer
here but among the finished games, whose replay shows every hand.

In a tournament, the rotations of a deal set are dealt the same cards, so a
table whose deal is still to be played (or is being played) at another table
shows only who sits where and the round: the cards, bids, tricks and scores
of one rotation would show the hands of another.

This runs on the trio loop that runs the tables (it reads their games, which
only that loop changes), and is a copy of a few tuples per table.
"""

from __future__ import annotations

from typing import Any

import trio

from wizard_arena.rules import PublicView, Suit
from wizard_referee.referee.live import LiveTable

__all__ = ["table_json", "tables_json"]


def _suit(suit: Suit | None) -> str | None:
    return None if suit is None else suit.letter


def _public(v: PublicView) -> dict[str, Any]:
    n = v.rules.players
    return {
        "round": v.round,
        "rounds": v.rules.rounds,
        "cards": v.cards_per_player,
        "phase": v.phase.name.lower(),
        "dealer": v.dealer,
        "to_act": v.to_act,
        "turned": v.turned_card.text if v.turned_card is not None else None,
        "trump": _suit(v.trump),
        "next_trump": _suit(v.next_trump),
        "bids": list(v.bids),
        "trick": [[s, c.text] for s, c in zip(v.trick_seats, v.trick, strict=True)],
        "tricks": [
            {
                "cards": [[s, c.text] for s, c in zip(t.seats(n), t.cards, strict=True)],
                "winner": t.winner,
            }
            for t in v.tricks
        ],
        "won": list(v.tricks_won),
        "totals": list(v.totals),
        "hand_sizes": list(v.hand_sizes),
        "results": [
            {
                "round": r.round,
                "bids": list(r.bids),
                "tricks": list(r.tricks),
                "points": list(r.points),
            }
            for r in v.results
        ],
    }


def table_json(
    live: LiveTable, now: float, delay: float | None, same_deal: list[str] | None = None
) -> dict[str, Any]:
    """One table in progress at trio time ``now``: names, the public view,
    faults so far by seat, and with a ``delay`` the dealt hands of the
    rounds that ended at least ``delay`` seconds before ``now``.

    ``same_deal`` names the other games dealt the same cards (a tournament's
    rotations of one deal set) that have not ended: while there are any, the
    table shows only who sits where and how far the game is, for every card
    played here is a card of a hand there."""
    if same_deal:
        return _withheld(live, same_deal)
    record = live.record
    past = []
    if delay is not None:
        for i, ended in enumerate(live.round_ended):
            if now - ended >= delay and i < len(record.rounds):
                rr = record.rounds[i]
                past.append({"round": rr.round, "dealer": rr.dealer, "hands": rr.hands})
    return {
        "id": live.game_id,
        "seats": list(live.names),
        "rules": live.game.rules.describe(),
        "started_at": live.started_at,
        "faults": [dict(f) for f in record.faults],
        **_public(live.game.public_view()),
        "past_rounds": past,
    }


def _withheld(live: LiveTable, same_deal: list[str]) -> dict[str, Any]:
    game = live.game
    return {
        "id": live.game_id,
        "seats": list(live.names),
        "rules": game.rules.describe(),
        "started_at": live.started_at,
        "round": game.round,
        "rounds": game.rules.rounds,
        "withheld": (
            f"the play is shown once every game of this deal has ended: "
            f"{len(same_deal)} more to play ({', '.join(same_deal)})"
        ),
    }


def tables_json(
    tables: dict[str, LiveTable],
    delay: float | None,
    deals: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    """Every table in progress (call on the trio loop that runs them);
    ``deals``: for each table, the unfinished games of its deal (see
    :func:`table_json`)."""
    now = trio.current_time()
    deals = deals or {}
    return {
        "spectator_delay": delay,
        "tables": [table_json(t, now, delay, deals.get(t.game_id)) for t in list(tables.values())],
    }

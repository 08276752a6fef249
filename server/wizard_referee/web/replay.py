"""A recorded game as the replay page draws it: every step of
:func:`wizard_referee.tournament.replay.walk` (the record re-read through the
rules core) with the table as the rules left it: the hands face up, the
current trick, bids, tricks won, running totals, the text ``wizard-arena
replay`` prints for that step, and the fault of a decision the referee made
for a bot.
"""

from __future__ import annotations

from typing import Any

from wizard_arena.rules import Game, Play, Rules
from wizard_referee.referee.record import GameRecord
from wizard_referee.storage import record_columns
from wizard_referee.tournament.replay import (
    Moved,
    RoundBegins,
    RoundEnds,
    TrickDone,
    describe,
    draw_line,
    suit_text,
    walk,
)

__all__ = ["record_summary", "replay_json"]


def _table(game: Game) -> dict[str, Any]:
    """The table as the rules hold it now (a finished game: nothing hidden)."""
    n = game.players
    return {
        "round": game.round,
        "dealer": game.dealer,
        "phase": game.phase.name.lower(),
        "hands": [[c.text for c in h] for h in game.hands],
        "turned": game.turned_card.text if game.turned_card is not None else None,
        "trump": suit_text(game.trump) if game.phase.name != "CHOOSE_TRUMP" else None,
        "bids": list(game.bids),
        "trick": [[(game.leader + i) % n, c.text] for i, c in enumerate(game.trick)],
        "won": list(game.tricks_won),
        "totals": list(game.totals),
    }


def _step(step: Any, game: Game, names: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"text": describe(step, game, names), **_table(game)}
    n = game.players
    if isinstance(step, RoundBegins):
        out["kind"] = "deal"
    elif isinstance(step, Moved):
        mv = step.move
        kind = mv.action.partition(" ")[0]
        out.update(kind=kind, seat=mv.seat, action=mv.action, fault=mv.fault, ms=mv.ms)
        out["credit_ms"] = mv.credit_ms
        if not out["text"]:  # the replay verb says a card in its trick's line
            out["text"] = [f"  {names[mv.seat]} plays {mv.action.partition(' ')[2]}"]
        if isinstance(step.action, Play) and not game.trick and game.tricks:
            last = game.tricks[-1]  # this card completed the trick: show it whole
            out["trick"] = [[s, c.text] for s, c in zip(last.seats(n), last.cards, strict=True)]
    elif isinstance(step, TrickDone):
        t = step.trick
        out.update(
            kind="trick",
            number=step.number,
            winner=t.winner,
            trick=[[s, c.text] for s, c in zip(t.seats(n), t.cards, strict=True)],
        )
    elif isinstance(step, RoundEnds):
        r = step.result
        out.update(kind="score", points=list(r.points), tricks=list(r.tricks))
        out["bids"] = list(r.bids)
        out["totals"] = list(r.totals)
    return out


def record_summary(record: GameRecord) -> dict[str, Any]:
    """A game's line in a list of games (from its record; the shared
    columns a store would hold of it too, :func:`.record_columns`)."""
    return {
        "id": record.game_id,
        "seats": list(record.names),
        "status": record.status,
        "started_at": record.started_at,
        "finished_at": record.finished_at,
        "faulted": bool(record.faulted_seats),
        **record_columns(record),
        "totals": list(record.totals) or None,
        "ranks": list(record.ranks) or None,
    }


def replay_json(record: GameRecord) -> dict[str, Any]:
    """The whole game for the replay page: its header and every step.
    ValueError (or a RuleError) when the record does not replay."""
    rules = Rules.from_dict(record.rules)
    names = list(record.names)
    header = []
    game0 = Game(rules, first_dealer=record.first_dealer, draw=record.draw_cards())
    if game0.draw:
        header.append(draw_line(game0.draw, names, record.first_dealer))
    steps = [_step(step, game, names) for step, game in walk(record)]
    return {
        **record_summary(record),
        "rules": rules.describe(),
        "players": rules.players,
        "header": header,
        "tags": record.tags,
        "faults": record.faults,
        "fault_details": record.fault_details,
        "penalties": record.penalties,
        "error": record.error,
        "steps": steps,
    }

"""Every decision of a recorded game graded from the seat's own view.

:func:`decisions` replays a :class:`~wizard_referee.referee.record.GameRecord`
through the rules core (as :func:`wizard_referee.tournament.replay.walk`
does) and gives, before each recorded bid and card, the view the rules core
gives that seat (:meth:`~wizard_arena.rules.Game.view`): what the referee
sent the bot, nothing more. :func:`grade_record` asks an evaluator to value
every legal action of that view and grades the action taken.

An evaluator is any object with ``bid_values(view) -> {bid: points}`` and
``action_values(view) -> {card: points}`` (:class:`Evaluator`): the
expected round score of each legal action for the seat. The Monte Carlo
bot (``wizard_bots.montecarlo:MonteCarloBot``) is the reference; the learned
bot (``wizard_bots.learned:LearnedBot``) is a cheaper one. They are named
by module path (:mod:`.run`), so this room imports no bot.

The loss of a decision is ``value(best) - value(chosen)``, in expected
points of the round (never below 0). Its grade (:func:`verdict`) follows
:data:`THRESHOLDS` (docs/analysis.md says how they were set). Trump choices
are not graded, nor are decisions with one legal action (forced), nor blind
bids (no hand to evaluate), nor decisions the referee made for a faulted
bot (``fault``: graded, kept out of the bot's summary).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from wizard_arena.rules import Bid, Card, Game, Play, Rules, SeatView
from wizard_referee.referee.record import GameRecord, MoveRecord, parse_action

__all__ = [
    "THRESHOLDS",
    "Decision",
    "Evaluator",
    "Graded",
    "decisions",
    "grade_record",
    "verdict",
]

#: Loss (expected points of the round) from which a decision is an
#: inaccuracy, a mistake, a blunder (docs/analysis.md: how they were set).
THRESHOLDS: tuple[tuple[str, float], ...] = (
    ("blunder", 20.0),
    ("mistake", 7.5),
    ("inaccuracy", 2.5),
)


def verdict(loss: float) -> str:
    """``blunder``, ``mistake``, ``inaccuracy`` or ``""`` (a good decision)."""
    for name, at in THRESHOLDS:
        if loss >= at:
            return name
    return ""


class Evaluator(Protocol):
    """What grading asks of an evaluator (the seat's view in, points out)."""

    def bid_values(self, view: SeatView) -> Mapping[int, float]: ...

    def action_values(self, view: SeatView) -> Mapping[Card, float]: ...


@dataclass(frozen=True)
class Decision:
    """A recorded bid or card with the view its seat had when it chose."""

    round: int
    cards: int
    """Cards dealt to each player this round (the round's size)."""
    index: int
    """The move's place among the round's recorded moves."""
    move: MoveRecord
    view: SeatView


def decisions(record: GameRecord) -> Iterator[Decision]:
    """Each recorded bid and card play of ``record`` with the view of the
    seat that made it, taken from the replayed game just before the move
    (trump choices are replayed, not given). RuleError or ValueError when
    the record does not replay."""
    rules = Rules.from_dict(record.rules)
    game = Game(rules, first_dealer=record.first_dealer, draw=record.draw_cards())
    for rr in record.rounds:
        hands = [[Card(c) for c in h] for h in rr.hands]
        game.deal(hands, Card(rr.turned_card) if rr.turned_card else None)
        size = len(rr.hands[0]) if rr.hands else 0
        for i, mv in enumerate(rr.moves):
            action = parse_action(mv.action)
            if isinstance(action, Bid | Play):
                yield Decision(rr.round, size, i, mv, game.view(mv.seat))
            game.apply(mv.seat, action)


@dataclass(frozen=True, slots=True)
class Graded:
    """One graded decision."""

    game_id: str
    round: int
    cards: int
    index: int
    seat: int
    name: str
    kind: str
    """``bid`` or ``card``."""
    chosen: str
    best: str
    """The best action by the evaluator (ties: the chosen one, else the first)."""
    loss: float
    grade: str
    options: int
    """Legal actions valued."""
    fault: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _text(action: int | Card) -> str:
    return str(action) if isinstance(action, int) else action.text


def _loss(values: Mapping[Any, float], chosen: Any) -> tuple[Any, float] | None:
    """The best action by ``values`` (ties: ``chosen``, else the first) and
    ``chosen``'s loss; None when fewer than two actions were valued or
    ``chosen`` was not."""
    if len(values) < 2 or chosen not in values:
        return None
    top = max(values.values())
    best = chosen if values[chosen] >= top else max(values, key=lambda a: values[a])
    return best, max(0.0, top - values[chosen])


def grade_record(
    record: GameRecord, evaluator: Evaluator, seats: set[int] | None = None
) -> list[Graded]:
    """Every gradable decision of ``record`` (those of ``seats`` only, if given)."""
    out: list[Graded] = []
    for d in decisions(record):
        mv = d.move
        if seats is not None and mv.seat not in seats:
            continue
        action = parse_action(mv.action)
        values: Mapping[Any, float]
        chosen: int | Card
        if isinstance(action, Bid):
            kind, chosen = "bid", action.bid
            if len(d.view.legal_bids) < 2:
                continue
            values = evaluator.bid_values(d.view)
        else:
            assert isinstance(action, Play)
            kind, chosen = "card", action.card
            if len(set(d.view.legal_cards)) < 2:
                continue
            values = evaluator.action_values(d.view)
        found = _loss(values, chosen)
        if found is None:
            continue
        best, loss = found
        out.append(
            Graded(
                record.game_id,
                d.round,
                d.cards,
                d.index,
                mv.seat,
                record.names[mv.seat],
                kind,
                _text(chosen),
                _text(best),
                round(loss, 3),
                verdict(loss),
                len(values),
                mv.fault or "",
            )
        )
    return out

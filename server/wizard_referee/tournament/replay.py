"""A recorded game re-read through the rules core, step by step.

:func:`walk` replays a :class:`~wizard_referee.referee.record.GameRecord`
through :class:`~wizard_arena.rules.Game` and yields each step (a round
dealt, a decision, a trick won, a round scored) with the game as the rules
left it after that step; each step has the one line of text that describes
it (:func:`describe`). ``wizard-arena replay`` prints those lines
(:func:`.cmd_replay.render`) and the web page's replay draws the same steps
(:mod:`wizard_referee.web.replay`): the game is re-read in one place.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from wizard_arena.rules import (
    Action,
    Bid,
    Card,
    ChooseTrump,
    Game,
    Phase,
    RoundResult,
    Rules,
    Suit,
    Trick,
)
from wizard_referee.referee.record import GameRecord, MoveRecord, RoundRecord, parse_action

__all__ = [
    "Moved",
    "RoundBegins",
    "RoundEnds",
    "Step",
    "TrickDone",
    "describe",
    "draw_line",
    "walk",
]


@dataclass(frozen=True)
class RoundBegins:
    """A round dealt (the game is in its first phase of the round)."""

    round: RoundRecord
    blind: bool


@dataclass(frozen=True)
class Moved:
    """One recorded decision, applied."""

    move: MoveRecord
    action: Action
    during_play: bool
    """A trump named during the tricks (tricksy), not the dealer's choice."""


@dataclass(frozen=True)
class TrickDone:
    """A trick completed by the last decision (or by the rules, in a blind round)."""

    number: int
    trick: Trick
    trump: Suit | None
    trump_shown: bool
    """Tricksy: the trump the trick was played under is worth saying."""
    blind: bool


@dataclass(frozen=True)
class RoundEnds:
    result: RoundResult


Step = RoundBegins | Moved | TrickDone | RoundEnds


def suit_text(suit: Suit | None) -> str:
    return "none" if suit is None else suit.letter


def walk(record: GameRecord) -> Iterator[tuple[Step, Game]]:
    """Every step of ``record`` with the game after it (the same object each
    time: read it before the next step). RuleError or ValueError when the
    record does not replay (``--verify`` lists why)."""
    rules = Rules.from_dict(record.rules)
    game = Game(rules, first_dealer=record.first_dealer, draw=record.draw_cards())
    tricksy = rules.tricksy or rules.tricksy_suited
    for rr in record.rounds:
        hands = [[Card(c) for c in h] for h in rr.hands]
        game.deal(hands, Card(rr.turned_card) if rr.turned_card else None)
        blind = game.blind
        yield RoundBegins(rr, blind), game
        shown = 0
        for mv in rr.moves:
            action = parse_action(mv.action)
            during_play = bool(game.trick or game.tricks)
            game.apply(mv.seat, action)
            yield Moved(mv, action, during_play), game
            while shown < len(game.tricks):
                t = game.tricks[shown]
                shown += 1
                has_trump = tricksy and shown <= len(game.trick_trumps)
                trump = game.trick_trumps[shown - 1] if has_trump else None
                yield TrickDone(shown, t, trump, has_trump, blind), game
        if game.results and game.results[-1].round == rr.round:
            yield RoundEnds(game.results[-1]), game


def describe(step: Step, game: Game, names: list[str]) -> list[str]:
    """The lines of text that say what ``step`` did (a round's head and its
    hands; a decision with its fault; a trick and its winner; the scores)."""
    rules = game.rules
    n = rules.players
    if isinstance(step, RoundBegins):
        rr = step.round
        head = f"round {rr.round}: dealer {names[rr.dealer]}, turned {rr.turned_card or '-'}"
        if game.phase is not Phase.CHOOSE_TRUMP:
            head += f", trump {suit_text(game.trump)}"
        if step.blind:
            head += " (blind: each player sees the others' cards, not their own)"
        return [head] + [f"  {names[s]:<16} {' '.join(rr.hands[s])}" for s in range(n)]
    if isinstance(step, Moved):
        mv, action = step.move, step.action
        flag = f"  [{mv.fault}]" if mv.fault else ""
        if mv.credit_ms:
            flag += f"  (network credit {mv.credit_ms:g} ms)"
        who = names[mv.seat]
        if isinstance(action, ChooseTrump):
            if step.during_play:  # tricksy: a Wizard's player names the next trump
                when = "at once" if rules.tricksy_suited else "from the next trick"
                return [f"  {who} names trump {action.suit.letter} {when}{flag}"]
            return [f"  {who} chooses trump {action.suit.letter}{flag}"]
        if isinstance(action, Bid):
            hidden = " (hidden until the tricks are played)" * rules.reveal_bids_after_tricks
            return [f"  {who} bids {action.bid}{hidden}{flag}"]
        return [f"  {who} plays {mv.action.partition(' ')[2]}{flag}"] if flag else []
    if isinstance(step, TrickDone):
        t = step.trick
        cards = ", ".join(f"{names[s]} {c.text}" for s, c in zip(t.seats(n), t.cards, strict=True))
        note = f" (trump {suit_text(step.trump)})" if step.trump_shown else ""
        if step.blind:
            note += " (blind: played by the rules after the bids)"
        return [f"  trick {step.number}: {cards} -> {names[t.winner]}{note}"]
    r = step.result
    return [
        f"  {names[s]:<16} bid {r.bids[s]:>2} took {r.tricks[s]:>2} "
        f"{r.points[s]:+4d}  total {r.totals[s]:>5}"
        for s in range(n)
    ]


def draw_line(draw: tuple[tuple[Card | None, ...], ...], names: list[str], dealer: int) -> str:
    """``first dealer by draw: a 9S, b 13H, c 13C; again b W, c 4D -> b``."""
    rows = [
        ", ".join(f"{names[s]} {c.text}" for s, c in enumerate(row) if c is not None)
        for row in draw
    ]
    return f"first dealer by draw: {'; again '.join(rows)} -> {names[dealer]}"

"""Play bots against each other in-process, with no network.

The same :class:`~wizard_arena.bot.Bot` classes that play over gRPC play
here, through the same rules core and the same default policy for faults.

>>> from wizard_bots.random_bot import RandomBot
>>> result = play_local([RandomBot(seed=s) for s in range(3)], seed=42)
>>> len(result.results), result.faults
(20, [])
"""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field

from wizard_arena.bot import Bot, BotError, GameInfo, GameSummary, decide
from wizard_arena.rules import (
    Action,
    Event,
    Game,
    Phase,
    RoundResult,
    RoundScored,
    RuleError,
    Rules,
    TrickWon,
    action_text,
    default_action,
)

__all__ = ["Fault", "LocalGameResult", "play_local"]


@dataclass(frozen=True, slots=True)
class Fault:
    """A decision the referee had to make for a seat."""

    seat: int
    round: int
    code: str
    """``exception`` (the bot raised), ``bad_return`` or ``illegal`` (refused by the rules)."""
    detail: str
    played: str
    """The default action played instead."""


@dataclass
class LocalGameResult:
    rules: Rules
    names: tuple[str, ...]
    totals: tuple[int, ...]
    ranks: tuple[int, ...]
    results: list[RoundResult]
    faults: list[Fault] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)


def play_local(
    bots: Sequence[Bot],
    rules: Rules | None = None,
    *,
    seed: int | str | None = None,
    first_dealer: int = 0,
    game_id: str = "local",
    names: Sequence[str] | None = None,
    hooks: bool = True,
) -> LocalGameResult:
    """Play one full game, ``bots[i]`` in seat ``i``.

    A bot that raises or returns an illegal action is recorded as a
    :class:`Fault` and the referee's default action is played for it; the
    game always finishes. ``hooks=False`` skips the ``on_*`` hooks (faster
    evaluation of bots that do not use them).
    """
    rules = rules if rules is not None else Rules(players=len(bots))
    if len(bots) != rules.players:
        raise ValueError(f"{rules.players} players need {rules.players} bots, got {len(bots)}")
    game = Game(rules, seed=seed, first_dealer=first_dealer)
    names = tuple(names) if names is not None else tuple(b.name for b in bots)
    faults: list[Fault] = []
    if hooks:
        for seat, bot in enumerate(bots):
            bot.on_game_start(GameInfo(game_id, rules, seat, names))
    seen = 0
    while not game.is_over:
        if game.phase is Phase.DEAL:
            game.deal()
            seen = len(game.events)
            continue
        seat = game.acting[0]
        view = game.view(seat)
        action: Action | None = None
        try:
            action = decide(bots[seat], view)
        except BotError as e:
            code, detail = "bad_return", str(e)
        except Exception as e:
            code = "exception"
            detail = "".join(traceback.format_exception_only(type(e), e)).strip()
        if action is not None:
            try:
                game.apply(seat, action)
            except RuleError as e:
                code, detail = e.code, str(e)
                action = None
        if action is None:
            fallback = default_action(view.legal_actions)
            game.apply(seat, fallback)
            faults.append(Fault(seat, game.round, code, detail, action_text(fallback)))
        if hooks:
            new = game.events[seen:]
            seen = len(game.events)
            for ev in new:
                if isinstance(ev, TrickWon):
                    for s, bot in enumerate(bots):
                        bot.on_trick_end(game.view(s), ev.trick)
                elif isinstance(ev, RoundScored):
                    for s, bot in enumerate(bots):
                        bot.on_round_end(game.view(s), ev.result)
    if hooks:
        for s, bot in enumerate(bots):
            bot.on_game_end(
                GameSummary(game_id, s, tuple(game.totals), tuple(game.ranks), tuple(game.results))
            )
    return LocalGameResult(
        rules,
        names,
        tuple(game.totals),
        tuple(game.ranks),
        list(game.results),
        faults,
        list(game.events),
    )

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
from wizard_arena.protocol.seeds import bot_seed, local_secret
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
    first_dealer: int | None = None,
    game_id: str = "local",
    names: Sequence[str] | None = None,
    hooks: bool = True,
    bot_seed_secret: str | bytes | None = None,
) -> LocalGameResult:
    """Play one full game, ``bots[i]`` in seat ``i``.

    A bot that raises or returns an illegal action is recorded as a
    :class:`Fault` and the referee's default action is played for it; the
    game always finishes. ``first_dealer`` deals round 1 (None: seat 0, or
    under ``first_dealer_by_draw`` the seat drawn with the ``seed``).
    ``hooks=False`` skips the ``on_*`` hooks (faster evaluation of bots that
    do not use them).

    Each bot's ``on_game_start`` gets its seed (``GameInfo.seed`` and
    ``GameInfo.rng``) derived as a referee derives it
    (:func:`wizard_arena.protocol.seeds.bot_seed`), with ``bot_seed_secret`` or, by
    default, a secret that follows from ``seed``
    (:func:`~wizard_arena.protocol.seeds.local_secret`): a game with a ``seed``
    replays whole, the bots' draws included.
    """
    rules = rules if rules is not None else Rules(players=len(bots))
    if len(bots) != rules.players:
        raise ValueError(f"{rules.players} players need {rules.players} bots, got {len(bots)}")
    game = Game(rules, seed=seed, first_dealer=first_dealer)
    names = tuple(names) if names is not None else tuple(b.name for b in bots)
    faults: list[Fault] = []
    if hooks:
        secret = local_secret(seed) if bot_seed_secret is None else bot_seed_secret
        for seat, bot in enumerate(bots):
            info = GameInfo(game_id, rules, seat, names, seed=bot_seed(secret, game_id, seat))
            bot.on_game_start(info)
    seen = 0
    while not game.is_over:
        if game.phase is Phase.DEAL:
            game.deal()
            seen = len(game.events)
            continue
        seat = game.acting[0]
        fault = _turn(game, seat, bots[seat])
        if fault is not None:
            faults.append(fault)
        if hooks:
            _tell_hooks(game, bots, game.events[seen:])
            seen = len(game.events)
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


def _turn(game: Game, seat: int, bot: Bot) -> Fault | None:
    """Ask ``bot`` for the seat's decision and apply it; a bot that raises
    or answers illegally gets the referee's default action, and the Fault."""
    view = game.view(seat)
    action: Action | None = None
    try:
        action = decide(bot, view)
    except BotError as e:
        code, detail = "bad_return", str(e)
    except Exception as e:
        code = "exception"
        detail = "".join(traceback.format_exception_only(type(e), e)).strip()
    if action is not None:
        try:
            game.apply(seat, action)
            return None
        except RuleError as e:
            code, detail = e.code, str(e)
    fallback = default_action(view.legal_actions)
    game.apply(seat, fallback)
    return Fault(seat, game.round, code, detail, action_text(fallback))


def _tell_hooks(game: Game, bots: Sequence[Bot], events: Sequence[Event]) -> None:
    """The ``on_trick_end`` and ``on_round_end`` hooks of every bot, for new events."""
    for ev in events:
        if isinstance(ev, TrickWon):
            for s, bot in enumerate(bots):
                bot.on_trick_end(game.view(s), ev.trick)
        elif isinstance(ev, RoundScored):
            for s, bot in enumerate(bots):
                bot.on_round_end(game.view(s), ev.result)

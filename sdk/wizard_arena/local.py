"""Play bots against each other in-process, with no network.

The same :class:`~wizard_arena.bot.Bot` classes that play over gRPC play
here, through the same rules core and the same default policy for faults.

>>> from wizard_bots.random_bot import RandomBot
>>> result = play_local([RandomBot(seed=s) for s in range(3)], seed=42)
>>> len(result.results), result.faults
(20, [])
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field

from wizard_arena.bot import Bot, BotError, GameInfo, GameSummary, decide, hears
from wizard_arena.protocol.seeds import bot_seed, local_secret
from wizard_arena.rules import (
    Action,
    Card,
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

__all__ = ["Fault", "LocalDeal", "LocalGameResult", "LocalMove", "play_local"]


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


@dataclass(frozen=True, slots=True)
class LocalDeal:
    """One round's deal (kept with ``record=True``)."""

    round: int
    dealer: int
    hands: tuple[tuple[Card, ...], ...]
    turned_card: Card | None


@dataclass(frozen=True, slots=True)
class LocalMove:
    """One decision applied to the game, in order (kept with ``record=True``):
    the seat's own action, or the default action played for it (``fault``
    says why). ``ms`` is the time the bot took."""

    round: int
    seat: int
    action: Action
    ms: float
    fault: str | None = None


@dataclass
class LocalGameResult:
    rules: Rules
    names: tuple[str, ...]
    totals: tuple[int, ...]
    ranks: tuple[int, ...]
    results: list[RoundResult]
    faults: list[Fault] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    first_dealer: int = 0
    draw: tuple[tuple[Card | None, ...], ...] = ()
    """The draw for the first dealer (``first_dealer_by_draw``), else empty."""
    deals: list[LocalDeal] = field(default_factory=list)
    """Every round's deal, with ``record=True`` (else empty)."""
    moves: list[LocalMove] = field(default_factory=list)
    """Every decision in the order applied, with ``record=True`` (else empty)."""


@dataclass(frozen=True, slots=True)
class _Turn:
    move: LocalMove
    fault: Fault | None


def _turn(game: Game, bot: Bot, seat: int, timed: bool) -> _Turn:
    """Ask ``bot`` for its decision and apply it, or the default action
    (with the fault) when it raised or chose what the rules refuse."""
    view = game.view(seat)
    action: Action | None = None
    started = time.perf_counter() if timed else 0.0
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
        except RuleError as e:
            code, detail = e.code, str(e)
            action = None
    ms = 1000.0 * (time.perf_counter() - started) if timed else 0.0
    if action is not None:
        return _Turn(LocalMove(game.round, seat, action, ms), None)
    fallback = default_action(view.legal_actions)
    game.apply(seat, fallback)
    fault = Fault(seat, game.round, code, detail, action_text(fallback))
    return _Turn(LocalMove(game.round, seat, fallback, ms, code), fault)


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
    bot_seeds: Sequence[int] | None = None,
    record: bool = False,
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
    replays whole, the bots' draws included. ``bot_seeds`` gives each seat's
    seed instead (e.g. to let two games share some seats' seeds and not
    others').

    ``record=True`` keeps every deal and every decision with its timing in
    the result (:attr:`LocalGameResult.deals` and :attr:`~LocalGameResult.moves`),
    everything a full game record needs.
    """
    rules = rules if rules is not None else Rules(players=len(bots))
    if len(bots) != rules.players:
        raise ValueError(f"{rules.players} players need {rules.players} bots, got {len(bots)}")
    game = Game(rules, seed=seed, first_dealer=first_dealer)
    names = tuple(names) if names is not None else tuple(b.name for b in bots)
    faults: list[Fault] = []
    deals: list[LocalDeal] = []
    moves: list[LocalMove] = []
    if bot_seeds is not None and len(bot_seeds) != rules.players:
        raise ValueError(f"{rules.players} seats need {rules.players} bot seeds")
    if hooks:
        secret = local_secret(seed) if bot_seed_secret is None else bot_seed_secret
        _start_bots(bots, rules, game_id, names, bot_seeds, secret)
    seen = 0
    # which bots hear each hook, worked out once (a view costs: built only if heard)
    listeners = _listeners(bots) if hooks else ((), ())
    while not game.is_over:
        if game.phase is Phase.DEAL:
            game.deal()
            seen = len(game.events)
            if record:
                deals.append(LocalDeal(game.round, game.dealer, game.dealt_hands, game.turned_card))
            continue
        seat = game.acting[0]
        move = _turn(game, bots[seat], seat, record)
        if move.fault is not None:
            faults.append(move.fault)
        if record:
            moves.append(move.move)
        if hooks and len(game.events) > seen:
            _tell_hooks(game, bots, listeners, game.events[seen:])
            seen = len(game.events)
    if hooks:
        end = (tuple(game.totals), tuple(game.ranks), tuple(game.results))
        for s, bot in enumerate(bots):
            bot.on_game_end(GameSummary(game_id, s, *end))
    return LocalGameResult(
        rules,
        names,
        tuple(game.totals),
        tuple(game.ranks),
        list(game.results),
        faults,
        list(game.events),
        game.first_dealer,
        game.draw,
        deals,
        moves,
    )


def _start_bots(
    bots: Sequence[Bot],
    rules: Rules,
    game_id: str,
    names: tuple[str, ...],
    bot_seeds: Sequence[int] | None,
    secret: str | bytes,
) -> None:
    """Every bot's ``on_game_start``, with its seed (``bot_seeds``, or derived
    from ``secret`` as a referee derives it)."""
    seeds = bot_seeds or [bot_seed(secret, game_id, s) for s in range(rules.players)]
    for seat, bot in enumerate(bots):
        bot.on_game_start(GameInfo(game_id, rules, seat, names, seed=seeds[seat]))


def _listeners(bots: Sequence[Bot]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The seats whose bots hear ``on_trick_end``, and those that hear ``on_round_end``."""
    return (
        tuple(s for s, bot in enumerate(bots) if hears(bot, "on_trick_end")),
        tuple(s for s, bot in enumerate(bots) if hears(bot, "on_round_end")),
    )


def _tell_hooks(
    game: Game,
    bots: Sequence[Bot],
    listeners: tuple[tuple[int, ...], tuple[int, ...]],
    events: Sequence[Event],
) -> None:
    """The ``on_trick_end`` and ``on_round_end`` hooks of the bots that hear
    them (``listeners``, by :func:`_listeners`), for new events."""
    trick_seats, round_seats = listeners
    for ev in events:
        if isinstance(ev, TrickWon):
            for s in trick_seats:
                bots[s].on_trick_end(game.view(s), ev.trick)
        elif isinstance(ev, RoundScored):
            for s in round_seats:
                bots[s].on_round_end(game.view(s), ev.result)

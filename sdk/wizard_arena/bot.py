"""The bot API: subclass :class:`Bot` and implement three methods.

>>> from wizard_arena import Card, Suit
>>> class Lowest(Bot):
...     def bid(self, view): return 0
...     def play(self, view): return min(view.legal_cards)
...     def choose_trump(self, view): return Suit.SPADES

The same class plays in-process (:func:`wizard_arena.local.play_local`), over
the network (:func:`wizard_arena.client.run_bot`) and in tournaments.
Methods receive a :class:`~wizard_arena.rules.SeatView`; their return value may
be a plain value (an ``int`` bid, a :class:`Card`, a :class:`Suit`) or the
matching action (:class:`Bid`, :class:`Play`, :class:`ChooseTrump`).

Over the network a bot gets the **lean event stream** (protocol v1.1,
``Hello.event_stream``: about one message per decision) unless it asks for
the table's events: by overriding :meth:`Bot.on_trick_end` or
:meth:`Bot.on_round_end` (the hooks that follow the play), or by setting
:attr:`Bot.event_stream`
(:func:`wizard_arena.client.event_stream_for`). Its decisions see the
same complete view either way.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar

from wizard_arena.rules import (
    Action,
    Bid,
    Card,
    ChooseTrump,
    Phase,
    Play,
    RoundResult,
    Rules,
    SeatView,
    Suit,
    Trick,
)

__all__ = ["Bot", "BotError", "GameInfo", "GameSummary", "decide", "hears", "to_action"]


@dataclass(frozen=True, slots=True)
class GameInfo:
    """What a bot learns when its game starts."""

    game_id: str
    rules: Rules
    seat: int
    names: tuple[str, ...]
    move_time: float | None = None
    """Seconds allowed per decision, if the referee imposes a limit."""
    time_bank: float = 0.0
    """Seconds of this seat's time bank (a decision may run past
    ``move_time`` by drawing on it; 0: no time bank)."""
    seed: int | None = None
    """This bot's seed for this game (``GameStarted.bot_seed``), from the
    referee's secret, the game id and the seat, never from the deal
    (:mod:`wizard_arena.protocol.seeds`); ``None`` when the referee gives none. A bot
    that draws its randomness only from it (or from :attr:`rng`) plays the
    same game the same way every time: tournaments become reproducible."""
    _rng: random.Random | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def rng(self) -> random.Random:
        """A :class:`random.Random` seeded with :attr:`seed`, made on first use
        (the same object on every access): ``self.rng = info.rng`` in
        ``on_game_start``. Seeded from the system's entropy when there is no seed."""
        if self._rng is None:
            object.__setattr__(self, "_rng", random.Random(self.seed))
        assert self._rng is not None
        return self._rng


@dataclass(frozen=True, slots=True)
class GameSummary:
    """The end of a game as one seat sees it."""

    game_id: str
    seat: int
    totals: tuple[int, ...]
    ranks: tuple[int, ...]
    results: tuple[RoundResult, ...]


class BotError(Exception):
    """A bot returned something that is not an action of the kind asked for."""


class Bot:
    """Base class of a Wizard bot. Override :meth:`bid` and :meth:`play`
    (and :meth:`choose_trump` if the default is not good enough); the
    ``on_*`` hooks are optional and do nothing by default."""

    #: Shown at the table unless a name is given when the bot is run.
    name: str = "bot"

    #: The messages the bot receives over the network (``Hello.event_stream``):
    #: ``None`` (the default) lets the SDK choose
    #: (:func:`wizard_arena.client.event_stream_for`: every event if the
    #: class overrides ``on_trick_end`` or ``on_round_end``, else the lean
    #: stream); ``"all"`` or ``"lean"`` (or
    #: :class:`wizard_arena.protocol.codes.EventStream`'s members) chooses.
    event_stream: ClassVar[str | None] = None

    _sdk_base: ClassVar[bool] = True
    """Marks the SDK's base classes, whose hooks do nothing (``event_stream_for``)."""

    def bid(self, view: SeatView) -> int | Bid:
        """How many tricks to bid; one of ``view.legal_bids``."""
        raise NotImplementedError(f"{type(self).__name__} must implement bid(view)")

    def play(self, view: SeatView) -> Card | Play:
        """Which card to play; one of ``view.legal_cards``."""
        raise NotImplementedError(f"{type(self).__name__} must implement play(view)")

    def choose_trump(self, view: SeatView) -> Suit | ChooseTrump:
        """As dealer after a turned Wizard: the trump suit. By default the
        suit this seat holds most of (ties: the higher cards, then S H D C)."""
        counts = Counter(c.suit for c in view.hand if c.suit is not None)
        ranks = Counter()  # type: Counter[Suit]
        for c in view.hand:
            if c.suit is not None:
                ranks[c.suit] += c.rank
        return max(Suit, key=lambda s: (counts[s], ranks[s], -int(s)))

    # optional hooks -----------------------------------------------------------

    def on_game_start(self, info: GameInfo) -> None:
        """The game starts; ``info`` tells the seat, names, rules and time limit."""

    def on_trick_end(self, view: SeatView, trick: Trick) -> None:
        """A trick was completed (``view`` is taken just after it)."""

    def on_round_end(self, view: SeatView, result: RoundResult) -> None:
        """A round was scored."""

    def on_game_end(self, summary: GameSummary) -> None:
        """The game is over."""


def to_action(view: SeatView, value: Any) -> Action:
    """Turn a bot method's return value into the action the phase asks for."""
    phase = view.phase
    if isinstance(value, Bid | Play | ChooseTrump):
        return value
    if phase is Phase.BID and isinstance(value, int) and not isinstance(value, bool):
        return Bid(value)
    if phase is Phase.PLAY and isinstance(value, Card):
        return Play(value)
    if phase is Phase.PLAY and isinstance(value, str):
        try:
            return Play(Card(value))
        except ValueError:
            pass
    if phase is Phase.CHOOSE_TRUMP and isinstance(value, Suit):
        return ChooseTrump(value)
    raise BotError(f"in phase {phase.value} a bot must return a {_WANT[phase]}, not {value!r}")


_WANT = {
    Phase.BID: "bid (int)",
    Phase.PLAY: "card (Card)",
    Phase.CHOOSE_TRUMP: "suit (Suit)",
    Phase.DEAL: "nothing",
    Phase.GAME_OVER: "nothing",
}


def hears(bot: object, hook: str) -> bool:
    """Whether ``bot``'s class has a hook ``hook`` of its own (one its class or
    a user's base defines, not the do-nothing one of an SDK base class)."""
    owner = next((k for k in type(bot).__mro__ if hook in vars(k)), None)
    return owner is not None and not vars(owner).get("_sdk_base", False)


def decide(bot: Bot, view: SeatView) -> Action:
    """Ask ``bot`` for its action in ``view`` (which must be its turn)."""
    phase = view.phase
    if phase is Phase.PLAY:
        return to_action(view, bot.play(view))
    if phase is Phase.BID:
        return to_action(view, bot.bid(view))
    if phase is Phase.CHOOSE_TRUMP:
        return to_action(view, bot.choose_trump(view))
    raise BotError(f"no decision in phase {phase.value}")

"""Play a bot on a Wizard Arena referee server over gRPC.

Blocking form, for an ordinary :class:`~wizard_arena.bot.Bot`::

    from wizard_arena.client import run_bot
    result = run_bot(MyBot(), "127.0.0.1:50051", name="mine", games=10)

Trio form, for bots that think concurrently or several bots in one process
(:class:`AsyncBot` methods are coroutines and are cancelled at the deadline)::

    async with trio.open_nursery() as nursery:
        nursery.start_soon(partial(serve_bot, MyAsyncBot(), server, name="a"))
        nursery.start_soon(partial(serve_bot, MyBot(), server, name="b"))

and, one level lower, :func:`open_bot_session` gives the raw message stream
as domain values (:mod:`wizard_arena.protocol.messages`).

What the SDK does for the bot, and the choices it makes:

* **Hello**: protocol versions :data:`~wizard_arena.protocol.messages.PROTOCOL_VERSIONS`,
  ``sdk_name`` ``wizard-arena-python``, this package's version, the bot's
  name and token, and as ``rule_options`` every rule variant the SDK can
  play (:data:`RULE_OPTIONS`, all of :data:`~wizard_arena.rules.VARIANT_OPTIONS`;
  pass ``rule_options`` to list fewer, e.g. ``()`` for a bot that plays the
  base game only: a server whose tables use another option then refuses it
  with :class:`VersionMismatchError`). Any number of games is played on one
  stream (``games`` stops after that many).
* **Hooks**: ``on_game_start`` on GameStarted, ``on_trick_end`` and
  ``on_round_end`` on the TrickWon / RoundScored events with a view built
  from the SDK's own model of the game (updated from every event and
  re-synchronised from each DecisionRequest's complete view; it follows
  every variant: bids revealed together, before play or after the tricks
  (then the seat's own bid is the one it sent), the blind first round's
  ``others_hands`` and the cards the rules play for it, trump named in the
  middle of play or printed on a suited Wizard, the dealer chosen by score
  or drawn, fixed trumps),
  ``on_game_end`` on GameOver. A hook that raises is logged with its
  traceback (once; repeats are counted as for decisions); play goes on.
* **Checking the referee**: each DecisionRequest's offered legal actions
  must equal, as sets, what the rules core computes from the request's own
  view (:meth:`SeatView.compute_legal_actions`). On a mismatch a warning
  names both sets and the SDK **trusts the referee** (it decides what is
  accepted): the bot sees the offered actions in ``view.legal_actions``.
  ``strict=True`` raises :class:`ProtocolError` instead.
* **The bot fails**: if its method raises (or returns something that is not
  an action of the kind asked, or an action not offered), the error is
  logged with its traceback and the SDK **sends the referee's default
  action** (:func:`~wizard_arena.rules.default_action`) at once. The move is
  the one the referee would play on a timeout, but the game does not wait
  for the deadline; the fault is in the log, not in the referee's record.
  The same error again (the same exception raised from the same lines, or
  the same kind of unusable answer) is not logged in full again: it is
  counted, and at the end of the game one line says ``the same error again
  (xN)`` (:mod:`wizard_arena.client.errorlog`; each repeat is logged at DEBUG).
* **Deadlines**: the time a decision took is measured from the request's
  arrival. An answer ready only after ``time_left`` is not sent (the
  referee has already played its default; sending would only be rejected)
  and a warning says by how much the bot overran. Ordinary bots cannot be
  interrupted; :class:`AsyncBot` decisions under :func:`serve_bot` are
  cancelled ``margin`` seconds before the deadline and the default is sent.
* **ActionRejected**: logged as a warning. If the request is still open
  (``time_left > 0``), the bot is asked again **once** with the same view;
  if it answers an action already refused, or fails, the default action is
  sent instead; after that nothing more (the referee's timeout default
  applies). ``strict=True`` raises :class:`ActionRejectedError`.
* **Errors**: server statuses become exceptions: :class:`VersionMismatchError`
  (FAILED_PRECONDITION), :class:`AuthenticationError` (UNAUTHENTICATED),
  :class:`ProtocolError` (INVALID_ARGUMENT, or a malformed server message),
  :class:`ServerFullError` (RESOURCE_EXHAUSTED), :class:`ConnectionLostError`
  (UNAVAILABLE, or CANCELLED by the server), :class:`ServerError` (anything
  else). All derive from
  :class:`ArenaError`.
* **Reconnecting**: with ``reconnect=True`` a refused or dropped connection
  (UNAVAILABLE) is retried with exponential backoff (0.25 s doubling to
  8 s, with jitter) until ``reconnect_timeout`` seconds pass without a
  successful Welcome; then :class:`ConnectionLostError` is raised. The
  reconnecting Hello carries the lost session's ``Welcome.resume_token``:
  within the server's reconnect window the bot takes its seat back and the
  game goes on (the server sends the game in progress again; ``on_game_start``
  is not called a second time). Otherwise (the window has passed, or the
  server does not know the token) the bot starts a new session and a game
  cut off by the drop is forgotten (the referee plays it on).
* **Ctrl-C**: :class:`KeyboardInterrupt` (or trio cancellation) cancels the
  stream and closes the channel before it propagates; the ``wizard-arena
  bot`` command then exits with status 130.

The SDK logs to the ``wizard_arena.client`` logger.
It may import the rules, the protocol room and :mod:`wizard_arena.bot`;
nothing of the server.
"""

from __future__ import annotations

import inspect
import logging
import math
import queue
import random
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Final

import grpc
import trio

from wizard_arena import __version__
from wizard_arena.bot import Bot, BotError, GameInfo, GameSummary, decide, to_action
from wizard_arena.client.errorlog import ErrorLog
from wizard_arena.protocol import wire
from wizard_arena.protocol.messages import (
    PROTOCOL_VERSIONS,
    ActionMsg,
    ActionRejected,
    DecisionRequest,
    FaultSummary,
    GameEnd,
    Hello,
    RoundStart,
    ServerInfo,
    ServerMsg,
    TableEvent,
    Welcome,
)
from wizard_arena.rules import (
    Action,
    Bid,
    BidMade,
    CardPlayed,
    Phase,
    RoundResult,
    RoundScored,
    SeatView,
    Trick,
    TrickWon,
    TrumpChosen,
    action_text,
    default_action,
)
from wizard_arena.rules.laws import VARIANT_OPTIONS

__all__ = [
    "DEFAULT_SERVER",
    "RULE_OPTIONS",
    "SDK_NAME",
    "ActionRejectedError",
    "ArenaError",
    "AsyncBot",
    "AuthenticationError",
    "BotSession",
    "ConnectionLostError",
    "ProtocolError",
    "RunResult",
    "ServerError",
    "ServerFullError",
    "VersionMismatchError",
    "open_bot_session",
    "run_bot",
    "serve_bot",
    "server_info",
]

log = logging.getLogger("wizard_arena.client")

#: Where :func:`run_bot` connects by default.
DEFAULT_SERVER: Final = "127.0.0.1:50051"
#: ``Hello.sdk_name`` of this SDK.
SDK_NAME: Final = "wizard-arena-python"
#: The rule options this SDK can play, sent in ``Hello.rule_options`` unless
#: a bot gives its own list: every variant of the rules core.
RULE_OPTIONS: Final[tuple[str, ...]] = VARIANT_OPTIONS

_BACKOFF_START = 0.25
_BACKOFF_MAX = 8.0
_CLOSE_GRACE = 2.0


# -- errors ------------------------------------------------------------------------


class ArenaError(Exception):
    """An error ending a bot's session. ``code`` is the gRPC status name
    (``""`` when the error was found by the SDK), ``details`` the server's text."""

    def __init__(self, message: str, *, code: str = "", details: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.details = details


class VersionMismatchError(ArenaError):
    """FAILED_PRECONDITION: no protocol version in common, or the bot cannot
    play the table's rule options."""


class AuthenticationError(ArenaError):
    """UNAUTHENTICATED: the access token is missing or wrong."""


class ProtocolError(ArenaError):
    """INVALID_ARGUMENT from the server, a server message the SDK cannot
    decode, or (with ``strict=True``) a referee that disagrees with the rules."""


class ServerFullError(ArenaError):
    """RESOURCE_EXHAUSTED: the server seats no more bots."""


class ConnectionLostError(ArenaError):
    """UNAVAILABLE: the server cannot be reached or dropped the connection
    (raised once reconnecting, if enabled, has given up)."""


class ServerError(ArenaError):
    """Any other status ending the stream (INTERNAL, UNKNOWN, ...)."""


class ActionRejectedError(ArenaError):
    """With ``strict=True``: the referee refused one of the bot's actions.
    ``rejection`` is the :class:`~wizard_arena.protocol.messages.ActionRejected` message."""

    def __init__(self, rejection: ActionRejected) -> None:
        super().__init__(
            f"action for request {rejection.request_id} rejected "
            f"({rejection.code}): {rejection.message}",
            details=rejection.message,
        )
        self.rejection = rejection


_STATUS_ERRORS: dict[grpc.StatusCode, type[ArenaError]] = {
    grpc.StatusCode.FAILED_PRECONDITION: VersionMismatchError,
    grpc.StatusCode.UNAUTHENTICATED: AuthenticationError,
    grpc.StatusCode.INVALID_ARGUMENT: ProtocolError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ServerFullError,
    grpc.StatusCode.UNAVAILABLE: ConnectionLostError,
    grpc.StatusCode.CANCELLED: ConnectionLostError,  # by the server, or the network
}


def _error_from_rpc(err: grpc.RpcError, server: str) -> ArenaError:
    code_fn = getattr(err, "code", None)
    details_fn = getattr(err, "details", None)
    code = code_fn() if callable(code_fn) else grpc.StatusCode.UNKNOWN
    details = (details_fn() if callable(details_fn) else "") or ""
    cls = _STATUS_ERRORS.get(code, ServerError)
    name = code.name if isinstance(code, grpc.StatusCode) else str(code)
    what = {
        VersionMismatchError: "the server refused the bot (version or rule options)",
        AuthenticationError: "the server refused the access token",
        ProtocolError: "the server reports a protocol error",
        ServerFullError: "the server is full",
        ConnectionLostError: "cannot reach the server or the connection dropped",
    }.get(cls, "the server ended the stream")
    return cls(f"{server}: {what}: {name}: {details}".rstrip(": "), code=name, details=details)


# -- results -----------------------------------------------------------------------


@dataclass
class RunResult:
    """What a bot's run came to (returned by :func:`run_bot` and :func:`serve_bot`)."""

    games: list[GameSummary] = field(default_factory=list)
    """Each finished game, in order."""
    faults: list[FaultSummary] = field(default_factory=list)
    """Faults the referee recorded against this bot's seat (from GameOver)."""
    decisions: int = 0
    """Decision requests received."""
    bot_errors: int = 0
    """Times the bot raised or returned something unusable (a default was sent)."""
    hook_errors: int = 0
    """Times one of the bot's ``on_*`` hooks raised."""
    defaults_sent: int = 0
    """Default actions the SDK sent for the bot."""
    overruns: int = 0
    """Decisions answered after the deadline (nothing sent)."""
    rejections: int = 0
    """ActionRejected messages received."""
    mismatches: int = 0
    """Requests whose offered legal actions differed from the rules core's."""
    reconnects: int = 0
    """Successful reconnections after a dropped connection."""
    welcome: Welcome | None = None
    """The last Welcome received."""


# -- the async bot -----------------------------------------------------------------


class AsyncBot:
    """Base class of a bot whose decisions are trio coroutines (for
    :func:`serve_bot`). The methods mirror :class:`~wizard_arena.bot.Bot`'s.

    A decision is cancelled ``margin`` seconds before its deadline and the
    referee's default action is sent; use :func:`trio.to_thread.run_sync`
    for long CPU-bound work so the event loop stays responsive.
    """

    name: str = "bot"

    async def bid(self, view: SeatView) -> Any:
        """How many tricks to bid (an ``int`` or :class:`~wizard_arena.rules.Bid`)."""
        raise NotImplementedError(f"{type(self).__name__} must implement bid(view)")

    async def play(self, view: SeatView) -> Any:
        """Which card to play (a :class:`~wizard_arena.rules.Card` or ``Play``)."""
        raise NotImplementedError(f"{type(self).__name__} must implement play(view)")

    async def choose_trump(self, view: SeatView) -> Any:
        """The trump suit after a turned Wizard; by default as :class:`Bot`'s."""
        return Bot.choose_trump(_PLAIN_BOT, view)

    async def on_game_start(self, info: GameInfo) -> None:
        """The game starts."""

    async def on_trick_end(self, view: SeatView, trick: Trick) -> None:
        """A trick was completed (``view`` is taken just after it)."""

    async def on_round_end(self, view: SeatView, result: RoundResult) -> None:
        """A round was scored."""

    async def on_game_end(self, summary: GameSummary) -> None:
        """The game is over."""


_PLAIN_BOT: Final = Bot()


async def _decide_async(bot: AsyncBot, view: SeatView) -> Action:
    phase = view.phase
    if phase is Phase.PLAY:
        return to_action(view, await bot.play(view))
    if phase is Phase.BID:
        return to_action(view, await bot.bid(view))
    if phase is Phase.CHOOSE_TRUMP:
        return to_action(view, await bot.choose_trump(view))
    raise BotError(f"no decision in phase {phase.value}")


# -- the model of one table ----------------------------------------------------------


class _Table:
    """One game as this seat sees it, kept up to date from the server's
    messages (the SDK's own model, checked against every DecisionRequest).

    It follows the rules core through the variants: with hidden bids every
    seat bids at once and the BidMade events arrive together; in a blind
    first round the seat holds ``others_hands`` and no hand of its own, and
    the rules play the cards after the last bid (only CardPlayed events
    arrive); with tricksy a Wizard's player names the trump in the middle
    of play (CHOOSE_TRUMP, then TrumpChosen; ``next_trump`` until the trick
    is complete); with tricksy_suited a Wizard's printed suit is trump at
    once; with reveal_bids_after_tricks play starts without any BidMade (the
    seat knows only the bid it sent) and the BidMade events come after the
    last trick."""

    def __init__(self, info: GameInfo) -> None:
        self.info = info
        rules = info.rules
        n = rules.players
        self.n = n
        self.phase = Phase.DEAL
        self.round = 0
        self.cards = 0
        self.dealer = 0
        self.to_act: int | None = None
        self.hand: list[Any] = []
        self.others_hands: tuple[tuple[Any, ...], ...] = ()
        self.turned_card: Any = None
        self.trump: Any = None
        self.next_trump: Any = None
        self.bids: list[int | None] = [None] * n
        self.leader = 0
        self.trick: list[Any] = []
        self.tricks: list[Trick] = []
        self.tricks_won = [0] * n
        self.totals = [0] * n
        self.results: list[RoundResult] = []
        self.resume: int | None = None
        """Tricksy: who plays once the pending trump choice is made."""
        self.warned = False
        """Whether a difference from the referee's view was reported."""
        self.resumed = False
        """Re-created on a resumed session: the next view is taken as it is."""
        self.sent_bid: int | None = None
        """Reveal after tricks: this seat's bid (the one it sent, or the
        referee's default), the only one it sees until the last trick."""

    def view(self) -> SeatView:
        return SeatView(
            rules=self.info.rules,
            seat=self.info.seat,
            phase=self.phase,
            round=self.round,
            cards_per_player=self.cards,
            dealer=self.dealer,
            to_act=self.to_act,
            hand=tuple(self.hand),
            turned_card=self.turned_card,
            trump=self.trump,
            bids=tuple(self.bids),
            leader=self.leader,
            trick=tuple(self.trick),
            tricks=tuple(self.tricks),
            tricks_won=tuple(self.tricks_won),
            totals=tuple(self.totals),
            results=tuple(self.results),
            others_hands=self.others_hands,
            next_trump=self.next_trump,
        )

    def sync(self, v: SeatView) -> None:
        """Take the server's complete view as the truth."""
        self.phase = v.phase
        self.round = v.round
        self.cards = v.cards_per_player
        self.dealer = v.dealer
        self.to_act = v.to_act
        self.hand = list(v.hand)
        self.others_hands = v.others_hands
        self.turned_card = v.turned_card
        self.trump = v.trump
        self.next_trump = v.next_trump
        self.bids = list(v.bids)
        self.leader = v.leader
        self.trick = list(v.trick)
        self.tricks = list(v.tricks)
        self.tricks_won = list(v.tricks_won)
        self.totals = list(v.totals)
        self.results = list(v.results)
        self.resume = None
        if v.phase is Phase.CHOOSE_TRUMP and (v.trick or v.tricks) and v.to_act is not None:
            # tricksy: play resumes after the Wizard, or with the winner of its trick
            self.resume = (v.to_act + 1) % self.n if v.trick else v.leader

    def _start_play(self) -> None:
        self.phase = Phase.PLAY
        self.to_act = self.leader
        self.others_hands = ()  # a blind first round's cards are played now

    def bidding_over(self, view: SeatView) -> None:
        """Reveal after tricks: no message says that the last hidden bid is in;
        a view of this round past the bidding (a request) does."""
        if (
            self.info.rules.reveal_bids_after_tricks
            and self.phase is Phase.BID
            and view.round == self.round
            and view.phase is not Phase.BID
        ):
            self._start_play()
            self.bids[self.info.seat] = self.sent_bid

    def _start_bidding(self) -> None:
        self.phase = Phase.BID
        if self.info.rules.hidden_bids:  # everyone bids at once, this seat too
            self.to_act = self.info.seat
        else:
            self.to_act = (self.dealer + 1) % self.n

    def round_started(self, m: RoundStart) -> None:
        n = self.n
        self.round = m.round
        self.dealer = m.dealer
        self.cards = m.cards
        self.hand = list(m.hand)
        self.others_hands = m.others_hands
        self.turned_card = m.turned_card
        self.trump = m.trump
        self.next_trump = None
        self.resume = None
        self.bids = [None] * n
        self.sent_bid = None
        self.leader = (m.dealer + 1) % n
        self.trick = []
        self.tricks = []
        self.tricks_won = [0] * n
        if m.trump_pending:
            self.phase = Phase.CHOOSE_TRUMP
            self.to_act = m.dealer
        else:
            self._start_bidding()

    def event(self, ev: object) -> None:
        n = self.n
        rules = self.info.rules
        if isinstance(ev, CardPlayed):
            if self.phase is Phase.BID and rules.reveal_bids_after_tricks:  # bids all in
                self._start_play()
                self.bids[self.info.seat] = self.sent_bid
            # tricksy: a Wizard's player names trump, unless no trick follows this
            # one; tricksy_suited: a Wizard's printed suit is trump at once
            choose = False
            card = ev.card
            if card.is_wizard and (rules.tricksy or rules.tricksy_suited):
                if card.wizard_suit is not None and rules.tricksy_suited:
                    self.trump = card.wizard_suit
                else:
                    choose = len(self.tricks) + 1 < self.cards
            self.trick.append(ev.card)
            if ev.seat == self.info.seat and ev.card in self.hand:
                self.hand.remove(ev.card)
            complete = len(self.trick) >= n
            if choose:
                self.phase = Phase.CHOOSE_TRUMP
                self.to_act = ev.seat
                self.resume = None if complete else (ev.seat + 1) % n
            else:
                self.to_act = None if complete else (ev.seat + 1) % n
        elif isinstance(ev, TrickWon):
            self.tricks.append(ev.trick)
            self.tricks_won[ev.winner] += 1
            self.trick = []
            self.leader = ev.winner
            if self.next_trump is not None:
                self.trump = self.next_trump
                self.next_trump = None
            if self.phase is Phase.CHOOSE_TRUMP:  # tricksy: the choice comes first
                self.resume = ev.winner
            else:
                self.to_act = ev.winner if len(self.tricks) < self.cards else None
        elif isinstance(ev, BidMade):
            self.bids[ev.seat] = ev.bid
            if rules.reveal_bids_after_tricks:
                pass  # revealed after the last trick: play is over
            elif ev.seat == self.dealer:  # the last bid (hidden bids: revealed in this order)
                self._start_play()
            elif rules.hidden_bids:
                self.to_act = None
            else:
                self.to_act = (ev.seat + 1) % n
        elif isinstance(ev, TrumpChosen):
            if self.phase is Phase.CHOOSE_TRUMP and (self.trick or self.tricks):
                # tricksy: in force from the next trick (at once between tricks;
                # tricksy_suited: at once)
                if self.trick and not rules.tricksy_suited:
                    self.next_trump = ev.suit
                else:
                    self.trump = ev.suit
                self.phase = Phase.PLAY
                self.to_act = self.resume
                self.resume = None
            else:  # the dealer's choice after a turned Wizard
                self.trump = ev.suit
                self._start_bidding()
        elif isinstance(ev, RoundScored):
            self.results.append(ev.result)
            self.totals = list(ev.result.totals)
            self.to_act = None
            self.next_trump = None
            self.resume = None
            last = self.round >= rules.rounds
            self.phase = Phase.GAME_OVER if last else Phase.DEAL


def _view_difference(model: SeatView, server: SeatView) -> str:
    """The first fields in which two views differ, as text ('' if equal)."""
    diffs = []
    for name in (
        "seat", "phase", "round", "cards_per_player", "dealer", "to_act", "hand",
        "turned_card", "trump", "bids", "leader", "trick", "tricks", "tricks_won",
        "totals", "results", "others_hands", "next_trump",
    ):  # fmt: skip
        a, b = getattr(model, name), getattr(server, name)
        if a != b:
            diffs.append(f"{name}: model {a!r}, server {b!r}")
    return "; ".join(diffs[:3])


# -- the protocol logic, free of I/O ---------------------------------------------------


@dataclass
class _Pending:
    """An open decision request and what was tried for it."""

    request: DecisionRequest
    view: SeatView
    received: float
    tried: list[Action] = field(default_factory=list)
    reasked: bool = False
    default_sent: bool = False

    @property
    def deadline(self) -> float | None:
        t = self.view.time_left
        return self.received + t if t else None


@dataclass(frozen=True, slots=True)
class _Hook:
    name: str
    args: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class _Ask:
    pending: _Pending


@dataclass(frozen=True, slots=True)
class _Send:
    msg: ActionMsg


_Effect = _Hook | _Ask | _Send


class _Driver:
    """Turns server messages into hook calls, questions to the bot and
    actions to send; shared by the blocking and the trio runner."""

    def __init__(self, result: RunResult, *, strict: bool, games: int | None) -> None:
        self.result = result
        self.strict = strict
        self.games = games
        self.tables: dict[str, _Table] = {}
        self.pending: _Pending | None = None
        self.errors = ErrorLog(log)
        """The bot's errors: each in full once, then counted."""
        self.resume_token = ""
        """The current session's Welcome.resume_token (sent when reconnecting)."""

    @property
    def done(self) -> bool:
        return self.games is not None and len(self.result.games) >= self.games

    def reset(self) -> None:
        """The connection dropped: games in progress are kept while the
        session may be resumed, else they are gone."""
        self.pending = None
        if not self.resume_token:
            self.forget_games()

    def forget_games(self) -> None:
        for gid in self.tables:
            log.warning("game %s was cut off by the lost connection", gid)
            self.errors.flush(f"game {gid}")
        self.tables.clear()

    def receive(self, msg: ServerMsg, at: float | None = None) -> list[_Effect]:
        """Handle ``msg``, received at ``at`` (``time.monotonic()``; now by default)."""
        if isinstance(msg, DecisionRequest):
            return self._request(msg, time.monotonic() if at is None else at)
        if isinstance(msg, TableEvent):
            return self._event(msg)
        if isinstance(msg, RoundStart):
            table = self.tables.get(msg.game_id)
            if table is not None:
                table.round_started(msg)
            return []
        if isinstance(msg, GameInfo):
            if msg.game_id in self.tables:  # a resumed session: the game goes on
                table = self.tables[msg.game_id] = _Table(msg)
                table.resumed = True
                log.info("game %s resumed: seat %d", msg.game_id, msg.seat)
                return []
            self.tables[msg.game_id] = _Table(msg)
            log.info(
                "game %s started: seat %d of %s, %s, bot seed %s",
                msg.game_id,
                msg.seat,
                ", ".join(msg.names),
                f"{msg.move_time:g} s per move" if msg.move_time else "no time limit",
                msg.seed if msg.seed is not None else "none",
            )
            return [_Hook("on_game_start", (msg,))]
        if isinstance(msg, ActionRejected):
            return self._rejected(msg)
        if isinstance(msg, GameEnd):
            return self._game_over(msg)
        if isinstance(msg, Welcome):
            self.welcome(msg)
        return []

    def welcome(self, msg: Welcome) -> None:
        if msg.version not in PROTOCOL_VERSIONS:
            raise ProtocolError(
                f"the server chose protocol version {msg.version}; "
                f"this SDK speaks {list(PROTOCOL_VERSIONS)}"
            )
        self.result.welcome = msg
        if msg.resumed:
            log.info("session %s resumed", msg.session_id)
        else:
            self.forget_games()
        self.resume_token = msg.resume_token

    def hello(self, hello: Hello) -> Hello:
        """The Hello to send on a new stream: with the resume token, if any."""
        return replace(hello, resume_token=self.resume_token)

    def refused_resume(self, err: ArenaError) -> bool:
        """Whether ``err`` refuses the resume token (the server does not know
        it, e.g. it restarted): then the token is dropped, to start afresh."""
        if self.resume_token and err.details == "unknown resume token":
            log.warning("the server does not know the session any more; starting a new one")
            self.resume_token = ""
            self.forget_games()
            return True
        return False

    def _event(self, msg: TableEvent) -> list[_Effect]:
        table = self.tables.get(msg.game_id)
        if table is None:
            log.debug("event for unknown game %s ignored", msg.game_id)
            return []
        ev = msg.event
        table.event(ev)
        if isinstance(ev, TrickWon):
            return [_Hook("on_trick_end", (table.view(), ev.trick))]
        if isinstance(ev, RoundScored):
            return [_Hook("on_round_end", (table.view(), ev.result))]
        return []

    def _request(self, req: DecisionRequest, now: float) -> list[_Effect]:
        self.result.decisions += 1
        view = req.view
        effects: list[_Effect] = []
        table = self.tables.get(req.game_id)
        if table is None:
            names = tuple("" for _ in range(view.players))
            info = GameInfo(req.game_id, view.rules, view.seat, names)
            table = self.tables[req.game_id] = _Table(info)
            log.info("joined game %s in progress (seat %d)", req.game_id, view.seat)
            effects.append(_Hook("on_game_start", (info,)))
        elif table.resumed:  # the events missed while away come with this view
            table.resumed = False
        elif not table.warned:  # (re-synchronised at every request; warn once a game)
            table.bidding_over(view)
            diff = _view_difference(table.view(), view)
            if diff:
                table.warned = True
                self._disagree(
                    f"game {req.game_id}: the SDK's model of the game differs from the "
                    f"referee's view at request {req.request_id} ({diff}); using the referee's"
                )
        table.sync(view)
        offered = view.legal_actions
        computed = view.compute_legal_actions()
        if set(offered) != set(computed):
            self.result.mismatches += 1
            self._disagree(
                f"game {req.game_id}, request {req.request_id}: the referee offers "
                f"{_actions(offered)} but the rules give {_actions(computed)}; "
                "trusting the referee"
            )
            if not offered:
                view = replace(view, legal_actions=computed)
        if not view.legal_actions:
            raise ProtocolError(f"request {req.request_id} offers no legal action")
        self.pending = _Pending(req, view, now)
        effects.append(_Ask(self.pending))
        return effects

    def _disagree(self, text: str) -> None:
        if self.strict:
            raise ProtocolError(text)
        log.warning("%s", text)

    def decided(
        self, pending: _Pending, outcome: Action | BaseException, took: float
    ) -> ActionMsg | None:
        """The bot answered ``pending`` with ``outcome`` (an action, or what it
        raised) after ``took`` seconds: the message to send, if any."""
        req, view = pending.request, pending.view
        where = f"game {req.game_id}, round {view.round}, {view.phase.value}"
        action: Action | None = None
        if isinstance(outcome, BaseException):
            if self.strict:
                raise outcome
            self.result.bot_errors += 1
            self.errors.exception(
                outcome,
                "the bot raised in %s (request %s); sending the default action",
                where,
                req.request_id,
            )
        elif outcome not in view.legal_actions or outcome in pending.tried:
            again = " again" if outcome in pending.tried else ""
            text = (
                f"the bot chose {action_text(outcome)}{again} in {where}, which is not "
                f"legal (legal: {_actions(view.legal_actions)})"
            )
            if self.strict:
                raise BotError(text)
            self.result.bot_errors += 1
            kind = f"a {view.phase.value} that is not legal"
            self.errors.report(kind, kind, "%s; sending the default action", text)
        else:
            action = outcome
        deadline = pending.deadline
        if deadline is not None and pending.received + took > deadline:
            self._note_bid(pending, default_action(view.legal_actions))  # the referee's
            self.result.overruns += 1
            log.warning(
                "the bot took %.3f s in %s; %.3f s were left: nothing sent, the "
                "referee plays its default",
                took,
                where,
                view.time_left,
            )
            return None
        if action is None:
            return self.default_for(pending)
        pending.tried.append(action)
        self._note_bid(pending, action)
        log.debug("%s: %s after %.1f ms", where, action_text(action), took * 1000)
        return ActionMsg(req.request_id, action)

    def _note_bid(self, pending: _Pending, action: Action) -> None:
        """Keep the bid sent: with bids revealed after the tricks no message
        tells the seat its own bid before the last trick."""
        table = self.tables.get(pending.request.game_id)
        if table is not None and isinstance(action, Bid):
            table.sent_bid = action.bid

    def default_for(self, pending: _Pending) -> ActionMsg | None:
        if pending.default_sent:
            return None
        pending.default_sent = True
        action = default_action(pending.view.legal_actions)
        pending.tried.append(action)
        self._note_bid(pending, action)
        self.result.defaults_sent += 1
        return ActionMsg(pending.request.request_id, action)

    def _rejected(self, msg: ActionRejected) -> list[_Effect]:
        self.result.rejections += 1
        if self.strict:
            raise ActionRejectedError(msg)
        log.warning(
            "the referee rejected the action for request %s (%s): %s; %.3f s left",
            msg.request_id,
            msg.code,
            msg.message,
            msg.time_left,
        )
        pending = self.pending
        if pending is None or pending.request.request_id != msg.request_id:
            return []
        if msg.time_left <= 0 or msg.code == "unknown_request":
            return []
        pending.view = pending.view.with_time_left(msg.time_left)
        pending.received = time.monotonic()
        if not pending.reasked and not pending.default_sent:
            pending.reasked = True
            log.info("asking the bot again for request %s", msg.request_id)
            return [_Ask(pending)]
        out = self.default_for(pending)
        return [_Send(out)] if out is not None else []

    def _game_over(self, msg: GameEnd) -> list[_Effect]:
        table = self.tables.pop(msg.game_id, None)
        if table is None:
            return []
        seat = table.info.seat
        summary = GameSummary(msg.game_id, seat, msg.totals, msg.ranks, tuple(table.results))
        self.result.games.append(summary)
        mine = [f for f in msg.faults if f.seat == seat]
        self.result.faults.extend(mine)
        log.info(
            "game %s over: rank %s with %s points%s",
            msg.game_id,
            msg.ranks[seat] if seat < len(msg.ranks) else "?",
            msg.totals[seat] if seat < len(msg.totals) else "?",
            "; faults: " + ", ".join(f"{f.code} x{f.count}" for f in mine) if mine else "",
        )
        if self.pending is not None and self.pending.request.game_id == msg.game_id:
            self.pending = None
        self.errors.flush(f"game {msg.game_id}")
        return [_Hook("on_game_end", (summary,))]

    def hook_failed(self, name: str, exc: BaseException) -> None:
        if self.strict:
            raise exc
        self.result.hook_errors += 1
        self.errors.exception(exc, "the bot's %s hook raised; play goes on", name)

    def finish(self) -> None:
        """The run ends: count the repeated errors of a game left unfinished."""
        for gid in self.tables:
            self.errors.flush(f"game {gid}")


def _actions(actions: Sequence[Action]) -> str:
    return "[" + ", ".join(action_text(a) for a in actions) + "]"


# -- connection helpers ------------------------------------------------------------------


def _hello(name: str, token: str | None, rule_options: Sequence[str] | None) -> Hello:
    return Hello(
        bot_name=name,
        min_version=min(PROTOCOL_VERSIONS),
        max_version=max(PROTOCOL_VERSIONS),
        token=token or "",
        sdk_name=SDK_NAME,
        sdk_version=__version__,
        rule_options=RULE_OPTIONS if rule_options is None else tuple(rule_options),
    )


def _bot_name(bot: object, name: str | None) -> str:
    if name:
        return name
    own = getattr(bot, "name", "")
    if own and own != "bot":
        return str(own)
    return type(bot).__name__


def _channel(
    server: str,
    credentials: grpc.ChannelCredentials | None,
    options: Sequence[tuple[str, Any]],
) -> grpc.Channel:
    if credentials is not None:
        return grpc.secure_channel(server, credentials, options=list(options))
    return grpc.insecure_channel(server, options=list(options))


_CLOSE: Final = object()


def _requests(outbox: queue.SimpleQueue[Any]) -> Iterator[Any]:
    """The request stream: whatever is put in ``outbox`` until ``_CLOSE``."""
    while True:
        item = outbox.get()
        if item is _CLOSE:
            return
        yield item


def _decode(pb_msg: Any) -> ServerMsg:
    try:
        return wire.decode_server(pb_msg)
    except wire.WireError as e:
        raise ProtocolError(f"malformed message from the server: {e}") from None


class _Backoff:
    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.reset()

    def reset(self) -> None:
        self.delay = _BACKOFF_START
        self.since: float | None = None

    def next_delay(self, err: ArenaError) -> float:
        """Seconds to wait before the next attempt; re-raises ``err`` when
        reconnecting has taken too long."""
        now = time.monotonic()
        if self.since is None:
            self.since = now
        if now - self.since >= self.timeout:
            raise err
        delay = min(self.delay, max(0.0, self.since + self.timeout - now))
        self.delay = min(self.delay * 2, _BACKOFF_MAX)
        return delay * random.uniform(0.8, 1.0)


def server_info(
    server: str = DEFAULT_SERVER,
    *,
    timeout: float = 5.0,
    credentials: grpc.ChannelCredentials | None = None,
) -> ServerInfo:
    """Ask ``server`` (``host:port``) for its version, protocol versions, rules
    and time limit (the GetServerInfo call)."""
    with _channel(server, credentials, ()) as channel:
        try:
            reply = wire.stub(channel).GetServerInfo(wire.server_info_request(), timeout=timeout)
        except grpc.RpcError as e:
            raise _error_from_rpc(e, server) from None
    try:
        return wire.decode_server_info(reply)
    except wire.WireError as e:
        raise ProtocolError(f"malformed ServerInfo from {server}: {e}") from None


# -- the blocking runner -------------------------------------------------------------------


def run_bot(
    bot: Bot,
    server: str = DEFAULT_SERVER,
    name: str | None = None,
    token: str | None = None,
    games: int | None = None,
    reconnect: bool = True,
    *,
    reconnect_timeout: float = 60.0,
    strict: bool = False,
    rule_options: Sequence[str] | None = None,
    credentials: grpc.ChannelCredentials | None = None,
    channel_options: Sequence[tuple[str, Any]] = (),
) -> RunResult:
    """Connect ``bot`` to ``server`` (``host:port``) and play until the
    server ends the stream, or ``games`` games are over. Blocks.

    ``name`` defaults to the bot's ``name`` attribute (or its class name);
    ``token`` is sent when the server requires one; ``rule_options`` (default
    :data:`RULE_OPTIONS`) are the rule variants the bot can play. See the
    module documentation for errors, deadlines, rejections and reconnecting.
    Raises an :class:`ArenaError`; ``KeyboardInterrupt`` closes the stream
    and propagates.
    """
    if games is not None and games < 1:
        raise ValueError("games must be at least 1")
    result = RunResult()
    driver = _Driver(result, strict=strict, games=games)
    hello = _hello(_bot_name(bot, name), token, rule_options)
    backoff = _Backoff(reconnect_timeout)
    connected_before = False
    while True:
        welcomed = False

        def on_welcome() -> None:
            nonlocal welcomed, connected_before
            welcomed = True
            if connected_before:
                result.reconnects += 1
            connected_before = True
            backoff.reset()

        try:
            _run_stream(
                bot,
                server,
                wire.encode_bot(driver.hello(hello)),
                driver,
                credentials,
                channel_options,
                on_welcome,
            )
            driver.finish()
            return result
        except ArenaError as e:
            try:
                delay = _after_stream_error(e, driver, welcomed, reconnect, backoff)
            except ArenaError:
                driver.finish()
                raise
            time.sleep(delay)


def _after_stream_error(
    e: ArenaError, driver: _Driver, welcomed: bool, reconnect: bool, backoff: _Backoff
) -> float:
    """After a stream ended with ``e``: the delay before connecting again (0 to
    retry at once with a fresh session); re-raises ``e`` when the bot must stop."""
    if not isinstance(e, ConnectionLostError):
        if driver.refused_resume(e):
            return 0.0
        raise e
    if welcomed:
        driver.reset()
    if not reconnect:
        raise e
    delay = backoff.next_delay(e)
    log.warning("%s; reconnecting in %.2f s", e, delay)
    return delay


def _run_stream(
    bot: Bot,
    server: str,
    hello: Any,
    driver: _Driver,
    credentials: grpc.ChannelCredentials | None,
    channel_options: Sequence[tuple[str, Any]],
    on_welcome: Callable[[], None],
) -> None:
    outbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
    outbox.put(hello)
    with _channel(server, credentials, channel_options) as channel:
        call = wire.stub(channel).Play(_requests(outbox))
        timer: threading.Timer | None = None
        try:
            first = True
            for pb_msg in call:
                at = time.monotonic()
                msg = _decode(pb_msg)
                if first:
                    if not isinstance(msg, Welcome):
                        raise ProtocolError(f"the server's first message is not a Welcome: {msg}")
                    driver.welcome(msg)
                    log.info(
                        "connected to %s (server %s, session %s)",
                        server,
                        msg.server_version,
                        msg.session_id,
                    )
                    on_welcome()
                    first = False
                    continue
                if driver.done:
                    continue  # stopping: a next game may already have been seated
                for effect in driver.receive(msg, at):
                    out = _perform(bot, driver, effect)
                    if out is not None:
                        outbox.put(wire.encode_bot(out))
                if driver.done and timer is None:
                    # Half-close: no more games; give the server a moment to end the stream.
                    outbox.put(_CLOSE)
                    timer = threading.Timer(_CLOSE_GRACE, call.cancel)
                    timer.daemon = True
                    timer.start()
        except grpc.RpcError as e:
            if driver.done:
                return  # the games are played; how the stream ended does not matter
            raise _error_from_rpc(e, server) from None
        finally:
            outbox.put(_CLOSE)
            if timer is not None:
                timer.cancel()
            call.cancel()


def _perform(bot: Bot, driver: _Driver, effect: _Effect) -> ActionMsg | None:
    if isinstance(effect, _Send):
        return effect.msg
    if isinstance(effect, _Hook):
        try:
            getattr(bot, effect.name)(*effect.args)
        except Exception as e:
            driver.hook_failed(effect.name, e)
        return None
    pending = effect.pending
    outcome: Action | BaseException
    try:
        outcome = decide(bot, pending.view)
    except Exception as e:
        outcome = e
    took = time.monotonic() - pending.received
    return driver.decided(pending, outcome, took)


# -- the trio bridge ---------------------------------------------------------------------------


class BotSession:
    """One open Play stream, as trio sees it (from :func:`open_bot_session`).

    Iterate it (``async for msg in session``) or call :meth:`receive` for
    the server's messages as domain values; answer with :meth:`send_action`.
    The gRPC stream runs in a helper thread; nothing here blocks trio.
    """

    def __init__(
        self,
        server: str,
        welcome: Welcome,
        call: Any,
        outbox: queue.SimpleQueue[Any],
        inbox: trio.MemoryReceiveChannel[Any],
    ) -> None:
        self.server = server
        self.welcome = welcome
        """The server's Welcome."""
        self._call = call
        self._outbox = outbox
        self._inbox = inbox
        self._closed = False
        self.received_at = time.monotonic()
        """When the last message came off the network (``time.monotonic()``)."""

    async def receive(self) -> ServerMsg:
        """The next server message. Raises :class:`trio.EndOfChannel` when the
        server ended the stream normally, an :class:`ArenaError` when it ended
        it with an error status."""
        item, at = await self._inbox.receive()
        if isinstance(item, BaseException):
            self._inbox.close()
            raise item
        self.received_at = at
        return item  # type: ignore[no-any-return]

    def __aiter__(self) -> BotSession:
        return self

    async def __anext__(self) -> ServerMsg:
        try:
            return await self.receive()
        except (trio.EndOfChannel, trio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def send_action(self, request_id: str, action: Action) -> None:
        """Answer the DecisionRequest ``request_id``."""
        await self.send(ActionMsg(request_id, action))

    async def send(self, msg: ActionMsg) -> None:
        if self._closed:
            raise trio.ClosedResourceError("the session is closed")
        self._outbox.put(wire.encode_bot(msg))
        await trio.lowlevel.checkpoint()

    def close_sending(self) -> None:
        """Half-close: tell the server no more actions (and games) follow."""
        if not self._closed:
            self._closed = True
            self._outbox.put(_CLOSE)


def _reader(
    call: Any, server: str, send: trio.MemorySendChannel[Any], token: trio.lowlevel.TrioToken
) -> None:
    """Helper thread: the blocking gRPC response stream into a trio channel.

    Items are handed over with ``run_sync_soon`` (in order, without waiting
    for trio); each is ``(message or exception, arrival time)``."""

    def deliver(item: Any) -> None:  # runs in trio
        try:
            if item is _CLOSE:
                send.close()
            else:
                send.send_nowait(item)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            call.cancel()  # the session is closed: stop reading

    def put(item: Any) -> None:
        token.run_sync_soon(deliver, item if item is _CLOSE else (item, time.monotonic()))

    try:
        try:
            for pb_msg in call:
                try:
                    item: Any = _decode(pb_msg)
                except ProtocolError as e:
                    put(e)
                    call.cancel()
                    return
                put(item)
        except grpc.RpcError as e:
            put(_error_from_rpc(e, server))  # dropped if the session is already closed
            return
        put(_CLOSE)
    except trio.RunFinishedError:
        pass


@asynccontextmanager
async def open_bot_session(
    server: str = DEFAULT_SERVER,
    *,
    name: str,
    token: str | None = None,
    rule_options: Sequence[str] | None = None,
    credentials: grpc.ChannelCredentials | None = None,
    channel_options: Sequence[tuple[str, Any]] = (),
    resume_token: str = "",
) -> AsyncIterator[BotSession]:
    """Open a Play stream, send the Hello and wait for the Welcome.

    ``resume_token`` (a lost session's ``Welcome.resume_token``) asks to take
    that session back.

    Yields a :class:`BotSession`; leaving the block (normally, by an
    exception or by cancellation) cancels the stream and closes the channel.
    Raises an :class:`ArenaError` if the server refuses the bot.
    """
    outbox: queue.SimpleQueue[Any] = queue.SimpleQueue()
    hello = replace(_hello(name, token, rule_options), resume_token=resume_token)
    outbox.put(wire.encode_bot(hello))
    send, inbox = trio.open_memory_channel[Any](math.inf)
    channel = _channel(server, credentials, channel_options)
    session: BotSession | None = None
    call: Any = None
    try:
        call = wire.stub(channel).Play(_requests(outbox))
        thread = threading.Thread(
            target=_reader,
            args=(call, server, send, trio.lowlevel.current_trio_token()),
            name=f"wizard-arena-reader-{name}",
            daemon=True,
        )
        thread.start()
        first, _ = await inbox.receive()
        if isinstance(first, BaseException):
            raise first
        if not isinstance(first, Welcome):
            raise ProtocolError(f"the server's first message is not a Welcome: {first}")
        if first.version not in PROTOCOL_VERSIONS:
            raise ProtocolError(
                f"the server chose protocol version {first.version}; "
                f"this SDK speaks {list(PROTOCOL_VERSIONS)}"
            )
        session = BotSession(server, first, call, outbox, inbox)
        yield session
    except trio.EndOfChannel:
        raise ConnectionLostError(
            f"{server}: the server closed the stream before Welcome"
        ) from None
    finally:
        outbox.put(_CLOSE)
        if call is not None:
            call.cancel()
        inbox.close()
        channel.close()


async def serve_bot(
    bot: Bot | AsyncBot,
    server: str = DEFAULT_SERVER,
    name: str | None = None,
    token: str | None = None,
    games: int | None = None,
    reconnect: bool = True,
    *,
    reconnect_timeout: float = 60.0,
    strict: bool = False,
    margin: float = 0.1,
    rule_options: Sequence[str] | None = None,
    credentials: grpc.ChannelCredentials | None = None,
    channel_options: Sequence[tuple[str, Any]] = (),
    task_status: trio.TaskStatus[Welcome] = trio.TASK_STATUS_IGNORED,
) -> RunResult:
    """The trio form of :func:`run_bot`: play ``bot`` on ``server`` until the
    server ends the stream or ``games`` games are over.

    ``bot`` is an :class:`AsyncBot` (decisions are awaited and cancelled
    ``margin`` seconds before the deadline, then the default is sent) or a
    plain :class:`~wizard_arena.bot.Bot` (each decision runs in a worker
    thread, so other tasks go on meanwhile). With ``nursery.start(serve_bot,
    ...)`` the start returns the first :class:`~wizard_arena.protocol.messages.Welcome`.
    """
    if games is not None and games < 1:
        raise ValueError("games must be at least 1")
    result = RunResult()
    driver = _Driver(result, strict=strict, games=games)
    bot_name = _bot_name(bot, name)
    backoff = _Backoff(reconnect_timeout)
    started = False
    while True:
        welcomed = False
        try:
            async with open_bot_session(
                server,
                name=bot_name,
                token=token,
                rule_options=rule_options,
                credentials=credentials,
                channel_options=channel_options,
                resume_token=driver.resume_token,
            ) as session:
                welcomed = True
                backoff.reset()
                driver.welcome(session.welcome)
                if started:
                    result.reconnects += 1
                else:
                    started = True
                    task_status.started(session.welcome)
                async for msg in session:
                    for effect in driver.receive(msg, session.received_at):
                        out = await _perform_async(bot, driver, effect, margin)
                        if out is not None:
                            await session.send(out)
                    if driver.done:
                        session.close_sending()
                        with trio.move_on_after(_CLOSE_GRACE):
                            try:
                                async for _ in session:
                                    pass  # a next game may already have been seated
                            except ArenaError:
                                pass
                        driver.finish()
                        return result
            driver.finish()
            return result
        except ArenaError as e:
            try:
                delay = _after_stream_error(e, driver, welcomed, reconnect, backoff)
            except ArenaError:
                driver.finish()
                raise
            await trio.sleep(delay)


async def _perform_async(
    bot: Bot | AsyncBot, driver: _Driver, effect: _Effect, margin: float
) -> ActionMsg | None:
    if isinstance(effect, _Send):
        return effect.msg
    if isinstance(effect, _Hook):
        try:
            out = getattr(bot, effect.name)(*effect.args)
            if inspect.isawaitable(out):
                await out
        except Exception as e:
            driver.hook_failed(effect.name, e)
        return None
    pending = effect.pending
    view = pending.view
    outcome: Action | BaseException
    if isinstance(bot, AsyncBot):
        deadline = pending.deadline
        # trio's clock is not time.monotonic(): convert the deadline
        until = (
            math.inf
            if deadline is None
            else trio.current_time() + (deadline - time.monotonic()) - margin
        )
        with trio.move_on_at(until) as scope:
            try:
                outcome = await _decide_async(bot, view)
            except Exception as e:
                outcome = e
        if scope.cancelled_caught:
            driver.result.overruns += 1
            log.warning(
                "the bot did not decide within %.3f s (game %s, round %d, %s); "
                "sending the default action",
                view.time_left or 0.0,
                pending.request.game_id,
                view.round,
                view.phase.value,
            )
            out = driver.default_for(pending)
            return out
    else:
        try:
            outcome = await trio.to_thread.run_sync(decide, bot, view, abandon_on_cancel=True)
        except Exception as e:
            outcome = e
    took = time.monotonic() - pending.received
    return driver.decided(pending, outcome, took)

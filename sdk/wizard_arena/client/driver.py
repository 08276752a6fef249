"""The client's protocol logic, free of I/O: server messages in; hook calls,
questions to the bot and actions to send out (shared by the blocking and the
trio runner, and tested without a server).

Each game's state is the seat's view folded from the messages by the rules
core (:func:`wizard_arena.rules.observe`): the client keeps no model of the
game of its own. Each DecisionRequest's complete view is checked against the
fold and then taken as it is. Every decision and fault is counted on the
:class:`~wizard_arena.client.results.RunResult` and recorded as a
:class:`~wizard_arena.client.results.ClientRecord`.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from wizard_arena.bot import BotError, GameInfo, GameSummary, hears
from wizard_arena.client.errorlog import ErrorLog
from wizard_arena.client.errors import ActionRejectedError, ArenaError, ProtocolError
from wizard_arena.client.results import ClientRecord, RecordKind, RunResult
from wizard_arena.protocol.messages import (
    PROTOCOL_VERSIONS,
    ActionMsg,
    ActionRejected,
    DecisionRequest,
    EventStream,
    GameEnd,
    Hello,
    RoundStart,
    ServerMsg,
    TableEvent,
    Welcome,
)
from wizard_arena.rules import (
    Action,
    Bid,
    Dealt,
    Observation,
    OwnBid,
    Phase,
    RoundScored,
    SeatView,
    TrickWon,
    action_text,
    bids_closed,
    default_action,
    first_view,
    observe,
)

__all__ = [
    "EVENT_HOOKS",
    "Ask",
    "Driver",
    "Effect",
    "Hook",
    "Pending",
    "Send",
    "event_stream_for",
    "view_difference",
]

log = logging.getLogger("wizard_arena.client")

_COMPARED = (
    "seat", "phase", "round", "cards_per_player", "dealer", "to_act", "hand",
    "turned_card", "trump", "bids", "leader", "trick", "tricks", "tricks_won",
    "totals", "results", "others_hands", "next_trump",
)  # fmt: skip


#: The hooks that follow the play: a bot class that overrides one of them
#: gets every event (the lean stream would not call ``on_trick_end`` at all).
EVENT_HOOKS: tuple[str, ...] = ("on_trick_end", "on_round_end")


def event_stream_for(bot: object) -> EventStream:
    """The event stream the SDK asks the referee for on ``bot``'s behalf.

    The bot's own ``event_stream`` if it sets one; else ``ALL`` when its
    class overrides a hook of :data:`EVENT_HOOKS`, and ``LEAN`` when it does
    not (its decisions need nothing but each request's complete view).

    >>> from wizard_arena import Bot
    >>> class Quiet(Bot): pass
    >>> class Watcher(Bot):
    ...     def on_trick_end(self, view, trick): pass
    >>> event_stream_for(Quiet()), event_stream_for(Watcher())
    (<EventStream.LEAN: 'lean'>, <EventStream.ALL: 'all'>)
    """
    chosen = getattr(bot, "event_stream", None)
    if chosen is not None:
        return EventStream(chosen)
    return EventStream.ALL if any(hears(bot, hook) for hook in EVENT_HOOKS) else EventStream.LEAN


def view_difference(model: SeatView, server: SeatView) -> str:
    """The first fields in which two views differ, as text ('' if equal;
    the legal actions and time left are not compared)."""
    diffs = []
    for name in _COMPARED:
        a, b = getattr(model, name), getattr(server, name)
        if a != b:
            diffs.append(f"{name}: model {a!r}, server {b!r}")
    return "; ".join(diffs[:3])


def _actions(actions: Sequence[Action]) -> str:
    return "[" + ", ".join(action_text(a) for a in actions) + "]"


def _exception_text(exc: BaseException) -> str:
    return traceback.format_exception_only(exc)[-1].strip()


@dataclass
class Pending:
    """An open decision request and what was tried for it."""

    request: DecisionRequest
    view: SeatView
    received: float
    tried: list[Action] = field(default_factory=list)
    reasked: bool = False
    default_sent: bool = False

    @property
    def deadline(self) -> float | None:
        """When the bot's answer must be sent: ``time_left`` after the
        request arrived. The request's network credit (v1.2) is not added:
        the referee's deadline is ``time_left`` + the credit after it *sent*
        the request, and the credit is the round trip the request and the
        answer take, so an answer sent by this deadline reaches the referee
        in time (as long as the network is no slower than measured); one
        sent later would not."""
        t = self.view.time_left
        return self.received + t if t else None

    @property
    def where(self) -> str:
        return f"game {self.request.game_id}, round {self.view.round}, {self.view.phase.value}"


@dataclass(frozen=True, slots=True)
class Hook:
    """Call the bot's hook ``name`` with ``args``."""

    name: str
    args: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Ask:
    """Ask the bot for the decision ``pending``."""

    pending: Pending


@dataclass(frozen=True, slots=True)
class Send:
    """Send ``msg`` (no decision of the bot's)."""

    msg: ActionMsg


Effect = Hook | Ask | Send


@dataclass
class _Game:
    """One game as this seat knows it."""

    info: GameInfo
    view: SeatView
    warned: bool = False
    """Whether a difference from the referee's view was reported."""
    resumed: bool = False
    """Re-created on a resumed session: the next request's view is taken as it is."""


def _new_game(info: GameInfo) -> _Game:
    try:
        return _Game(info, first_view(info.rules, info.seat))
    except ValueError as e:
        raise ProtocolError(f"game {info.game_id}: {e}") from None


def _fold(game: _Game, seen: Observation) -> None:
    try:
        game.view = observe(game.view, seen)
    except (IndexError, ValueError) as e:
        raise ProtocolError(f"game {game.info.game_id}: {seen} does not fit the game: {e}") from e


def _dealt(m: RoundStart) -> Dealt:
    return Dealt(
        m.round, m.dealer, m.cards, m.hand, m.turned_card, m.trump, m.trump_pending, m.others_hands
    )


class Driver:
    """Turns server messages into hook calls, questions to the bot and
    actions to send; counts and records what happens on ``result``
    (records also go to ``on_record``; kept on ``result.records`` unless
    ``keep_records`` is false)."""

    def __init__(
        self,
        result: RunResult,
        *,
        strict: bool,
        games: int | None,
        on_record: Callable[[ClientRecord], None] | None = None,
        keep_records: bool = True,
    ) -> None:
        self.result = result
        self.strict = strict
        self.games = games
        self.on_record = on_record
        self.keep_records = keep_records
        self.tables: dict[str, _Game] = {}
        self.pending: Pending | None = None
        self.errors = ErrorLog(log)
        """The bot's errors: each in full once, then counted."""
        self.resume_token = ""
        """The current session's Welcome.resume_token (sent when reconnecting)."""
        self.lean = False
        """Whether the stream is lean (Welcome.event_stream): no public events
        come, so each request's view is taken as it is, not compared with a fold."""

    @property
    def done(self) -> bool:
        return self.games is not None and len(self.result.games) >= self.games

    @property
    def idle(self) -> bool:
        """Whether the bot waits for a game: none in progress, and games to play."""
        return not self.tables and not self.done

    # -- the session --------------------------------------------------------------

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

    def welcome(self, msg: Welcome) -> None:
        if msg.version not in PROTOCOL_VERSIONS:
            raise ProtocolError(
                f"the server chose protocol version {msg.version}; "
                f"this SDK speaks {list(PROTOCOL_VERSIONS)}"
            )
        self.result.welcome = msg
        self.lean = msg.event_stream is EventStream.LEAN
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

    def finish(self) -> None:
        """The run ends: count the repeated errors of a game left unfinished."""
        for gid in self.tables:
            self.errors.flush(f"game {gid}")

    # -- server messages ------------------------------------------------------------

    def receive(self, msg: ServerMsg, at: float | None = None) -> list[Effect]:
        """Handle ``msg``, received at ``at`` (``time.monotonic()``, now by
        default; a runner may use another clock, the one it times the bot by)."""
        if isinstance(msg, DecisionRequest):
            return self._request(msg, time.monotonic() if at is None else at)
        if isinstance(msg, TableEvent):
            return self._event(msg)
        if isinstance(msg, RoundStart):
            game = self.tables.get(msg.game_id)
            if game is not None:
                _fold(game, _dealt(msg))
            return []
        if isinstance(msg, GameInfo):
            return self._game_started(msg)
        if isinstance(msg, ActionRejected):
            return self._rejected(msg, time.monotonic() if at is None else at)
        if isinstance(msg, GameEnd):
            return self._game_over(msg)
        if isinstance(msg, Welcome):
            self.welcome(msg)
        return []  # (a ClockProbe: the runners answer it as it arrives)

    def _game_started(self, msg: GameInfo) -> list[Effect]:
        if msg.game_id in self.tables:  # a resumed session: the game goes on
            game = self.tables[msg.game_id] = _new_game(msg)
            game.resumed = True
            log.info("game %s resumed: seat %d", msg.game_id, msg.seat)
            return []
        self.tables[msg.game_id] = _new_game(msg)
        log.info(
            "game %s started: seat %d of %s, %s, bot seed %s",
            msg.game_id,
            msg.seat,
            ", ".join(msg.names),
            f"{msg.move_time:g} s per move" if msg.move_time else "no time limit",
            msg.seed if msg.seed is not None else "none",
        )
        return [Hook("on_game_start", (msg,))]

    def _event(self, msg: TableEvent) -> list[Effect]:
        game = self.tables.get(msg.game_id)
        if game is None:
            log.debug("event for unknown game %s ignored", msg.game_id)
            return []
        ev = msg.event
        _fold(game, ev)
        if isinstance(ev, TrickWon):
            return [Hook("on_trick_end", (game.view, ev.trick))]
        if isinstance(ev, RoundScored):
            return [Hook("on_round_end", (game.view, ev.result))]
        return []

    def _request(self, req: DecisionRequest, now: float) -> list[Effect]:
        self.result.decisions += 1
        effects: list[Effect] = []
        game = self.tables.get(req.game_id)
        if game is None:
            view = req.view
            info = GameInfo(req.game_id, view.rules, view.seat, ("",) * view.players)
            game = self.tables[req.game_id] = _new_game(info)
            log.info("joined game %s in progress (seat %d)", req.game_id, view.seat)
            effects.append(Hook("on_game_start", (info,)))
        elif game.resumed:  # the events missed while away come with this view
            game.resumed = False
        elif not game.warned and not self.lean:
            # the fold is checked at every request (warned once a game); the
            # lean stream has no events to fold
            self._compare(game, req)
        view = self._offered(req)
        game.view = view  # the referee's complete view is the truth
        self.pending = Pending(req, view, now)
        effects.append(Ask(self.pending))
        return effects

    def _compare(self, game: _Game, req: DecisionRequest) -> None:
        model = game.view
        if req.view.round == model.round and req.view.phase is not Phase.BID:
            model = bids_closed(model)  # no event says that the last hidden bid is in
        diff = view_difference(model, req.view)
        if diff:
            game.warned = True
            self._disagree(
                "view",
                req,
                f"game {req.game_id}: the SDK's model of the game differs from the "
                f"referee's view at request {req.request_id} ({diff}); using the referee's",
            )

    def _offered(self, req: DecisionRequest) -> SeatView:
        """The request's view, its legal actions checked against the rules core's."""
        view = req.view
        offered = view.legal_actions
        computed = view.compute_legal_actions()
        if set(offered) != set(computed):
            self.result.mismatches += 1
            self._disagree(
                "legal_actions",
                req,
                f"game {req.game_id}, request {req.request_id}: the referee offers "
                f"{_actions(offered)} but the rules give {_actions(computed)}; "
                "trusting the referee",
            )
            if not offered:
                view = replace(view, legal_actions=computed)
        if not view.legal_actions:
            raise ProtocolError(f"request {req.request_id} offers no legal action")
        return view

    def _disagree(self, what: str, req: DecisionRequest, text: str) -> None:
        self._record(
            RecordKind.MISMATCH, game_id=req.game_id, request_id=req.request_id,
            round=req.view.round, phase=req.view.phase.value, code=what, detail=text,
        )  # fmt: skip
        if self.strict:
            raise ProtocolError(text)
        log.warning("%s", text)

    def _rejected(self, msg: ActionRejected, now: float) -> list[Effect]:
        self.result.rejections += 1
        pending = self.pending
        if pending is not None and pending.request.request_id != msg.request_id:
            pending = None
        self._record(
            RecordKind.REJECTED, pending, game_id=msg.game_id, request_id=msg.request_id,
            time_left=msg.time_left, code=msg.code, detail=msg.message,
        )  # fmt: skip
        if self.strict:
            raise ActionRejectedError(msg)
        log.warning(
            "the referee rejected the action for request %s (%s): %s; %.3f s left",
            msg.request_id,
            msg.code,
            msg.message,
            msg.time_left,
        )
        if pending is None or msg.time_left <= 0 or msg.code == "unknown_request":
            return []
        pending.view = pending.view.with_time_left(msg.time_left)
        pending.received = now
        if not pending.reasked and not pending.default_sent:
            pending.reasked = True
            log.info("asking the bot again for request %s", msg.request_id)
            return [Ask(pending)]
        out = self.default_for(pending)
        return [Send(out)] if out is not None else []

    def _game_over(self, msg: GameEnd) -> list[Effect]:
        game = self.tables.pop(msg.game_id, None)
        if game is None:
            return []
        seat = game.info.seat
        summary = GameSummary(msg.game_id, seat, msg.totals, msg.ranks, game.view.results)
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
        return [Hook("on_game_end", (summary,))]

    # -- the bot's answers ------------------------------------------------------------

    def decided(
        self, pending: Pending, outcome: Action | BaseException, took: float
    ) -> ActionMsg | None:
        """The bot answered ``pending`` with ``outcome`` (an action, or what it
        raised) after ``took`` seconds: the message to send, if any."""
        action = self._usable(pending, outcome)
        deadline = pending.deadline
        if deadline is not None and pending.received + took > deadline:
            self._note_bid(pending, default_action(pending.view.legal_actions))  # the referee's
            self.result.overruns += 1
            log.warning(
                "the bot took %.3f s in %s; %.3f s were left: nothing sent, the "
                "referee plays its default",
                took,
                pending.where,
                pending.view.time_left,
            )
            self._record(RecordKind.OVERRUN, pending, seconds=round(took, 6))
            self._record(RecordKind.DECISION, pending, seconds=round(took, 6))
            return None
        if action is None:
            out = self.default_for(pending)
        else:
            pending.tried.append(action)
            self._note_bid(pending, action)
            log.debug("%s: %s after %.1f ms", pending.where, action_text(action), took * 1000)
            out = ActionMsg(pending.request.request_id, action)
        sent = action_text(out.action) if out is not None and out.action is not None else ""
        self._record(RecordKind.DECISION, pending, seconds=round(took, 6), action=sent)
        return out

    def _usable(self, pending: Pending, outcome: Action | BaseException) -> Action | None:
        """``outcome`` if the SDK may send it; else the error is counted,
        logged and recorded (raised with ``strict``) and ``None`` returned."""
        req, view = pending.request, pending.view
        if isinstance(outcome, BaseException):
            if self.strict:
                raise outcome
            self.result.bot_errors += 1
            self._record(
                RecordKind.BOT_ERROR, pending, code="raised", detail=_exception_text(outcome)
            )
            self.errors.exception(
                outcome,
                "the bot raised in %s (request %s); sending the default action",
                pending.where,
                req.request_id,
            )
            return None
        if outcome in view.legal_actions and outcome not in pending.tried:
            return outcome
        again = " again" if outcome in pending.tried else ""
        text = (
            f"the bot chose {action_text(outcome)}{again} in {pending.where}, which is not "
            f"legal (legal: {_actions(view.legal_actions)})"
        )
        if self.strict:
            raise BotError(text)
        self.result.bot_errors += 1
        self._record(
            RecordKind.BOT_ERROR, pending, code="illegal", action=action_text(outcome), detail=text
        )
        kind = f"a {view.phase.value} that is not legal"
        self.errors.report(kind, kind, "%s; sending the default action", text)
        return None

    def cancelled(self, pending: Pending, took: float) -> ActionMsg | None:
        """An ``AsyncBot``'s decision was cancelled at the deadline after
        ``took`` seconds: the default to send, if any."""
        view = pending.view
        self.result.overruns += 1
        log.warning(
            "the bot did not decide within %.3f s (game %s, round %d, %s); "
            "sending the default action",
            view.time_left or 0.0,
            pending.request.game_id,
            view.round,
            view.phase.value,
        )
        self._record(RecordKind.CANCELLED, pending, seconds=round(took, 6))
        out = self.default_for(pending)
        sent = action_text(out.action) if out is not None and out.action is not None else ""
        self._record(RecordKind.DECISION, pending, seconds=round(took, 6), action=sent)
        return out

    def _note_bid(self, pending: Pending, action: Action) -> None:
        """Hidden bids: no message tells the seat its own bid before they are
        revealed; it knows the bid it sent (or the referee's default)."""
        game = self.tables.get(pending.request.game_id)
        if game is not None and isinstance(action, Bid):
            _fold(game, OwnBid(action.bid))

    def default_for(self, pending: Pending) -> ActionMsg | None:
        """The referee's default action for ``pending`` (once; ``None`` after)."""
        if pending.default_sent:
            return None
        pending.default_sent = True
        action = default_action(pending.view.legal_actions)
        pending.tried.append(action)
        self._note_bid(pending, action)
        self.result.defaults_sent += 1
        return ActionMsg(pending.request.request_id, action)

    def hook_failed(self, name: str, exc: BaseException) -> None:
        if self.strict:
            raise exc
        self.result.hook_errors += 1
        self._record(RecordKind.HOOK_ERROR, code=name, detail=_exception_text(exc))
        self.errors.exception(exc, "the bot's %s hook raised; play goes on", name)

    def _record(self, kind: RecordKind, pending: Pending | None = None, **fields: Any) -> None:
        if pending is not None:
            req, view = pending.request, pending.view
            fields = {
                "game_id": req.game_id,
                "request_id": req.request_id,
                "round": view.round,
                "phase": view.phase.value,
                "time_left": view.time_left,
                "network_credit": req.network_credit,
                **fields,
            }
        record = ClientRecord(kind, **fields)
        if self.keep_records:
            self.result.records.append(record)
        if self.on_record is not None:
            self.on_record(record)

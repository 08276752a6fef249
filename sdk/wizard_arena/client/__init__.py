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
* **Event stream** (protocol v1.1, ``Hello.event_stream``): the SDK asks
  for the lean stream (GameStarted, the requests with their complete views,
  rejections, round results, GameOver: about one message per decision)
  unless the bot asks for the table's events, by overriding
  ``on_trick_end`` or ``on_round_end`` or by setting its ``event_stream``
  attribute (``"all"`` or ``"lean"``): :func:`event_stream_for`. The
  ``event_stream`` argument of :func:`run_bot` and :func:`serve_bot`
  overrides it. A v1.0 server ignores the choice and sends everything.
* **Hooks**: ``on_game_start`` on GameStarted, ``on_trick_end`` and
  ``on_round_end`` on the TrickWon / RoundScored events (on the lean
  stream, ``on_round_end`` only, with the last request's view and the
  round's result) with the seat's
  view as the rules core folds it from every message
  (:func:`wizard_arena.rules.observe`: the SDK keeps no model of the game
  of its own; the view is re-synchronised from each DecisionRequest's
  complete view, and it follows every variant: with hidden bids the seat's
  own bid is the one it sent until the bids are revealed),
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
* **Waiting for a game**: while the bot has no game in progress (alone at a
  server short of players, or between games) nothing comes on the stream;
  the SDK logs that it waits, and how many players a table needs
  (``ServerInfo.rules.players``, asked once), after 5 s and then every 30 s
  (:mod:`wizard_arena.client.waiting`).
* **Ctrl-C**: :class:`KeyboardInterrupt` (or trio cancellation) cancels the
  stream and closes the channel before it propagates; the ``wizard-arena
  bot`` command then exits with status 130.

* **Records**: besides the counts on :class:`RunResult`, each decision
  (the time it took, the action sent) and each fault the SDK sees (bot
  errors, overruns, cancelled ``AsyncBot`` decisions, rejections, hook
  errors, disagreements with the referee) is a :class:`ClientRecord`, kept
  on ``RunResult.records`` and passed to ``on_record`` as it happens;
  ``wizard-arena bot --report FILE`` writes them as JSON lines.

The SDK logs to the ``wizard_arena.client`` logger. The package's modules:
``connection`` (gRPC channel, Hello, status codes), ``driver`` (the protocol
logic, free of I/O), ``blocking`` (:func:`run_bot`), ``session`` and
``serve`` (trio: :func:`open_bot_session`, :func:`serve_bot`,
:class:`AsyncBot`; imported at their first use, so a process that plays a
plain bot never loads trio), ``retry`` (reconnecting with backoff), ``errors``,
``results`` (:class:`RunResult`, :class:`ClientRecord`), ``errorlog``
(each error in full once), ``waiting`` (the notes that the bot waits for a
game) and ``cmd_bot`` (the ``wizard-arena bot`` verb).
Both runners have a seam for tests: the trio runner plays over any
:class:`~wizard_arena.client.session.Session` (``serve.serve_sessions``) and
the blocking runner's step is ``blocking.answer``, each timed by a given
clock (``time.monotonic`` in use), so their deadlines can run on trio's
virtual clock. It may import the rules, the protocol room and
:mod:`wizard_arena.bot`; nothing of the server.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from wizard_arena.client.blocking import run_bot
from wizard_arena.client.connection import DEFAULT_SERVER, RULE_OPTIONS, SDK_NAME, server_info
from wizard_arena.client.driver import event_stream_for
from wizard_arena.client.errors import (
    ActionRejectedError,
    ArenaError,
    AuthenticationError,
    ConnectionLostError,
    ProtocolError,
    ServerError,
    ServerFullError,
    VersionMismatchError,
)
from wizard_arena.client.results import ClientRecord, RecordKind, RunResult

if TYPE_CHECKING:
    from wizard_arena.client.serve import AsyncBot, serve_bot
    from wizard_arena.client.session import BotSession, open_bot_session

#: The trio forms' names -> their module, imported at first use: a process
#: that plays a plain Bot (``run_bot``, every ``wizard-arena bot`` of one)
#: never loads trio (about 0.1 s of start-up).
_TRIO_FORMS = {
    "AsyncBot": "serve",
    "serve_bot": "serve",
    "BotSession": "session",
    "open_bot_session": "session",
}

__all__ = [
    "DEFAULT_SERVER",
    "RULE_OPTIONS",
    "SDK_NAME",
    "ActionRejectedError",
    "ArenaError",
    "AsyncBot",
    "AuthenticationError",
    "BotSession",
    "ClientRecord",
    "ConnectionLostError",
    "ProtocolError",
    "RecordKind",
    "RunResult",
    "ServerError",
    "ServerFullError",
    "VersionMismatchError",
    "event_stream_for",
    "open_bot_session",
    "run_bot",
    "serve_bot",
    "server_info",
]


def __getattr__(name: str) -> Any:
    module = _TRIO_FORMS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value

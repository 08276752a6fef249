"""The handshake: what a new stream must say before it gets a session.

Its first message must be a Hello, within the hello timeout, that speaks a
protocol version of this server, carries an accepted access token (when the
server has a token file), does not exceed the sessions allowed per token,
and lists every rule option the server's tables play. A Hello quoting a
resume token of this server takes its session back if it may
(:meth:`Arena.resume`); one quoting a token never issued here is refused.
Everything else is refused with a status that says why (docs/protocol-reference.md,
"Stream status codes"), and nothing is kept for the stream.

The handshake decides; the arena acts. :func:`first_hello` reads the first
message, :func:`authenticate` checks its access token (a :class:`TokenBook`'s
lookup in a worker thread), :func:`judge` gives the verdict on a Hello
(:class:`Refuse`, :class:`Admit` or :class:`Resume`) from what it is shown of the server (a
:class:`Door`), and :meth:`Arena._greet <.arena.Arena._greet>` carries it out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import trio

from wizard_arena.protocol.messages import PROTOCOL_VERSIONS, Hello
from wizard_arena.rules import Rules
from wizard_referee.referee.seat import CloseCode, Malformed, Seat
from wizard_referee.referee.sessions import display_name

__all__ = [
    "AccessTokens",
    "Admit",
    "Door",
    "Refuse",
    "Resume",
    "TokenBook",
    "TokensUnavailable",
    "Verdict",
    "authenticate",
    "first_hello",
    "judge",
    "left_after_hello",
    "missing_options",
]


def missing_options(rules: Rules, supported: Sequence[str]) -> list[str]:
    """The options in force under ``rules`` that a bot listing ``supported``
    (its ``Hello.rule_options``) cannot play, in :data:`VARIANT_OPTIONS` order.

    >>> missing_options(Rules(players=3, tricksy=True, maximus=True), ["tricksy"])
    ['maximus']
    """
    have = set(supported)
    return [name for name in rules.options if name not in have]


@dataclass(frozen=True)
class Refuse:
    """Refuse the stream: close it with ``code`` and ``details``."""

    code: CloseCode
    details: str
    """The status details the bot receives."""
    reason: str
    """The ``reason`` of the server's ``refused`` log event (and its count)."""
    missing: list[str] = field(default_factory=list)
    """The rule options the bot cannot play (a refusal for rule options)."""
    detail: str = ""
    """What did not decode (a first message that is not a Hello)."""


@dataclass(frozen=True)
class Admit:
    """Give the bot a new session, speaking protocol ``version``."""

    version: int


@dataclass(frozen=True)
class Resume:
    """The bot quotes a resume token of this server: give its session back
    if it may still be resumed (versions in ``common``), else ``otherwise``."""

    common: list[int]
    otherwise: Refuse | Admit


Verdict = Refuse | Admit | Resume


class TokenBook(Protocol):
    """Access tokens that change while the server runs (a ladder's registry,
    where tokens are added, rotated and retired): asked at each Hello, in a
    worker thread (:func:`authenticate`), so a lookup in a store never
    holds up the tables: :meth:`refusal` must be safe to call from any
    thread, one call at a time."""

    def refusal(self, token: str) -> str | None:
        """Why ``token`` is refused now, the status details the bot
        receives (None: accepted); :class:`TokensUnavailable` when that
        cannot be told now."""
        ...


class TokensUnavailable(Exception):
    """Raised by :meth:`TokenBook.refusal` when it cannot tell now (its
    store does not answer): the bot is refused as UNAVAILABLE, to try
    again, not as holding a bad token (UNAUTHENTICATED, where it stops).
    The message is the status details the bot receives."""


AccessTokens = frozenset[str] | TokenBook
"""The access tokens a server accepts: a fixed set, or a :class:`TokenBook`."""


@dataclass(frozen=True)
class Door:
    """What the handshake asks of the server (the arena)."""

    rules: Rules
    tokens: AccessTokens | None
    """Access tokens accepted (None: any bot)."""
    sessions_per_token: int
    """Sessions one access token may hold at once (0: any number)."""
    using: Callable[[str], int]
    """The live sessions of an access token."""
    issued_here: Callable[[str], bool]
    """Whether this server issued a resume token (perhaps expired since)."""


async def first_hello(seat: Seat, timeout: float) -> Hello | Refuse | None:
    """The bot's first message if it is a Hello within ``timeout``; a
    refusal if it is not; None if the bot left first."""
    msg: Any = None
    with trio.move_on_after(timeout):
        try:
            msg = await seat.receive()
        except trio.EndOfChannel:
            return None
    if msg is None:
        return Refuse(
            CloseCode.INVALID_ARGUMENT, "no Hello within the hello timeout", "hello timeout"
        )
    if isinstance(msg, Malformed):
        details = f"the first message must be a Hello: {msg.detail}"
        return Refuse(
            CloseCode.INVALID_ARGUMENT, details, "first message not a hello", detail=msg.detail
        )
    if not isinstance(msg, Hello):
        details = "the first message must be a Hello"
        return Refuse(CloseCode.INVALID_ARGUMENT, details, "first message not a hello")
    return msg


async def authenticate(
    hello: Hello, door: Door, limiter: trio.CapacityLimiter | None = None
) -> Refuse | None:
    """The refusal of ``hello``'s access token (None: accepted). A
    :class:`TokenBook` is asked in a worker thread (``limiter``: how many at
    once), off the trio loop the tables run on."""
    tokens = door.tokens
    if tokens is None:
        return None
    if isinstance(tokens, frozenset):
        if hello.token in tokens:
            return None
        details = "missing access token" if not hello.token else "invalid access token"
    elif not hello.token:
        details = "missing access token"
    else:
        try:
            why = await trio.to_thread.run_sync(tokens.refusal, hello.token, limiter=limiter)
        except TokensUnavailable as e:  # (not a failed login: the bot tries again)
            return Refuse(CloseCode.UNAVAILABLE, str(e), "token")
        if why is None:
            return None
        details = why
    return Refuse(CloseCode.UNAUTHENTICATED, details, "token")


def judge(hello: Hello, door: Door, auth: Refuse | None) -> Verdict:
    """What the server does with a stream that greets it with ``hello``
    (whose access token :func:`authenticate` judged: ``auth``): a version in
    common, an accepted access token; a resume token of this server takes
    its session back if it may; then the sessions per token and the rule
    options."""
    common = [v for v in PROTOCOL_VERSIONS if hello.min_version <= v <= hello.max_version]
    refusal = _version(hello, common) or auth
    if refusal is not None:
        return refusal
    otherwise = _sessions_per_token(door, hello) or _rule_options(door, hello)
    verdict: Refuse | Admit = otherwise or Admit(max(common))
    if hello.resume_token:
        if not door.issued_here(hello.resume_token):
            return Refuse(CloseCode.FAILED_PRECONDITION, "unknown resume token", "resume token")
        return Resume(common, verdict)
    return verdict


def left_after_hello(seat: Seat, log: Any) -> bool:
    """Whether the bot half-closed right after its hello: then nothing
    is kept for it and its stream ends with OK."""
    if not seat.closed:
        return False
    seat.close()
    log.info("left_after_hello")
    return True


def _version(hello: Hello, common: list[int]) -> Refuse | None:
    if common:
        return None
    details = (
        "unsupported protocol version: the bot speaks "
        f"{hello.min_version}..{hello.max_version}, this server speaks "
        + ", ".join(map(str, PROTOCOL_VERSIONS))
    )
    return Refuse(CloseCode.FAILED_PRECONDITION, details, "version")


def _sessions_per_token(door: Door, hello: Hello) -> Refuse | None:
    per_token = door.sessions_per_token
    if not per_token or not hello.token:
        return None
    if door.using(hello.token) < per_token:
        return None
    details = f"too many sessions with this access token ({per_token} at most)"
    return Refuse(CloseCode.RESOURCE_EXHAUSTED, details, "sessions per token")


#: Characters of the bot's own ``Hello.rule_options`` quoted back in a refusal
#: (a status detail: a hostile list must not fill the trailers).
MAX_OPTIONS_SHOWN = 200


def _rule_options(door: Door, hello: Hello) -> Refuse | None:
    rules = door.rules
    missing = missing_options(rules, hello.rule_options)
    if not missing:
        return None
    joined = ", ".join(hello.rule_options)
    given = display_name(joined, MAX_OPTIONS_SHOWN) or "none"
    if len(joined) > MAX_OPTIONS_SHOWN:
        given += " ..."
    details = (
        f"this server's tables play the rule option(s) {', '.join(missing)} "
        f"({rules.describe()}); the bot's Hello.rule_options "
        f"({given}) do not include them"
    )
    return Refuse(CloseCode.FAILED_PRECONDITION, details, "rule options", missing)

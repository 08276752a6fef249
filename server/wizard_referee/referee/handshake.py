"""The handshake: what a new stream must say before it gets a session.

Its first message must be a Hello, within the hello timeout, that speaks a
protocol version of this server, carries an accepted access token (when the
server has a token file), does not exceed the sessions allowed per token,
and lists every rule option the server's tables play. A Hello quoting a
resume token of this server takes its session back if it may
(:meth:`Arena.resume`); one quoting a token never issued here is refused.
Everything else is refused with a status that says why (docs/protocol.md,
"Refused streams"), and nothing is kept for the stream.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import trio

from wizard_arena.protocol.messages import PROTOCOL_VERSIONS, Hello
from wizard_arena.rules import Rules
from wizard_referee.referee.seat import CloseCode, Malformed, Seat
from wizard_referee.referee.sessions import display_name

if TYPE_CHECKING:
    from wizard_referee.referee.arena import Arena

__all__ = ["greet", "missing_options"]


def missing_options(rules: Rules, supported: Sequence[str]) -> list[str]:
    """The options in force under ``rules`` that a bot listing ``supported``
    (its ``Hello.rule_options``) cannot play, in :data:`VARIANT_OPTIONS` order.

    >>> missing_options(Rules(players=3, tricksy=True, maximus=True), ["tricksy"])
    ['maximus']
    """
    have = set(supported)
    return [name for name in rules.options if name not in have]


@dataclass(frozen=True)
class _Refusal:
    code: CloseCode
    details: str
    """The status details the bot receives."""
    reason: str
    """The ``reason`` of the server's ``refused`` log event."""
    missing: list[str] = field(default_factory=list)
    """The rule options the bot cannot play (a refusal for rule options)."""


async def greet(arena: Arena, seat: Seat) -> None:
    """Read the first message of a new stream and give it a session (or its
    session back), or refuse it."""
    log = arena.log.bind(conn=seat.id, peer=seat.peer)
    hello = await _first_hello(seat, arena.config.policy.hello_timeout, log, arena.counters.refused)
    if hello is None:
        return
    arena.counters.messages_in += 1
    common = [v for v in PROTOCOL_VERSIONS if hello.min_version <= v <= hello.max_version]
    refusal = _version(hello, common) or _token(arena, hello)
    if refusal is None and hello.resume_token:
        if not arena.resume_tokens.issued_here(hello.resume_token):
            unknown = "unknown resume token"
            refusal = _Refusal(CloseCode.FAILED_PRECONDITION, unknown, "resume token")
        elif _left_after_hello(seat, log) or arena.resume(seat, hello, common, log):
            return
    if refusal is None:
        refusal = _sessions_per_token(arena, hello) or _rule_options(arena, hello)
    if refusal is not None:
        seat.close(refusal.code, refusal.details)
        arena.counters.refused[refusal.reason] += 1
        extra: dict[str, Any] = {"missing": refusal.missing} if refusal.missing else {}
        log.info("refused", reason=refusal.reason, bot=display_name(hello.bot_name), **extra)
        if refusal.missing and arena.config.tokens is not None:
            # an access token of this server: bounded by their number
            arena.refused_options[hello.token] = (
                f"refused: it cannot play the rule option(s) {', '.join(refusal.missing)}"
            )
            arena.notify()
        return
    if _left_after_hello(seat, log):
        return
    arena.admit(seat, hello, max(common), log)


async def _first_hello(seat: Seat, timeout: float, log: Any, refused: Counter[str]) -> Hello | None:
    """The bot's first message if it is a Hello; otherwise the stream is
    refused (or the bot left) and None."""
    msg: Any = None
    with trio.move_on_after(timeout):
        try:
            msg = await seat.receive()
        except trio.EndOfChannel:
            log.info("left_before_hello")
            return None
    if msg is None:
        seat.close(CloseCode.INVALID_ARGUMENT, "no Hello within the hello timeout")
        log.info("refused", reason="hello timeout")
        refused["hello timeout"] += 1
        return None
    if isinstance(msg, Malformed):
        details = f"the first message must be a Hello: {msg.detail}"
        seat.close(CloseCode.INVALID_ARGUMENT, details)
        log.info("refused", reason="first message not a hello", detail=msg.detail)
        refused["first message not a hello"] += 1
        return None
    if not isinstance(msg, Hello):
        seat.close(CloseCode.INVALID_ARGUMENT, "the first message must be a Hello")
        log.info("refused", reason="first message not a hello")
        refused["first message not a hello"] += 1
        return None
    return msg


def _left_after_hello(seat: Seat, log: Any) -> bool:
    """Whether the bot half-closed right after its hello: then nothing
    is kept for it and its stream ends with OK."""
    if not seat.closed:
        return False
    seat.close()
    log.info("left_after_hello")
    return True


def _version(hello: Hello, common: list[int]) -> _Refusal | None:
    if common:
        return None
    details = (
        "unsupported protocol version: the bot speaks "
        f"{hello.min_version}..{hello.max_version}, this server speaks "
        + ", ".join(map(str, PROTOCOL_VERSIONS))
    )
    return _Refusal(CloseCode.FAILED_PRECONDITION, details, "version")


def _token(arena: Arena, hello: Hello) -> _Refusal | None:
    tokens = arena.config.tokens
    if tokens is None or hello.token in tokens:
        return None
    details = "missing access token" if not hello.token else "invalid access token"
    return _Refusal(CloseCode.UNAUTHENTICATED, details, "token")


def _sessions_per_token(arena: Arena, hello: Hello) -> _Refusal | None:
    per_token = arena.config.policy.max_sessions_per_token
    if not per_token or not hello.token:
        return None
    using = [s for s in arena.sessions.values() if s.alive and s.hello.token == hello.token]
    if len(using) < per_token:
        return None
    details = f"too many sessions with this access token ({per_token} at most)"
    return _Refusal(CloseCode.RESOURCE_EXHAUSTED, details, "sessions per token")


#: Characters of the bot's own ``Hello.rule_options`` quoted back in a refusal
#: (a status detail: a hostile list must not fill the trailers).
MAX_OPTIONS_SHOWN = 200


def _rule_options(arena: Arena, hello: Hello) -> _Refusal | None:
    rules = arena.config.rules
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
    return _Refusal(CloseCode.FAILED_PRECONDITION, details, "rule options", missing)

"""Sessions: a greeted bot, and the resume tokens that let it take its seat back.

A :class:`Session` outlives its connection while its bot plays a game: if
the connection drops, the bot may come back within the reconnect window
with the secret :attr:`Session.resume_token` its Welcome carried
(:class:`ResumeTokens` issues and checks them) and take its seat back.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass, field

from wizard_arena.protocol.messages import Hello
from wizard_referee.referee.seat import Seat, SeatSpec

__all__ = ["MAX_NAME", "ResumeTokens", "Session", "display_name"]

#: Characters of ``Hello.bot_name`` the referee keeps: a bot's name goes into
#: every seat's GameStarted, the records and each log line of its moves, so a
#: hostile bot must not make it a 64 KiB payload (docs/protocol.md, step 1 of
#: "A game, message by message").
MAX_NAME = 64


def display_name(bot_name: str, limit: int = MAX_NAME) -> str:
    r"""``Hello.bot_name`` as the referee uses it: its first ``limit``
    characters (:data:`MAX_NAME`), each that is not printable (a control or format character:
    a newline, an escape, a bidirectional override) replaced by ``?``.

    >>> display_name("eve\x1b[2J\n" + "x" * 100) == "eve?[2J?" + "x" * 56
    True
    """
    return "".join(c if c.isprintable() else "?" for c in bot_name[:limit])


@dataclass(eq=False)
class Session:
    """A greeted bot connection."""

    id: str
    conn: Seat
    hello: Hello
    version: int
    issued: set[str] = field(default_factory=set)
    """Request ids issued to the bot in its current (or last) game."""
    earlier: set[str] = field(default_factory=set)
    """Request ids issued to it in the game before: late answers to them are
    still recognised (and ignored); older ones are forgotten, so the sets
    stay bounded however many games the session plays."""
    busy: bool = False
    free_at: float = 0.0
    """trio time from which matchmaking may seat this session again."""
    resume_token: str = ""
    """The secret that lets the bot take this session back after a drop."""
    dropped_at: float | None = None
    """trio time the connection dropped while at a table (None: connected)."""
    spec: SeatSpec | None = None
    """The seat of the game the session is playing, while it plays."""
    timeouts_in_a_row: int = 0
    """The bot's last decisions that timed out, over its games."""

    @property
    def name(self) -> str:
        return display_name(self.hello.bot_name) or self.id

    @property
    def alive(self) -> bool:
        return not self.conn.closed


class ResumeTokens:
    """The resume tokens of a server: each a random part and its signature,
    so that the server can tell one of its tokens (perhaps expired) from one
    it never issued without keeping every token it issued. Only the tokens of
    sessions that may still be resumed are kept."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)
        self.sessions: dict[str, Session] = {}
        """Resume token -> its session, while the session may be resumed."""

    def __len__(self) -> int:
        return len(self.sessions)

    def issue(self, session: Session) -> None:
        """Give ``session`` a fresh resume token."""
        nonce = secrets.token_urlsafe(24)
        session.resume_token = f"{nonce}.{self._signature(nonce)}"
        self.sessions[session.resume_token] = session

    def issued_here(self, token: str) -> bool:
        """Whether this server issued ``token`` (it may have expired since)."""
        nonce, _, signature = token.rpartition(".")
        return hmac.compare_digest(signature.encode(), self._signature(nonce).encode())

    def forget(self, session: Session) -> None:
        self.sessions.pop(session.resume_token, None)

    def resumable(self, token: str, now: float, window: float) -> Session | None:
        """The session of ``token`` if it may be resumed now: its bot is at a
        table, and dropped from it no longer than ``window`` seconds ago (or
        not seen to drop yet). A token of a session that has gone for good is
        forgotten; one of a session still connected is kept for its owner
        (a stranger's hello quoting it ends nothing)."""
        s = self.sessions.get(token)
        if (
            s is None
            or s.spec is None
            or s.spec.reattach is None
            or (s.dropped_at is not None and now - s.dropped_at > window)
        ):
            if s is not None and not s.alive:
                self.sessions.pop(token, None)
            return None
        return s

    def _signature(self, nonce: str) -> str:
        mac = hmac.digest(self._key, nonce.encode(), hashlib.sha256)[:16]
        return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()

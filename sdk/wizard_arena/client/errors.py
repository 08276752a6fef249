"""The errors that end a bot's session (all :class:`ArenaError`).

The gRPC status of a stream maps to one class each (see
:func:`wizard_arena.client.connection.error_from_rpc`); this module does not
import grpc, so the sans-I/O driver can raise these without it.
"""

from __future__ import annotations

from wizard_arena.protocol.messages import ActionRejected

__all__ = [
    "ActionRejectedError",
    "ArenaError",
    "AuthenticationError",
    "ConnectionLostError",
    "ProtocolError",
    "ServerError",
    "ServerFullError",
    "VersionMismatchError",
]


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

"""The gRPC side of the client: the channel, the Hello, the request stream,
decoding the server's messages, status codes as errors, and the
GetServerInfo call. Shared by the blocking runner and the trio session."""

from __future__ import annotations

import logging
import queue
from collections.abc import Iterator, Sequence
from typing import Any, Final

import grpc

from wizard_arena import __version__
from wizard_arena.client.errors import (
    ArenaError,
    AuthenticationError,
    ConnectionLostError,
    ProtocolError,
    ServerError,
    ServerFullError,
    VersionMismatchError,
)
from wizard_arena.protocol import wire
from wizard_arena.protocol.messages import PROTOCOL_VERSIONS, Hello, ServerInfo, ServerMsg
from wizard_arena.rules.laws import VARIANT_OPTIONS

__all__ = [
    "CLOSE",
    "DEFAULT_SERVER",
    "RULE_OPTIONS",
    "SDK_NAME",
    "bot_name",
    "channel",
    "decode",
    "error_from_rpc",
    "hello",
    "log",
    "requests",
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

CLOSE: Final = object()
"""Put in an outbox: the request stream ends (half-close)."""

_STATUS_ERRORS: dict[grpc.StatusCode, type[ArenaError]] = {
    grpc.StatusCode.FAILED_PRECONDITION: VersionMismatchError,
    grpc.StatusCode.UNAUTHENTICATED: AuthenticationError,
    grpc.StatusCode.INVALID_ARGUMENT: ProtocolError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ServerFullError,
    grpc.StatusCode.UNAVAILABLE: ConnectionLostError,
    grpc.StatusCode.CANCELLED: ConnectionLostError,  # by the server, or the network
}

_WHAT: dict[type[ArenaError], str] = {
    VersionMismatchError: "the server refused the bot (version or rule options)",
    AuthenticationError: "the server refused the access token",
    ProtocolError: "the server reports a protocol error",
    ServerFullError: "the server is full",
    ConnectionLostError: "cannot reach the server or the connection dropped",
}


def error_from_rpc(err: grpc.RpcError, server: str) -> ArenaError:
    """The :class:`ArenaError` for a stream or call that ended with ``err``."""
    code_fn = getattr(err, "code", None)
    details_fn = getattr(err, "details", None)
    code = code_fn() if callable(code_fn) else grpc.StatusCode.UNKNOWN
    details = (details_fn() if callable(details_fn) else "") or ""
    cls = _STATUS_ERRORS.get(code, ServerError)
    name = code.name if isinstance(code, grpc.StatusCode) else str(code)
    what = _WHAT.get(cls, "the server ended the stream")
    return cls(f"{server}: {what}: {name}: {details}".rstrip(": "), code=name, details=details)


def hello(name: str, token: str | None, rule_options: Sequence[str] | None) -> Hello:
    """The Hello of a new session."""
    return Hello(
        bot_name=name,
        min_version=min(PROTOCOL_VERSIONS),
        max_version=max(PROTOCOL_VERSIONS),
        token=token or "",
        sdk_name=SDK_NAME,
        sdk_version=__version__,
        rule_options=RULE_OPTIONS if rule_options is None else tuple(rule_options),
    )


def bot_name(bot: object, name: str | None) -> str:
    """The name to play under: ``name``, else the bot's own ``name``
    attribute (unless it is the default), else its class name."""
    if name:
        return name
    own = getattr(bot, "name", "")
    if own and own != "bot":
        return str(own)
    return type(bot).__name__


def channel(
    server: str,
    credentials: grpc.ChannelCredentials | None,
    options: Sequence[tuple[str, Any]],
) -> grpc.Channel:
    if credentials is not None:
        return grpc.secure_channel(server, credentials, options=list(options))
    return grpc.insecure_channel(server, options=list(options))


def requests(outbox: queue.SimpleQueue[Any]) -> Iterator[Any]:
    """The request stream: whatever is put in ``outbox`` until :data:`CLOSE`."""
    while True:
        item = outbox.get()
        if item is CLOSE:
            return
        yield item


def decode(pb_msg: Any) -> ServerMsg:
    """A server message as a domain value; :class:`ProtocolError` if malformed."""
    try:
        return wire.decode_server(pb_msg)
    except wire.WireError as e:
        raise ProtocolError(f"malformed message from the server: {e}") from None


def server_info(
    server: str = DEFAULT_SERVER,
    *,
    timeout: float = 5.0,
    credentials: grpc.ChannelCredentials | None = None,
) -> ServerInfo:
    """Ask ``server`` (``host:port``) for its version, protocol versions, rules
    and time limit (the GetServerInfo call)."""
    with channel(server, credentials, ()) as ch:
        try:
            reply = wire.stub(ch).GetServerInfo(wire.server_info_request(), timeout=timeout)
        except grpc.RpcError as e:
            raise error_from_rpc(e, server) from None
    try:
        return wire.decode_server_info(reply)
    except wire.WireError as e:
        raise ProtocolError(f"malformed ServerInfo from {server}: {e}") from None

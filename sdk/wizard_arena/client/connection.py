"""The gRPC side of the client: the channel, the Hello, the request stream,
decoding the server's messages, the answer to a clock probe, status codes as
errors, and the GetServerInfo call. Shared by the blocking runner and the
trio session."""

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
from wizard_arena.protocol.messages import (
    PROTOCOL_VERSIONS,
    ClockProbe,
    ClockProbeReply,
    EventStream,
    Hello,
    ServerInfo,
    ServerMsg,
)
from wizard_arena.rules.laws import VARIANT_OPTIONS

__all__ = [
    "CLOSE",
    "DEFAULT_SERVER",
    "KEEPALIVE",
    "RULE_OPTIONS",
    "SDK_NAME",
    "bot_name",
    "channel",
    "decode",
    "error_from_rpc",
    "hello",
    "log",
    "probe_reply",
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

#: The client's HTTP/2 keepalive (gRPC channel arguments), within what the
#: referee accepts (a ping at most every 10 s: docs/protocol.md, "Connections:
#: keepalive and dropped streams"): a ping after 30 s without activity, the
#: connection given up if it goes unanswered for 10 s, so a dead connection
#: is noticed (and the session resumed) even while the bot waits in the
#: lobby. ``channel_options`` of the same name override these.
KEEPALIVE: Final[tuple[tuple[str, int], ...]] = (
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
)

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


def hello(
    name: str,
    token: str | None,
    rule_options: Sequence[str] | None,
    event_stream: EventStream = EventStream.ALL,
) -> Hello:
    """The Hello of a new session. It asks for clock probes (v1.2), which
    the SDK answers by itself (:func:`probe_reply`), so that the referee
    credits the network's round trip on every deadline."""
    return Hello(
        bot_name=name,
        min_version=min(PROTOCOL_VERSIONS),
        max_version=max(PROTOCOL_VERSIONS),
        token=token or "",
        sdk_name=SDK_NAME,
        sdk_version=__version__,
        rule_options=RULE_OPTIONS if rule_options is None else tuple(rule_options),
        event_stream=event_stream,
        clock_probes=True,
    )


def probe_reply(msg: ServerMsg) -> ClockProbeReply | None:
    """The reply to ``msg`` if it is a clock probe (None if not).

    The runners send it as the probe comes off the network, before the
    message would reach the driver or the bot: its round trip is the
    network's, whatever the bot is doing (the referee sends no probe while
    a request is open for the bot)."""
    return ClockProbeReply(msg.id) if type(msg) is ClockProbe else None


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
    """A channel to ``server`` with :data:`KEEPALIVE` and ``options`` (which win)."""
    merged = list({**dict(KEEPALIVE), **dict(options)}.items())
    if credentials is not None:
        return grpc.secure_channel(server, credentials, options=merged)
    return grpc.insecure_channel(server, options=merged)


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

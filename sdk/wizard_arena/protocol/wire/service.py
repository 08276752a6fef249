"""The gRPC service glue: the service's name, a client stub, and the
servicer registration the referee uses (bytes in, bytes or messages out).

grpc itself is imported only inside :func:`add_servicer`: the rest of the
codec is pure protobuf.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, overload

from wizard_arena._generated.v1 import arena_pb2 as pb
from wizard_arena._generated.v1 import arena_pb2_grpc as pb_grpc

if TYPE_CHECKING:  # (types only: grpc is imported at run time in add_servicer alone)
    import grpc
    import grpc.aio

#: Full gRPC service name (for health checks and reflection).
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["WizardArena"].full_name


@overload
def stub(channel: grpc.aio.Channel) -> pb_grpc.WizardArenaAsyncStub: ...
@overload
def stub(channel: grpc.Channel) -> pb_grpc.WizardArenaStub: ...
def stub(channel: Any) -> Any:
    """A client stub for ``channel``: typed for a grpc channel (blocking
    calls) or a grpc.aio channel (awaitable calls, async iterators), by
    mypy-protobuf's stubs."""
    return pb_grpc.WizardArenaStub(channel)


def serialize_server(msg: pb.ServerMessage | bytes) -> bytes:
    """A ServerMessage as bytes (bytes already serialized pass through)."""
    return msg if isinstance(msg, bytes) else msg.SerializeToString()


def add_servicer(servicer: Any, server: Any) -> None:
    """Register a WizardArena servicer implementation on a grpc(.aio) server.

    As the generated ``add_WizardArenaServicer_to_server``, except that
    ``Play`` may also write a ``ServerMessage`` already serialized (bytes,
    e.g. from :func:`~wizard_arena.protocol.wire.fast.encode_server_bytes`),
    and that its request iterator yields each ``BotMessage`` as the bytes
    received: the servicer decodes them
    (:func:`~wizard_arena.protocol.wire.bot_messages.decode_bot_bytes`), so
    bytes that do not decode reach it as a
    :class:`~wizard_arena.protocol.wire.WireError` instead of ending the
    stream inside grpc. (grpc's deserializer would parse them in the same
    thread, at the same cost.) ``GetServerInfo`` likewise gets its request's
    bytes (:func:`~wizard_arena.protocol.wire.bot_messages.check_server_info_request`)."""
    import grpc  # the transport, only here: the rest of the codec is pure protobuf

    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {
        "Play": grpc.stream_stream_rpc_method_handler(
            servicer.Play,
            request_deserializer=None,  # bytes: decoded by the servicer
            response_serializer=serialize_server,
        ),
        "GetServerInfo": grpc.unary_unary_rpc_method_handler(
            servicer.GetServerInfo,
            request_deserializer=None,  # bytes: checked by the servicer
            response_serializer=pb.ServerInfo.SerializeToString,
        ),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
    server.add_registered_method_handlers(SERVICE_NAME, handlers)

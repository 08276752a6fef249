"""The wire edge: the one package that converts protobuf messages to and from
domain values (:mod:`wizard_arena.protocol.messages`, :mod:`wizard_arena.rules`).

Nothing else in the project touches ``*_pb2`` (the generated code in
:mod:`wizard_arena._generated`). Decoding never trusts the peer: anything
malformed raises :class:`WireError` (or, for a bot's action, yields an
:class:`~wizard_arena.protocol.messages.ActionMsg` with ``action=None``).

Use it as one module (``from wizard_arena.protocol import wire``); the parts:

- :mod:`.cards`: cards, suits, hands, :class:`WireError`;
- :mod:`.views`: rules, phases, reject reasons, tricks, round results, seat views;
- :mod:`.bot_messages`: Hello and actions (bot -> server);
- :mod:`.server_messages`: the server's messages as protobuf objects, ServerInfo;
- :mod:`.fast`: the referee's DecisionRequest as bytes joined from cached fragments;
- :mod:`.service`: the gRPC service name, the stub, the servicer registration
  (the only place grpc is imported, lazily).

May import: the rules room, :mod:`wizard_arena.protocol.messages`, protobuf
and the generated code; grpc only inside :func:`add_servicer`.

>>> from wizard_arena.protocol.messages import ActionMsg
>>> from wizard_arena.rules import Card, Bid
>>> decode_bot(encode_bot(ActionMsg("r1", Bid(2))))
ActionMsg(request_id='r1', action=Bid(bid=2), error='')
>>> card_from_pb(card_to_pb(Card("13H")))
Card('13H')
"""

from __future__ import annotations

# The generated modules are re-exported only for the transport glue and tests
# that build raw messages (stubs, deliberately broken messages); values cross
# into the rest of the code only through the functions below.
from wizard_arena._generated.v1 import arena_pb2 as pb
from wizard_arena._generated.v1 import arena_pb2_grpc as pb_grpc

from .bot_messages import check_server_info_request, decode_bot, decode_bot_bytes, encode_bot
from .cards import WireError, card_from_pb, card_to_pb
from .fast import encode_server_bytes
from .server_messages import (
    decode_server,
    decode_server_info,
    encode_server,
    encode_server_info,
    server_info_request,
)
from .service import SERVICE_NAME, add_servicer, stub

__all__ = [
    "SERVICE_NAME",
    "WireError",
    "add_servicer",
    "card_from_pb",
    "card_to_pb",
    "check_server_info_request",
    "decode_bot",
    "decode_bot_bytes",
    "decode_server",
    "decode_server_info",
    "encode_bot",
    "encode_server",
    "encode_server_bytes",
    "encode_server_info",
    "pb",
    "pb_grpc",
    "server_info_request",
    "stub",
]

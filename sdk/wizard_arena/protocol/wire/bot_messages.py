"""Bot -> server messages: Hello, actions and clock probe replies.

Decoding never trusts the peer: bytes that do not parse, or a message with
no member set, raise :class:`~.cards.WireError`; an action
without a usable choice decodes with ``action=None`` and the reason (the
referee rejects it as ``malformed``).

>>> from wizard_arena.rules import Bid
>>> decode_bot(encode_bot(ActionMsg("r1", Bid(2))))
ActionMsg(request_id='r1', action=Bid(bid=2), error='')
"""

from __future__ import annotations

from google.protobuf.message import DecodeError

from wizard_arena._generated.v1 import arena_pb2 as pb
from wizard_arena.protocol.codes import EventStream
from wizard_arena.protocol.messages import ActionMsg, BotMsg, ClockProbeReply, Hello
from wizard_arena.rules import Bid, ChooseTrump, Play

from .cards import SUIT_FROM_PB, SUIT_TO_PB, WireError, card_from_pb, set_card

#: Hello.event_stream on the wire. ``ALL`` is sent as unset, so a bot that
#: does not choose says exactly what a v1.0 Hello says.
EVENT_STREAM_TO_PB: dict[EventStream, pb.EventStream.ValueType] = {
    EventStream.ALL: pb.EVENT_STREAM_UNSPECIFIED,
    EventStream.LEAN: pb.EVENT_STREAM_LEAN,
}
#: An unknown value (a later minor version's) reads as ``ALL``: the stream
#: every server can send.
EVENT_STREAM_FROM_PB: dict[int, EventStream] = {
    pb.EVENT_STREAM_UNSPECIFIED: EventStream.ALL,
    pb.EVENT_STREAM_ALL: EventStream.ALL,
    pb.EVENT_STREAM_LEAN: EventStream.LEAN,
}


def encode_bot(msg: BotMsg) -> pb.BotMessage:
    out = pb.BotMessage()
    if isinstance(msg, Hello):
        h = out.hello
        h.min_version = msg.min_version
        h.max_version = msg.max_version
        h.bot_name = msg.bot_name
        h.token = msg.token
        h.sdk_name = msg.sdk_name
        h.sdk_version = msg.sdk_version
        h.rule_options.extend(msg.rule_options)
        h.resume_token = msg.resume_token
        h.event_stream = EVENT_STREAM_TO_PB[msg.event_stream]
        h.clock_probes = msg.clock_probes
        return out
    if isinstance(msg, ClockProbeReply):
        out.clock_probe_reply.id = msg.id
        return out
    a = out.action
    a.request_id = msg.request_id
    action = msg.action
    if isinstance(action, Bid):
        a.bid = action.bid
    elif isinstance(action, Play):
        set_card(a.card, action.card)
    elif isinstance(action, ChooseTrump):
        a.trump = SUIT_TO_PB[action.suit]
    return out


def decode_bot(msg: pb.BotMessage) -> BotMsg:
    """Decode a bot's message. A Hello or an action; an action without a
    usable choice decodes with ``action=None`` and the reason in ``error``.
    A message with none of them set raises WireError."""
    which = msg.WhichOneof("message")
    if which == "hello":
        h = msg.hello
        return Hello(
            bot_name=h.bot_name,
            min_version=h.min_version,
            max_version=h.max_version,
            token=h.token,
            sdk_name=h.sdk_name,
            sdk_version=h.sdk_version,
            rule_options=tuple(h.rule_options),
            resume_token=h.resume_token,
            event_stream=EVENT_STREAM_FROM_PB.get(h.event_stream, EventStream.ALL),
            clock_probes=h.clock_probes,
        )
    if which == "clock_probe_reply":
        return ClockProbeReply(msg.clock_probe_reply.id)
    if which != "action":
        raise WireError("empty message: no hello, action or clock_probe_reply is set")
    a = msg.action
    choice = a.WhichOneof("choice")
    if choice == "bid":
        return ActionMsg(a.request_id, Bid(a.bid))
    if choice == "card":
        try:
            return ActionMsg(a.request_id, Play(card_from_pb(a.card)))
        except WireError as e:
            return ActionMsg(a.request_id, None, str(e))
    if choice == "trump":
        suit = SUIT_FROM_PB.get(a.trump)
        if suit is None:
            return ActionMsg(a.request_id, None, f"not a trump suit: {a.trump}")
        return ActionMsg(a.request_id, ChooseTrump(suit))
    return ActionMsg(a.request_id, None, "the action has no choice (bid, card or trump)")


def decode_bot_bytes(data: bytes) -> BotMsg:
    """Parse and decode a serialized ``BotMessage``, as a server receives it.

    Bytes that do not parse (not protobuf; a string field that is not UTF-8)
    raise WireError, as :func:`decode_bot` does for a message with nothing set.

    >>> decode_bot_bytes(encode_bot(Hello("me")).SerializeToString()).bot_name
    'me'
    >>> decode_bot_bytes(bytes.fromhex("0a056162"))
    Traceback (most recent call last):
    ...
    wizard_arena.protocol.wire.WireError: the message does not decode as a BotMessage (4 bytes): ...
    """
    try:
        msg = pb.BotMessage.FromString(data)
    except DecodeError as e:
        raise WireError(
            f"the message does not decode as a BotMessage ({len(data)} bytes): {e}"
        ) from None
    return decode_bot(msg)


def check_server_info_request(data: bytes) -> None:
    """Check a serialized ``GetServerInfoRequest`` (an empty message that
    later versions may extend): WireError when the bytes do not parse.

    >>> check_server_info_request(b"")
    >>> check_server_info_request(bytes.fromhex("0a056162"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    wizard_arena.protocol.wire.WireError: the request does not decode as a ...
    """
    try:
        pb.GetServerInfoRequest.FromString(data)
    except DecodeError as e:
        raise WireError(
            f"the request does not decode as a GetServerInfoRequest ({len(data)} bytes): {e}"
        ) from None

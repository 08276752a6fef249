"""Server -> bot messages as protobuf objects, and ServerInfo.

:func:`encode_server` builds a ``ServerMessage`` field by field: the
reference encoding (the referee sends DecisionRequests through the faster
:func:`~wizard_arena.protocol.wire.fast.encode_server_bytes`, which parses to
the same message). :func:`decode_server` is the client's side and never
trusts the server: anything malformed raises :class:`~.cards.WireError`.
"""

from __future__ import annotations

from wizard_arena._generated.v1 import arena_pb2 as pb
from wizard_arena.protocol.codes import EventStream
from wizard_arena.protocol.messages import (
    ActionRejected,
    ClockProbe,
    DecisionRequest,
    FaultSummary,
    GameEnd,
    GameInfo,
    RoundStart,
    ServerInfo,
    ServerMsg,
    TableEvent,
    Welcome,
)
from wizard_arena.rules import (
    Action,
    Bid,
    BidMade,
    CardPlayed,
    ChooseTrump,
    Phase,
    Play,
    RoundScored,
    TrickWon,
    TrumpChosen,
)

from .bot_messages import EVENT_STREAM_FROM_PB
from .cards import (
    CARD_FIELDS,
    SUIT_TO_PB,
    WireError,
    card_from_pb,
    cards_from_pb,
    fill_cards,
    fill_hands,
    hands_from_pb,
    ms,
    set_card,
    suit_from_pb,
)
from .views import (
    KIND_OF_PHASE,
    PHASE_OF_KIND,
    REJECT_FROM_PB,
    REJECT_TO_PB,
    result_from_pb,
    result_to_pb,
    rules_from_pb,
    rules_to_pb,
    trick_from_pb,
    trick_to_pb,
    view_from_pb,
    view_to_pb,
)

_STREAM_IN_WELCOME: dict[EventStream, pb.EventStream.ValueType] = {
    EventStream.ALL: pb.EVENT_STREAM_ALL,
    EventStream.LEAN: pb.EVENT_STREAM_LEAN,
}

# -- encoding ------------------------------------------------------------------------


def encode_server(msg: ServerMsg) -> pb.ServerMessage:
    out = pb.ServerMessage()
    if isinstance(msg, DecisionRequest):
        _decision_request_to_pb(msg, out.decision_request)
    elif isinstance(msg, TableEvent):
        _event_to_pb(msg, out)
    elif isinstance(msg, RoundStart):
        _round_start_to_pb(msg, out.round_started)
    elif isinstance(msg, GameInfo):
        _game_info_to_pb(msg, out.game_started)
    elif isinstance(msg, ActionRejected):
        x = out.action_rejected
        x.request_id = msg.request_id
        x.game_id = msg.game_id
        x.reason = REJECT_TO_PB[msg.code]
        x.message = msg.message
        x.time_left_ms = ms(msg.time_left)
    elif isinstance(msg, GameEnd):
        o = out.game_over
        o.game_id = msg.game_id
        o.totals.extend(msg.totals)
        o.ranks.extend(msg.ranks)
        for f in msg.faults:
            o.faults.add(seat=f.seat, code=f.code, count=f.count, detail=f.detail)
    elif isinstance(msg, Welcome):
        w = out.welcome
        w.version = msg.version
        w.session_id = msg.session_id
        w.server_version = msg.server_version
        w.resume_token = msg.resume_token
        w.resumed = msg.resumed
        w.minor_version = msg.minor_version
        # named explicitly (ALL too): a Welcome that says it comes from v1.1
        w.event_stream = _STREAM_IN_WELCOME[msg.event_stream]
        w.clock_probes = msg.clock_probes
    elif isinstance(msg, ClockProbe):
        out.clock_probe.id = msg.id
    else:  # pragma: no cover - exhaustive over ServerMsg
        raise TypeError(f"not a server message: {msg!r}")
    return out


def _decision_request_to_pb(msg: DecisionRequest, d: pb.DecisionRequest) -> None:
    d.request_id = msg.request_id
    d.game_id = msg.game_id
    view = msg.view
    d.kind = KIND_OF_PHASE[view.phase]
    for act in view.legal_actions:
        if isinstance(act, Play):
            d.legal_cards.add(**CARD_FIELDS[act.card])
        elif isinstance(act, Bid):
            d.legal_bids.append(act.bid)
        else:
            d.legal_suits.append(SUIT_TO_PB[act.suit])
    d.time_left_ms = ms(view.time_left)
    d.time_bank_ms = ms(msg.time_bank)
    d.network_credit_ms = ms(msg.network_credit)
    view_to_pb(view, d.view)


def _round_start_to_pb(msg: RoundStart, r: pb.RoundStarted) -> None:
    r.game_id = msg.game_id
    r.round = msg.round
    r.dealer = msg.dealer
    r.cards_per_player = msg.cards
    fill_cards(r.your_hand, msg.hand)
    if msg.turned_card is not None:
        set_card(r.turned_card, msg.turned_card)
    r.trump = SUIT_TO_PB[msg.trump]
    r.trump_pending = msg.trump_pending
    if msg.others_hands:
        fill_hands(r.others_hands, msg.others_hands)


def _game_info_to_pb(msg: GameInfo, g: pb.GameStarted) -> None:
    g.game_id = msg.game_id
    rules_to_pb(msg.rules, g.rules)
    g.seat_names.extend(msg.names)
    g.your_seat = msg.seat
    g.move_time_ms = ms(msg.move_time)
    g.time_bank_ms = ms(msg.time_bank)
    g.bot_seed = msg.seed or 0


def _event_to_pb(msg: TableEvent, out: pb.ServerMessage) -> None:
    ev = msg.event
    gid = msg.game_id
    if isinstance(ev, CardPlayed):
        c = out.card_played
        c.game_id = gid
        c.seat = ev.seat
        set_card(c.card, ev.card)
    elif isinstance(ev, BidMade):
        b = out.bid_made
        b.game_id = gid
        b.seat = ev.seat
        b.bid = ev.bid
    elif isinstance(ev, TrickWon):
        t = out.trick_won
        t.game_id = gid
        t.number = ev.number
        trick_to_pb(ev.trick, t.trick)
    elif isinstance(ev, TrumpChosen):
        tc = out.trump_chosen
        tc.game_id = gid
        tc.seat = ev.seat
        tc.suit = SUIT_TO_PB[ev.suit]
    elif isinstance(ev, RoundScored):
        rs = out.round_scored
        rs.game_id = gid
        result_to_pb(ev.result, rs.result)
    else:
        raise TypeError(f"not a per-message public event: {ev!r}")


# -- decoding ------------------------------------------------------------------------


def decode_server(msg: pb.ServerMessage) -> ServerMsg:
    """Decode a server message (client side). Raises WireError if malformed."""
    which = msg.WhichOneof("message")
    if which == "decision_request":
        return _decision_request_from_pb(msg.decision_request)
    if which in _EVENTS:
        return _event_from_pb(which, msg)
    if which == "round_started":
        return _round_start_from_pb(msg.round_started)
    if which == "game_started":
        g = msg.game_started
        return GameInfo(
            g.game_id,
            rules_from_pb(g.rules),
            g.your_seat,
            tuple(g.seat_names),
            g.move_time_ms / 1000 if g.move_time_ms else None,
            g.time_bank_ms / 1000,
            g.bot_seed or None,
        )
    if which == "action_rejected":
        x = msg.action_rejected
        try:
            code = REJECT_FROM_PB[x.reason]
        except KeyError:
            raise WireError(f"unknown reject reason {x.reason}") from None
        return ActionRejected(x.request_id, x.game_id, code, x.message, x.time_left_ms / 1000)
    if which == "game_over":
        o = msg.game_over
        faults = tuple(FaultSummary(f.seat, f.code, f.count, f.detail) for f in o.faults)
        return GameEnd(o.game_id, tuple(o.totals), tuple(o.ranks), faults)
    if which == "welcome":
        w = msg.welcome
        stream = EVENT_STREAM_FROM_PB.get(w.event_stream)
        if stream is None:
            raise WireError(f"unknown event stream {w.event_stream} in the Welcome")
        return Welcome(
            w.version,
            w.session_id,
            w.server_version,
            w.resume_token,
            w.resumed,
            w.minor_version,
            stream,
            w.clock_probes,
        )
    if which == "clock_probe":
        return ClockProbe(msg.clock_probe.id)
    raise WireError("empty server message")


def _decision_request_from_pb(d: pb.DecisionRequest) -> DecisionRequest:
    try:
        phase = PHASE_OF_KIND[d.kind]
    except KeyError:
        raise WireError(f"unknown decision kind {d.kind}") from None
    legal: tuple[Action, ...]
    if phase is Phase.PLAY:
        legal = tuple(Play(c) for c in cards_from_pb(d.legal_cards))
    elif phase is Phase.BID:
        legal = tuple(Bid(b) for b in d.legal_bids)
    else:
        legal = tuple(
            ChooseTrump(s)
            for s in (suit_from_pb(v, allow_none=False) for v in d.legal_suits)
            if s is not None
        )
    view = view_from_pb(d.view, legal, d.time_left_ms / 1000)
    if view.phase is not phase:
        raise WireError(f"decision kind {d.kind} does not match the view's phase")
    return DecisionRequest(
        d.request_id, d.game_id, view, d.time_bank_ms / 1000, d.network_credit_ms / 1000
    )


_EVENTS = frozenset({"card_played", "bid_made", "trick_won", "trump_chosen", "round_scored"})


def _event_from_pb(which: str, msg: pb.ServerMessage) -> TableEvent:
    if which == "card_played":
        c = msg.card_played
        return TableEvent(c.game_id, CardPlayed(c.seat, card_from_pb(c.card)))
    if which == "bid_made":
        b = msg.bid_made
        return TableEvent(b.game_id, BidMade(b.seat, b.bid))
    if which == "trick_won":
        t = msg.trick_won
        trick = trick_from_pb(t.trick)
        return TableEvent(t.game_id, TrickWon(t.number, trick.winner, trick))
    if which == "trump_chosen":
        tc = msg.trump_chosen
        suit = suit_from_pb(tc.suit, allow_none=False)
        assert suit is not None
        return TableEvent(tc.game_id, TrumpChosen(tc.seat, suit))
    rs = msg.round_scored
    return TableEvent(rs.game_id, RoundScored(result_from_pb(rs.result)))


def _round_start_from_pb(r: pb.RoundStarted) -> RoundStart:
    return RoundStart(
        r.game_id,
        r.round,
        r.dealer,
        r.cards_per_player,
        cards_from_pb(r.your_hand),
        card_from_pb(r.turned_card) if r.HasField("turned_card") else None,
        suit_from_pb(r.trump),
        r.trump_pending,
        hands_from_pb(r.others_hands, None),
    )


# -- server info ---------------------------------------------------------------------


def server_info_request() -> pb.GetServerInfoRequest:
    return pb.GetServerInfoRequest()


def encode_server_info(info: ServerInfo) -> pb.ServerInfo:
    out = pb.ServerInfo(
        server_version=info.server_version,
        protocol_versions=list(info.protocol_versions),
        move_time_ms=ms(info.move_time),
        token_required=info.token_required,
        rule_options=list(info.rule_options),
        minor_version=info.minor_version,
        lag_credit_cap_ms=ms(info.lag_credit_cap),
    )
    rules_to_pb(info.rules, out.rules)
    return out


def decode_server_info(msg: pb.ServerInfo) -> ServerInfo:
    return ServerInfo(
        msg.server_version,
        tuple(msg.protocol_versions),
        rules_from_pb(msg.rules),
        msg.move_time_ms / 1000,
        msg.token_required,
        tuple(msg.rule_options),
        msg.minor_version,
        msg.lag_credit_cap_ms / 1000,
    )

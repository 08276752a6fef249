"""The wire edge: the one module that converts protobuf messages to and from
domain values (:mod:`wizard_arena.protocol.messages`, :mod:`wizard_arena.rules`).

Nothing else in the project touches ``*_pb2``. Decoding never trusts the
peer: anything malformed raises :class:`WireError` (or, for a bot's action,
yields an :class:`~wizard_arena.protocol.messages.ActionMsg` with ``action=None``).

>>> from wizard_arena.rules import Card, Bid
>>> decode_bot(encode_bot(ActionMsg("r1", Bid(2))))
ActionMsg(request_id='r1', action=Bid(bid=2), error='')
>>> card_from_pb(card_to_pb(Card("13H")))
Card('13H')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from google.protobuf.message import DecodeError

from wizard_arena._generated.v1 import arena_pb2 as pb
from wizard_arena._generated.v1 import arena_pb2_grpc as pb_grpc
from wizard_arena.bot import GameInfo
from wizard_arena.protocol.codes import RejectCode
from wizard_arena.protocol.messages import (
    ActionMsg,
    ActionRejected,
    BotMsg,
    DecisionRequest,
    FaultSummary,
    GameEnd,
    Hello,
    RoundStart,
    ServerInfo,
    ServerMsg,
    TableEvent,
    Welcome,
)
from wizard_arena.rules import (
    ALL_CARDS,
    JESTER,
    Action,
    Bid,
    BidMade,
    BidRestriction,
    Card,
    CardPlayed,
    ChooseTrump,
    Phase,
    Play,
    RoundResult,
    RoundScored,
    Rules,
    SeatView,
    Suit,
    Trick,
    TrickWon,
    TrumpChosen,
)

__all__ = [
    "SERVICE_NAME",
    "WireError",
    "add_servicer",
    "card_from_pb",
    "card_to_pb",
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

#: Full gRPC service name (for health checks and reflection).
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["WizardArena"].full_name

# The generated modules are re-exported only for the transport glue (stubs,
# servicer registration, reflection); values cross into the rest of the code
# only through the functions below.


class WireError(ValueError):
    """A protobuf message that does not decode to a valid domain value."""


# -- cards, suits, rules -------------------------------------------------------

_SUIT_TO_PB = {
    None: pb.SUIT_UNSPECIFIED,
    Suit.SPADES: pb.SUIT_SPADES,
    Suit.HEARTS: pb.SUIT_HEARTS,
    Suit.DIAMONDS: pb.SUIT_DIAMONDS,
    Suit.CLUBS: pb.SUIT_CLUBS,
}
_SUIT_FROM_PB = {v: k for k, v in _SUIT_TO_PB.items()}


def _card_fields(card: Card) -> dict[str, int]:
    if card.is_wizard:
        out: dict[str, int] = {"kind": pb.CARD_KIND_WIZARD}
        if card.wizard_suit is not None:  # a suited Wizard (tricksy_suited)
            out["wizard_suit"] = _SUIT_TO_PB[card.wizard_suit]
        return out
    if card.is_jester:
        return {"kind": pb.CARD_KIND_JESTER}
    return {"kind": pb.CARD_KIND_SUITED, "suit": _SUIT_TO_PB[card.suit], "rank": card.rank}


#: Each card's fields (only those set: a Wizard's or Jester's suit and rank stay 0).
_CARD_FIELDS = {c: _card_fields(c) for c in ALL_CARDS}
_SUITED_FROM_FIELDS = {
    (f["suit"], f["rank"]): c for c, f in _CARD_FIELDS.items() if c.suit is not None
}
# A Wizard or Jester decodes whatever its (meaningless) suit and rank say; a
# Wizard's identity is its wizard_suit (unset: the plain Wizard W).
_WIZARDS = {_SUIT_TO_PB[c.wizard_suit]: c for c in ALL_CARDS if c.is_wizard}


def card_to_pb(card: Card) -> pb.Card:
    return pb.Card(**_CARD_FIELDS[card])  # type: ignore[arg-type]


def _set_card(out: pb.Card, card: Card) -> None:
    """Fill the card sub-message ``out`` (in place: no temporary message)."""
    for name, value in _CARD_FIELDS[card].items():
        setattr(out, name, value)


def _fill_cards(field: object, cards: Iterable[Card]) -> None:
    add = field.add  # type: ignore[attr-defined]
    fields = _CARD_FIELDS
    for c in cards:
        add(**fields[c])


def card_from_pb(msg: pb.Card) -> Card:
    kind = msg.kind
    if kind == pb.CARD_KIND_WIZARD:
        wizard = _WIZARDS.get(msg.wizard_suit)
        if wizard is None:
            raise WireError(f"not a card: a Wizard with wizard_suit={msg.wizard_suit}")
        return wizard
    if kind == pb.CARD_KIND_JESTER:
        return JESTER
    card = _SUITED_FROM_FIELDS.get((msg.suit, msg.rank)) if kind == pb.CARD_KIND_SUITED else None
    if card is None:
        raise WireError(f"not a card: kind={msg.kind} suit={msg.suit} rank={msg.rank}")
    return card


def _cards(msgs: Iterable[pb.Card]) -> tuple[Card, ...]:
    return tuple(card_from_pb(m) for m in msgs)


def _suit_from_pb(value: int, *, allow_none: bool = True) -> Suit | None:
    try:
        suit = _SUIT_FROM_PB[value]  # type: ignore[index]
    except KeyError:
        raise WireError(f"not a suit: {value}") from None
    if suit is None and not allow_none:
        raise WireError("a suit is required")
    return suit


_RESTRICTION_TO_PB = {
    BidRestriction.NONE: pb.BID_RESTRICTION_NONE,
    BidRestriction.DEALER_NOT_EQUAL: pb.BID_RESTRICTION_DEALER_NOT_EQUAL,
    BidRestriction.CANADIAN: pb.BID_RESTRICTION_CANADIAN,
}
_RESTRICTION_FROM_PB = {v: k for k, v in _RESTRICTION_TO_PB.items()}
_RESTRICTION_FROM_PB[pb.BID_RESTRICTION_UNSPECIFIED] = BidRestriction.NONE


def _rules_to_pb(rules: Rules, out: pb.Rules) -> None:
    out.players = rules.players
    out.bid_restriction = _RESTRICTION_TO_PB[rules.bid_restriction]
    out.round_sizes.extend(rules.round_sizes)
    out.hidden_bids = rules.hidden_bids
    out.blind_first_round = rules.blind_first_round
    out.maximus = rules.maximus
    out.tricksy = rules.tricksy
    out.lowest_score_deals = rules.lowest_score_deals
    out.short_game = rules.hand_sizes is not None
    out.tricksy_suited = rules.tricksy_suited
    out.reveal_bids_after_tricks = rules.reveal_bids_after_tricks
    out.first_dealer_by_draw = rules.first_dealer_by_draw


def _rules_from_pb(msg: pb.Rules) -> Rules:
    try:
        restriction = _RESTRICTION_FROM_PB[msg.bid_restriction]
    except KeyError:
        raise WireError(f"unknown bid restriction {msg.bid_restriction}") from None
    hand_sizes: tuple[int, ...] | None = None
    if msg.short_game:
        if not msg.round_sizes:
            raise WireError("rules: a short game needs its round_sizes")
        hand_sizes = tuple(msg.round_sizes)
    try:
        rules = Rules(
            players=msg.players,
            bid_restriction=restriction,
            hidden_bids=msg.hidden_bids,
            blind_first_round=msg.blind_first_round,
            maximus=msg.maximus,
            tricksy=msg.tricksy,
            lowest_score_deals=msg.lowest_score_deals,
            hand_sizes=hand_sizes,
            tricksy_suited=msg.tricksy_suited,
            reveal_bids_after_tricks=msg.reveal_bids_after_tricks,
            first_dealer_by_draw=msg.first_dealer_by_draw,
        )
    except ValueError as e:
        raise WireError(f"rules: {e}") from None
    if msg.round_sizes and tuple(msg.round_sizes) != rules.round_sizes:
        raise WireError(f"round sizes {list(msg.round_sizes)} do not match the rules")
    return rules


def _fill_hands(field: object, hands: Iterable[Iterable[Card]]) -> None:
    add = field.add  # type: ignore[attr-defined]
    for cards in hands:
        _fill_cards(add().cards, cards)


def _hands_from_pb(msgs: Sequence[pb.Hand], players: int | None) -> tuple[tuple[Card, ...], ...]:
    """Decode ``others_hands``: empty, or one entry per seat."""
    if not msgs:
        return ()
    if players is not None and len(msgs) != players:
        raise WireError(f"others_hands must have one entry per seat ({players}), not {len(msgs)}")
    return tuple(_cards(h.cards) for h in msgs)


_PHASE_TO_PB = {
    Phase.DEAL: pb.PHASE_DEAL,
    Phase.CHOOSE_TRUMP: pb.PHASE_CHOOSE_TRUMP,
    Phase.BID: pb.PHASE_BID,
    Phase.PLAY: pb.PHASE_PLAY,
    Phase.GAME_OVER: pb.PHASE_GAME_OVER,
}
_PHASE_FROM_PB = {v: k for k, v in _PHASE_TO_PB.items()}

_KIND_OF_PHASE = {
    Phase.BID: pb.DECISION_KIND_BID,
    Phase.PLAY: pb.DECISION_KIND_PLAY,
    Phase.CHOOSE_TRUMP: pb.DECISION_KIND_CHOOSE_TRUMP,
}
_PHASE_OF_KIND = {v: k for k, v in _KIND_OF_PHASE.items()}

_REJECT_TO_PB: dict[str, pb.RejectReason] = {
    RejectCode.WRONG_PHASE: pb.REJECT_REASON_WRONG_PHASE,
    RejectCode.NOT_YOUR_TURN: pb.REJECT_REASON_NOT_YOUR_TURN,
    RejectCode.CARD_NOT_IN_HAND: pb.REJECT_REASON_CARD_NOT_IN_HAND,
    RejectCode.MUST_FOLLOW_SUIT: pb.REJECT_REASON_MUST_FOLLOW_SUIT,
    RejectCode.BID_OUT_OF_RANGE: pb.REJECT_REASON_BID_OUT_OF_RANGE,
    RejectCode.BID_FORBIDDEN: pb.REJECT_REASON_BID_FORBIDDEN,
    RejectCode.TRUMP_CHOICE_NOT_ALLOWED: pb.REJECT_REASON_TRUMP_CHOICE_NOT_ALLOWED,
    RejectCode.UNKNOWN_REQUEST: pb.REJECT_REASON_UNKNOWN_REQUEST,
    RejectCode.MALFORMED: pb.REJECT_REASON_MALFORMED,
}
_REJECT_FROM_PB = {v: k for k, v in _REJECT_TO_PB.items()}


def _ms(seconds: float | None) -> int:
    if seconds is None:
        return 0
    return max(0, min(int(seconds * 1000), 2**32 - 1))


# -- results, tricks, views ------------------------------------------------------


def _result_to_pb(r: RoundResult, out: pb.RoundResult) -> None:
    out.round = r.round
    out.dealer = r.dealer
    out.bids.extend(r.bids)
    out.tricks.extend(r.tricks)
    out.points.extend(r.points)
    out.totals.extend(r.totals)


def _result_from_pb(m: pb.RoundResult) -> RoundResult:
    return RoundResult(
        m.round, m.dealer, tuple(m.bids), tuple(m.tricks), tuple(m.points), tuple(m.totals)
    )


def _trick_to_pb(t: Trick, out: pb.Trick) -> None:
    out.leader = t.leader
    out.winner = t.winner
    _fill_cards(out.cards, t.cards)


def _trick_from_pb(m: pb.Trick) -> Trick:
    return Trick(m.leader, _cards(m.cards), m.winner)


def _view_to_pb(v: SeatView, out: pb.SeatView) -> None:
    _rules_to_pb(v.rules, out.rules)
    out.seat = v.seat
    out.phase = _PHASE_TO_PB[v.phase]
    out.round = v.round
    out.cards_per_player = v.cards_per_player
    out.dealer = v.dealer
    out.to_act = -1 if v.to_act is None else v.to_act
    _fill_cards(out.hand, v.hand)
    if v.turned_card is not None:
        _set_card(out.turned_card, v.turned_card)
    out.trump = _SUIT_TO_PB[v.trump]
    out.bids.extend(-1 if b is None else b for b in v.bids)
    out.leader = v.leader
    _fill_cards(out.trick, v.trick)
    for t in v.tricks:
        _trick_to_pb(t, out.tricks.add())
    out.tricks_won.extend(v.tricks_won)
    out.totals.extend(v.totals)
    for r in v.results:
        _result_to_pb(r, out.results.add())
    if v.others_hands:
        _fill_hands(out.others_hands, v.others_hands)
    if v.next_trump is not None:
        out.next_trump = _SUIT_TO_PB[v.next_trump]


def _view_from_pb(
    m: pb.SeatView, legal: tuple[Action, ...] = (), time_left: float | None = None
) -> SeatView:
    rules = _rules_from_pb(m.rules)
    n = rules.players
    try:
        phase = _PHASE_FROM_PB[m.phase]
    except KeyError:
        raise WireError(f"unknown phase {m.phase}") from None
    if m.seat >= n or not -1 <= m.to_act < n or m.dealer >= n or m.leader >= n:
        raise WireError("seat number out of range in view")
    if len(m.bids) != n or len(m.tricks_won) != n or len(m.totals) != n:
        raise WireError(f"per-seat lists in view must have {n} entries")
    return SeatView(
        rules=rules,
        seat=m.seat,
        phase=phase,
        round=m.round,
        cards_per_player=m.cards_per_player,
        dealer=m.dealer,
        to_act=None if m.to_act < 0 else m.to_act,
        hand=_cards(m.hand),
        turned_card=card_from_pb(m.turned_card) if m.HasField("turned_card") else None,
        trump=_suit_from_pb(m.trump),
        bids=tuple(None if b < 0 else b for b in m.bids),
        leader=m.leader,
        trick=_cards(m.trick),
        tricks=tuple(_trick_from_pb(t) for t in m.tricks),
        tricks_won=tuple(m.tricks_won),
        totals=tuple(m.totals),
        results=tuple(_result_from_pb(r) for r in m.results),
        others_hands=_hands_from_pb(m.others_hands, n),
        next_trump=_suit_from_pb(m.next_trump),
        legal_actions=legal,
        time_left=time_left,
    )


# -- bot messages ------------------------------------------------------------------


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
        return out
    a = out.action
    a.request_id = msg.request_id
    action = msg.action
    if isinstance(action, Bid):
        a.bid = action.bid
    elif isinstance(action, Play):
        _set_card(a.card, action.card)
    elif isinstance(action, ChooseTrump):
        a.trump = _SUIT_TO_PB[action.suit]
    return out


def decode_bot(msg: pb.BotMessage) -> BotMsg:
    """Decode a bot's message. A Hello or an action; an action without a
    usable choice decodes with ``action=None`` and the reason in ``error``.
    A message with neither raises WireError."""
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
        )
    if which != "action":
        raise WireError("empty message: neither hello nor action is set")
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
        suit = _SUIT_FROM_PB.get(a.trump)
        if suit is None:
            return ActionMsg(a.request_id, None, f"not a trump suit: {a.trump}")
        return ActionMsg(a.request_id, ChooseTrump(suit))
    return ActionMsg(a.request_id, None, "the action has no choice (bid, card or trump)")


def decode_bot_bytes(data: bytes) -> BotMsg:
    """Parse and decode a serialized ``BotMessage``, as a server receives it.

    Bytes that do not parse (not protobuf; a string field that is not UTF-8)
    raise WireError, as :func:`decode_bot` does for a message with neither
    hello nor action.

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


# -- server messages ---------------------------------------------------------------


def encode_server(msg: ServerMsg) -> pb.ServerMessage:
    out = pb.ServerMessage()
    if isinstance(msg, DecisionRequest):
        d = out.decision_request
        d.request_id = msg.request_id
        d.game_id = msg.game_id
        view = msg.view
        d.kind = _KIND_OF_PHASE[view.phase]
        for act in view.legal_actions:
            if isinstance(act, Play):
                d.legal_cards.add(**_CARD_FIELDS[act.card])
            elif isinstance(act, Bid):
                d.legal_bids.append(act.bid)
            else:
                d.legal_suits.append(_SUIT_TO_PB[act.suit])
        d.time_left_ms = _ms(view.time_left)
        d.time_bank_ms = _ms(msg.time_bank)
        _view_to_pb(view, d.view)
    elif isinstance(msg, TableEvent):
        _event_to_pb(msg, out)
    elif isinstance(msg, RoundStart):
        r = out.round_started
        r.game_id = msg.game_id
        r.round = msg.round
        r.dealer = msg.dealer
        r.cards_per_player = msg.cards
        _fill_cards(r.your_hand, msg.hand)
        if msg.turned_card is not None:
            _set_card(r.turned_card, msg.turned_card)
        r.trump = _SUIT_TO_PB[msg.trump]
        r.trump_pending = msg.trump_pending
        if msg.others_hands:
            _fill_hands(r.others_hands, msg.others_hands)
    elif isinstance(msg, GameInfo):
        g = out.game_started
        g.game_id = msg.game_id
        _rules_to_pb(msg.rules, g.rules)
        g.seat_names.extend(msg.names)
        g.your_seat = msg.seat
        g.move_time_ms = _ms(msg.move_time)
        g.time_bank_ms = _ms(msg.time_bank)
        g.bot_seed = msg.seed or 0
    elif isinstance(msg, ActionRejected):
        x = out.action_rejected
        x.request_id = msg.request_id
        x.game_id = msg.game_id
        x.reason = _REJECT_TO_PB[msg.code]
        x.message = msg.message
        x.time_left_ms = _ms(msg.time_left)
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
    else:  # pragma: no cover - exhaustive over ServerMsg
        raise TypeError(f"not a server message: {msg!r}")
    return out


# -- the referee's fast path: server messages as bytes ---------------------------------
#
# A DecisionRequest carries the seat's complete view, which grows through the
# game (every trick of the round, every round's result). Building it field by
# field as a protobuf object costs about 80 us in Python; the referee sends one
# per decision. Most of it never changes between two requests of a game: the
# rules, the tricks already won, the results of past rounds. So the referee
# serializes those parts once and joins bytes.
#
# This relies on two properties of the protobuf wire format (language guide,
# "Encoding"): a message is the concatenation of its fields' encodings, and
# concatenating encodings of the same message type merges them (repeated
# fields append, in order). Each cached fragment is the serialization, by
# protobuf itself, of a message with just that field set; only the two
# length-delimited wrappers (the view inside the request, the request inside
# the ServerMessage) are framed here. The result parses to exactly what
# encode_server() builds (tests/test_wire.py checks this over whole games of
# every variant).


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _framed(field_number: int, payload: bytes) -> bytes:
    """``payload`` as a length-delimited field (wire type 2) of a message."""
    return _varint(field_number << 3 | 2) + _varint(len(payload)) + payload


_VIEW_FIELD = pb.DecisionRequest.DESCRIPTOR.fields_by_name["view"].number
_REQUEST_FIELD = pb.ServerMessage.DESCRIPTOR.fields_by_name["decision_request"].number


def _card_entries(cls: type, field: str) -> dict[Card, bytes]:
    """Each card as one entry of the repeated Card field ``field`` of ``cls``."""
    return {c: cls(**{field: [card_to_pb(c)]}).SerializeToString() for c in ALL_CARDS}


_HAND_ENTRY = _card_entries(pb.SeatView, "hand")
_TRICK_CARD_ENTRY = _card_entries(pb.SeatView, "trick")
_LEGAL_CARD_ENTRY = _card_entries(pb.DecisionRequest, "legal_cards")


class _ByIdentity:
    """Encoded fragments of immutable domain objects, keyed by identity.

    The rules core creates each Trick and RoundResult once and every later
    view holds that same object (and never changes it), so a lookup by
    ``id`` is enough. The cache keeps each object it holds alive, so its id
    cannot be reused while cached; the objects and the bytes sit in two
    plain dicts (no container per entry for the garbage collector to walk).
    The cache is emptied when it reaches ``limit`` entries: the live tables
    then encode their fragments again, once. Safe to share between threads:
    a race can only cost a fragment being made twice."""

    def __init__(self, limit: int) -> None:
        self._objects: dict[int, object] = {}
        self._bytes: dict[int, bytes] = {}
        self._limit = limit

    def get(self, obj: object, make: Callable[[], bytes]) -> bytes:
        key = id(obj)
        if self._objects.get(key) is obj:
            value = self._bytes.get(key)
            if value is not None:
                return value
        if len(self._objects) >= self._limit:
            self._objects.clear()
            self._bytes.clear()
        value = make()
        self._bytes[key] = value
        self._objects[key] = obj
        return value


#: 64 tables of 4 hold about 2,600 fragments (this round's tricks, past rounds).
_FRAGMENTS = _ByIdentity(8192)


def _rules_entry(rules: Rules) -> bytes:
    out = pb.SeatView()
    _rules_to_pb(rules, out.rules)
    return out.SerializeToString()


def _tricks_entry(trick: Trick) -> bytes:
    out = pb.SeatView()
    _trick_to_pb(trick, out.tricks.add())
    return out.SerializeToString()


def _results_entry(result: RoundResult) -> bytes:
    out = pb.SeatView()
    _result_to_pb(result, out.results.add())
    return out.SerializeToString()


def _view_bytes(v: SeatView) -> bytes:
    head = pb.SeatView(
        seat=v.seat,
        phase=_PHASE_TO_PB[v.phase],
        round=v.round,
        cards_per_player=v.cards_per_player,
        dealer=v.dealer,
        to_act=-1 if v.to_act is None else v.to_act,
        trump=_SUIT_TO_PB[v.trump],
        bids=[-1 if b is None else b for b in v.bids],
        leader=v.leader,
        tricks_won=v.tricks_won,
        totals=v.totals,
    )
    if v.turned_card is not None:
        _set_card(head.turned_card, v.turned_card)
    if v.others_hands:
        _fill_hands(head.others_hands, v.others_hands)
    if v.next_trump is not None:
        head.next_trump = _SUIT_TO_PB[v.next_trump]
    get = _FRAGMENTS.get
    rules = v.rules
    parts = [get(rules, lambda: _rules_entry(rules)), head.SerializeToString()]
    parts += [_HAND_ENTRY[c] for c in v.hand]
    parts += [_TRICK_CARD_ENTRY[c] for c in v.trick]
    parts += [get(t, lambda t=t: _tricks_entry(t)) for t in v.tricks]  # type: ignore[misc]
    parts += [get(r, lambda r=r: _results_entry(r)) for r in v.results]  # type: ignore[misc]
    return b"".join(parts)


def _decision_request_bytes(msg: DecisionRequest) -> bytes:
    view = msg.view
    d = pb.DecisionRequest(
        request_id=msg.request_id,
        game_id=msg.game_id,
        kind=_KIND_OF_PHASE[view.phase],
        time_left_ms=_ms(view.time_left),
        time_bank_ms=_ms(msg.time_bank),
    )
    cards: list[bytes] = []
    for act in view.legal_actions:
        if isinstance(act, Play):
            cards.append(_LEGAL_CARD_ENTRY[act.card])
        elif isinstance(act, Bid):
            d.legal_bids.append(act.bid)
        else:
            d.legal_suits.append(_SUIT_TO_PB[act.suit])
    body = b"".join([d.SerializeToString(), *cards, _framed(_VIEW_FIELD, _view_bytes(view))])
    return _framed(_REQUEST_FIELD, body)


def encode_server_bytes(msg: ServerMsg) -> bytes:
    """``msg`` serialized, as the referee sends it: parses to the same
    ``ServerMessage`` as :func:`encode_server` builds, but a DecisionRequest
    is assembled from cached fragments (see above), several times faster.

    >>> from wizard_arena.rules import Game, Rules
    >>> game = Game(Rules(players=3), seed=1)
    >>> game.deal()
    >>> seat = game.acting[0]
    >>> msg = DecisionRequest("g-1", "g", game.view(seat).with_time_left(2.0))
    >>> pb.ServerMessage.FromString(encode_server_bytes(msg)) == encode_server(msg)
    True
    """
    if isinstance(msg, DecisionRequest):
        return _decision_request_bytes(msg)
    return encode_server(msg).SerializeToString()


def _event_to_pb(msg: TableEvent, out: pb.ServerMessage) -> None:
    ev = msg.event
    gid = msg.game_id
    if isinstance(ev, CardPlayed):
        c = out.card_played
        c.game_id = gid
        c.seat = ev.seat
        _set_card(c.card, ev.card)
    elif isinstance(ev, BidMade):
        b = out.bid_made
        b.game_id = gid
        b.seat = ev.seat
        b.bid = ev.bid
    elif isinstance(ev, TrickWon):
        t = out.trick_won
        t.game_id = gid
        t.number = ev.number
        _trick_to_pb(ev.trick, t.trick)
    elif isinstance(ev, TrumpChosen):
        tc = out.trump_chosen
        tc.game_id = gid
        tc.seat = ev.seat
        tc.suit = _SUIT_TO_PB[ev.suit]
    elif isinstance(ev, RoundScored):
        rs = out.round_scored
        rs.game_id = gid
        _result_to_pb(ev.result, rs.result)
    else:
        raise TypeError(f"not a per-message public event: {ev!r}")


def decode_server(msg: pb.ServerMessage) -> ServerMsg:
    """Decode a server message (client side). Raises WireError if malformed."""
    which = msg.WhichOneof("message")
    if which == "decision_request":
        d = msg.decision_request
        try:
            phase = _PHASE_OF_KIND[d.kind]
        except KeyError:
            raise WireError(f"unknown decision kind {d.kind}") from None
        legal: tuple[Action, ...]
        if phase is Phase.PLAY:
            legal = tuple(Play(c) for c in _cards(d.legal_cards))
        elif phase is Phase.BID:
            legal = tuple(Bid(b) for b in d.legal_bids)
        else:
            legal = tuple(
                ChooseTrump(s)
                for s in (_suit_from_pb(v, allow_none=False) for v in d.legal_suits)
                if s is not None
            )
        view = _view_from_pb(d.view, legal, d.time_left_ms / 1000)
        if view.phase is not phase:
            raise WireError(f"decision kind {d.kind} does not match the view's phase")
        return DecisionRequest(d.request_id, d.game_id, view, d.time_bank_ms / 1000)
    if which == "card_played":
        c = msg.card_played
        return TableEvent(c.game_id, CardPlayed(c.seat, card_from_pb(c.card)))
    if which == "bid_made":
        b = msg.bid_made
        return TableEvent(b.game_id, BidMade(b.seat, b.bid))
    if which == "trick_won":
        t = msg.trick_won
        trick = _trick_from_pb(t.trick)
        return TableEvent(t.game_id, TrickWon(t.number, trick.winner, trick))
    if which == "trump_chosen":
        tc = msg.trump_chosen
        suit = _suit_from_pb(tc.suit, allow_none=False)
        assert suit is not None
        return TableEvent(tc.game_id, TrumpChosen(tc.seat, suit))
    if which == "round_scored":
        rs = msg.round_scored
        return TableEvent(rs.game_id, RoundScored(_result_from_pb(rs.result)))
    if which == "round_started":
        r = msg.round_started
        return RoundStart(
            r.game_id,
            r.round,
            r.dealer,
            r.cards_per_player,
            _cards(r.your_hand),
            card_from_pb(r.turned_card) if r.HasField("turned_card") else None,
            _suit_from_pb(r.trump),
            r.trump_pending,
            _hands_from_pb(r.others_hands, None),
        )
    if which == "game_started":
        g = msg.game_started
        return GameInfo(
            g.game_id,
            _rules_from_pb(g.rules),
            g.your_seat,
            tuple(g.seat_names),
            g.move_time_ms / 1000 if g.move_time_ms else None,
            g.time_bank_ms / 1000,
            g.bot_seed or None,
        )
    if which == "action_rejected":
        x = msg.action_rejected
        try:
            code = _REJECT_FROM_PB[x.reason]
        except KeyError:
            raise WireError(f"unknown reject reason {x.reason}") from None
        return ActionRejected(x.request_id, x.game_id, code, x.message, x.time_left_ms / 1000)
    if which == "game_over":
        o = msg.game_over
        faults = tuple(FaultSummary(f.seat, f.code, f.count, f.detail) for f in o.faults)
        return GameEnd(o.game_id, tuple(o.totals), tuple(o.ranks), faults)
    if which == "welcome":
        w = msg.welcome
        return Welcome(w.version, w.session_id, w.server_version, w.resume_token, w.resumed)
    raise WireError("empty server message")


# -- server info -------------------------------------------------------------------


def server_info_request() -> pb.GetServerInfoRequest:
    return pb.GetServerInfoRequest()


def encode_server_info(info: ServerInfo) -> pb.ServerInfo:
    out = pb.ServerInfo(
        server_version=info.server_version,
        protocol_versions=list(info.protocol_versions),
        move_time_ms=_ms(info.move_time),
        token_required=info.token_required,
        rule_options=list(info.rule_options),
    )
    _rules_to_pb(info.rules, out.rules)
    return out


def decode_server_info(msg: pb.ServerInfo) -> ServerInfo:
    return ServerInfo(
        msg.server_version,
        tuple(msg.protocol_versions),
        _rules_from_pb(msg.rules),
        msg.move_time_ms / 1000,
        msg.token_required,
        tuple(msg.rule_options),
    )


# -- transport glue ----------------------------------------------------------------


def stub(channel: object) -> pb_grpc.WizardArenaStub:
    """A client stub for ``channel`` (a grpc or grpc.aio channel)."""
    return pb_grpc.WizardArenaStub(channel)  # type: ignore[no-untyped-call]


def _serialize_server(msg: pb.ServerMessage | bytes) -> bytes:
    return msg if isinstance(msg, bytes) else msg.SerializeToString()


def add_servicer(servicer: Any, server: Any) -> None:
    """Register a WizardArena servicer implementation on a grpc(.aio) server.

    As the generated ``add_WizardArenaServicer_to_server``, except that
    ``Play`` may also write a ``ServerMessage`` already serialized (bytes,
    e.g. from :func:`encode_server_bytes`), and that its request iterator
    yields each ``BotMessage`` as the bytes received: the servicer decodes
    them (:func:`decode_bot_bytes`), so bytes that do not decode reach it as
    a :class:`WireError` instead of ending the stream inside grpc. (grpc's
    deserializer would parse them in the same thread, at the same cost.)"""
    import grpc  # the transport, only here: the rest of this module is pure protobuf

    handlers = {
        "Play": grpc.stream_stream_rpc_method_handler(
            servicer.Play,
            request_deserializer=None,  # bytes: decoded by the servicer
            response_serializer=_serialize_server,
        ),
        "GetServerInfo": grpc.unary_unary_rpc_method_handler(
            servicer.GetServerInfo,
            request_deserializer=pb.GetServerInfoRequest.FromString,
            response_serializer=pb.ServerInfo.SerializeToString,
        ),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
    server.add_registered_method_handlers(SERVICE_NAME, handlers)

"""The referee's fast path: server messages as bytes.

A DecisionRequest carries the seat's complete view, which grows through the
game (every trick of the round, every round's result). Building it field by
field as a protobuf object costs about 80 us in Python; the referee sends one
per decision. Most of it never changes between two requests of a game: the
rules, the tricks already won, the results of past rounds. So the referee
serializes those parts once and joins bytes.

This relies on two properties of the protobuf wire format (language guide,
"Encoding"): a message is the concatenation of its fields' encodings, and
concatenating encodings of the same message type merges them (repeated
fields append, in order). Each cached fragment is the serialization, by
protobuf itself, of a message with just that field set; only the two
length-delimited wrappers (the view inside the request, the request inside
the ServerMessage) are framed here. The result parses to exactly what
:func:`~wizard_arena.protocol.wire.server_messages.encode_server` builds
(tests/test_wire.py checks this over whole games of every variant;
bench/bench_wire.py times both).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from wizard_arena._generated.v1 import arena_pb2 as pb
from wizard_arena.protocol.messages import DecisionRequest, ServerMsg
from wizard_arena.rules import ALL_CARDS, Bid, Card, Play, RoundResult, Rules, SeatView, Trick

from .cards import SUIT_TO_PB, card_to_pb, fill_hands, ms, set_card
from .server_messages import encode_server
from .views import KIND_OF_PHASE, PHASE_TO_PB, result_to_pb, rules_to_pb, trick_to_pb


def _varint(n: int) -> bytes:
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_ONE_BYTE = [bytes((n,)) for n in range(128)]


def framed(field_number: int, payload: bytes) -> bytes:
    """``payload`` as a length-delimited field (wire type 2) of a message."""
    n = len(payload)
    if n < 128:
        size = _ONE_BYTE[n]
    elif n < 16384:  # every view's length: two bytes, inline
        size = bytes((n & 0x7F | 0x80, n >> 7))
    else:
        size = _varint(n)
    tag = field_number << 3 | 2
    return (_ONE_BYTE[tag] if tag < 128 else _varint(tag)) + size + payload


_VIEW_FIELD = pb.DecisionRequest.DESCRIPTOR.fields_by_name["view"].number
_REQUEST_FIELD = pb.ServerMessage.DESCRIPTOR.fields_by_name["decision_request"].number


def _card_entries(cls: type, field: str) -> dict[Card, bytes]:
    """Each card as one entry of the repeated Card field ``field`` of ``cls``."""
    return {c: cls(**{field: [card_to_pb(c)]}).SerializeToString() for c in ALL_CARDS}


_HAND_ENTRY = _card_entries(pb.SeatView, "hand")
_TRICK_CARD_ENTRY = _card_entries(pb.SeatView, "trick")
_LEGAL_CARD_ENTRY = _card_entries(pb.DecisionRequest, "legal_cards")


class ByIdentity:
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
_FRAGMENTS = ByIdentity(8192)


T = TypeVar("T")


class Runs:
    """The entries of runs of fragments, joined: a view's tricks (of the
    round so far) or its results (of the game's rounds so far).

    Every view of a round holds the same tricks so far, and every view of a
    game the same results so far, each run the one before with one more
    object: a join is kept keyed by the run's last object, with the run it
    was made from, which a hit must match (a view put together by hand could
    end with the same object after others). Emptied at ``limit`` runs, and
    safe to share between threads: a run and its join are kept as one entry
    (one dict read gives both), so a race can only cost a join being made
    twice, never one run's join for another run ending with the same object."""

    def __init__(self, limit: int, fragments: ByIdentity | None = None) -> None:
        self._joined: dict[int, tuple[tuple[object, ...], bytes]] = {}
        self._limit = limit
        self._fragments = _FRAGMENTS if fragments is None else fragments
        """Each object's entry, by identity (the module's, shared by default)."""

    def join(self, run: tuple[T, ...], entry: Callable[[T], bytes]) -> bytes:
        if not run:
            return b""
        key = id(run[-1])
        kept = self._joined.get(key)
        if kept is not None and (kept[0] is run or kept[0] == run):
            return kept[1]
        get = self._fragments.get
        value = b"".join([get(x, lambda x=x: entry(x)) for x in run])  # type: ignore[misc]
        if len(self._joined) >= self._limit:
            self._joined.clear()
        self._joined[key] = (run, value)
        return value


_RUNS = Runs(4096)


def _rules_entry(rules: Rules) -> bytes:
    out = pb.SeatView()
    rules_to_pb(rules, out.rules)
    return out.SerializeToString()


def _tricks_entry(trick: Trick) -> bytes:
    out = pb.SeatView()
    trick_to_pb(trick, out.tricks.add())
    return out.SerializeToString()


def _results_entry(result: RoundResult) -> bytes:
    out = pb.SeatView()
    result_to_pb(result, out.results.add())
    return out.SerializeToString()


def _view_bytes(v: SeatView) -> bytes:
    head = pb.SeatView(
        seat=v.seat,
        phase=PHASE_TO_PB[v.phase],
        round=v.round,
        cards_per_player=v.cards_per_player,
        dealer=v.dealer,
        to_act=-1 if v.to_act is None else v.to_act,
        trump=SUIT_TO_PB[v.trump],
        bids=[-1 if b is None else b for b in v.bids],
        leader=v.leader,
        tricks_won=v.tricks_won,
        totals=v.totals,
    )
    if v.turned_card is not None:
        set_card(head.turned_card, v.turned_card)
    if v.others_hands:
        fill_hands(head.others_hands, v.others_hands)
    if v.next_trump is not None:
        head.next_trump = SUIT_TO_PB[v.next_trump]
    get = _FRAGMENTS.get
    rules = v.rules
    parts = [get(rules, lambda: _rules_entry(rules)), head.SerializeToString()]
    parts += [_HAND_ENTRY[c] for c in v.hand]
    parts += [_TRICK_CARD_ENTRY[c] for c in v.trick]
    parts.append(_RUNS.join(v.tricks, _tricks_entry))
    parts.append(_RUNS.join(v.results, _results_entry))
    return b"".join(parts)


def _decision_request_bytes(msg: DecisionRequest) -> bytes:
    view = msg.view
    d = pb.DecisionRequest(
        request_id=msg.request_id,
        game_id=msg.game_id,
        kind=KIND_OF_PHASE[view.phase],
        time_left_ms=ms(view.time_left),
        time_bank_ms=ms(msg.time_bank),
    )
    if msg.network_credit:  # (most requests have none: a field fewer to set)
        d.network_credit_ms = ms(msg.network_credit)
    cards: list[bytes] = []
    for act in view.legal_actions:
        if isinstance(act, Play):
            cards.append(_LEGAL_CARD_ENTRY[act.card])
        elif isinstance(act, Bid):
            d.legal_bids.append(act.bid)
        else:
            d.legal_suits.append(SUIT_TO_PB[act.suit])
    body = b"".join([d.SerializeToString(), *cards, framed(_VIEW_FIELD, _view_bytes(view))])
    return framed(_REQUEST_FIELD, body)


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

"""Rules, phases, round results, tricks and seat views on the wire.

The parts of the game state that several messages carry (GameStarted and
ServerInfo carry the rules; a DecisionRequest carries the seat's whole view;
TrickWon and RoundScored a trick and a result). Decoding checks what the
rules core cannot check for a view it did not make: seat numbers in range,
one entry per seat in per-seat lists.
"""

from __future__ import annotations

from wizard_arena._generated.v1 import arena_pb2 as pb
from wizard_arena.protocol.codes import RejectCode
from wizard_arena.rules import (
    Action,
    BidRestriction,
    Phase,
    RoundResult,
    Rules,
    SeatView,
    Trick,
)

from .cards import (
    SUIT_TO_PB,
    WireError,
    card_from_pb,
    cards_from_pb,
    fill_cards,
    fill_hands,
    hands_from_pb,
    set_card,
    suit_from_pb,
)

_RESTRICTION_TO_PB = {
    BidRestriction.NONE: pb.BID_RESTRICTION_NONE,
    BidRestriction.DEALER_NOT_EQUAL: pb.BID_RESTRICTION_DEALER_NOT_EQUAL,
    BidRestriction.CANADIAN: pb.BID_RESTRICTION_CANADIAN,
}
_RESTRICTION_FROM_PB = {v: k for k, v in _RESTRICTION_TO_PB.items()}
_RESTRICTION_FROM_PB[pb.BID_RESTRICTION_UNSPECIFIED] = BidRestriction.NONE

PHASE_TO_PB = {
    Phase.DEAL: pb.PHASE_DEAL,
    Phase.CHOOSE_TRUMP: pb.PHASE_CHOOSE_TRUMP,
    Phase.BID: pb.PHASE_BID,
    Phase.PLAY: pb.PHASE_PLAY,
    Phase.GAME_OVER: pb.PHASE_GAME_OVER,
}
_PHASE_FROM_PB = {v: k for k, v in PHASE_TO_PB.items()}

#: The DecisionRequest.kind of each phase in which a seat decides.
KIND_OF_PHASE = {
    Phase.BID: pb.DECISION_KIND_BID,
    Phase.PLAY: pb.DECISION_KIND_PLAY,
    Phase.CHOOSE_TRUMP: pb.DECISION_KIND_CHOOSE_TRUMP,
}
PHASE_OF_KIND = {v: k for k, v in KIND_OF_PHASE.items()}

# ActionRejected's reason codes (the strings of protocol.messages.REJECT_CODES).
REJECT_TO_PB: dict[str, pb.RejectReason.ValueType] = {
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
REJECT_FROM_PB = {v: k for k, v in REJECT_TO_PB.items()}


# -- rules -----------------------------------------------------------------------


def rules_to_pb(rules: Rules, out: pb.Rules) -> None:
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


def rules_from_pb(msg: pb.Rules) -> Rules:
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


# -- results, tricks ---------------------------------------------------------------


def result_to_pb(r: RoundResult, out: pb.RoundResult) -> None:
    out.round = r.round
    out.dealer = r.dealer
    out.bids.extend(r.bids)
    out.tricks.extend(r.tricks)
    out.points.extend(r.points)
    out.totals.extend(r.totals)


def result_from_pb(m: pb.RoundResult) -> RoundResult:
    return RoundResult(
        m.round, m.dealer, tuple(m.bids), tuple(m.tricks), tuple(m.points), tuple(m.totals)
    )


def trick_to_pb(t: Trick, out: pb.Trick) -> None:
    out.leader = t.leader
    out.winner = t.winner
    fill_cards(out.cards, t.cards)


def trick_from_pb(m: pb.Trick) -> Trick:
    return Trick(m.leader, cards_from_pb(m.cards), m.winner)


# -- seat views --------------------------------------------------------------------


def view_to_pb(v: SeatView, out: pb.SeatView) -> None:
    rules_to_pb(v.rules, out.rules)
    out.seat = v.seat
    out.phase = PHASE_TO_PB[v.phase]
    out.round = v.round
    out.cards_per_player = v.cards_per_player
    out.dealer = v.dealer
    out.to_act = -1 if v.to_act is None else v.to_act
    fill_cards(out.hand, v.hand)
    if v.turned_card is not None:
        set_card(out.turned_card, v.turned_card)
    out.trump = SUIT_TO_PB[v.trump]
    out.bids.extend(-1 if b is None else b for b in v.bids)
    out.leader = v.leader
    fill_cards(out.trick, v.trick)
    for t in v.tricks:
        trick_to_pb(t, out.tricks.add())
    out.tricks_won.extend(v.tricks_won)
    out.totals.extend(v.totals)
    for r in v.results:
        result_to_pb(r, out.results.add())
    if v.others_hands:
        fill_hands(out.others_hands, v.others_hands)
    if v.next_trump is not None:
        out.next_trump = SUIT_TO_PB[v.next_trump]


def view_from_pb(
    m: pb.SeatView, legal: tuple[Action, ...] = (), time_left: float | None = None
) -> SeatView:
    rules = rules_from_pb(m.rules)
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
        hand=cards_from_pb(m.hand),
        turned_card=card_from_pb(m.turned_card) if m.HasField("turned_card") else None,
        trump=suit_from_pb(m.trump),
        bids=tuple(None if b < 0 else b for b in m.bids),
        leader=m.leader,
        trick=cards_from_pb(m.trick),
        tricks=tuple(trick_from_pb(t) for t in m.tricks),
        tricks_won=tuple(m.tricks_won),
        totals=tuple(m.totals),
        results=tuple(result_from_pb(r) for r in m.results),
        others_hands=hands_from_pb(m.others_hands, n),
        next_trump=suit_from_pb(m.next_trump),
        legal_actions=legal,
        time_left=time_left,
    )

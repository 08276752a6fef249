from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Suit(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SUIT_UNSPECIFIED: _ClassVar[Suit]
    SUIT_SPADES: _ClassVar[Suit]
    SUIT_HEARTS: _ClassVar[Suit]
    SUIT_DIAMONDS: _ClassVar[Suit]
    SUIT_CLUBS: _ClassVar[Suit]

class CardKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CARD_KIND_UNSPECIFIED: _ClassVar[CardKind]
    CARD_KIND_SUITED: _ClassVar[CardKind]
    CARD_KIND_WIZARD: _ClassVar[CardKind]
    CARD_KIND_JESTER: _ClassVar[CardKind]

class BidRestriction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BID_RESTRICTION_UNSPECIFIED: _ClassVar[BidRestriction]
    BID_RESTRICTION_NONE: _ClassVar[BidRestriction]
    BID_RESTRICTION_DEALER_NOT_EQUAL: _ClassVar[BidRestriction]
    BID_RESTRICTION_CANADIAN: _ClassVar[BidRestriction]

class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PHASE_UNSPECIFIED: _ClassVar[Phase]
    PHASE_DEAL: _ClassVar[Phase]
    PHASE_CHOOSE_TRUMP: _ClassVar[Phase]
    PHASE_BID: _ClassVar[Phase]
    PHASE_PLAY: _ClassVar[Phase]
    PHASE_GAME_OVER: _ClassVar[Phase]

class EventStream(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EVENT_STREAM_UNSPECIFIED: _ClassVar[EventStream]
    EVENT_STREAM_ALL: _ClassVar[EventStream]
    EVENT_STREAM_LEAN: _ClassVar[EventStream]

class DecisionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_KIND_UNSPECIFIED: _ClassVar[DecisionKind]
    DECISION_KIND_BID: _ClassVar[DecisionKind]
    DECISION_KIND_PLAY: _ClassVar[DecisionKind]
    DECISION_KIND_CHOOSE_TRUMP: _ClassVar[DecisionKind]

class RejectReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REJECT_REASON_UNSPECIFIED: _ClassVar[RejectReason]
    REJECT_REASON_WRONG_PHASE: _ClassVar[RejectReason]
    REJECT_REASON_NOT_YOUR_TURN: _ClassVar[RejectReason]
    REJECT_REASON_CARD_NOT_IN_HAND: _ClassVar[RejectReason]
    REJECT_REASON_MUST_FOLLOW_SUIT: _ClassVar[RejectReason]
    REJECT_REASON_BID_OUT_OF_RANGE: _ClassVar[RejectReason]
    REJECT_REASON_BID_FORBIDDEN: _ClassVar[RejectReason]
    REJECT_REASON_TRUMP_CHOICE_NOT_ALLOWED: _ClassVar[RejectReason]
    REJECT_REASON_UNKNOWN_REQUEST: _ClassVar[RejectReason]
    REJECT_REASON_MALFORMED: _ClassVar[RejectReason]
SUIT_UNSPECIFIED: Suit
SUIT_SPADES: Suit
SUIT_HEARTS: Suit
SUIT_DIAMONDS: Suit
SUIT_CLUBS: Suit
CARD_KIND_UNSPECIFIED: CardKind
CARD_KIND_SUITED: CardKind
CARD_KIND_WIZARD: CardKind
CARD_KIND_JESTER: CardKind
BID_RESTRICTION_UNSPECIFIED: BidRestriction
BID_RESTRICTION_NONE: BidRestriction
BID_RESTRICTION_DEALER_NOT_EQUAL: BidRestriction
BID_RESTRICTION_CANADIAN: BidRestriction
PHASE_UNSPECIFIED: Phase
PHASE_DEAL: Phase
PHASE_CHOOSE_TRUMP: Phase
PHASE_BID: Phase
PHASE_PLAY: Phase
PHASE_GAME_OVER: Phase
EVENT_STREAM_UNSPECIFIED: EventStream
EVENT_STREAM_ALL: EventStream
EVENT_STREAM_LEAN: EventStream
DECISION_KIND_UNSPECIFIED: DecisionKind
DECISION_KIND_BID: DecisionKind
DECISION_KIND_PLAY: DecisionKind
DECISION_KIND_CHOOSE_TRUMP: DecisionKind
REJECT_REASON_UNSPECIFIED: RejectReason
REJECT_REASON_WRONG_PHASE: RejectReason
REJECT_REASON_NOT_YOUR_TURN: RejectReason
REJECT_REASON_CARD_NOT_IN_HAND: RejectReason
REJECT_REASON_MUST_FOLLOW_SUIT: RejectReason
REJECT_REASON_BID_OUT_OF_RANGE: RejectReason
REJECT_REASON_BID_FORBIDDEN: RejectReason
REJECT_REASON_TRUMP_CHOICE_NOT_ALLOWED: RejectReason
REJECT_REASON_UNKNOWN_REQUEST: RejectReason
REJECT_REASON_MALFORMED: RejectReason

class Card(_message.Message):
    __slots__ = ("kind", "suit", "rank", "wizard_suit")
    KIND_FIELD_NUMBER: _ClassVar[int]
    SUIT_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    WIZARD_SUIT_FIELD_NUMBER: _ClassVar[int]
    kind: CardKind
    suit: Suit
    rank: int
    wizard_suit: Suit
    def __init__(self, kind: _Optional[_Union[CardKind, str]] = ..., suit: _Optional[_Union[Suit, str]] = ..., rank: _Optional[int] = ..., wizard_suit: _Optional[_Union[Suit, str]] = ...) -> None: ...

class Rules(_message.Message):
    __slots__ = ("players", "bid_restriction", "round_sizes", "hidden_bids", "blind_first_round", "maximus", "tricksy", "lowest_score_deals", "short_game", "tricksy_suited", "reveal_bids_after_tricks", "first_dealer_by_draw")
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    BID_RESTRICTION_FIELD_NUMBER: _ClassVar[int]
    ROUND_SIZES_FIELD_NUMBER: _ClassVar[int]
    HIDDEN_BIDS_FIELD_NUMBER: _ClassVar[int]
    BLIND_FIRST_ROUND_FIELD_NUMBER: _ClassVar[int]
    MAXIMUS_FIELD_NUMBER: _ClassVar[int]
    TRICKSY_FIELD_NUMBER: _ClassVar[int]
    LOWEST_SCORE_DEALS_FIELD_NUMBER: _ClassVar[int]
    SHORT_GAME_FIELD_NUMBER: _ClassVar[int]
    TRICKSY_SUITED_FIELD_NUMBER: _ClassVar[int]
    REVEAL_BIDS_AFTER_TRICKS_FIELD_NUMBER: _ClassVar[int]
    FIRST_DEALER_BY_DRAW_FIELD_NUMBER: _ClassVar[int]
    players: int
    bid_restriction: BidRestriction
    round_sizes: _containers.RepeatedScalarFieldContainer[int]
    hidden_bids: bool
    blind_first_round: bool
    maximus: bool
    tricksy: bool
    lowest_score_deals: bool
    short_game: bool
    tricksy_suited: bool
    reveal_bids_after_tricks: bool
    first_dealer_by_draw: bool
    def __init__(self, players: _Optional[int] = ..., bid_restriction: _Optional[_Union[BidRestriction, str]] = ..., round_sizes: _Optional[_Iterable[int]] = ..., hidden_bids: _Optional[bool] = ..., blind_first_round: _Optional[bool] = ..., maximus: _Optional[bool] = ..., tricksy: _Optional[bool] = ..., lowest_score_deals: _Optional[bool] = ..., short_game: _Optional[bool] = ..., tricksy_suited: _Optional[bool] = ..., reveal_bids_after_tricks: _Optional[bool] = ..., first_dealer_by_draw: _Optional[bool] = ...) -> None: ...

class Hand(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    def __init__(self, cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ...) -> None: ...

class Trick(_message.Message):
    __slots__ = ("leader", "cards", "winner")
    LEADER_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    leader: int
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    winner: int
    def __init__(self, leader: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., winner: _Optional[int] = ...) -> None: ...

class RoundResult(_message.Message):
    __slots__ = ("round", "dealer", "bids", "tricks", "points", "totals")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    BIDS_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    round: int
    dealer: int
    bids: _containers.RepeatedScalarFieldContainer[int]
    tricks: _containers.RepeatedScalarFieldContainer[int]
    points: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, round: _Optional[int] = ..., dealer: _Optional[int] = ..., bids: _Optional[_Iterable[int]] = ..., tricks: _Optional[_Iterable[int]] = ..., points: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ...) -> None: ...

class SeatView(_message.Message):
    __slots__ = ("rules", "seat", "phase", "round", "cards_per_player", "dealer", "to_act", "hand", "turned_card", "trump", "bids", "leader", "trick", "tricks", "tricks_won", "totals", "results", "others_hands", "next_trump")
    RULES_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    CARDS_PER_PLAYER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TURNED_CARD_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    BIDS_FIELD_NUMBER: _ClassVar[int]
    LEADER_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    TRICKS_WON_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    OTHERS_HANDS_FIELD_NUMBER: _ClassVar[int]
    NEXT_TRUMP_FIELD_NUMBER: _ClassVar[int]
    rules: Rules
    seat: int
    phase: Phase
    round: int
    cards_per_player: int
    dealer: int
    to_act: int
    hand: _containers.RepeatedCompositeFieldContainer[Card]
    turned_card: Card
    trump: Suit
    bids: _containers.RepeatedScalarFieldContainer[int]
    leader: int
    trick: _containers.RepeatedCompositeFieldContainer[Card]
    tricks: _containers.RepeatedCompositeFieldContainer[Trick]
    tricks_won: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    results: _containers.RepeatedCompositeFieldContainer[RoundResult]
    others_hands: _containers.RepeatedCompositeFieldContainer[Hand]
    next_trump: Suit
    def __init__(self, rules: _Optional[_Union[Rules, _Mapping]] = ..., seat: _Optional[int] = ..., phase: _Optional[_Union[Phase, str]] = ..., round: _Optional[int] = ..., cards_per_player: _Optional[int] = ..., dealer: _Optional[int] = ..., to_act: _Optional[int] = ..., hand: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., turned_card: _Optional[_Union[Card, _Mapping]] = ..., trump: _Optional[_Union[Suit, str]] = ..., bids: _Optional[_Iterable[int]] = ..., leader: _Optional[int] = ..., trick: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., tricks: _Optional[_Iterable[_Union[Trick, _Mapping]]] = ..., tricks_won: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ..., results: _Optional[_Iterable[_Union[RoundResult, _Mapping]]] = ..., others_hands: _Optional[_Iterable[_Union[Hand, _Mapping]]] = ..., next_trump: _Optional[_Union[Suit, str]] = ...) -> None: ...

class BotMessage(_message.Message):
    __slots__ = ("hello", "action")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    action: Action
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., action: _Optional[_Union[Action, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("min_version", "max_version", "bot_name", "token", "sdk_name", "sdk_version", "rule_options", "resume_token", "event_stream")
    MIN_VERSION_FIELD_NUMBER: _ClassVar[int]
    MAX_VERSION_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    SDK_NAME_FIELD_NUMBER: _ClassVar[int]
    SDK_VERSION_FIELD_NUMBER: _ClassVar[int]
    RULE_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    RESUME_TOKEN_FIELD_NUMBER: _ClassVar[int]
    EVENT_STREAM_FIELD_NUMBER: _ClassVar[int]
    min_version: int
    max_version: int
    bot_name: str
    token: str
    sdk_name: str
    sdk_version: str
    rule_options: _containers.RepeatedScalarFieldContainer[str]
    resume_token: str
    event_stream: EventStream
    def __init__(self, min_version: _Optional[int] = ..., max_version: _Optional[int] = ..., bot_name: _Optional[str] = ..., token: _Optional[str] = ..., sdk_name: _Optional[str] = ..., sdk_version: _Optional[str] = ..., rule_options: _Optional[_Iterable[str]] = ..., resume_token: _Optional[str] = ..., event_stream: _Optional[_Union[EventStream, str]] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("request_id", "bid", "card", "trump")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    bid: int
    card: Card
    trump: Suit
    def __init__(self, request_id: _Optional[str] = ..., bid: _Optional[int] = ..., card: _Optional[_Union[Card, _Mapping]] = ..., trump: _Optional[_Union[Suit, str]] = ...) -> None: ...

class ServerMessage(_message.Message):
    __slots__ = ("welcome", "game_started", "round_started", "trump_chosen", "bid_made", "card_played", "trick_won", "round_scored", "decision_request", "action_rejected", "game_over")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    GAME_STARTED_FIELD_NUMBER: _ClassVar[int]
    ROUND_STARTED_FIELD_NUMBER: _ClassVar[int]
    TRUMP_CHOSEN_FIELD_NUMBER: _ClassVar[int]
    BID_MADE_FIELD_NUMBER: _ClassVar[int]
    CARD_PLAYED_FIELD_NUMBER: _ClassVar[int]
    TRICK_WON_FIELD_NUMBER: _ClassVar[int]
    ROUND_SCORED_FIELD_NUMBER: _ClassVar[int]
    DECISION_REQUEST_FIELD_NUMBER: _ClassVar[int]
    ACTION_REJECTED_FIELD_NUMBER: _ClassVar[int]
    GAME_OVER_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    game_started: GameStarted
    round_started: RoundStarted
    trump_chosen: TrumpChosen
    bid_made: BidMade
    card_played: CardPlayed
    trick_won: TrickWon
    round_scored: RoundScored
    decision_request: DecisionRequest
    action_rejected: ActionRejected
    game_over: GameOver
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., game_started: _Optional[_Union[GameStarted, _Mapping]] = ..., round_started: _Optional[_Union[RoundStarted, _Mapping]] = ..., trump_chosen: _Optional[_Union[TrumpChosen, _Mapping]] = ..., bid_made: _Optional[_Union[BidMade, _Mapping]] = ..., card_played: _Optional[_Union[CardPlayed, _Mapping]] = ..., trick_won: _Optional[_Union[TrickWon, _Mapping]] = ..., round_scored: _Optional[_Union[RoundScored, _Mapping]] = ..., decision_request: _Optional[_Union[DecisionRequest, _Mapping]] = ..., action_rejected: _Optional[_Union[ActionRejected, _Mapping]] = ..., game_over: _Optional[_Union[GameOver, _Mapping]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("version", "session_id", "server_version", "resume_token", "resumed", "minor_version", "event_stream")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    RESUME_TOKEN_FIELD_NUMBER: _ClassVar[int]
    RESUMED_FIELD_NUMBER: _ClassVar[int]
    MINOR_VERSION_FIELD_NUMBER: _ClassVar[int]
    EVENT_STREAM_FIELD_NUMBER: _ClassVar[int]
    version: int
    session_id: str
    server_version: str
    resume_token: str
    resumed: bool
    minor_version: int
    event_stream: EventStream
    def __init__(self, version: _Optional[int] = ..., session_id: _Optional[str] = ..., server_version: _Optional[str] = ..., resume_token: _Optional[str] = ..., resumed: _Optional[bool] = ..., minor_version: _Optional[int] = ..., event_stream: _Optional[_Union[EventStream, str]] = ...) -> None: ...

class GameStarted(_message.Message):
    __slots__ = ("game_id", "rules", "seat_names", "your_seat", "move_time_ms", "time_bank_ms", "bot_seed")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    YOUR_SEAT_FIELD_NUMBER: _ClassVar[int]
    MOVE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    BOT_SEED_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    rules: Rules
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    your_seat: int
    move_time_ms: int
    time_bank_ms: int
    bot_seed: int
    def __init__(self, game_id: _Optional[str] = ..., rules: _Optional[_Union[Rules, _Mapping]] = ..., seat_names: _Optional[_Iterable[str]] = ..., your_seat: _Optional[int] = ..., move_time_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., bot_seed: _Optional[int] = ...) -> None: ...

class RoundStarted(_message.Message):
    __slots__ = ("game_id", "round", "dealer", "cards_per_player", "your_hand", "turned_card", "trump", "trump_pending", "others_hands")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    CARDS_PER_PLAYER_FIELD_NUMBER: _ClassVar[int]
    YOUR_HAND_FIELD_NUMBER: _ClassVar[int]
    TURNED_CARD_FIELD_NUMBER: _ClassVar[int]
    TRUMP_FIELD_NUMBER: _ClassVar[int]
    TRUMP_PENDING_FIELD_NUMBER: _ClassVar[int]
    OTHERS_HANDS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    round: int
    dealer: int
    cards_per_player: int
    your_hand: _containers.RepeatedCompositeFieldContainer[Card]
    turned_card: Card
    trump: Suit
    trump_pending: bool
    others_hands: _containers.RepeatedCompositeFieldContainer[Hand]
    def __init__(self, game_id: _Optional[str] = ..., round: _Optional[int] = ..., dealer: _Optional[int] = ..., cards_per_player: _Optional[int] = ..., your_hand: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., turned_card: _Optional[_Union[Card, _Mapping]] = ..., trump: _Optional[_Union[Suit, str]] = ..., trump_pending: _Optional[bool] = ..., others_hands: _Optional[_Iterable[_Union[Hand, _Mapping]]] = ...) -> None: ...

class TrumpChosen(_message.Message):
    __slots__ = ("game_id", "seat", "suit")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SUIT_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    suit: Suit
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., suit: _Optional[_Union[Suit, str]] = ...) -> None: ...

class BidMade(_message.Message):
    __slots__ = ("game_id", "seat", "bid")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    bid: int
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., bid: _Optional[int] = ...) -> None: ...

class CardPlayed(_message.Message):
    __slots__ = ("game_id", "seat", "card")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    seat: int
    card: Card
    def __init__(self, game_id: _Optional[str] = ..., seat: _Optional[int] = ..., card: _Optional[_Union[Card, _Mapping]] = ...) -> None: ...

class TrickWon(_message.Message):
    __slots__ = ("game_id", "number", "trick")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    TRICK_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    number: int
    trick: Trick
    def __init__(self, game_id: _Optional[str] = ..., number: _Optional[int] = ..., trick: _Optional[_Union[Trick, _Mapping]] = ...) -> None: ...

class RoundScored(_message.Message):
    __slots__ = ("game_id", "result")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    result: RoundResult
    def __init__(self, game_id: _Optional[str] = ..., result: _Optional[_Union[RoundResult, _Mapping]] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("request_id", "game_id", "kind", "legal_bids", "legal_cards", "legal_suits", "time_left_ms", "view", "time_bank_ms")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    LEGAL_BIDS_FIELD_NUMBER: _ClassVar[int]
    LEGAL_CARDS_FIELD_NUMBER: _ClassVar[int]
    LEGAL_SUITS_FIELD_NUMBER: _ClassVar[int]
    TIME_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    game_id: str
    kind: DecisionKind
    legal_bids: _containers.RepeatedScalarFieldContainer[int]
    legal_cards: _containers.RepeatedCompositeFieldContainer[Card]
    legal_suits: _containers.RepeatedScalarFieldContainer[Suit]
    time_left_ms: int
    view: SeatView
    time_bank_ms: int
    def __init__(self, request_id: _Optional[str] = ..., game_id: _Optional[str] = ..., kind: _Optional[_Union[DecisionKind, str]] = ..., legal_bids: _Optional[_Iterable[int]] = ..., legal_cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., legal_suits: _Optional[_Iterable[_Union[Suit, str]]] = ..., time_left_ms: _Optional[int] = ..., view: _Optional[_Union[SeatView, _Mapping]] = ..., time_bank_ms: _Optional[int] = ...) -> None: ...

class ActionRejected(_message.Message):
    __slots__ = ("request_id", "game_id", "reason", "message", "time_left_ms")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    TIME_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    game_id: str
    reason: RejectReason
    message: str
    time_left_ms: int
    def __init__(self, request_id: _Optional[str] = ..., game_id: _Optional[str] = ..., reason: _Optional[_Union[RejectReason, str]] = ..., message: _Optional[str] = ..., time_left_ms: _Optional[int] = ...) -> None: ...

class Fault(_message.Message):
    __slots__ = ("seat", "code", "count", "detail")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CODE_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    code: str
    count: int
    detail: str
    def __init__(self, seat: _Optional[int] = ..., code: _Optional[str] = ..., count: _Optional[int] = ..., detail: _Optional[str] = ...) -> None: ...

class GameOver(_message.Message):
    __slots__ = ("game_id", "totals", "ranks", "faults")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    totals: _containers.RepeatedScalarFieldContainer[int]
    ranks: _containers.RepeatedScalarFieldContainer[int]
    faults: _containers.RepeatedCompositeFieldContainer[Fault]
    def __init__(self, game_id: _Optional[str] = ..., totals: _Optional[_Iterable[int]] = ..., ranks: _Optional[_Iterable[int]] = ..., faults: _Optional[_Iterable[_Union[Fault, _Mapping]]] = ...) -> None: ...

class GetServerInfoRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ServerInfo(_message.Message):
    __slots__ = ("server_version", "protocol_versions", "rules", "rule_options", "move_time_ms", "token_required", "minor_version")
    SERVER_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSIONS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    RULE_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    MOVE_TIME_MS_FIELD_NUMBER: _ClassVar[int]
    TOKEN_REQUIRED_FIELD_NUMBER: _ClassVar[int]
    MINOR_VERSION_FIELD_NUMBER: _ClassVar[int]
    server_version: str
    protocol_versions: _containers.RepeatedScalarFieldContainer[int]
    rules: Rules
    rule_options: _containers.RepeatedScalarFieldContainer[str]
    move_time_ms: int
    token_required: bool
    minor_version: int
    def __init__(self, server_version: _Optional[str] = ..., protocol_versions: _Optional[_Iterable[int]] = ..., rules: _Optional[_Union[Rules, _Mapping]] = ..., rule_options: _Optional[_Iterable[str]] = ..., move_time_ms: _Optional[int] = ..., token_required: _Optional[bool] = ..., minor_version: _Optional[int] = ...) -> None: ...

"""The observation encoder and the action ids: one seat's view as a fixed-size vector.

Everything here is built from a :class:`~wizard_arena.rules.SeatView` (what
one seat may know) and nothing else, so the vector can never carry a hidden
card; the environments (:mod:`.aec`, :mod:`.single`) and a learned bot at the
table (``wizard_bots.learned``) call the same :func:`encode`, so a policy
trained in an environment plays in the arena unchanged. It needs numpy only.

**Card slots.** A card is slot :attr:`Card.index <wizard_arena.rules.Card.index>`
of a block of :data:`CARD_SLOTS` (64): 0..51 the suited cards (``suit * 13 +
rank - 1``, suits S H D C), 52 a Wizard with no printed suit (``W``), 53 the
Jester, 54..57 the suited Wizards ``WS WH WD WC`` (``tricksy_suited``),
58..63 reserved for Wizards with identities of a later rules version (always
0 today). A block holds counts (a hand may hold up to four ``W`` or ``J``).
A new card takes a reserved slot: no existing position changes meaning.

**Rule features** likewise: the ``rules`` block has :data:`RULE_SLOTS`
positions, :data:`RULE_FEATURES` first (each bid restriction, each rule flag),
the rest reserved. A new rule variant takes the next reserved position, so the
vector keeps its size and every other position its meaning: a network trained
before the variant existed still reads the positions it was trained on (the
learned bot's weights name the rule features they were trained with).

**Seats** are relative: row 0 is this seat, row 1 the seat on its left (who
plays after it), and so on; rows beyond the table's size are zero (their
``present`` feature is 0). The vector has the same size at 3 to 6 players.

**Actions** are one :data:`ACTION_SIZE`-wide discrete space: ids 0..20 bid
that many tricks, 21..24 choose trump S H D C, 25..88 play the card of slot
``id - 25``. :func:`action_mask` marks the legal ids.

>>> from wizard_arena.rules import Game, Rules
>>> game = Game(Rules(players=4), seed=1)
>>> game.deal()
>>> view = game.view(game.to_act)
>>> obs = encode(view)
>>> obs.shape == (OBS_SIZE,), obs.dtype.name
(True, 'float32')
>>> [action_of(i) for i in np.flatnonzero(action_mask(view))]
[Bid(bid=0), Bid(bid=1)]
>>> action_id(Bid(1)), action_id(ChooseTrump(Suit.HEARTS)), action_id(Play(Card("13H")))
(1, 22, 50)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from wizard_arena.rules import (
    MAX_PLAYERS,
    Action,
    Bid,
    BidRestriction,
    Card,
    ChooseTrump,
    Phase,
    Play,
    Rules,
    SeatView,
    Suit,
    suit_to_follow,
    trick_winner,
)
from wizard_arena.rules.laws import FLAG_OPTIONS

__all__ = [
    "ACTION_SIZE",
    "BID_BASE",
    "BLOCKS",
    "CARD_BASE",
    "CARD_SLOTS",
    "MAX_BID",
    "OBS_HIGH",
    "OBS_LOW",
    "OBS_SIZE",
    "RULE_FEATURES",
    "RULE_SLOTS",
    "SEATS",
    "SEAT_FEATURES",
    "TRUMP_BASE",
    "Block",
    "action_id",
    "action_mask",
    "action_of",
    "block",
    "encode",
    "layout_table",
]

#: Card slots in every card block (58 cards today, 6 reserved).
CARD_SLOTS: Final = 64
#: Seat rows (the largest table); smaller tables leave the last rows zero.
SEATS: Final = MAX_PLAYERS
#: The highest bid at any table (20 cards each at 3 players).
MAX_BID: Final = 20
#: Scale of trick counts, hand sizes and bids.
_CARDS = float(MAX_BID)
#: Scale of scores.
_POINTS = 100.0

BID_BASE: Final = 0
TRUMP_BASE: Final = BID_BASE + MAX_BID + 1
CARD_BASE: Final = TRUMP_BASE + 4
ACTION_SIZE: Final = CARD_BASE + CARD_SLOTS

#: The features of each seat row of the ``seats`` block, in order.
SEAT_FEATURES: Final = (
    "present",
    "dealer",
    "leader",
    "to_act",
    "bid_known",
    "bid",
    "tricks_won",
    "need",
    "total",
    "total_minus_mine",
    "cards_left",
    "winning_trick",
    "void_S",
    "void_H",
    "void_D",
    "void_C",
)
_GAME_FEATURES = (
    "round_fraction",
    "cards_per_player",
    "tricks_left",
    "players_3",
    "players_4",
    "players_5",
    "players_6",
    "bids_minus_cards",
)
#: Positions of the ``rules`` block: the named rule features, then reserved
#: zeros, so that a new rule variant takes a reserved position and the vector
#: keeps its size (as a new card takes a reserved card slot).
RULE_SLOTS: Final = 32
#: The rule features, by position in the ``rules`` block: append-only (a test
#: checks that every bid restriction and rule flag has one, and names the fix).
RULE_FEATURES: Final = (
    "restriction_none",
    "restriction_dealer_not_equal",
    "restriction_canadian",
    "hidden_bids",
    "reveal_bids_after_tricks",
    "blind_first_round",
    "maximus",
    "tricksy",
    "tricksy_suited",
    "lowest_score_deals",
    "first_dealer_by_draw",
)
if len(RULE_FEATURES) > RULE_SLOTS:  # pragma: no cover - a layout change, caught by the tests
    raise AssertionError("more rule features than RULE_SLOTS: a new observation layout")
_RESTRICTION_SLOT: Final = {
    r: RULE_FEATURES.index(f"restriction_{r.value}")
    for r in BidRestriction
    if f"restriction_{r.value}" in RULE_FEATURES
}
_FLAG_SLOT: Final = {n: RULE_FEATURES.index(n) for n in FLAG_OPTIONS if n in RULE_FEATURES}


@dataclass(frozen=True)
class Block:
    """One named part of the observation vector."""

    name: str
    offset: int
    shape: tuple[int, ...]
    low: float
    high: float
    meaning: str

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def end(self) -> int:
        return self.offset + self.size


def _blocks() -> tuple[Block, ...]:
    spec: list[tuple[str, tuple[int, ...], float, float, str]] = [
        ("hand", (CARD_SLOTS,), 0, 4, "this seat's cards (counts by card slot)"),
        ("unseen", (CARD_SLOTS,), 0, 4, "cards of the deck this seat has not seen this round"),
        ("turned", (CARD_SLOTS,), 0, 1, "the turned card"),
        ("played", (SEATS, CARD_SLOTS), 0, 4, "cards each seat played this round"),
        ("trick", (SEATS, CARD_SLOTS), 0, 1, "the current trick's cards, by the seat that played"),
        ("visible", (SEATS, CARD_SLOTS), 0, 1, "other seats' cards this seat sees (blind round)"),
        ("trump", (5,), 0, 1, "trump in force: S H D C, none (no trump or not chosen yet)"),
        ("next_trump", (5,), 0, 1, "tricksy: trump named for the next trick: S H D C, none"),
        ("lead", (5,), 0, 1, "the suit to follow in the current trick: S H D C, none (free)"),
        ("phase", (3,), 0, 1, "what is asked: choose_trump, bid, play"),
        ("seats", (SEATS, len(SEAT_FEATURES)), -100, 100, "per seat: " + ", ".join(SEAT_FEATURES)),
        ("game", (len(_GAME_FEATURES),), -10, 10, ", ".join(_GAME_FEATURES)),
        (
            "rules",
            (RULE_SLOTS,),
            0,
            1,
            "the rule variants: " + ", ".join(RULE_FEATURES) + ", then reserved (always 0)",
        ),
    ]
    out: list[Block] = []
    offset = 0
    for name, shape, low, high, meaning in spec:
        b = Block(name, offset, shape, low, high, meaning)
        out.append(b)
        offset = b.end
    return tuple(out)


#: The observation's blocks, in order.
BLOCKS: Final = _blocks()
_BY_NAME: Final = {b.name: b for b in BLOCKS}
#: Length of the observation vector.
OBS_SIZE: Final = BLOCKS[-1].end
#: Bounds of each position of the observation vector.
OBS_LOW: Final = np.concatenate([np.full(b.size, b.low, np.float32) for b in BLOCKS])
OBS_HIGH: Final = np.concatenate([np.full(b.size, b.high, np.float32) for b in BLOCKS])


def block(name: str) -> Block:
    """The block called ``name``.

    >>> block("hand").offset, block("hand").size
    (0, 64)
    """
    return _BY_NAME[name]


def layout_table() -> str:
    """The layout as a Markdown table (docs/course.md shows it)."""
    rows = ["| block | positions | shape | meaning |", "| --- | --- | --- | --- |"]
    for b in BLOCKS:
        shape = " x ".join(map(str, b.shape))
        rows.append(f"| `{b.name}` | {b.offset}..{b.end - 1} | {shape} | {b.meaning} |")
    return "\n".join(rows)


# -- actions -----------------------------------------------------------------------------------

_TRUMPS: Final = tuple(ChooseTrump(s) for s in Suit)


def action_id(action: Action) -> int:
    """The integer id of ``action``."""
    if isinstance(action, Play):
        return CARD_BASE + action.card.index
    if isinstance(action, Bid):
        if not 0 <= action.bid <= MAX_BID:
            raise ValueError(f"no action id for {action!r}")
        return BID_BASE + action.bid
    return TRUMP_BASE + int(action.suit)


def action_of(action: int) -> Action:
    """The action with id ``action`` (the inverse of :func:`action_id`).

    >>> action_of(88)
    Traceback (most recent call last):
    ...
    ValueError: action id 88 is a reserved card slot
    """
    a = int(action)
    if not 0 <= a < ACTION_SIZE:
        raise ValueError(f"action id {a} is not in 0..{ACTION_SIZE - 1}")
    if a >= CARD_BASE:
        slot = a - CARD_BASE
        if slot >= 58:
            raise ValueError(f"action id {a} is a reserved card slot")
        return Play(Card.from_index(slot))
    if a >= TRUMP_BASE:
        return _TRUMPS[a - TRUMP_BASE]
    return Bid(a - BID_BASE)


def action_mask(view: SeatView) -> npt.NDArray[np.int8]:
    """1 at the id of every action ``view.seat`` may take now, else 0."""
    mask = np.zeros(ACTION_SIZE, np.int8)
    if view.legal_actions:
        mask[[action_id(a) for a in view.legal_actions]] = 1
    return mask


# -- the observation ---------------------------------------------------------------------------

_HAND = _BY_NAME["hand"].offset
_UNSEEN = _BY_NAME["unseen"].offset
_TURNED = _BY_NAME["turned"].offset
_PLAYED = _BY_NAME["played"].offset
_TRICK = _BY_NAME["trick"].offset
_VISIBLE = _BY_NAME["visible"].offset
_TRUMP = _BY_NAME["trump"].offset
_NEXT = _BY_NAME["next_trump"].offset
_LEAD = _BY_NAME["lead"].offset
_PHASE = _BY_NAME["phase"].offset
_SEATS = _BY_NAME["seats"].offset
_GAME = _BY_NAME["game"].offset
_RULES = _BY_NAME["rules"].offset
_NF = len(SEAT_FEATURES)
_PHASE_INDEX: Final = {Phase.CHOOSE_TRUMP: 0, Phase.BID: 1, Phase.PLAY: 2}
_templates: dict[Rules, npt.NDArray[np.float64]] = {}


def _suit_slot(suit: Suit | None) -> int:
    return 4 if suit is None else int(suit)


def _template(rules: Rules) -> npt.NDArray[np.float64]:
    """What depends on the rules alone: the rule and table-size features, and
    the whole deck in the ``unseen`` block (each card seen is taken off it)."""
    t = _templates.get(rules)
    if t is None:
        t = np.zeros(OBS_SIZE, np.float64)
        for c in rules.deck:
            t[_UNSEEN + c.index] += 1
        t[_RULES + _RESTRICTION_SLOT[rules.bid_restriction]] = 1
        for name, slot in _FLAG_SLOT.items():
            t[_RULES + slot] = getattr(rules, name)
        t[_GAME + 3 + rules.players - 3] = 1
        _templates[rules] = t
    return t


def encode(view: SeatView) -> npt.NDArray[np.float32]:
    """``view`` as a vector of :data:`OBS_SIZE` float32 (see :data:`BLOCKS`).

    Every value is a sum at a position (a count, or a feature's value), so
    the vector is made by one ``numpy.bincount`` over the positions and
    values gathered here, added to the rules' template (:func:`_template`).
    """
    n = view.players
    me = view.seat
    pos: list[int] = []
    val: list[float] = []
    add_pos = pos.append
    add_val = val.append
    for c in view.hand:
        add_pos(_HAND + c.index)
        add_pos(_UNSEEN + c.index)
    turned = view.turned_card
    if turned is not None:
        add_pos(_TURNED + turned.index)
        add_pos(_UNSEEN + turned.index)
    for s, others in enumerate(view.others_hands):
        base = _VISIBLE + ((s - me) % n) * CARD_SLOTS
        for c in others:
            add_pos(base + c.index)
            add_pos(_UNSEEN + c.index)
    played = [0] * n
    trick = view.trick
    leader = view.leader
    for t_leader, t_cards in [*((t.leader, t.cards) for t in view.tricks), (leader, trick)]:
        for i, card in enumerate(t_cards):
            seat = (t_leader + i) % n
            add_pos(_PLAYED + ((seat - me) % n) * CARD_SLOTS + card.index)
            add_pos(_UNSEEN + card.index)
            played[seat] += 1
    val.extend([1.0, -1.0] * (len(pos) // 2))
    for i, card in enumerate(trick):
        add_pos(_TRICK + ((leader + i - me) % n) * CARD_SLOTS + card.index)
    add_pos(_TRUMP + _suit_slot(view.trump))
    add_pos(_NEXT + _suit_slot(view.next_trump))
    add_pos(_LEAD + _suit_slot(suit_to_follow(trick)))
    phase = _PHASE_INDEX.get(view.phase)
    if phase is not None:
        add_pos(_PHASE + phase)
    val.extend([1.0] * (len(pos) - len(val)))
    _seat_rows(view, played, add_pos, add_val)
    cards = view.cards_per_player
    made = 0
    for b in view.bids:
        if b is not None:
            made += b
    pos += (_GAME, _GAME + 1, _GAME + 2, _GAME + 7)
    val += (
        view.round / view.rules.rounds,
        cards / _CARDS,
        (cards - len(view.tricks)) / _CARDS,
        (made - cards) / _CARDS,
    )
    obs = _template(view.rules) + np.bincount(pos, weights=val, minlength=OBS_SIZE)
    if view.rules.tricksy_suited and obs[_UNSEEN + 52] < 0:
        _unseen_of_suited_deck(view, obs)
    return obs.astype(np.float32)


def _seat_rows(
    view: SeatView,
    played: list[int],
    add_pos: Callable[[int], None],
    add_val: Callable[[float], None],
) -> None:
    """The ``seats`` block's nonzero features, as positions and values."""
    n = view.players
    me = view.seat
    totals = view.totals
    mine = totals[me]
    trick = view.trick
    winning = (view.leader + trick_winner(trick, view.trump)) % n if trick else -1
    voids = view.known_voids()
    flags = (view.dealer, view.leader, view.to_act)
    cards = view.cards_per_player
    for seat in range(n):
        row = _SEATS + ((seat - me) % n) * _NF
        add_pos(row)
        add_val(1.0)
        for k, who in enumerate(flags, 1):
            if who == seat:
                add_pos(row + k)
                add_val(1.0)
        bid = view.bids[seat]
        won = view.tricks_won[seat]
        if bid is not None:
            add_pos(row + 4)
            add_val(1.0)
            add_pos(row + 5)
            add_val(bid / _CARDS)
            add_pos(row + 7)
            add_val((bid - won) / _CARDS)
        add_pos(row + 6)
        add_val(won / _CARDS)
        add_pos(row + 8)
        add_val(totals[seat] / _POINTS)
        add_pos(row + 9)
        add_val((totals[seat] - mine) / _POINTS)
        add_pos(row + 10)
        add_val((cards - played[seat]) / _CARDS)
        if seat == winning:
            add_pos(row + 11)
            add_val(1.0)
        for suit in voids[seat]:
            add_pos(row + 12 + int(suit))
            add_val(1.0)


def _unseen_of_suited_deck(view: SeatView, obs: npt.NDArray[np.float64]) -> None:
    """A plain ``W`` seen with the deck of suited Wizards: which suited Wizard
    it stands for is the rules core's to say (:meth:`SeatView.unseen_cards`)."""
    obs[_UNSEEN : _UNSEEN + CARD_SLOTS] = 0.0
    for c in view.unseen_cards():
        obs[_UNSEEN + c.index] += 1

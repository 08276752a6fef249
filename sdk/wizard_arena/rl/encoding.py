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

from collections.abc import Sequence
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
_RULE_FEATURES = (*(f"restriction_{r.value}" for r in BidRestriction), *FLAG_OPTIONS)
_SUIT_FEATURES = ("S", "H", "D", "C", "none")


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
        ("rules", (len(_RULE_FEATURES),), 0, 1, "the rule variants: " + ", ".join(_RULE_FEATURES)),
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
_UNSEEN = _BY_NAME["unseen"]
_TURNED = _BY_NAME["turned"].offset
_PLAYED = _BY_NAME["played"]
_TRICK = _BY_NAME["trick"].offset
_VISIBLE = _BY_NAME["visible"]
_TRUMP = _BY_NAME["trump"].offset
_NEXT = _BY_NAME["next_trump"].offset
_LEAD = _BY_NAME["lead"].offset
_PHASE = _BY_NAME["phase"].offset
_SEATS = _BY_NAME["seats"].offset
_GAME = _BY_NAME["game"].offset
_RULES = _BY_NAME["rules"].offset
_NF = len(SEAT_FEATURES)
_F = {name: i for i, name in enumerate(SEAT_FEATURES)}
_PHASE_INDEX: Final = {Phase.CHOOSE_TRUMP: 0, Phase.BID: 1, Phase.PLAY: 2}
_deck_counts: dict[tuple[Card, ...], npt.NDArray[np.float32]] = {}


def _suit_slot(suit: Suit | None) -> int:
    return 4 if suit is None else int(suit)


def _deck(deck: Sequence[Card]) -> npt.NDArray[np.float32]:
    key = tuple(deck)
    counts = _deck_counts.get(key)
    if counts is None:
        counts = np.zeros(CARD_SLOTS, np.float32)
        for c in deck:
            counts[c.index] += 1
        _deck_counts[key] = counts
    return counts


def encode(view: SeatView) -> npt.NDArray[np.float32]:
    """``view`` as a vector of :data:`OBS_SIZE` float32 (see :data:`BLOCKS`)."""
    n = view.players
    me = view.seat
    counts: list[int] = [_HAND + c.index for c in view.hand]  # positions counted
    if view.turned_card is not None:
        counts.append(_TURNED + view.turned_card.index)
    for s, cards in enumerate(view.others_hands):
        base = _VISIBLE.offset + ((s - me) % n) * CARD_SLOTS
        counts.extend(base + c.index for c in cards)
    for seat, card in view.plays:
        counts.append(_PLAYED.offset + ((seat - me) % n) * CARD_SLOTS + card.index)
    for seat, card in zip(view.trick_seats, view.trick, strict=True):
        counts.append(_TRICK + ((seat - me) % n) * CARD_SLOTS + card.index)
    counts.append(_TRUMP + _suit_slot(view.trump))
    counts.append(_NEXT + _suit_slot(view.next_trump))
    counts.append(_LEAD + _suit_slot(suit_to_follow(view.trick)))
    phase = _PHASE_INDEX.get(view.phase)
    if phase is not None:
        counts.append(_PHASE + phase)
    rules = view.rules
    counts.append(_RULES + list(BidRestriction).index(rules.bid_restriction))
    counts.extend(_RULES + 3 + i for i, name in enumerate(FLAG_OPTIONS) if getattr(rules, name))
    counts.append(_GAME + 3 + (n - 3))
    obs = np.bincount(counts, minlength=OBS_SIZE).astype(np.float32)
    _seat_rows(view, obs)
    _game_features(view, obs)
    _unseen(view, obs)
    return obs


def _seat_rows(view: SeatView, obs: npt.NDArray[np.float32]) -> None:
    n = view.players
    me = view.seat
    mine = view.totals[me]
    winning = (view.leader + trick_winner(view.trick, view.trump)) % n if view.trick else None
    voids = view.known_voids()
    played = [0] * n
    for seat, _ in view.plays:
        played[seat] += 1
    for seat in range(n):
        row = _SEATS + ((seat - me) % n) * _NF
        bid = view.bids[seat]
        won = view.tricks_won[seat]
        obs[row] = 1.0
        obs[row + 1] = seat == view.dealer
        obs[row + 2] = seat == view.leader
        obs[row + 3] = seat == view.to_act
        if bid is not None:
            obs[row + 4] = 1.0
            obs[row + 5] = bid / _CARDS
            obs[row + 7] = (bid - won) / _CARDS
        obs[row + 6] = won / _CARDS
        obs[row + 8] = view.totals[seat] / _POINTS
        obs[row + 9] = (view.totals[seat] - mine) / _POINTS
        obs[row + 10] = (view.cards_per_player - played[seat]) / _CARDS
        obs[row + 11] = seat == winning
        for suit in voids[seat]:
            obs[row + 12 + int(suit)] = 1.0


def _game_features(view: SeatView, obs: npt.NDArray[np.float32]) -> None:
    rounds = view.rules.rounds
    obs[_GAME] = view.round / rounds
    obs[_GAME + 1] = view.cards_per_player / _CARDS
    obs[_GAME + 2] = (view.cards_per_player - len(view.tricks)) / _CARDS
    made = sum(b for b in view.bids if b is not None)
    obs[_GAME + 7] = (made - view.cards_per_player) / _CARDS


def _unseen(view: SeatView, obs: npt.NDArray[np.float32]) -> None:
    o = _UNSEEN.offset
    seen = obs[_HAND : _HAND + CARD_SLOTS] + obs[_TURNED : _TURNED + CARD_SLOTS]
    seen = seen + obs[_PLAYED.offset : _PLAYED.end].reshape(SEATS, CARD_SLOTS).sum(0)
    seen = seen + obs[_VISIBLE.offset : _VISIBLE.end].reshape(SEATS, CARD_SLOTS).sum(0)
    left = _deck(view.rules.deck) - seen
    if (left < 0).any():
        # a plain W seen in the deck of suited Wizards: the rules core says which it stands for
        left = np.zeros(CARD_SLOTS, np.float32)
        for c in view.unseen_cards():
            left[c.index] += 1
    obs[o : o + CARD_SLOTS] = left

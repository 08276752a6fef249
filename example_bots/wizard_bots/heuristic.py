"""A rule-of-thumb bot: count likely tricks, then play to land exactly on the bid.

Bidding adds up, card by card, a rough chance that the card takes a trick
(Wizards nearly always, high trumps often, aces and kings of side suits when
nobody can ruff them...), then shifts the sum by the table position and the
bids already made. Playing, while short of its bid it wins as cheaply as it
can safely (the lowest card that wins now and is unlikely to be beaten by the
players still to play); once the bid is reached it ducks, playing the highest
card that still loses and so shedding the cards that would take tricks later.

The bot keeps no state and uses no randomness: the same view always gives the
same decision. The decision functions (:func:`choose_bid`, :func:`choose_card`)
take plain values rather than a view so that simulations (the Monte Carlo
bot's rollouts) can call them straight from a :class:`~wizard_arena.rules.Game`.

>>> from wizard_arena.local import play_local
>>> result = play_local([HeuristicBot() for _ in range(4)], seed=3)
>>> result.faults
[]
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from wizard_arena import FULL_DECK, JESTER, WIZARD, Card, SeatView, Suit
from wizard_arena.bot import Bot
from wizard_arena.rules import score, suit_to_follow, trick_winner

__all__ = [
    "HeuristicBot",
    "Opponent",
    "blind_bid",
    "card_counts",
    "choose_bid",
    "choose_card",
    "choose_trump_suit",
    "count_slot",
    "estimate_tricks",
    "still_to_play",
    "win_probability",
]

_W = WIZARD.index
_J = JESTER.index
_N_INDEX = 54
_FULL_COUNTS: list[int] = [0] * _N_INDEX
for _c in FULL_DECK:
    _FULL_COUNTS[_c.index] += 1

#: Weight of an opponent's Wizards in the chance that it beats a card right now:
#: a Wizard is not necessarily spent on this trick.
WIZARD_WEIGHT = 0.7
#: How much less likely a player that has already made its bid is to overtake.
SATED_WEIGHT = 0.3
#: Share of the opponents' cards that a trump must clear of higher trumps.
TRUMP_CLASH = 0.5
#: Tricks per trump held beyond an even share of the trump suit.
TRUMP_LENGTH_VALUE = 0.5
#: Tricks per card of a long side suit beyond an even share plus one
#: (index: False with a trump suit, True without).
LONG_SUIT_VALUE = (0.0, 0.4)
#: How much the others' bids above (below) their share lower (raise) the estimate.
OTHER_BIDS_WEIGHT = 0.25
#: Overall calibration of the estimate.
BID_SCALE = 1.0


def count_slot(card: Card) -> int:
    """Where :func:`card_counts` counts ``card``: its :attr:`Card.index`, and
    for every Wizard (suited Wizards too: they play alike) the Wizard's."""
    return _W if card.is_wizard else card.index


def card_counts(cards: Iterable[Card]) -> list[int]:
    """Counts of ``cards`` by :func:`count_slot` (a list of 54 ints)."""
    counts = [0] * _N_INDEX
    for c in cards:
        counts[count_slot(c)] += 1
    return counts


def _take_seen(out: list[int], cards: Iterable[Card]) -> None:
    """Take ``cards`` off the counts ``out`` (by :func:`count_slot`, inlined:
    this runs for every card the seat has seen, at every play)."""
    for c in cards:
        out[_W if c.is_wizard else c.index] -= 1


def _unseen_counts(hand: Iterable[Card], turned_card: Card | None) -> list[int]:
    out = list(_FULL_COUNTS)
    _take_seen(out, hand)
    if turned_card is not None:
        _take_seen(out, (turned_card,))
    return out


def _view_unseen_counts(view: SeatView) -> list[int]:
    """``card_counts(view.unseen_cards())``, counted straight from the view: the
    deck's counts by :func:`count_slot` (the same for both decks: the suited
    Wizards count as Wizards) less every card the seat has seen."""
    out = _unseen_counts(view.hand, view.turned_card)
    for cards in view.others_hands:
        _take_seen(out, cards)
    for t in view.tricks:
        _take_seen(out, t.cards)
    _take_seen(out, view.trick)
    return [k if k > 0 else 0 for k in out]


def _suit_count(out: Sequence[int], suit: Suit) -> int:
    base = int(suit) * 13
    return sum(out[base : base + 13])


def _higher(out: Sequence[int], card: Card) -> int:
    """Unseen cards of ``card``'s suit ranked above it."""
    assert card.suit is not None
    base = int(card.suit) * 13
    return sum(out[base + card.rank : base + 13])


def _none_of(k: float, unseen: int, drawn: float) -> float:
    """Chance that ``drawn`` cards from ``unseen`` miss all ``k`` given ones
    (with replacement: a smooth stand-in for the hypergeometric)."""
    if k <= 0 or drawn <= 0 or unseen <= 0:
        return 1.0
    x = 1.0 - k / unseen
    return 0.0 if x <= 0.0 else x**drawn


def power(card: Card, trump: Suit | None) -> int:
    """A static order of card strength: Jester < side suits < trumps < Wizard."""
    if card.is_wizard:
        return 100
    if card.is_jester:
        return 0
    return card.rank + (40 if card.suit is trump else 0)


# -- bidding ---------------------------------------------------------------------


def estimate_tricks(
    hand: Sequence[Card],
    trump: Suit | None,
    players: int,
    turned_card: Card | None,
    bids_before: Sequence[int] = (),
    position: int = 0,
) -> float:
    """Expected tricks of ``hand`` before any card is played.

    ``bids_before`` are the bids already made this round and ``position`` the
    seat's place in the bidding order (0 leads the first trick, ``players - 1``
    is the dealer, who also plays last to it).
    """
    h = len(hand)
    if h == 0:
        return 0.0
    opp = players - 1
    out = _unseen_counts(hand, turned_card)
    unseen = sum(out)
    wizards = out[_W]
    trumps_out = _suit_count(out, trump) if trump is not None else 0
    # chance that no opponent Wizard lands on the trick where the card is played
    no_wizard = math.exp(-wizards * opp / unseen)
    lengths = {s: 0 for s in Suit}
    for c in hand:
        if c.suit is not None:
            lengths[c.suit] += 1
    total = 0.0
    low_trumps = 0
    for card in hand:
        if card.is_wizard:
            # beaten only by an earlier Wizard in the same trick
            total += 1.0 - 0.5 * (1.0 - math.exp(-wizards * opp / unseen))
            continue
        if card.is_jester:
            continue
        suit = card.suit
        assert suit is not None
        higher = _higher(out, card)
        if suit is trump:
            v = no_wizard * _none_of(higher, unseen, h * opp * TRUMP_CLASH)
            if v < 0.5:
                low_trumps += 1
            total += v
            continue
        # a side-suit card wins when its suit is led and nobody follows higher or ruffs
        follow = _none_of(higher, unseen, h * opp)
        ks = out[int(suit) * 13 : int(suit) * 13 + 13]
        in_suit = sum(ks)
        ruff = 0.0
        if trump is not None and trumps_out:
            void = _none_of(in_suit, unseen, h)
            ruff = void * (1.0 - _none_of(trumps_out, unseen - in_suit, h))
        v = no_wizard * follow * (1.0 - ruff) ** opp
        if position != 0:
            # not on lead: the suit must also get led (certainly, in a long round)
            v *= (1.0 - 1.0 / h) + (in_suit / unseen) / h
        total += v
    if trump is not None and low_trumps and h >= 4:
        short = sum(1 for s in Suit if s is not trump and lengths[s] <= 1)
        # low trumps take tricks by ruffing short side suits, and a long trump
        # suit outlasts the others'
        share = 13 * h / (unseen + h)
        extra = max(0.0, lengths[trump] - share)
        total += min(low_trumps, TRUMP_LENGTH_VALUE * extra + min(0.5, 0.2 * short) * low_trumps)
    # the low cards of a long side suit win once the others are out of it
    even = 13 * h / (unseen + h)
    for s in Suit:
        if s is not trump and lengths[s] > even + 1:
            total += LONG_SUIT_VALUE[trump is None] * (lengths[s] - even - 1)
    if position == players - 1 and h > 1:
        total += 0.1  # plays last to the first trick: wins or ducks it cheaply
    if bids_before:
        # the others' bids say how contested the tricks are
        share = max(0.0, h - total) * len(bids_before) / opp
        total -= OTHER_BIDS_WEIGHT * (sum(bids_before) - share)
    return max(0.0, min(float(h), total * BID_SCALE))


def choose_bid(estimate: float, legal_bids: Sequence[int]) -> int:
    """The legal bid nearest to ``estimate`` (ties: the lower)."""
    return min(legal_bids, key=lambda b: (abs(b - estimate), b))


def blind_bid(view: SeatView) -> int:
    """A bid in a blind first round (one card each; the seat sees the others'
    cards, not its own): the legal bid with the best expected score, its own
    card being equally likely any card it has not seen.

    >>> from wizard_arena.rules import Game, Rules
    >>> game = Game(Rules(players=3, blind_first_round=True), seed=2)
    >>> game.deal()
    >>> blind_bid(game.view(1)) in game.view(1).legal_bids
    True
    """
    n = view.players
    me = view.seat
    order = [(view.leader + i) % n for i in range(n)]
    unseen = view.unseen_cards()
    wins = 0
    for card in unseen:
        trick = [card if s == me else view.others_hands[s][0] for s in order]
        wins += order[trick_winner(trick, view.trump)] == me
    p = wins / len(unseen) if unseen else 0.0
    return max(
        view.legal_bids,
        key=lambda b: (p * score(b, 1) + (1 - p) * score(b, 0), -b),
    )


def choose_trump_suit(hand: Sequence[Card], players: int) -> Suit:
    """The trump suit that makes the hand worth the most tricks."""
    by_suit = {s: estimate_tricks(hand, s, players, WIZARD) for s in Suit}
    return max(Suit, key=lambda s: (round(by_suit[s], 9), -int(s)))


# -- play -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Opponent:
    """What a seat still to play to the current trick is known to want and to lack."""

    need: int
    """Tricks it still wants (its bid less tricks won; 0 or less once made)."""
    voids: AbstractSet[Suit] = field(default_factory=frozenset)


def win_probability(
    card: Card,
    trick: Sequence[Card],
    trump: Suit | None,
    later: Sequence[Opponent],
    out: Sequence[int],
    hand_size: int,
) -> float:
    """Rough chance that ``card`` played to ``trick`` takes it.

    ``later`` are the players still to play after this seat, ``out`` the
    counts of the cards this seat has not seen (by :func:`count_slot`) and
    ``hand_size`` the cards each later player holds.
    """
    if trick_winner([*trick, card], trump) != len(trick):
        return 0.0
    return _holds(card, trick, trump, later, out, sum(out), hand_size)


def _holds(
    card: Card,
    trick: Sequence[Card],
    trump: Suit | None,
    later: Sequence[Opponent],
    out: Sequence[int],
    unseen: int,
    hand_size: int,
) -> float:
    """Chance that ``card``, winning ``trick`` so far, is not beaten by ``later``."""
    if not later or card.is_wizard:
        return 1.0
    if card.is_jester:  # an all-Jester trick so far: any other card beats it
        return _none_of(unseen - out[_J], unseen, hand_size * len(later))
    suit = card.suit
    assert suit is not None
    lead = suit_to_follow(trick) if trick else suit
    if lead is None:  # only Jesters before: this card sets the suit
        lead = suit
    higher = _higher(out, card)
    wizards = out[_W] * WIZARD_WEIGHT
    trumps_out = _suit_count(out, trump) if trump is not None and trump is not suit else 0
    lead_out = _suit_count(out, lead)
    p = 1.0
    for o in later:
        voids = o.voids
        void = 1.0 if lead in voids else _none_of(lead_out, unseen, hand_size)
        if suit is trump and lead is not suit:
            k = wizards + higher * void  # overruff needs a void in the led suit too
        elif suit in voids:
            k = wizards + trumps_out
        else:
            k = wizards + higher + trumps_out * void
        beat = 1.0 - _none_of(k, unseen, hand_size)
        if o.need <= 0:
            beat *= SATED_WEIGHT
        p *= 1.0 - beat
    return p


def choose_card(
    hand: Sequence[Card],
    legal: Sequence[Card],
    trick: Sequence[Card],
    trump: Suit | None,
    need: int,
    later: Sequence[Opponent],
    out: Sequence[int],
) -> Card:
    """The card to play: win cheaply while ``need > 0``, else duck.

    ``hand`` is the whole hand, ``legal`` the cards of it that may be played,
    ``need`` the tricks still wanted, ``later`` the players still to play to
    this trick and ``out`` the unseen cards' counts (see :func:`win_probability`).
    """
    # distinct legal cards, weakest first
    distinct = sorted(set(legal), key=lambda c: (power(c, trump), c.index))
    if len(distinct) == 1:
        return distinct[0]
    size = len(hand)
    n = len(trick)
    unseen = sum(out)
    wins = {c: trick_winner([*trick, c], trump) == n for c in distinct}
    cache: dict[Card, float] = {}

    def prob(c: Card) -> float:
        p = cache.get(c)
        if p is None:
            p = _holds(c, trick, trump, later, out, unseen, size) if wins[c] else 0.0
            cache[c] = p
        return p

    non_jesters = [c for c in distinct if not c.is_jester]

    if need > 0:
        if n == 0:  # leading: every card of the hand is legal
            expected = sum(prob(c) for c in hand if c is not JESTER)
            if need >= size or expected < need + 0.5:
                return max(reversed(distinct), key=prob)
            cash = [c for c in non_jesters if not c.is_wizard and prob(c) >= 0.6]
            if cash:
                return max(reversed(cash), key=prob)
            # nothing sure to cash: give the lead away cheaply
            return _cheap_lead(distinct, hand, trump)
        winners = [c for c in distinct if wins[c]]
        if winners:
            if not later:
                return winners[0]  # the lowest card that takes it
            urgent = need >= size
            if not urgent:
                for c in winners:
                    if prob(c) >= 0.55:
                        return c
            best = max(reversed(winners), key=prob)
            if urgent or prob(best) >= 0.3:
                return best
        # cannot (or would rather not) win this one: throw the least useful card
        losers = [c for c in non_jesters if not wins[c]] or distinct
        return losers[0]

    # the bid is made (or overshot): lose this trick
    if n == 0:
        low = min(non_jesters, key=prob) if non_jesters else distinct[0]
        if JESTER in wins and prob(low) > 0.1:
            return JESTER
        return low
    losers = [c for c in distinct if not wins[c]]
    if losers:
        dangerous = [c for c in losers if not c.is_jester]
        return dangerous[-1] if dangerous else losers[0]
    if later:
        return min(distinct, key=prob)
    return distinct[-1]  # the trick is ours anyway: shed the strongest card


def _cheap_lead(distinct: Sequence[Card], hand: Sequence[Card], trump: Suit | None) -> Card:
    if JESTER in distinct:
        return JESTER
    lengths: dict[Suit | None, int] = {}
    for c in hand:
        lengths[c.suit] = lengths.get(c.suit, 0) + 1
    side = [c for c in distinct if c.suit is not None and c.suit is not trump]
    pool = side or [c for c in distinct if not c.is_wizard] or list(distinct)
    return min(pool, key=lambda c: (lengths.get(c.suit, 0), c.rank, c.index))


def still_to_play(view: SeatView) -> list[Opponent]:
    """The opponents who play to the current trick after this seat, in order:
    the tricks each still needs and the suits it is known to lack. A bid
    hidden from this seat (``hidden_bids``) is taken to want one more trick."""
    n = view.players
    out: list[Opponent] = []
    if len(view.trick) + 1 >= n:  # the last to play: nobody after
        return out
    voids = view.known_voids()
    for i in range(len(view.trick) + 1, n):
        seat = (view.leader + i) % n
        bid = view.bids[seat]
        if bid is None:  # hidden until the tricks are played: assume it still wants one
            bid = view.tricks_won[seat] + 1
        out.append(Opponent(bid - view.tricks_won[seat], voids[seat]))
    return out


class HeuristicBot(Bot):
    """Counts likely tricks to bid, then plays to take exactly that many."""

    name = "heuristic"

    def bid(self, view: SeatView) -> int:
        if view.others_hands and not view.hand:  # a blind first round
            return blind_bid(view)
        n = view.players
        position = (view.seat - view.dealer - 1) % n
        before = [
            b for k in range(position) if (b := view.bids[(view.dealer + 1 + k) % n]) is not None
        ]
        est = estimate_tricks(view.hand, view.trump, n, view.turned_card, before, position)
        return choose_bid(est, view.legal_bids)

    def play(self, view: SeatView) -> Card:
        bid = view.bids[view.seat]
        need = (bid if bid is not None else 0) - view.tricks_won[view.seat]
        out = _view_unseen_counts(view)  # card_counts(view.unseen_cards()), faster
        return choose_card(
            view.hand, view.legal_cards, view.trick, view.trump, need, still_to_play(view), out
        )

    def choose_trump(self, view: SeatView) -> Suit:
        return choose_trump_suit(view.hand, view.players)

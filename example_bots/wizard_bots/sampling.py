"""Guess the hidden cards of a seat's view, and rebuild a full game from a guess.

A seat sees its own hand, the turned card and the cards played. The other
seats' remaining hands and the undealt stock are hidden; :func:`sample_deal`
draws one assignment of the unseen cards to them that fits everything the
seat knows: the hand sizes, and the suits a player has shown it is out of
(:meth:`~wizard_arena.rules.SeatView.known_voids`). :func:`game_from_view`
then builds a :class:`~wizard_arena.rules.Game` in exactly the view's position
with those hands, by dealing the round's original hands (remaining cards plus
the cards each seat already played) and replaying the trump choice, the bids
and the plays through the rules core, so a search can play on from there.

>>> import random
>>> from wizard_arena.rules import Game, Rules
>>> game = Game(Rules(players=3), seed=5)
>>> game.deal()
>>> view = game.view(1)
>>> deal = sample_deal(view, random.Random(0))
>>> [len(h) for h in deal.hands], len(deal.stock)
([1, 1, 1], 56)
>>> game_from_view(view, deal.hands).view(1) == view
True
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from wizard_arena.rules import Card, Game, Phase, SeatView, Suit, trick_winner

__all__ = [
    "SampledDeal",
    "consistency_problem",
    "game_from_view",
    "hidden_hand_sizes",
    "sample_deal",
    "sample_deals",
]

_ALL_SUITS = 0b1111


@dataclass(frozen=True, slots=True)
class SampledDeal:
    """One guess at the hidden cards."""

    hands: tuple[tuple[Card, ...], ...]
    """Every seat's current hand (the viewing seat's own hand as it is)."""
    stock: tuple[Card, ...]
    """The unseen cards that were not dealt this round."""


def hidden_hand_sizes(view: SeatView) -> list[int]:
    """Cards each seat holds now (the round's hand size less the cards it played)."""
    sizes = [view.cards_per_player] * view.players
    for seat, _ in view.plays:
        sizes[seat] -= 1
    return sizes


def sample_deal(view: SeatView, rng: random.Random) -> SampledDeal:
    """Deal the cards ``view.seat`` has not seen to the other seats and the stock.

    Every seat gets as many cards as it holds, no seat gets a suit it is known
    to be out of, and only unseen cards are dealt. With no known voids the deal
    is uniform over all such deals; with voids, cards of the constrained suits
    are placed one at a time, each uniformly among the places that still admit
    a complete deal (a close approximation of the uniform distribution).
    """
    n = view.players
    me = view.seat
    sizes = hidden_hand_sizes(view)
    if len(view.hand) != sizes[me]:
        raise ValueError("the view's hand does not match the cards it played")
    unseen = view.unseen_cards()
    others = [s for s in range(n) if s != me]
    # places: the other seats, then the stock (which may hold anything)
    caps = [sizes[s] for s in others]
    caps.append(len(unseen) - sum(caps))
    if caps[-1] < 0:
        raise ValueError("more hidden cards in hands than unseen cards")
    voids = view.known_voids()
    allowed = [_ALL_SUITS & ~sum(1 << int(s) for s in voids[seat]) for seat in others]
    allowed.append(_ALL_SUITS)
    constrained = 0
    for mask in allowed:
        constrained |= _ALL_SUITS & ~mask
    places: list[list[Card]] = [[] for _ in caps]

    if constrained:
        fixed = [c for c in unseen if c.suit is not None and constrained >> int(c.suit) & 1]
        free = [c for c in unseen if c.suit is None or not constrained >> int(c.suit) & 1]
        _place_constrained(fixed, caps, allowed, constrained, places, rng)
    else:
        free = list(unseen)
    rng.shuffle(free)
    i = 0
    for k, cap in enumerate(caps):
        places[k].extend(free[i : i + cap])
        i += cap
    hands: list[tuple[Card, ...]] = [()] * n
    hands[me] = tuple(view.hand)
    for k, seat in enumerate(others):
        hands[seat] = tuple(sorted(places[k]))
    return SampledDeal(tuple(hands), tuple(sorted(places[-1])))


def consistency_problem(view: SeatView, deal: SampledDeal) -> str | None:
    """Why ``deal`` cannot be the real hidden cards of ``view``, or None if it can.

    A deal fits when every seat holds as many cards as it has left, the
    viewing seat holds its own hand, the other hands and the stock are exactly
    the cards the seat has not seen (so nobody holds a card that was played,
    turned, or is in the seat's hand), and no seat holds a suit it has shown
    it is out of (:meth:`~wizard_arena.rules.SeatView.known_voids`).
    """
    sizes = hidden_hand_sizes(view)
    if [len(h) for h in deal.hands] != sizes:
        return f"hand sizes {[len(h) for h in deal.hands]}, not {sizes}"
    if tuple(deal.hands[view.seat]) != tuple(view.hand):
        return "the viewing seat's hand differs from the view's"
    hidden = Counter(c for s, h in enumerate(deal.hands) if s != view.seat for c in h)
    hidden.update(deal.stock)
    unseen = Counter(view.unseen_cards())
    if hidden != unseen:
        extra = sorted((hidden - unseen).elements())
        missing = sorted((unseen - hidden).elements())
        return f"holds cards already seen {extra} / leaves out unseen cards {missing}"
    for seat, void in view.known_voids().items():
        if seat != view.seat:
            shown = sorted({c.suit for c in deal.hands[seat] if c.suit in void})
            if shown:
                return f"seat {seat} is out of {[s.name for s in shown]} but holds it"
    return None


def sample_deals(
    view: SeatView,
    rng: random.Random,
    count: int,
    weigh: Callable[[SeatView, SampledDeal], float] | None = None,
    pool_factor: int = 4,
) -> list[tuple[SampledDeal, int]]:
    """``count`` deals that fit ``view`` (:func:`sample_deal`), as distinct
    deals with their multiplicities (summing to ``count``).

    With ``weigh`` (a relative likelihood of a deal, e.g. how well it explains
    the bids made), a pool of ``pool_factor * count`` deals is drawn and
    ``count`` are resampled from it in proportion to their weights (sampling
    importance resampling). When the weights are so uneven that the pool's
    effective size, (sum w)^2 / sum w^2, is below ``count``, the pool is
    doubled once: a few deals would otherwise stand for all.
    """
    if weigh is None:
        return [(sample_deal(view, rng), 1) for _ in range(count)]
    pool: list[SampledDeal] = []
    weights: list[float] = []
    for _ in range(2):
        more = [sample_deal(view, rng) for _ in range(count * pool_factor)]
        pool.extend(more)
        weights.extend(weigh(view, d) for d in more)
        total = sum(weights)
        squares = sum(w * w for w in weights)
        if total > 0.0 and total * total >= count * squares:
            break
    if sum(weights) <= 0.0:
        weights = [1.0] * len(pool)
    picks: dict[int, int] = {}
    for i in rng.choices(range(len(pool)), weights=weights, k=count):
        picks[i] = picks.get(i, 0) + 1
    return [(pool[i], k) for i, k in sorted(picks.items())]


def _place_constrained(
    cards: list[Card],
    caps: list[int],
    allowed: list[int],
    constrained: int,
    places: list[list[Card]],
    rng: random.Random,
) -> None:
    """Put ``cards`` (all of constrained suits) into ``places``, using up ``caps``."""
    counts = [0] * 4
    for c in cards:
        assert c.suit is not None
        counts[int(c.suit)] += 1
    # every non-empty set of constrained suits, with its suits and the places open to it
    subsets = []
    for mask in range(1, 16):
        if mask & ~constrained:
            continue
        suits = [s for s in range(4) if mask >> s & 1]
        open_ = [k for k, a in enumerate(allowed) if a & mask]
        subsets.append((suits, open_))

    def feasible() -> bool:
        # Hall's condition for placing the remaining constrained cards
        for suits, open_ in subsets:
            demand = sum(counts[s] for s in suits)
            if demand and demand > sum(caps[k] for k in open_):
                return False
        return True

    if not feasible():
        raise ValueError("no deal fits the known voids and hand sizes")
    order = list(cards)
    rng.shuffle(order)
    for card in order:
        assert card.suit is not None
        s = int(card.suit)
        bit = 1 << s
        candidates = [k for k, a in enumerate(allowed) if a & bit and caps[k] > 0]
        while True:
            # uniformly among the free slots of the candidate places
            total = sum(caps[k] for k in candidates)
            r = rng.randrange(total)
            for k in candidates:
                r -= caps[k]
                if r < 0:
                    break
            caps[k] -= 1
            counts[s] -= 1
            if feasible():
                places[k].append(card)
                break
            caps[k] += 1
            counts[s] += 1
            candidates.remove(k)


def game_from_view(
    view: SeatView,
    hands: Sequence[Sequence[Card]],
    rng: random.Random | None = None,
    bids: Sequence[int] | None = None,
    on_play: Callable[[Game, int, Card], None] | None = None,
) -> Game:
    """A :class:`Game` in the position of ``view`` with every seat's current ``hands``.

    The game starts at ``view.round`` with the view's dealer and running
    totals, deals each seat its current hand plus the cards it has played this
    round, and replays the trump choice, bids and plays of the round (with
    Tricksy, the suits named during play are not in the view: each is chosen
    to fit it, see :func:`_replayed_trump`). Only this round is in its history.
    ``rng`` is the game's RNG (it never deals again within the round; pass one
    to avoid seeding a fresh one). ``bids`` (by seat) stand in for the bids
    the view hides once play has started (``reveal_bids_after_tricks``: a seat
    sees only its own bid until the last trick); without them such a view is
    refused with ValueError. ``on_play(game, seat, card)``, if given, is
    called before each play is replayed (the game in the position the card
    was played from).
    """
    n = view.players
    if len(hands) != n:
        raise ValueError(f"need {n} hands, got {len(hands)}")
    dealt = [list(h) for h in hands]
    plays = view.plays
    for seat, card in plays:
        dealt[seat].append(card)
    game = Game.at_round(
        view.rules,
        view.round,
        view.dealer,
        view.totals,
        rng=rng if rng is not None else random.Random(0),
    )
    game.deal(dealt, view.turned_card)
    if game.phase is Phase.CHOOSE_TRUMP and (view.phase is not Phase.CHOOSE_TRUMP or plays):
        game.choose_trump(view.dealer, _replayed_trump(view, -1))
    bidding_done = view.phase is Phase.PLAY or (view.phase is Phase.CHOOSE_TRUMP and bool(plays))
    for k in range(n):
        seat = (view.dealer + 1 + k) % n
        bid = view.bids[seat]
        if bid is None and bidding_done:
            if bids is None:
                raise ValueError(f"the view hides seat {seat}'s bid: give the bids to assume")
            bid = bids[seat]
        if bid is None:
            break
        game.bid(seat, bid)
    for i, (seat, card) in enumerate(plays):
        if on_play is not None:
            on_play(game, seat, card)
        game.play(seat, card)
        if game.phase is Phase.CHOOSE_TRUMP and (
            i + 1 < len(plays) or view.phase is not Phase.CHOOSE_TRUMP
        ):
            game.choose_trump(seat, _replayed_trump(view, i))  # tricksy: already named
    return game


def _changes_trump(view: SeatView, card: Card, k: int) -> bool:
    """Whether play ``k`` of the round (``card``) changed the trump: a Wizard
    under Tricksy (a choice, except in the round's last trick), or a suited
    Wizard under tricksy_suited (its printed suit, in any trick)."""
    rules = view.rules
    if not card.is_wizard or not (rules.tricksy or rules.tricksy_suited):
        return False
    if rules.tricksy_suited and card.wizard_suit is not None:
        return True
    return k // view.players + 1 < view.cards_per_player


def _replayed_trump(view: SeatView, i: int) -> Suit:
    """The trump to name, replaying ``view``'s round, for the choice made after
    play ``i`` (-1: the dealer's, after a turned Wizard).

    The view does not say which suits were named during play (Tricksy). The
    choice in force for the current trick gave the view's ``trump``, and the
    last one made during the current trick its ``next_trump``; an earlier
    choice only has to give the recorded winner of each trick it was in
    force for. Under tricksy_suited a choice (for a Wizard without a printed
    suit) is in force at once: it decides every trick completed before the
    next change of trump.
    """
    n = view.players
    plays = view.plays
    current = len(view.tricks)
    at_once = view.rules.tricksy_suited
    # the next change of trump (the view's own pending choice, if any, is not made yet)
    made = len(plays) - (view.phase is Phase.CHOOSE_TRUMP and bool(plays))
    j = next((k for k in range(i + 1, made) if _changes_trump(view, plays[k][1], k)), None)
    if at_once:  # decides the tricks completed from play i on, until play j
        first = i // n if i >= 0 else 0
        until = current + 1 if j is None else j // n
    else:  # in force from the trick after play i, until the trick after play j
        first = i // n + 1 if i >= 0 else 0
        until = current + 1 if j is None else j // n + 1
    suit: Suit | None = None
    if first > current:  # named during the current trick
        suit = view.next_trump if j is None else None
    elif until > current:  # in force now
        suit = view.trump
    if suit is not None:
        return suit
    for suit in Suit:
        if all(
            (t.leader + trick_winner(t.cards, suit)) % n == t.winner
            for t in view.tricks[first:until]
        ):
            return suit
    return Suit.SPADES

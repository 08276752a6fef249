"""One seat's model of the game: its view, folded from what it observes.

A seat at a referee's table does not see the :class:`~.game.Game`, only what
the referee tells it: each round's deal as that seat sees it (:class:`Dealt`),
the public events (:data:`~.actions.Event`) and, with hidden bids, nothing
about its own bid but what it sent (:class:`OwnBid`). :func:`observe` folds
each observation into the seat's :class:`~.view.SeatView` by the rules of
this package, so after the observations of each action the folded view
equals ``game.view(seat)``, legal actions included (tested over whole games
of every variant). A client therefore keeps no model of its own.

>>> from wizard_arena.rules import Game, Phase, Rules
>>> game = Game(Rules(players=3), seed=2)
>>> view = first_view(game.rules, seat=0)
>>> game.deal()
>>> view = observe(view, dealt(game.view(0)))
>>> seen = len(game.events)
>>> while game.phase is not Phase.DEAL:  # round 1
...     game.apply(game.to_act, game.legal_actions()[0])
...     for event in game.events[seen:]:
...         view = observe(view, event)
...     seen = len(game.events)
>>> view == game.view(0)
True

One moment is not observable: with ``reveal_bids_after_tricks`` nothing
tells a seat that the last hidden bid is in. The fold keeps the bidding
phase until the first card is played (which closes it), or until the seat
learns it otherwise, e.g. from a decision request's view:
:func:`bids_closed`.
"""

from __future__ import annotations

from typing import NamedTuple

from .actions import (
    BidMade,
    CardPlayed,
    Event,
    GameOver,
    Phase,
    RoundScored,
    RoundStarted,
    TrickWon,
    TrumpChosen,
)
from .cards import Card, Suit
from .laws import Rules, trump_named_waits, wizard_trump
from .view import SeatView, compute_legal_actions, replace_view

__all__ = ["Dealt", "Observation", "OwnBid", "bids_closed", "dealt", "first_view", "observe"]


class Dealt(NamedTuple):
    """A round was dealt, as one seat sees it (the protocol's RoundStart).

    ``hand`` is the seat's own hand (sorted in deck order; empty in a blind
    first round, where ``others_hands`` holds every other seat's cards by
    seat); ``trump_pending`` is true when the dealer must choose the trump
    (a Wizard was turned)."""

    round: int
    dealer: int
    cards: int
    hand: tuple[Card, ...]
    turned_card: Card | None
    trump: Suit | None
    trump_pending: bool
    others_hands: tuple[tuple[Card, ...], ...] = ()


class OwnBid(NamedTuple):
    """The seat's own bid, made while bids are hidden (no event shows it to
    the seat before the bids are revealed). Without hidden bids the public
    ``BidMade`` says it, and this observation changes nothing."""

    bid: int


Observation = Dealt | OwnBid | Event
"""What a seat observes: its deal, its own hidden bid, a public event."""


def dealt(view: SeatView) -> Dealt:
    """What ``view``'s seat saw of its round's deal, from a view taken just
    after it (the referee builds its RoundStart messages so)."""
    pending = view.phase is Phase.CHOOSE_TRUMP and not view.trick and not view.tricks
    return Dealt(
        view.round,
        view.dealer,
        view.cards_per_player,
        view.hand,
        view.turned_card,
        view.trump,
        pending,
        view.others_hands,
    )


def first_view(rules: Rules, seat: int, first_dealer: int = 0) -> SeatView:
    """The view of ``seat`` before the first deal (which ``first_dealer``
    makes, when it is known; it does not matter to the fold)."""
    n = rules.players
    if not 0 <= seat < n:
        raise ValueError(f"no seat {seat} at a {n}-player table")
    return SeatView(
        rules=rules,
        seat=seat,
        phase=Phase.DEAL,
        round=0,
        cards_per_player=0,
        dealer=(first_dealer - 1) % n,
        to_act=None,
        hand=(),
        turned_card=None,
        trump=None,
        bids=(None,) * n,
        leader=0,
        trick=(),
        tricks=(),
        tricks_won=(0,) * n,
        totals=(0,) * n,
    )


def observe(view: SeatView, seen: Observation) -> SeatView:
    """``view`` after its seat observed ``seen``; its legal actions are
    those of the rules core (none unless the seat is to act)."""
    if isinstance(seen, Dealt):
        after = _dealt(view, seen)
    elif isinstance(seen, OwnBid):
        after = _own_bid(view, seen.bid)
    elif isinstance(seen, CardPlayed):
        after = _card_played(view, seen)
    elif isinstance(seen, TrickWon):
        after = _trick_won(view, seen)
    elif isinstance(seen, BidMade):
        after = _bid_made(view, seen)
    elif isinstance(seen, TrumpChosen):
        after = _trump_chosen(view, seen)
    elif isinstance(seen, RoundScored):
        after = _round_scored(view, seen)
    elif isinstance(seen, GameOver | RoundStarted):
        # the game is over once the last round is scored; a deal is seen
        # through the seat's Dealt (its cards are not in the public event)
        return view
    else:
        raise TypeError(f"not an observation: {seen!r}")
    return _settled(after)


def bids_closed(view: SeatView) -> SeatView:
    """With ``reveal_bids_after_tricks``: the seat learnt (from a view past
    the bidding) that the last hidden bid is in, which no event says; play
    has begun. Otherwise ``view`` unchanged."""
    if view.rules.reveal_bids_after_tricks and view.phase is Phase.BID:
        return _settled(_play_begins(view))
    return view


# -- one observation each ---------------------------------------------------------


def _settled(view: SeatView) -> SeatView:
    return replace_view(view, legal_actions=compute_legal_actions(view), time_left=None)


def _bidder(rules: Rules, seat: int, dealer: int) -> int:
    """Who is to act (as ``seat`` sees it) when the bidding starts."""
    if rules.hidden_bids:
        return seat  # every seat bids at once, this one too
    return (dealer + 1) % rules.players


def _play_begins(view: SeatView) -> SeatView:
    # a blind first round's cards are played now: the others' are no longer shown
    return replace_view(view, phase=Phase.PLAY, to_act=view.leader, others_hands=())


def _dealt(view: SeatView, d: Dealt) -> SeatView:
    n = view.players
    if d.trump_pending:
        phase, to_act = Phase.CHOOSE_TRUMP, d.dealer
    else:
        phase, to_act = Phase.BID, _bidder(view.rules, view.seat, d.dealer)
    return replace_view(
        view,
        phase=phase,
        round=d.round,
        cards_per_player=d.cards,
        dealer=d.dealer,
        to_act=to_act,
        hand=tuple(d.hand),
        turned_card=d.turned_card,
        trump=d.trump,
        bids=(None,) * n,
        leader=(d.dealer + 1) % n,
        trick=(),
        tricks=(),
        tricks_won=(0,) * n,
        others_hands=tuple(d.others_hands),
        next_trump=None,
    )


def _with_bid(view: SeatView, seat: int, bid: int) -> tuple[int | None, ...]:
    bids = list(view.bids)
    bids[seat] = bid
    return tuple(bids)


def _own_bid(view: SeatView, bid: int) -> SeatView:
    if not (view.rules.hidden_bids and view.phase is Phase.BID):
        return view
    return replace_view(view, bids=_with_bid(view, view.seat, bid), to_act=None)


def _bid_made(view: SeatView, ev: BidMade) -> SeatView:
    rules = view.rules
    after = replace_view(view, bids=_with_bid(view, ev.seat, ev.bid))
    if rules.reveal_bids_after_tricks:
        return after  # revealed once the round's tricks are played
    if ev.seat == view.dealer:  # the last bid (hidden bids: revealed in this order)
        return _play_begins(after)
    if rules.hidden_bids:
        return replace_view(after, to_act=None)
    return replace_view(after, to_act=(ev.seat + 1) % view.players)


def _card_played(view: SeatView, ev: CardPlayed) -> SeatView:
    if view.phase is Phase.BID:  # the hidden bids were all in (revealed after the tricks)
        view = _play_begins(view)
    n = view.players
    card = ev.card
    trump, choose = view.trump, False
    if card.is_wizard:
        named, choose = wizard_trump(view.rules, card, len(view.tricks), view.cards_per_player)
        if named is not None:
            trump = named
    hand = view.hand
    if ev.seat == view.seat and card in hand:
        i = hand.index(card)
        hand = hand[:i] + hand[i + 1 :]
    trick = (*view.trick, card)
    phase, to_act = Phase.PLAY, (None if len(trick) >= n else (ev.seat + 1) % n)
    if choose:  # the Wizard's player names the trump (after its trick, if complete)
        phase, to_act = Phase.CHOOSE_TRUMP, ev.seat
    return replace_view(view, phase=phase, to_act=to_act, hand=hand, trump=trump, trick=trick)


def _trick_won(view: SeatView, ev: TrickWon) -> SeatView:
    won = list(view.tricks_won)
    won[ev.winner] += 1
    tricks = (*view.tricks, ev.trick)
    if view.phase is Phase.CHOOSE_TRUMP:  # a Wizard's player names trump first
        to_act = view.to_act
    else:
        to_act = ev.winner if len(tricks) < view.cards_per_player else None
    return replace_view(
        view,
        to_act=to_act,
        trump=view.trump if view.next_trump is None else view.next_trump,
        next_trump=None,
        leader=ev.winner,
        trick=(),
        tricks=tricks,
        tricks_won=tuple(won),
    )


def _trump_chosen(view: SeatView, ev: TrumpChosen) -> SeatView:
    if not (view.phase is Phase.CHOOSE_TRUMP and (view.trick or view.tricks)):
        # the dealer's choice after a turned Wizard: the bidding starts
        bidder = _bidder(view.rules, view.seat, view.dealer)
        return replace_view(view, trump=ev.suit, phase=Phase.BID, to_act=bidder)
    # tricksy: a Wizard's player named it; play goes on after the Wizard, or
    # (when the Wizard completed its trick) with the trick's winner
    if view.trick and view.to_act is not None:
        resume = (view.to_act + 1) % view.players
    else:
        resume = view.leader
    if trump_named_waits(view.rules, bool(view.trick)):
        return replace_view(view, next_trump=ev.suit, phase=Phase.PLAY, to_act=resume)
    return replace_view(view, trump=ev.suit, phase=Phase.PLAY, to_act=resume)


def _round_scored(view: SeatView, ev: RoundScored) -> SeatView:
    result = ev.result
    last = result.round >= view.rules.rounds
    return replace_view(
        view,
        phase=Phase.GAME_OVER if last else Phase.DEAL,
        to_act=None,
        next_trump=None,
        totals=result.totals,
        results=(*view.results, result),
    )

"""What one seat may know: the per-seat view of a game.

A :class:`SeatView` is built by the rules core from the full game state
(:meth:`Game.view`) or from the wire, and holds only what that seat could
see at the table: its own hand, the turned card and trump, bids, cards
played, trick winners and scores. No other seat's hand is ever in it.

>>> from wizard_arena.rules import Game, Rules
>>> game = Game(Rules(players=3), seed=1)
>>> game.deal()
>>> v = game.view(1)
>>> v.seat, v.round, v.is_my_turn, len(v.hand)
(1, 1, True, 1)
>>> v.legal_actions == tuple(game.legal_actions())
True
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from .actions import Action, Bid, ChooseTrump, Phase, Play, RoundResult, Trick
from .cards import FULL_DECK, SUITED_WIZARD_DECK, SUITED_WIZARDS, WIZARD, Card, Suit
from .laws import Rules, allowed_bids, legal_cards, suit_to_follow

#: Every distinct card, in deck order (what :meth:`SeatView.unseen_cards` lists in).
_DECK_ORDER: tuple[Card, ...] = tuple(sorted(set(FULL_DECK) | set(SUITED_WIZARD_DECK)))
_CARD_SLOTS = max(c.index for c in _DECK_ORDER) + 1


def _counts(deck: tuple[Card, ...]) -> tuple[int, ...]:
    left = [0] * _CARD_SLOTS
    for c in deck:
        left[c.index] += 1
    return tuple(left)


#: A deck's counts by :attr:`Card.index`: the two decks :attr:`Rules.deck` gives.
_DECK_COUNTS: dict[bool, tuple[int, ...]] = {
    False: _counts(FULL_DECK),
    True: _counts(SUITED_WIZARD_DECK),
}

if TYPE_CHECKING:
    from .game import Game

__all__ = ["PublicView", "SeatView", "bids_hidden", "compute_legal_actions"]


def bids_hidden(rules: Rules, phase: Phase) -> bool:
    """Whether each seat sees only its own bid in ``phase``: while hidden bids
    are made, and with ``reveal_bids_after_tricks`` also while the round's
    tricks are played (the bids are revealed when the last trick is complete).

    >>> bids_hidden(Rules(hidden_bids=True), Phase.PLAY)
    False
    >>> bids_hidden(Rules(hidden_bids=True, reveal_bids_after_tricks=True), Phase.PLAY)
    True
    """
    if not rules.hidden_bids:
        return False
    if phase is Phase.BID:
        return True
    return rules.reveal_bids_after_tricks and phase in (Phase.PLAY, Phase.CHOOSE_TRUMP)


@dataclass(frozen=True, slots=True)
class SeatView:
    """An immutable snapshot of everything ``seat`` may know at one moment."""

    rules: Rules
    seat: int
    phase: Phase
    round: int
    """The current round, from 1 (0 before the first deal)."""
    cards_per_player: int
    """Cards dealt to each player this round."""
    dealer: int
    to_act: int | None
    hand: tuple[Card, ...]
    """This seat's cards, sorted in deck order."""
    turned_card: Card | None
    trump: Suit | None
    """Trump in force; ``None`` for no trump or while the dealer chooses."""
    bids: tuple[int | None, ...]
    """Bids by seat (``None``: not made, or hidden from this seat; see
    :func:`bids_hidden`)."""
    leader: int
    """The seat that led (or will lead) the current trick."""
    trick: tuple[Card, ...]
    """Cards of the current trick in play order, from :attr:`leader`."""
    tricks: tuple[Trick, ...]
    """Completed tricks of this round, in order."""
    tricks_won: tuple[int, ...]
    totals: tuple[int, ...]
    """Running totals by seat (before this round's points until it is scored)."""
    results: tuple[RoundResult, ...] = ()
    """Results of the rounds played so far."""
    others_hands: tuple[tuple[Card, ...], ...] = ()
    """Blind first round: every other seat's cards, by seat (this seat's own
    entry is empty and :attr:`hand` is empty: it cannot see its own card).
    Empty otherwise."""
    next_trump: Suit | None = None
    """Tricksy: the trump named during the current trick, in force from the next."""
    legal_actions: tuple[Action, ...] = ()
    """The actions this seat may take now (empty unless it is to act)."""
    time_left: float | None = field(default=None, compare=False)
    """Seconds left for this decision, when a referee imposes a deadline."""

    @classmethod
    def of(cls, game: Game, seat: int, time_left: float | None = None) -> SeatView:
        """The view of ``seat`` in ``game`` (with ``time_left``: as
        :meth:`with_time_left` would give it, without a second copy)."""
        if not 0 <= seat < game.players:
            raise ValueError(f"no seat {seat} at a {game.players}-player table")
        acting = game.acting
        legal: tuple[Action, ...] = tuple(game.legal_actions(seat)) if seat in acting else ()
        blind = game.blind
        if bids_hidden(game.rules, game.phase):
            # bids are revealed together: until then a seat sees only its own
            bids = tuple(b if s == seat else None for s, b in enumerate(game.bids))
        else:
            bids = tuple(game.bids)
        if game.rules.hidden_bids and game.phase is Phase.BID:
            to_act = seat if seat in acting else None
        else:
            to_act = game.to_act
        return cls(
            rules=game.rules,
            seat=seat,
            phase=game.phase,
            round=game.round,
            cards_per_player=game.cards,
            dealer=game.dealer,
            to_act=to_act,
            hand=() if blind else tuple(game.hands[seat]),
            turned_card=game.turned_card,
            trump=game.trump,
            bids=bids,
            leader=game.leader,
            trick=tuple(game.trick),
            tricks=tuple(game.tricks),
            tricks_won=tuple(game.tricks_won),
            totals=tuple(game.totals),
            results=tuple(game.results),
            others_hands=tuple(() if s == seat else tuple(h) for s, h in enumerate(game.hands))
            if blind
            else (),
            next_trump=game.next_trump,
            legal_actions=legal,
            time_left=time_left,
        )

    def with_time_left(self, seconds: float | None) -> SeatView:
        return replace_view(self, time_left=seconds)

    # -- convenience for bot authors ----------------------------------------

    @property
    def players(self) -> int:
        return self.rules.players

    @property
    def is_my_turn(self) -> bool:
        return self.to_act == self.seat

    @property
    def legal_cards(self) -> tuple[Card, ...]:
        """The distinct cards this seat may play now (empty unless it is to play)."""
        return tuple(a.card for a in self.legal_actions if isinstance(a, Play))

    @property
    def legal_bids(self) -> tuple[int, ...]:
        return tuple(a.bid for a in self.legal_actions if isinstance(a, Bid))

    @property
    def trick_seats(self) -> tuple[int, ...]:
        """The seat of each card in :attr:`trick`."""
        n = self.players
        return tuple((self.leader + i) % n for i in range(len(self.trick)))

    @property
    def suit_to_follow(self) -> Suit | None:
        """The suit the current trick asks for, or ``None`` when play is free."""
        return suit_to_follow(self.trick)

    @property
    def plays(self) -> tuple[tuple[int, Card], ...]:
        """Every card played this round so far, in order, as ``(seat, card)``."""
        n = self.players
        out: list[tuple[int, Card]] = []
        for t in self.tricks:
            out.extend(zip(t.seats(n), t.cards, strict=True))
        out.extend(zip(self.trick_seats, self.trick, strict=True))
        return tuple(out)

    def cards_by_suit(self) -> dict[Suit | None, tuple[Card, ...]]:
        """This seat's hand grouped by suit; Wizards and Jesters under ``None``."""
        groups: dict[Suit | None, list[Card]] = {s: [] for s in Suit}
        groups[None] = []
        for c in self.hand:
            groups[c.suit].append(c)
        return {s: tuple(cs) for s, cs in groups.items()}

    def known_voids(self) -> dict[int, frozenset[Suit]]:
        """For each seat, the suits it has shown it no longer holds this round
        (it played another suited card when that suit was to be followed)."""
        voids: dict[int, set[Suit]] = {s: set() for s in range(self.players)}
        n = self.players
        tricks = [(t.leader, t.cards) for t in self.tricks] + [(self.leader, self.trick)]
        for leader, cards in tricks:
            follow: Suit | None = None  # once a trick asks for a suit, it keeps asking
            for i, card in enumerate(cards):
                if card.suit is None:
                    continue
                if follow is None:
                    follow = suit_to_follow(cards[:i])
                if follow is not None and card.suit is not follow:
                    voids[(leader + i) % n].add(follow)
        return {s: frozenset(v) for s, v in voids.items()}

    def unseen_cards(self) -> list[Card]:
        """The cards this seat has not seen this round (a multiset, deck order):
        the deck (:attr:`Rules.deck`) less its hand, the others' cards it sees
        (blind first round), the turned card and every card played.

        With ``tricksy_suited`` an explicit deal may hold a plain ``W`` (a
        Wizard with no printed suit) in place of a suited one; each ``W`` seen
        then takes the place of a suited Wizard not seen, the last in deck
        order (which one it stood for cannot be known)."""
        suited = self.rules.tricksy_suited
        left = list(_DECK_COUNTS[suited])  # counts by Card.index
        for c in self.hand:
            left[c.index] -= 1
        for cards in self.others_hands:
            for c in cards:
                left[c.index] -= 1
        if self.turned_card is not None:
            left[self.turned_card.index] -= 1
        for t in self.tricks:
            for c in t.cards:
                left[c.index] -= 1
        for c in self.trick:
            left[c.index] -= 1
        if suited:
            for _ in range(-left[WIZARD.index]):
                gone = [c for c in SUITED_WIZARDS if left[c.index] > 0]
                if gone:
                    left[gone[-1].index] -= 1
        out: list[Card] = []
        for c in _DECK_ORDER:
            k = left[c.index]
            if k == 1:  # (only Wizards and Jesters come more than once)
                out.append(c)
            elif k > 1:
                out.extend((c,) * k)
        return out

    def compute_legal_actions(self) -> tuple[Action, ...]:
        """The legal actions for this seat, recomputed from the view alone by
        the rules core (to check what a referee offered)."""
        return compute_legal_actions(self)


_VIEW_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(SeatView))
_view_values = attrgetter(*_VIEW_FIELDS)
_VIEW_FIELD_AT: dict[str, int] = {name: i for i, name in enumerate(_VIEW_FIELDS)}


def replace_view(view: SeatView, /, **changes: Any) -> SeatView:
    """``dataclasses.replace(view, **changes)``, several times faster (the
    fold, :mod:`.observation`, makes a new view at every observation).

    >>> from wizard_arena.rules import Game, Rules
    >>> game = Game(Rules(players=3), seed=1)
    >>> game.deal()
    >>> v = game.view(0)
    >>> replace_view(v, to_act=None) == dataclasses.replace(v, to_act=None)
    True
    """
    if type(view) is not SeatView:  # a subclass: its own fields
        return dataclasses.replace(view, **changes)
    values = list(_view_values(view))
    at = _VIEW_FIELD_AT
    for name, value in changes.items():
        if name not in at:
            raise TypeError(f"SeatView has no field {name!r}")
        values[at[name]] = value
    return SeatView(*values)


@dataclass(frozen=True, slots=True)
class PublicView:
    """What anyone watching the table may know at one moment: a seat's view
    with no hand (not even in a blind round) and no legal actions. Bids are
    shown as every seat sees the others' (none while they are hidden, see
    :func:`bids_hidden`); with hidden bids nobody is named to act while the
    bids are made. How many cards each seat holds is public.

    >>> from wizard_arena.rules import Game, Rules
    >>> game = Game(Rules(players=3, hidden_bids=True), seed=1)
    >>> game.deal()
    >>> game.bid(1, 0)
    >>> v = game.public_view()
    >>> v.bids, v.to_act, v.hand_sizes
    ((None, None, None), None, (1, 1, 1))
    """

    rules: Rules
    phase: Phase
    round: int
    cards_per_player: int
    dealer: int
    to_act: int | None
    turned_card: Card | None
    trump: Suit | None
    bids: tuple[int | None, ...]
    leader: int
    trick: tuple[Card, ...]
    tricks: tuple[Trick, ...]
    tricks_won: tuple[int, ...]
    totals: tuple[int, ...]
    results: tuple[RoundResult, ...]
    next_trump: Suit | None
    hand_sizes: tuple[int, ...]
    """Cards each seat holds now (never which)."""

    @classmethod
    def of(cls, game: Game) -> PublicView:
        hidden = bids_hidden(game.rules, game.phase)
        hidden_turns = game.rules.hidden_bids and game.phase is Phase.BID
        return cls(
            rules=game.rules,
            phase=game.phase,
            round=game.round,
            cards_per_player=game.cards,
            dealer=game.dealer,
            to_act=None if hidden_turns else game.to_act,
            turned_card=game.turned_card,
            trump=game.trump,
            bids=tuple(None for _ in game.bids) if hidden else tuple(game.bids),
            leader=game.leader,
            trick=tuple(game.trick),
            tricks=tuple(game.tricks),
            tricks_won=tuple(game.tricks_won),
            totals=tuple(game.totals),
            results=tuple(game.results),
            next_trump=game.next_trump,
            hand_sizes=tuple(len(h) for h in game.hands),
        )

    @property
    def trick_seats(self) -> tuple[int, ...]:
        """The seat of each card in :attr:`trick`."""
        n = self.rules.players
        return tuple((self.leader + i) % n for i in range(len(self.trick)))


def compute_legal_actions(view: SeatView) -> tuple[Action, ...]:
    """Legal actions of ``view.seat`` derived from the view alone."""
    if view.to_act != view.seat:
        return ()
    if view.phase is Phase.PLAY:
        return tuple(Play(c) for c in dict.fromkeys(legal_cards(view.hand, view.trick)))
    if view.phase is Phase.BID:
        bids = allowed_bids(
            view.rules, view.cards_per_player, view.seat, view.dealer, view.bids, view.totals
        )
        return tuple(Bid(b) for b in bids)
    if view.phase is Phase.CHOOSE_TRUMP:
        return tuple(ChooseTrump(s) for s in Suit)
    return ()

"""The Wizard state machine.

A :class:`Game` holds the complete (hidden) state of one game. It is driven
by :meth:`Game.deal` between rounds and :meth:`Game.apply` for each player
action; every refused action raises a :class:`~wizard_arena.rules.errors.RuleError`
and leaves the state exactly as it was. What a seat may know leaves the game
only through :meth:`Game.view` (and, for spectators, :meth:`Game.public_view`).

The module is a little over 600 lines: it is one state machine whose
transitions (deal, bid, trump choice, play, scoring) share its private
state, and the play path is the rules core's hot loop; the rules themselves
live in :mod:`.laws`, the views in :mod:`.view`.

>>> game = Game(Rules(players=3), seed=7)
>>> game.deal()
>>> game.phase, game.round, game.to_act
(Phase.BID, 1, 1)
>>> while not game.is_over:
...     if game.phase is Phase.DEAL:
...         game.deal()
...     else:
...         game.apply(game.to_act, game.legal_actions()[0])
>>> len(game.results), sum(r.points[0] for r in game.results) == game.totals[0]
(20, True)
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Final

from .actions import (
    Action,
    Bid,
    BidMade,
    CardPlayed,
    ChooseTrump,
    Event,
    GameOver,
    Phase,
    Play,
    RoundResult,
    RoundScored,
    RoundStarted,
    Trick,
    TrickWon,
    TrumpChosen,
    action_text,
)
from .cards import ALL_CARDS, Card, Suit
from .deal import DrawRow, check_deal, choose_first_dealer, shuffled_deal
from .errors import (
    BidForbiddenError,
    BidOutOfRangeError,
    CardNotInHandError,
    DealError,
    MustFollowSuitError,
    NotYourTurnError,
    TrumpChoiceError,
    WrongPhaseError,
)
from .laws import (
    Rules,
    allowed_bids,
    rank_totals,
    score,
    trick_winner,
    trump_named_waits,
    wizard_trump,
)
from .view import PublicView, SeatView

__all__ = ["Game"]

_PLAY: Final = [Play(c) for c in ALL_CARDS]  # by Card.index
_BIDS: Final = [Bid(b) for b in range(61)]
_CHOICES: Final = [ChooseTrump(s) for s in Suit]
_UNSET: Final = object()
_PHASE_PLAY: Final = Phase.PLAY
# builds a NamedTuple from its fields without the Python-level __new__ (the hot path)
_NEW: Final = tuple.__new__


class Game:
    """One game of Wizard, from the first deal to the final scores.

    ``seed`` (or an explicit ``rng``) drives :meth:`deal` when no hands are
    given; the same seed always gives the same deals, whatever is played.
    ``first_dealer`` deals round 1 (default seat 0); the deal passes clockwise
    (to seat + 1).

    With ``first_dealer_by_draw`` the first dealer is drawn instead, from
    ``draw`` (a draw already made, e.g. a record's) or with the game's RNG
    before the first deal; the rows are :attr:`draw` (see
    :func:`~wizard_arena.rules.deal.choose_first_dealer`).

    >>> g = Game(Rules(players=3, first_dealer_by_draw=True), seed=4)
    >>> len(g.draw) >= 1, g.first_dealer == g.next_dealer()
    (True, True)
    """

    def __init__(
        self,
        rules: Rules | None = None,
        *,
        seed: int | str | None = None,
        rng: random.Random | None = None,
        first_dealer: int | None = None,
        draw: Sequence[DrawRow] | None = None,
    ) -> None:
        rules = rules if rules is not None else Rules()
        if rng is not None and seed is not None:
            raise ValueError("give seed or rng, not both")
        rng = rng if rng is not None else random.Random(seed)
        first, rows = choose_first_dealer(rules, rng, first_dealer, draw)
        self._setup(rules, rng, first, rows)

    def _setup(
        self,
        rules: Rules,
        rng: random.Random,
        first_dealer: int,
        draw: tuple[tuple[Card | None, ...], ...],
    ) -> None:
        self.rules = rules
        n = rules.players
        self._rng = rng
        self.players = n
        self.first_dealer = first_dealer
        self.draw = draw
        """The rows of the draw for the first dealer (``first_dealer_by_draw``),
        each the card every seat drew (``None``: it did not draw in that row)."""
        self.phase = Phase.DEAL
        self.round = 0
        self.dealer = (first_dealer - 1) % n
        self.to_act: int | None = None
        self.cards = 0
        self.hands: list[list[Card]] = [[] for _ in range(n)]
        """Each seat's remaining cards, kept in deck order."""
        self.dealt_hands: tuple[tuple[Card, ...], ...] = ()
        self.turned_card: Card | None = None
        self.trump: Suit | None = None
        """Trump in force for the current trick (None: no trump, or not yet chosen)."""
        self.next_trump: Suit | None = None
        """Tricksy: a trump named during the current trick, in force from the next."""
        self.round_trump: Suit | None = None
        """The trump in force when the round's first trick was led."""
        self.trick_trumps: list[Suit | None] = []
        """The trump in force when each completed trick of the round was decided
        (it differs from :attr:`round_trump` only under tricksy or tricksy_suited)."""
        self._resume: int | None = None  # tricksy: who plays after the trump choice
        self.bids: list[int | None] = [None] * n
        self.tricks_won = [0] * n
        self.totals = [0] * n
        self.leader = 0
        self.trick: list[Card] = []
        self.tricks: list[Trick] = []
        self.results: list[RoundResult] = []
        self.events: list[Event] = []
        # incremental follow-suit state of the current trick
        self._follow: Suit | None = None
        self._free = False
        self._dealer_of_next: int | None = None  # at_round(): who deals the first round

    @classmethod
    def at_round(
        cls,
        rules: Rules,
        round_: int,
        dealer: int,
        totals: Sequence[int],
        *,
        seed: int | str | None = None,
        rng: random.Random | None = None,
    ) -> Game:
        """A game about to deal round ``round_`` (phase ``DEAL``), which
        ``dealer`` deals, with the running ``totals`` of the rounds before.

        For starting mid-game, e.g. to search from a seat's view: deal the
        round with :meth:`deal` (explicit hands and turned card, or from the
        RNG) and replay its actions. The game's history (events, results)
        starts at this round.

        >>> g = Game.at_round(Rules(players=3), 19, dealer=2, totals=[40, -10, 30], seed=1)
        >>> g.deal()
        >>> g.round, g.dealer, g.cards, g.totals, g.leader
        (19, 2, 19, [40, -10, 30], 0)
        """
        if rng is not None and seed is not None:
            raise ValueError("give seed or rng, not both")
        game = cls.__new__(cls)  # no first dealer to decide (nor to draw)
        game._setup(rules, rng if rng is not None else random.Random(seed), dealer, ())
        n = game.players
        if not 1 <= round_ <= game.rules.rounds:
            raise ValueError(f"round must be 1..{game.rules.rounds}, not {round_}")
        if not 0 <= dealer < n:
            raise ValueError(f"dealer must be a seat 0..{n - 1}, not {dealer}")
        if len(totals) != n:
            raise ValueError(f"need {n} totals, got {len(totals)}")
        game.round = round_ - 1
        game.dealer = (dealer - 1) % n  # as if the deal had passed on to ``dealer``
        game.totals = list(totals)
        game._dealer_of_next = dealer
        return game

    # -- queries -----------------------------------------------------------

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.GAME_OVER

    @property
    def ranks(self) -> list[int]:
        """Competition ranks by current totals (1 best; ties share a rank)."""
        return rank_totals(self.totals)

    def next_dealer(self) -> int:
        """The seat that deals the next round: ``first_dealer`` for round 1, then
        clockwise; with ``lowest_score_deals`` the seat with the fewest points
        (ties: the first tied seat clockwise from the current dealer's left)."""
        n = self.players
        if self._dealer_of_next is not None:
            return self._dealer_of_next
        if self.round > 0 and self.rules.lowest_score_deals:
            low = min(self.totals)
            for k in range(1, n + 1):
                seat = (self.dealer + k) % n
                if self.totals[seat] == low:
                    return seat
        return (self.dealer + 1) % n

    @property
    def acting(self) -> tuple[int, ...]:
        """The seats that may act now: the seat to act, or with hidden bids every
        seat that has not bid yet (in bidding order)."""
        if self.phase is Phase.BID and self.rules.hidden_bids:
            n = self.players
            order = ((self.dealer + 1 + k) % n for k in range(n))
            return tuple(s for s in order if self.bids[s] is None)
        return () if self.to_act is None else (self.to_act,)

    @property
    def blind(self) -> bool:
        """True while seats see the others' cards but not their own (blind first round)."""
        in_bidding = self.phase in (Phase.CHOOSE_TRUMP, Phase.BID)
        return self.rules.blind_first_round and self.round == 1 and in_bidding

    def legal_bids(self, seat: int) -> list[int]:
        """Bids ``seat`` could make now if it were to bid (ignores whose turn it is)."""
        return allowed_bids(self.rules, self.cards, seat, self.dealer, self.bids, self.totals)

    def legal_cards(self, seat: int) -> list[Card]:
        """The cards of ``seat``'s hand (a multiset) it may play to the current trick."""
        hand = self.hands[seat]
        follow = self._follow
        if follow is None or self._free:
            return list(hand)
        for card in hand:
            if card.suit is follow:
                return [c for c in hand if c.suit is follow or c.suit is None]
        return list(hand)

    def legal_actions(self, seat: int | None = None) -> list[Action]:
        """The distinct actions ``seat`` (default: the seat to act) may take now;
        empty when it may not act (and between rounds and at the end)."""
        phase = self.phase
        if seat is None:
            seat = self.to_act
            if seat is None:
                return []
        if phase is _PHASE_PLAY:
            if seat != self.to_act:
                return []
            return self._legal_plays(seat)
        if phase is Phase.BID:
            if seat not in self.acting:
                return []
            bids = _BIDS
            return [bids[b] for b in self.legal_bids(seat)]
        if phase is Phase.CHOOSE_TRUMP:
            return list(_CHOICES) if seat == self.to_act else []
        return []

    def _legal_plays(self, seat: int) -> list[Action]:
        """The distinct Play actions of ``seat`` now (of :meth:`legal_cards`)."""
        hand = self.legal_cards(seat)
        play = _PLAY
        # the hand is in deck order: Wizards and Jesters (the only cards a deck
        # holds several of) come last, equal cards side by side
        if not hand or hand[-1].suit is not None:
            return [play[c.index] for c in hand]
        out: list[Action] = []
        prev = None
        for c in hand:
            if c is not prev:
                out.append(play[c.index])
                prev = c
        return out

    def view(self, seat: int, time_left: float | None = None) -> SeatView:
        """Everything ``seat`` may know now, and its legal actions if it is to act
        (``time_left``: the seconds a referee gives this decision, as
        :meth:`SeatView.with_time_left` sets them)."""
        return SeatView.of(self, seat, time_left)

    def public_view(self) -> PublicView:
        """What a spectator may know now: no hand, no hidden bid."""
        return PublicView.of(self)

    # -- dealing -----------------------------------------------------------

    def deal(
        self,
        hands: Sequence[Sequence[Card]] | None = None,
        turned_card: Card | object | None = _UNSET,
    ) -> None:
        """Start the next round.

        Without arguments, shuffle the deck (:attr:`Rules.deck`) with the
        game's RNG. With ``hands`` (one list per seat) and ``turned_card``
        (``None`` when no card is left undealt), deal exactly those; they must
        be possible from one deck of the game's rules.
        """
        if self.phase is not Phase.DEAL:
            raise DealError(f"cannot deal now: the game is in phase {self.phase.value}")
        n = self.players
        rnd = self.round + 1
        size = self.rules.round_sizes[rnd - 1]
        dealer = self.next_dealer()
        if hands is None:
            if turned_card is not _UNSET:
                raise DealError("a turned card needs explicit hands")
            new_hands, turned = shuffled_deal(self._rng, self.rules.deck, n, size, dealer)
        else:
            new_hands = [list(h) for h in hands]
            if turned_card is _UNSET:
                raise DealError("explicit hands need turned_card (None when no card is left)")
            if turned_card is not None and not isinstance(turned_card, Card):
                raise DealError(f"the turned card is not a card: {turned_card!r}")
            turned = turned_card
            check_deal(new_hands, turned, size, n, self.rules.deck, rnd)
            new_hands = [sorted(h) for h in new_hands]
        self.round = rnd
        self.dealer = dealer
        self._dealer_of_next = None
        self.cards = size
        self.hands = new_hands
        self.dealt_hands = tuple(tuple(h) for h in new_hands)
        self.turned_card = turned
        self.bids = [None] * n
        self.tricks_won = [0] * n
        self.trick = []
        self.tricks = []
        self.trick_trumps = []
        self.next_trump = None
        self._resume = None
        self._follow = None
        self._free = False
        self.leader = (dealer + 1) % n
        fixed, fixed_suit = self.rules.fixed_trump(rnd)
        if fixed:
            self.trump = fixed_suit
            self._start_bidding()
        elif turned is not None and turned.is_wizard:
            self.trump = None
            self.phase = Phase.CHOOSE_TRUMP
            self.to_act = dealer
        else:
            self.trump = turned.suit if turned is not None else None
            self._start_bidding()
        self.events.append(RoundStarted(rnd, dealer, size, turned, self.trump))

    # -- actions -----------------------------------------------------------

    def apply(self, seat: int, action: Action) -> None:
        """Apply ``seat``'s action, or raise a RuleError and change nothing."""
        if isinstance(action, Play):
            self.play(seat, action.card)
        elif isinstance(action, Bid):
            self.bid(seat, action.bid)
        elif isinstance(action, ChooseTrump):
            self.choose_trump(seat, action.suit)
        else:
            raise TypeError(f"not an action: {action!r}")

    def _check_turn(self, seat: int, phase: Phase, action: Action) -> None:
        if self.phase is not phase:
            if isinstance(action, ChooseTrump):
                raise TrumpChoiceError(seat, action_text(action), "no trump choice is pending")
            raise WrongPhaseError(
                seat, action_text(action), f"the game is in phase {self.phase.value}"
            )
        if seat != self.to_act:
            if isinstance(action, ChooseTrump):
                raise TrumpChoiceError(
                    seat, action_text(action), f"only the dealer (seat {self.dealer}) chooses trump"
                )
            raise NotYourTurnError(seat, action_text(action), f"seat {self.to_act} is to act")

    def choose_trump(self, seat: int, suit: Suit) -> None:
        """The dealer names trump after a turned Wizard; with ``tricksy``, the
        player of a Wizard names the trump in force from the next trick on;
        with ``tricksy_suited``, the player of a Wizard without a printed suit
        names the trump, in force at once."""
        if self.phase is not Phase.CHOOSE_TRUMP or seat != self.to_act:
            self._check_turn(seat, Phase.CHOOSE_TRUMP, ChooseTrump(suit))
        if not isinstance(suit, Suit):
            raise TrumpChoiceError(seat, f"trump {suit!r}", "not a suit")
        self.events.append(TrumpChosen(seat, suit))
        if self._resume is None:  # the dealer's choice before the bidding
            self.trump = suit
            self._start_bidding()
            return
        if trump_named_waits(self.rules, bool(self.trick)):
            self.next_trump = suit  # tricksy, mid-trick: in force once this trick is complete
        else:  # at once (tricksy_suited), or between tricks: the next trick has not started
            self.trump = suit
        self.phase = Phase.PLAY
        self.to_act = self._resume
        self._resume = None

    def _start_bidding(self) -> None:
        self.phase = Phase.BID
        self.to_act = None if self.rules.hidden_bids else (self.dealer + 1) % self.players

    def _start_play(self) -> None:
        self.phase = Phase.PLAY
        self.to_act = self.leader
        self.round_trump = self.trump
        if self.rules.blind_first_round and self.round == 1:
            # nobody can choose among cards they cannot see: the referee plays
            # each seat's only card in turn
            while self.phase is Phase.PLAY and self.round == 1:
                seat = self.to_act
                assert seat is not None
                self.play(seat, self.hands[seat][0])

    def bid(self, seat: int, bid: int) -> None:
        """``seat`` bids ``bid`` tricks."""
        if self.rules.hidden_bids and self.phase is Phase.BID:
            if not 0 <= seat < self.players or self.bids[seat] is not None:
                raise NotYourTurnError(
                    seat, f"bid {bid!r}", "this seat has already bid (bids are hidden)"
                )
        elif self.phase is not Phase.BID or seat != self.to_act:
            self._check_turn(seat, Phase.BID, Bid(bid))
        if type(bid) is not int or not 0 <= bid <= self.cards:
            raise BidOutOfRangeError(seat, f"bid {bid!r}", f"bids are 0..{self.cards} this round")
        if seat == self.dealer and bid not in self.legal_bids(seat):
            made = sum(b for b in self.bids if b is not None)
            raise BidForbiddenError(
                seat,
                f"bid {bid}",
                f"under {self.rules.bid_restriction.value} the dealer may not make the bids "
                f"add up to {self.cards} (others bid {made})",
            )
        self.bids[seat] = bid
        if self.rules.hidden_bids:
            if any(b is None for b in self.bids):
                return
            if not self.rules.reveal_bids_after_tricks:
                self._reveal_bids()  # all bids are in: revealed together
            self._start_play()
            return
        self.events.append(BidMade(seat, bid))
        if seat == self.dealer:
            self._start_play()
        else:
            self.to_act = (seat + 1) % self.players

    def _reveal_bids(self) -> None:
        """Hidden bids: the public BidMade events of all bids, in bidding order."""
        n = self.players
        for k in range(n):
            s = (self.dealer + 1 + k) % n
            self.events.append(BidMade(s, self.bids[s]))  # type: ignore[arg-type]

    def play(self, seat: int, card: Card) -> None:
        """``seat`` plays ``card`` to the current trick."""
        if self.phase is not _PHASE_PLAY or seat != self.to_act:
            self._check_turn(seat, Phase.PLAY, Play(card))
        hand = self.hands[seat]
        try:
            at = hand.index(card)
        except ValueError:
            text = card.text if isinstance(card, Card) else repr(card)
            raise CardNotInHandError(seat, f"play {text}", f"{text} is not in the hand") from None
        follow = self._follow
        suit = card.suit
        free = self._free
        if follow is not None and suit is not None and suit is not follow and not free:
            for c in hand:
                if c.suit is follow:
                    raise MustFollowSuitError(
                        seat,
                        f"play {card.text}",
                        f"{follow.name.lower()} was led and the hand holds {c.text}",
                    )
        del hand[at]
        trick = self.trick
        wizard = card.is_wizard
        if not free and follow is None:
            if wizard:
                self._free = True
            elif suit is not None:
                self._follow = suit
        trick.append(card)
        self.events.append(_NEW(CardPlayed, (seat, card)))
        n = self.players
        choose = False  # tricksy: whether the Wizard's player names trump (see wizard_trump)
        if wizard:
            named, choose = wizard_trump(self.rules, card, len(self.tricks), self.cards)
            if named is not None:
                self.trump = named
        if len(trick) < n:
            if choose:
                self.phase = Phase.CHOOSE_TRUMP
                self.to_act = seat
                self._resume = (seat + 1) % n
            else:
                self.to_act = (seat + 1) % n
            return
        # the trick is complete
        leader = self.leader
        winner = (leader + trick_winner(trick, self.trump)) % n
        done = _NEW(Trick, (leader, tuple(trick), winner))
        self.tricks.append(done)
        self.trick_trumps.append(self.trump)
        self.tricks_won[winner] += 1
        self.events.append(_NEW(TrickWon, (len(self.tricks), winner, done)))
        if self.next_trump is not None:
            self.trump = self.next_trump
            self.next_trump = None
        self.trick = []
        self._follow = None
        self._free = False
        self.leader = winner
        self.to_act = winner
        if len(self.tricks) == self.cards:
            self._score_round()
        elif choose:
            self.phase = Phase.CHOOSE_TRUMP
            self.to_act = seat
            self._resume = winner

    def _score_round(self) -> None:
        if self.rules.reveal_bids_after_tricks:
            self._reveal_bids()  # hidden until the round's tricks are played
        bids = tuple(b if b is not None else 0 for b in self.bids)
        tricks = tuple(self.tricks_won)
        points = tuple(score(b, t) for b, t in zip(bids, tricks, strict=True))
        totals = self.totals
        for s, p in enumerate(points):
            totals[s] += p
        result = RoundResult(self.round, self.dealer, bids, tricks, points, tuple(totals))
        self.results.append(result)
        self.events.append(RoundScored(result))
        self.to_act = None
        if self.round == self.rules.rounds:
            self.phase = Phase.GAME_OVER
            self.events.append(GameOver(tuple(totals), tuple(rank_totals(totals))))
        else:
            self.phase = Phase.DEAL

    def state_key(self) -> tuple[object, ...]:
        """A hashable fingerprint of the complete game state (equal iff the
        states are equal, RNG excluded); used to check that a refused action
        changed nothing."""
        return (
            self.phase,
            self.round,
            self.dealer,
            self.to_act,
            self.cards,
            tuple(tuple(h) for h in self.hands),
            self.turned_card,
            self.trump,
            self.next_trump,
            self.round_trump,
            tuple(self.trick_trumps),
            self._resume,
            tuple(self.bids),
            tuple(self.tricks_won),
            tuple(self.totals),
            self.leader,
            tuple(self.trick),
            tuple(self.tricks),
            tuple(self.results),
            tuple(self.events),
            self._follow,
            self._free,
            self._dealer_of_next,
            self.first_dealer,
            self.draw,
        )

    def drain_events(self) -> list[Event]:
        """The events since the last drain, removed from :attr:`events`.

        For a referee that forwards each event once and keeps no history of
        its own: a live game then holds no event objects for the garbage
        collector to scan again and again (the table's record keeps the
        moves). :attr:`events` holds only what has not been drained.

        >>> g = Game(Rules(players=3), seed=1)
        >>> g.deal()
        >>> [type(e).__name__ for e in g.drain_events()], g.events
        (['RoundStarted'], [])
        """
        new, self.events = self.events, []
        return new

    # -- copying -----------------------------------------------------------

    def clone(self, rng: random.Random | None = None) -> Game:
        """An independent copy (for search). Events and results are shared
        copies; the RNG is ``rng`` or a copy of this game's."""
        new = object.__new__(Game)
        new.__dict__.update(self.__dict__)
        new.hands = [list(h) for h in self.hands]
        new.bids = list(self.bids)
        new.tricks_won = list(self.tricks_won)
        new.totals = list(self.totals)
        new.trick = list(self.trick)
        new.tricks = list(self.tricks)
        new.trick_trumps = list(self.trick_trumps)
        new.results = list(self.results)
        new.events = list(self.events)
        if rng is None:
            rng = random.Random()
            rng.setstate(self._rng.getstate())
        new._rng = rng
        return new

    def __repr__(self) -> str:
        return (
            f"<Game {self.rules.describe()}, round {self.round}/{self.rules.rounds}, "
            f"phase {self.phase.value}, to act {self.to_act}>"
        )

"""One model of the game: a seat's view folded from what it observes
(wizard_arena.rules.observation) equals the rules core's own view of that
seat, after every action of whole random games of every rule variant, for
every seat, legal actions included."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wizard_arena.rules import (
    FULL_DECK,
    Bid,
    BidMade,
    BidRestriction,
    Card,
    CardPlayed,
    Dealt,
    Game,
    OwnBid,
    Phase,
    RoundStarted,
    Rules,
    SeatView,
    TrickWon,
    TrumpChosen,
    bids_closed,
    dealt,
    first_view,
    observe,
)
from wizard_arena.rules.laws import FLAG_OPTIONS

from .variants import EVERY_OPTION


def _plain_deal(game: Game, rng: random.Random) -> None:
    """An explicit deal from the deck of plain ``W`` (allowed under
    tricksy_suited: a plain Wizard's player names the trump)."""
    n, size = game.players, game.rules.round_sizes[game.round]
    deck = list(FULL_DECK)
    rng.shuffle(deck)
    hands = [deck[i * size : (i + 1) * size] for i in range(n)]
    game.deal(hands, deck[n * size] if n * size < len(deck) else None)


def _dealt(game: Game, ev: RoundStarted, seat: int) -> Dealt:
    """What the referee tells ``seat`` of a deal (as its RoundStart does)."""
    view = game.view(seat)
    pending = ev.turned_card is not None and ev.turned_card.is_wizard
    return Dealt(
        ev.round, ev.dealer, ev.cards, view.hand, ev.turned_card, ev.trump, pending,
        view.others_hands,
    )  # fmt: skip


def _check(folded: SeatView, game: Game, seat: int, quiet: bool) -> SeatView:
    """Compare a seat's folded view with the core's; returns the view the
    seat holds next. The one difference allowed: with bids revealed after
    the tricks, no observation shows that the last hidden bid is in (then
    the seat is told by its next request, or by the first card played)."""
    expected = game.view(seat)
    if folded == expected:
        return folded
    assert quiet and game.rules.reveal_bids_after_tricks, (seat, folded, expected)
    assert folded.phase is Phase.BID and expected.phase is Phase.PLAY
    assert bids_closed(folded) == expected
    if expected.to_act == seat:  # its DecisionRequest: the view past the bidding
        return bids_closed(folded)
    return folded


def play_and_fold(rules: Rules, seed: int, plain_wizards: bool = False) -> int:
    """A whole random game, each seat folding what it observes; the number
    of comparisons made."""
    rng = random.Random(seed)
    game = Game(rules, seed=seed)
    n = rules.players
    views = [first_view(rules, s, game.first_dealer) for s in range(n)]
    assert views == [game.view(s) for s in range(n)]
    seen = checks = 0
    while not game.is_over:
        actor: int | None = None
        if game.phase is Phase.DEAL:
            if plain_wizards:
                _plain_deal(game, rng)
            else:
                game.deal()
        else:
            actor = rng.choice(game.acting)
            action = rng.choice(game.legal_actions(actor))
            game.apply(actor, action)
            if isinstance(action, Bid):  # what the seat sent (no event shows a hidden bid)
                views[actor] = observe(views[actor], OwnBid(action.bid))
        events = game.events[seen:]
        seen = len(game.events)
        for s in range(n):
            for ev in events:
                seen_ev = _dealt(game, ev, s) if isinstance(ev, RoundStarted) else ev
                views[s] = observe(views[s], seen_ev)
            views[s] = _check(views[s], game, s, quiet=not events)
            checks += 1
    return checks


@pytest.mark.parametrize("name", list(EVERY_OPTION))
def test_the_fold_follows_the_core_in_every_variant(name: str) -> None:
    rules = EVERY_OPTION[name]
    for seed in range(3):
        assert play_and_fold(rules, seed) > 10


def test_plain_wizards_under_tricksy_suited() -> None:
    rules = Rules(players=3, tricksy_suited=True, hand_sizes=(4, 8, 12, 16, 20))
    for seed in range(4):
        play_and_fold(rules, seed, plain_wizards=True)


@st.composite
def any_rules(draw: st.DrawFn) -> Rules:
    """Any valid combination of the rule options."""
    players = draw(st.integers(3, 6))
    flags = {name: draw(st.booleans()) for name in FLAG_OPTIONS}
    if flags["tricksy"] and flags["tricksy_suited"]:
        flags[draw(st.sampled_from(["tricksy", "tricksy_suited"]))] = False
    if flags["reveal_bids_after_tricks"]:
        flags["hidden_bids"] = True
    sizes: tuple[int, ...] | None = None
    if flags["maximus"]:
        flags["blind_first_round"] = False
    elif draw(st.booleans()):
        most = 60 // players
        sizes = tuple(draw(st.lists(st.integers(1, most), min_size=1, max_size=5)))
        if flags["blind_first_round"]:
            sizes = (1, *sizes[1:])
    restriction = BidRestriction.NONE
    if not flags["hidden_bids"]:
        restriction = draw(st.sampled_from(list(BidRestriction)))
    return Rules(players=players, bid_restriction=restriction, hand_sizes=sizes, **flags)


@settings(max_examples=100, deadline=None)
@given(any_rules(), st.integers(0, 2**32), st.booleans())
def test_the_fold_follows_the_core_in_any_game(rules: Rules, seed: int, plain: bool) -> None:
    play_and_fold(rules, seed, plain_wizards=plain and rules.tricksy_suited)


# -- single observations -----------------------------------------------------------


def test_dealt_reads_a_view_just_after_the_deal() -> None:
    for seed in range(30):
        game = Game(Rules(players=3, blind_first_round=True), seed=seed)
        game.deal()
        for s in range(3):
            assert observe(first_view(game.rules, s), dealt(game.view(s))) == game.view(s)


def test_a_tricksy_choice_mid_trick_waits_for_the_next_trick() -> None:
    rules = Rules(players=3, tricksy=True, hand_sizes=(3,))
    game = Game(rules, seed=1)
    game.deal([[Card("W"), Card("2S"), Card("3S")], [Card("4S"), Card("5S"), Card("6S")],
               [Card("7S"), Card("8S"), Card("9S")]], Card("2H"))  # fmt: skip
    view = observe(first_view(rules, 0), dealt(game.view(0)))
    for seat, bid in ((1, 0), (2, 0), (0, 1)):
        game.bid(seat, bid)
        view = observe(view, BidMade(seat, bid))
    game.play(1, Card("4S"))
    game.play(2, Card("7S"))
    game.play(0, Card("W"))  # completes the trick: its player names trump, then the winner leads
    view = observe(view, CardPlayed(1, Card("4S")))
    view = observe(view, CardPlayed(2, Card("7S")))
    view = observe(view, CardPlayed(0, Card("W")))
    assert view.phase is Phase.CHOOSE_TRUMP and view.to_act == 0
    view = observe(view, game.events[-1])
    assert isinstance(game.events[-1], TrickWon)
    assert view == game.view(0) and view.legal_actions == tuple(game.legal_actions(0))
    game.choose_trump(0, game.view(0).legal_actions[0].suit)  # type: ignore[union-attr]
    view = observe(view, game.events[-1])
    assert isinstance(game.events[-1], TrumpChosen)
    assert view == game.view(0)


def test_own_bid_changes_nothing_when_bids_are_public() -> None:
    game = Game(Rules(players=3), seed=3)
    game.deal()
    view = game.view(0)
    assert observe(view, OwnBid(1)) == replace(view, time_left=None)


def test_not_an_observation_is_refused() -> None:
    with pytest.raises(TypeError, match="not an observation"):
        observe(first_view(Rules(players=3), 0), "bid 2")  # type: ignore[arg-type]

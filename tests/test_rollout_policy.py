"""The Monte Carlo bot's optional rollout policy that sees every hand
(wizard_bots.steer) and its inference from the cards played
(wizard_bots.inference): legal over whole games of every variant, steering
to the bid in constructed positions, deterministic."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from wizard_arena.local import play_local
from wizard_arena.rules import Card, Game, Phase, Rules, parse_cards
from wizard_bots.heuristic import HeuristicBot, choose_trump_suit
from wizard_bots.inference import play_likelihood
from wizard_bots.montecarlo import MonteCarloBot, heuristic_bid
from wizard_bots.sampling import SampledDeal, sample_deal
from wizard_bots.steer import steer_card, takes_trick

from .positions import heuristic_position
from .variants import VARIANTS


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_steer_plays_legal_cards_through_whole_games(variant: str) -> None:
    rules = VARIANTS[variant]
    game = Game(rules, seed=f"steer-{variant}")
    plays = 0
    while not game.is_over:
        if game.phase is Phase.DEAL:
            game.deal()
            continue
        seat = game.to_act if game.to_act is not None else game.acting[0]
        if game.phase is Phase.CHOOSE_TRUMP:
            game.choose_trump(seat, choose_trump_suit(game.hands[seat], game.players))
        elif game.phase is Phase.BID:
            game.bid(seat, heuristic_bid(game, seat))
        else:
            card = steer_card(game, seat)
            assert card in game.legal_cards(seat)
            game.play(seat, card)
            plays += 1
    assert len(game.results) == rules.rounds
    assert plays >= rules.players * (sum(sum(r.tricks) for r in game.results) - 1)


def _position(hands: str, bids: tuple[int, int, int], led: str) -> Game:
    """Three players, round 3, seat 0 deals and seat 1 leads ``led``; ``hands``
    are seat 0's, 1's and 2's cards separated by "|" (seat 1's includes ``led``)."""
    game = Game.at_round(Rules(players=3), 3, dealer=0, totals=[0, 0, 0])
    game.deal([parse_cards(h) for h in hands.split("|")], Card("2D"))  # trump: diamonds
    for seat in (1, 2, 0):
        game.bid(seat, bids[seat])
    game.play(1, Card(led))
    return game


def test_a_seat_that_has_its_tricks_sheds_its_strongest_losing_card() -> None:
    # seat 2 bid 0: the 12S led beats both its spades, so it dumps the 10
    game = _position("3S 4C 5C | 12S 6C 7C | 10S 5S 3C", (1, 1, 0), "12S")
    assert steer_card(game, 2) == Card("10S")
    # under a led 9S it ducks with the 5 (the 10 would take the trick)
    game = _position("3S 4C 5C | 9S 6C 7C | 10S 5S 3C", (1, 1, 0), "9S")
    assert steer_card(game, 2) == Card("5S")


def test_a_seat_short_of_its_bid_takes_the_trick_as_cheaply_as_is_safe() -> None:
    # seat 2 wants a trick; seat 0 (last, also wanting one) holds the 11S:
    # the 10S would be overtaken, the 12S takes it
    game = _position("11S 4C 5C | 9S 6C 7C | 12S 10S 3C", (1, 0, 1), "9S")
    assert not takes_trick(game, 2, Card("10S"))
    assert takes_trick(game, 2, Card("12S"))
    assert steer_card(game, 2) == Card("12S")
    # with only a low spade behind it, the 10S is enough
    game = _position("2S 4C 5C | 9S 6C 7C | 12S 10S 3C", (1, 0, 1), "9S")
    assert steer_card(game, 2) == Card("10S")
    # a seat behind that has made its bid ducks if it can: the 10S is enough again
    game = _position("11S 1S 5C | 9S 6C 7C | 12S 10S 3C", (0, 0, 1), "9S")
    assert steer_card(game, 2) == Card("10S")


def test_steer_is_deterministic() -> None:
    game = heuristic_position(seed=7, players=4, steps=40)
    assert game.phase is Phase.PLAY
    seat = game.to_act
    assert seat is not None
    card = steer_card(game, seat)
    assert all(steer_card(game.clone(), seat) == card for _ in range(3))


def test_play_inference_keeps_the_deal_the_heuristic_played_from() -> None:
    # round 8 of a heuristic game, a few tricks in: seat 0 looks back
    game = heuristic_position(seed=3, players=4, steps=120)
    assert game.phase is Phase.PLAY
    view = game.view(0)
    others = [(s, c) for s, c in view.plays if s != 0]
    assert len(others) >= 4
    stock = Counter(view.unseen_cards()) - Counter(c for h in game.hands[1:] for c in h)
    true_deal = SampledDeal(tuple(tuple(h) for h in game.hands), tuple(stock.elements()))
    assert play_likelihood(view, true_deal) == 1.0
    weights = {
        play_likelihood(view, sample_deal(view, random.Random(k)), eps=0.5) for k in range(20)
    }
    assert all(w in {0.5**m for m in range(len(others) + 1)} for w in weights)
    assert min(weights) < 1.0


def test_steer_and_play_inference_are_reproducible_and_fault_free() -> None:
    rules = Rules(players=3, hand_sizes=(3, 5))

    def run() -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
        bots = [MonteCarloBot(samples=2, seed=s, steer=3, play_eps=0.5) for s in range(2)]
        result = play_local([*bots, HeuristicBot()], rules, seed=5)
        assert result.faults == []
        return [(tuple(r.bids), tuple(r.tricks)) for r in result.results]

    assert run() == run()


def test_bad_rollout_options_are_refused() -> None:
    with pytest.raises(ValueError, match="steer"):
        MonteCarloBot(samples=1, steer=4)
    with pytest.raises(ValueError, match="play_eps"):
        MonteCarloBot(samples=1, play_eps=0.0)

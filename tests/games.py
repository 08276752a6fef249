"""Games of the rules core set up by hand for the tests: suits and bid
restrictions by short names, a deal from card texts, a round played out,
a game brought to a given round, a refusal that changes nothing."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import pytest

from wizard_arena.rules import (
    Action,
    Bid,
    BidRestriction,
    Card,
    Game,
    Phase,
    RuleError,
    Rules,
    Suit,
    default_action,
    parse_cards,
)

S, H, D, C = Suit.SPADES, Suit.HEARTS, Suit.DIAMONDS, Suit.CLUBS
NONE = BidRestriction.NONE
DNE = BidRestriction.DEALER_NOT_EQUAL
CAN = BidRestriction.CANADIAN


def deal(game: Game, hands: Sequence[str], turned: str | None) -> Game:
    game.deal([parse_cards(h) for h in hands], None if turned is None else Card(turned))
    return game


def play_round(game: Game, choose: Callable[[list[Action]], Action] = default_action) -> None:
    """Finish the current round with ``choose`` picking among the legal actions."""
    while game.phase not in (Phase.DEAL, Phase.GAME_OVER):
        assert game.to_act is not None
        game.apply(game.to_act, choose(game.legal_actions()))


def before_round(players: int, rnd: int, restriction: BidRestriction = NONE) -> Game:
    """A seeded game (first dealer 0) played by defaults until round ``rnd`` is next."""
    game = Game(Rules(players, restriction), seed=3)
    while game.round < rnd - 1:
        game.deal()
        play_round(game)
    assert game.phase is Phase.DEAL
    return game


def apply_all(game: Game, actions: Sequence[tuple[int, Action]]) -> None:
    for seat, action in actions:
        game.apply(seat, action)


def refuse(game: Game, seat: int, action: Action, error: type[RuleError]) -> RuleError:
    """Apply an action that must be refused with exactly ``error``; check nothing changed."""
    before = game.state_key()
    views = [game.view(s) for s in range(game.players)]
    with pytest.raises(RuleError) as info:
        game.apply(seat, action)
    assert type(info.value) is error, f"{type(info.value).__name__}: {info.value}"
    assert game.state_key() == before
    assert [game.view(s) for s in range(game.players)] == views
    return info.value


def round2() -> Game:
    """3 players, round 2 (2 cards), dealer 1: seat 2 bids first and leads. Trump diamonds."""
    game = before_round(3, 2)
    return deal(game, ["3H 9S", "W 12H", "5H 13C"], "7D")


def deals_played(game: Game, choose: Callable[[list[Action]], Action]) -> list[object]:
    """Play ``game`` to its end with ``choose``; each round's deal (hands, turned card)."""
    out: list[object] = []
    while not game.is_over:
        game.deal()
        out.append((game.dealt_hands, game.turned_card))
        play_round(game, choose)
    return out


def canadian_round2(round1: Sequence[str], bids1: Sequence[int]) -> Game:
    """3 players, canadian: play round 1 (dealer 0) from ``round1`` hands with
    ``bids1`` (seat 1, 2, 0 order), then deal round 2 (dealer 1)."""
    game = deal(Game(Rules(3, CAN)), round1, "J")
    b1, b2, b0 = bids1
    apply_all(game, [(1, Bid(b1)), (2, Bid(b2)), (0, Bid(b0))])
    play_round(game)
    return deal(game, ["2S 3S", "4S 5S", "6S 7S"], "8S")


def play_random(game: Game, rng: random.Random, until: int) -> None:
    """Random legal play for ``until`` decisions (dealing as needed) or to the end."""
    for _ in range(until):
        if game.is_over:
            return
        if game.phase is Phase.DEAL:
            game.deal()
            continue
        seat = game.acting[0]
        game.apply(seat, rng.choice(game.legal_actions(seat)))


def reshuffle_hidden(game: Game, seat: int, rng: random.Random) -> Game:
    """A copy of ``game`` in which the cards of every seat but ``seat`` are
    dealt out again among them (same hand sizes): only hidden state differs."""
    other = game.clone()
    others = [s for s in range(game.players) if s != seat]
    pool = [c for s in others for c in other.hands[s]]
    rng.shuffle(pool)
    for s in others:
        k = len(other.hands[s])
        other.hands[s], pool = sorted(pool[:k]), pool[k:]
    return other

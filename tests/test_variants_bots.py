"""Rule variants and the example bots: each (the search bots among
heuristic ones) plays every variant without a fault, and the Monte Carlo
sampler rebuilds the views of variant games."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from typing import Any

import pytest

from wizard_arena.rules import (
    Card,
    Game,
    Phase,
    Rules,
)
from wizard_bots.random_bot import RandomBot

from .support import scaled
from .variants import MORE_VARIANTS, VARIANTS

pytestmark = pytest.mark.timeout(180)


# -- the example bots ---------------------------------------------------------------------------


def _example_bots(kind: str, players: int) -> list[Any]:
    from wizard_bots.heuristic import HeuristicBot
    from wizard_bots.montecarlo import MonteCarloBot

    if kind == "random":
        return [RandomBot(seed=s) for s in range(players)]
    if kind == "heuristic":
        return [HeuristicBot() for _ in range(players)]
    if kind == "ismcts":  # a few iterations take its tree through every variant
        from wizard_bots.ismcts import ISMCTSBot

        return [ISMCTSBot(samples=3, seed=1), *(HeuristicBot() for _ in range(players - 1))]
    # one Monte Carlo bot among heuristic ones: one sampled deal per decision
    # is enough to take its sampling and rollouts through every variant
    return [MonteCarloBot(samples=1, seed=1), *(HeuristicBot() for _ in range(players - 1))]


@pytest.mark.parametrize("kind", ["random", "heuristic", "montecarlo", "ismcts"])
@pytest.mark.parametrize(
    "variant",
    [*VARIANTS, "maximus_tricksy_hidden", "maximus_suited_after_tricks", "blind_tricksy_canadian"],
)
def test_example_bots_play_every_variant(kind: str, variant: str) -> None:
    from wizard_arena.local import play_local

    rules = MORE_VARIANTS[variant]
    if kind == "ismcts" and not rules.maximus:
        # the variant's first rounds (its tree costs more than rollouts);
        # Maximus fixes each round's trump, so its games keep every round
        rules = replace(rules, hand_sizes=rules.round_sizes[:4])
    result = play_local(_example_bots(kind, rules.players), rules, seed=f"{kind}-{variant}")
    assert result.faults == []
    assert len(result.results) == rules.rounds


def test_heuristic_blind_bid() -> None:
    """Blind first round: the bid follows the chance that the unseen own card wins."""
    from wizard_bots.heuristic import HeuristicBot, blind_bid

    rules = Rules(players=3, blind_first_round=True)
    game = Game(rules, first_dealer=0)  # seat 1 leads, seat 2 plays last
    game.deal([[Card("J")], [Card("W")], [Card("5H")]], Card("2S"))
    game.bid(1, 1)
    # after a Wizard, nothing wins: bid 0; behind two Jesters almost anything wins
    assert blind_bid(game.view(2)) == 0 == HeuristicBot().bid(game.view(2))
    game = Game(rules, first_dealer=0)
    game.deal([[Card("J")], [Card("J")], [Card("5H")]], Card("2S"))
    game.bid(1, 0)
    assert blind_bid(game.view(2)) == 1 == HeuristicBot().bid(game.view(2))


@pytest.mark.parametrize(
    "rules",
    [
        Rules(players=3, tricksy=True),
        Rules(players=4, maximus=True, tricksy=True, hidden_bids=True),
        Rules(players=5, tricksy=True, lowest_score_deals=True, hand_sizes=(4, 8, 12)),
        Rules(players=4, tricksy_suited=True, hidden_bids=True, reveal_bids_after_tricks=True),
        Rules(players=3, tricksy_suited=True, hand_sizes=(6, 12, 20)),
    ],
    ids=[
        "tricksy",
        "maximus_tricksy_hidden",
        "tricksy_lowest_short",
        "suited_after_tricks",
        "suited_plain_wizards",
    ],
)
def test_sampled_games_rebuild_tricksy_views(rules: Rules) -> None:
    """The Monte Carlo bot's rebuilt game is in exactly the view's position,
    though the view does not say which trumps were named during play (nor,
    with reveal_bids_after_tricks, the others' bids: they are assumed)."""
    import random
    from dataclasses import replace

    from wizard_bots.montecarlo import assumed_bids
    from wizard_bots.sampling import SampledDeal, game_from_view, sample_deal

    rng = random.Random(1)
    game = Game(rules, seed=5)
    # tricksy_suited with plain Ws (an explicit deal from a deck whose Wizards
    # show no suit): their players name the trump at once
    plain_wizards = rules.tricksy_suited and rules.hand_sizes is not None
    plain = Game(replace(rules, tricksy_suited=False), seed=5) if plain_wizards else None
    checked = choices = 0
    while not game.is_over:
        if game.phase is Phase.DEAL:
            if plain is None:
                game.deal()
            else:
                plain.deal()
                game.deal(plain.dealt_hands, plain.turned_card)
                if game.round < rules.rounds:  # the next round's deal, from the plain deck
                    plain = Game.at_round(plain.rules, game.round + 1, 0, [0] * 3, seed=game.round)
            continue
        for seat in game.acting:
            view = game.view(seat)
            real = SampledDeal(tuple(tuple(h) for h in game.hands), ())
            for deal in (real, sample_deal(view, rng)):
                bids = assumed_bids(view, deal)
                if rules.reveal_bids_after_tricks and view.phase is Phase.PLAY:
                    assert bids is not None and bids[seat] == view.bids[seat]
                    with pytest.raises(ValueError, match="hides seat"):
                        game_from_view(view, deal.hands)
                rebuilt = game_from_view(view, deal.hands, bids=bids).view(seat)
                assert replace(rebuilt, results=()) == replace(view, results=())
                checked += 1
            choices += view.phase is Phase.CHOOSE_TRUMP and bool(view.plays)
        seat = rng.choice(game.acting)
        game.apply(seat, rng.choice(game.legal_actions(seat)))
    assert checked > 100
    assert bool(choices) == (plain_wizards or rules.tricksy)


@pytest.mark.parametrize("command", ["serve", "play", "check", "tournament"])
def test_help_names_the_dealers_restriction_as_players_do(command: str) -> None:
    """The CLI help calls the bid restrictions by the names players use, and
    offers the new rule forms with their source tradition."""
    proc = subprocess.run(
        [sys.executable, "-m", "wizard_arena.cli", command, "--help"],
        capture_output=True,
        text=True,
        timeout=scaled(60),
        env={**os.environ, "COLUMNS": "200"},
    )
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert '"+/-" rule: the sum of the bids may not equal the tricks' in text
    assert "screw the dealer" in text and "the Canadian rule of Wizard tournaments" in text
    for flag, tradition in [
        ("--reveal-bids-after-tricks", "Hungarian"),
        ("--tricksy-suited", "Italian"),
        ("--first-dealer-by-draw", "Finnish"),
    ]:
        assert flag in text and tradition in text

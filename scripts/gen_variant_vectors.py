#!/usr/bin/env python3
"""Generate whole-game conformance vectors for the rule variants.

    python scripts/gen_variant_vectors.py > tests/vectors/variants-games-v1.json

Each case is a complete game (seeded deals, seeded random legal play) played
by this implementation's rules core, with the legal set stated on every
fourth play and a refused action (a card of another seat, or an out-of-range
bid) now and then. They are regression vectors: the hand-written cases in
``tests/vectors/variants-v1.json`` state the variants' semantics; these check
that long games stay consistent. Under ``first_dealer_by_draw`` the case
holds the game's seeded ``draw`` and the seat it gives as ``first_dealer``.
New variants are appended (each case's seed is its place in the list), so the
cases already published do not change.
"""

from __future__ import annotations

import json
import random
import sys

from wizard_arena.rules import Bid, BidRestriction, ChooseTrump, Game, Phase, Play, Rules

VARIANTS: list[tuple[str, Rules]] = [
    ("maximus-3", Rules(players=3, maximus=True)),
    ("maximus-6-tricksy", Rules(players=6, maximus=True, tricksy=True)),
    ("hidden-bids-4", Rules(players=4, hidden_bids=True)),
    (
        "blind-first-round-5-canadian",
        Rules(players=5, blind_first_round=True, bid_restriction=BidRestriction.CANADIAN),
    ),
    ("tricksy-4", Rules(players=4, tricksy=True)),
    ("lowest-score-deals-6", Rules(players=6, lowest_score_deals=True)),
    ("short-game-4", Rules(players=4, hand_sizes=(2, 4, 6, 8, 10, 12, 14, 15))),
    (
        "all-compatible-3",
        Rules(
            players=3,
            hidden_bids=True,
            blind_first_round=True,
            tricksy=True,
            lowest_score_deals=True,
            hand_sizes=(1, 3, 5, 20),
        ),
    ),
    ("tricksy-suited-4", Rules(players=4, tricksy_suited=True)),
    (
        "hidden-bids-after-tricks-5",
        Rules(players=5, hidden_bids=True, reveal_bids_after_tricks=True),
    ),
    (
        "first-dealer-by-draw-6-dealer-not-equal",
        Rules(
            players=6,
            first_dealer_by_draw=True,
            bid_restriction=BidRestriction.DEALER_NOT_EQUAL,
        ),
    ),
    (
        "maximus-suited-draw-4",
        Rules(players=4, maximus=True, tricksy_suited=True, first_dealer_by_draw=True),
    ),
    (
        "new-forms-compatible-3",
        Rules(
            players=3,
            hidden_bids=True,
            reveal_bids_after_tricks=True,
            blind_first_round=True,
            tricksy_suited=True,
            lowest_score_deals=True,
            first_dealer_by_draw=True,
            hand_sizes=(1, 4, 9, 20),
        ),
    ),
]


def text(suit: object) -> str | None:
    return None if suit is None else suit.letter  # type: ignore[attr-defined]


def case(name: str, rules: Rules, seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    first = rng.randrange(rules.players)
    if rules.first_dealer_by_draw:  # drawn with the game's RNG instead
        game = Game(rules, seed=seed)
        first = game.first_dealer
    else:
        game = Game(rules, seed=seed, first_dealer=first)
    rounds = []
    plays = 0
    while not game.is_over:
        game.deal()
        rnd: dict[str, object] = {
            "round": game.round,
            "dealer": game.dealer,
            "hands": [[c.text for c in h] for h in game.dealt_hands],
            "trump_card": game.turned_card.text if game.turned_card is not None else None,
        }
        actions: list[dict[str, object]] = []
        while game.phase not in (Phase.DEAL, Phase.GAME_OVER):
            seat = rng.choice(game.acting)
            legal = game.legal_actions(seat)
            action = rng.choice(legal)
            if isinstance(action, Play):
                plays += 1
                if plays % 9 == 0:
                    other = (seat + 1) % rules.players
                    foreign = [c for c in game.hands[other] if c not in game.hands[seat]]
                    if foreign:
                        actions.append({"seat": seat, "play": foreign[0].text, "reject": True})
                entry: dict[str, object] = {"seat": seat, "play": action.card.text}
                if plays % 4 == 0:
                    entry["legal"] = [c.text for c in game.legal_cards(seat)]
            elif isinstance(action, Bid):
                if rng.random() < 0.1:
                    actions.append({"seat": seat, "bid": game.cards + 1, "reject": True})
                entry = {"seat": seat, "bid": action.bid}
            else:
                assert isinstance(action, ChooseTrump)
                entry = {"seat": seat, "trump": action.suit.letter}
            actions.append(entry)
            game.apply(seat, action)
        r = game.results[-1]
        rnd["actions"] = actions
        rnd["expect"] = {
            "trump": text(game.round_trump),
            "trumps": [text(t) for t in game.trick_trumps],
            "bids": list(r.bids),
            "trick_winners": [t.winner for t in game.tricks],
            "tricks": list(r.tricks),
            "points": list(r.points),
            "totals": list(r.totals),
        }
        rounds.append(rnd)
    winners = [s for s, rank in enumerate(game.ranks) if rank == 1]
    out: dict[str, object] = {
        "id": f"generated/{name}",
        "kind": "game",
        "note": f"a whole game under {rules.describe()} (generated by this implementation)",
        "rules": rules.to_dict(),
        "first_dealer": first,
    }
    if game.draw:
        out["draw"] = [[c.text if c is not None else None for c in row] for row in game.draw]
    out["rounds"] = rounds
    out["expect"] = {"totals": list(game.totals), "winners": winners}
    return out


def main() -> None:
    cases = [case(name, rules, 1000 + i) for i, (name, rules) in enumerate(VARIANTS)]
    json.dump(
        {"format": "wizard-conformance/1", "cases": cases},
        sys.stdout,
        indent=None,
        separators=(",", ":"),
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

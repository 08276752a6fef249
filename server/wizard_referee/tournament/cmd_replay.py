"""``wizard-arena replay GAME_ID --database DB``: print a recorded game trick by trick."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wizard_arena.rules import Bid, Card, ChooseTrump, Game, Phase, RuleError, Rules, Suit, Trick
from wizard_referee.referee.record import GameRecord, parse_action, verify_record
from wizard_referee.tournament.store import ResultsStore, StoreError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("game_id", help="game id (a unique prefix is enough)")
    parser.add_argument(
        "--database",
        "-d",
        default="tournament.sqlite",
        type=Path,
        help="results database (default tournament.sqlite)",
    )
    parser.add_argument(
        "--verify",
        action="store_true",
        help="re-run the game through the rules core and report differences",
    )


def _suit(suit: Suit | None) -> str:
    return "none" if suit is None else suit.letter


def render(record: GameRecord) -> str:
    """The game as text: the draw for the first dealer (if any), deals, trump
    (and its changes with tricksy or tricksy_suited), bids, every trick with
    its winner, scores. The cards of a blind first round, played by the rules
    themselves after the last bid, are shown as such."""
    rules = Rules.from_dict(record.rules)
    names = record.names
    lines = [
        f"game {record.game_id}: {rules.describe()}, status {record.status}",
        "seats: " + ", ".join(f"{s}={n}" for s, n in enumerate(names)),
    ]
    if record.tags:
        lines.append("tags: " + ", ".join(f"{k}={v}" for k, v in sorted(record.tags.items())))
    game = Game(rules, first_dealer=record.first_dealer, draw=record.draw_cards())
    n = rules.players
    if game.draw:
        lines.append(_draw_line(game.draw, names, game.first_dealer))
    for rr in record.rounds:
        hands = [[Card(c) for c in h] for h in rr.hands]
        turned = Card(rr.turned_card) if rr.turned_card else None
        game.deal(hands, turned)
        blind = game.blind
        lines.append("")
        head = f"round {rr.round}: dealer {names[rr.dealer]}, turned {rr.turned_card or '-'}"
        if game.phase is not Phase.CHOOSE_TRUMP:
            head += f", trump {_suit(game.trump)}"
        if blind:
            head += " (blind: each player sees the others' cards, not their own)"
        lines.append(head)
        for s in range(n):
            lines.append(f"  {names[s]:<16} {' '.join(rr.hands[s])}")
        shown = 0
        for mv in rr.moves:
            action = parse_action(mv.action)
            during_play = bool(game.trick or game.tricks)
            game.apply(mv.seat, action)
            flag = f"  [{mv.fault}]" if mv.fault else ""
            if isinstance(action, ChooseTrump):
                if during_play:  # tricksy: a Wizard's player names the next trump
                    when = "at once" if rules.tricksy_suited else "from the next trick"
                    lines.append(
                        f"  {names[mv.seat]} names trump {action.suit.letter} {when}{flag}"
                    )
                else:
                    lines.append(f"  {names[mv.seat]} chooses trump {action.suit.letter}{flag}")
            elif isinstance(action, Bid):
                hidden = " (hidden until the tricks are played)" * rules.reveal_bids_after_tricks
                lines.append(f"  {names[mv.seat]} bids {action.bid}{hidden}{flag}")
            while shown < len(game.tricks):
                t: Trick = game.tricks[shown]
                shown += 1
                cards = ", ".join(
                    f"{names[s]} {c.text}" for s, c in zip(t.seats(n), t.cards, strict=True)
                )
                note = ""
                if (rules.tricksy or rules.tricksy_suited) and shown <= len(game.trick_trumps):
                    note += f" (trump {_suit(game.trick_trumps[shown - 1])})"
                if blind:
                    note += " (blind: played by the rules after the bids)"
                lines.append(f"  trick {shown}: {cards} -> {names[t.winner]}{note}")
        if game.results and game.results[-1].round == rr.round:
            r = game.results[-1]
            for s in range(n):
                lines.append(
                    f"  {names[s]:<16} bid {r.bids[s]:>2} took {r.tricks[s]:>2} "
                    f"{r.points[s]:+4d}  total {r.totals[s]:>5}"
                )
    if record.status == "finished":
        lines.append("")
        lines.append(
            "final: "
            + ", ".join(f"{names[s]} {record.totals[s]} (rank {record.ranks[s]})" for s in range(n))
        )
    for s, faults in enumerate(record.faults):
        if faults:
            lines.append(
                f"faults {names[s]}: "
                + ", ".join(f"{code} x{count}" for code, count in sorted(faults.items()))
            )
    return "\n".join(lines)


def _draw_line(draw: tuple[tuple[Card | None, ...], ...], names: list[str], dealer: int) -> str:
    """``first dealer by draw: a 9S, b 13H, c 13C; again b W, c 4D -> b``."""
    rows = [
        ", ".join(f"{names[s]} {c.text}" for s, c in enumerate(row) if c is not None)
        for row in draw
    ]
    return f"first dealer by draw: {'; again '.join(rows)} -> {names[dealer]}"


def run(args: argparse.Namespace) -> int:
    if not args.database.exists():
        print(f"error: no database {args.database}", file=sys.stderr)
        return 2
    try:
        store = ResultsStore(args.database, create=False)
    except StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    with store:
        ids = store.find_game_ids(args.game_id)
        exact = [i for i in ids if i == args.game_id]
        if exact:
            ids = exact
        if not ids:
            print(f"error: no recorded game {args.game_id!r} in {args.database}", file=sys.stderr)
            return 2
        if len(ids) > 1:
            print(
                f"error: {args.game_id!r} matches {len(ids)} games: {', '.join(ids[:10])}",
                file=sys.stderr,
            )
            return 2
        record = store.record(ids[0])
    assert record is not None
    if args.verify:
        problems = verify_record(record)
        for p in problems:
            print(f"DIFFERENCE: {p}")
        print(
            f"{record.game_id}: "
            + ("verified, no difference" if not problems else f"{len(problems)} difference(s)")
        )
        return 1 if problems else 0
    try:
        text = render(record)
    except (RuleError, ValueError) as e:
        print(
            f"error: {record.game_id} cannot be replayed: {e} (--verify lists the differences)",
            file=sys.stderr,
        )
        return 1
    print(text)
    return 0

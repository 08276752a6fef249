"""Rule variants end to end: the referee over real gRPC on loopback, the
Python SDK, the refusal of bots that cannot play a variant, records, replay
and tournaments.

For every variant a whole game is played by scripted raw clients and one
SDK bot (in strict mode, so any difference between the SDK's own model of
the game and the referee's views fails the game). Each raw client's messages
go through an information check: no card of another seat's hand is seen
before it is played, except the others' cards of a blind first round (shown
by the rules), and in that round a seat's own card is not seen until it is
played. With hidden bids no message reveals another seat's bid before all
are in (with reveal_bids_after_tricks: before the round's last trick is
complete), and every seat is asked at once. With tricksy_suited the Wizards'
printed suits are information too: a suited Wizard is seen only when dealt
to the seat, turned or played.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio

from wizard_arena.bot import GameInfo
from wizard_arena.client import RULE_OPTIONS, RunResult, VersionMismatchError, run_bot, server_info
from wizard_arena.protocol.messages import DecisionRequest, GameEnd, RoundStart, TableEvent
from wizard_arena.rules import (
    SUITED_WIZARDS,
    BidMade,
    BidRestriction,
    Card,
    CardPlayed,
    Game,
    Phase,
    RoundResult,
    RoundScored,
    Rules,
    SeatView,
    Suit,
    Trick,
    TrickWon,
    TrumpChosen,
    bids_hidden,
    dealer_of_draw,
)
from wizard_arena.rules.laws import MAXIMUS_TRUMPS, VARIANT_OPTIONS
from wizard_bots.random_bot import RandomBot
from wizard_referee.referee import cmd_serve
from wizard_referee.referee.arena import ArenaConfig, missing_options
from wizard_referee.referee.record import GameRecord, parse_action, verify_record
from wizard_referee.tournament import cmd_replay
from wizard_referee.tournament.cmd_replay import render
from wizard_referee.tournament.runner import TournamentConfig, TournamentError, run_tournament
from wizard_referee.tournament.store import ResultsStore

from .conftest import ROOT
from .support import RawBot, ServerThread, run_bots
from .test_server import _cards_in

pytestmark = pytest.mark.timeout(180)

#: A table for each variant, and one with every variant that combines.
VARIANTS: dict[str, Rules] = {
    "hidden_bids": Rules(players=4, hidden_bids=True),
    "blind_first_round": Rules(players=3, blind_first_round=True),
    "maximus": Rules(players=5, maximus=True),
    "tricksy": Rules(players=3, tricksy=True),
    "lowest_score_deals": Rules(players=6, lowest_score_deals=True),
    "round_sizes": Rules(players=4, hand_sizes=(3, 1, 4, 1, 5, 9)),
    "combined": Rules(
        players=3,
        hidden_bids=True,
        blind_first_round=True,
        tricksy=True,
        lowest_score_deals=True,
        hand_sizes=(1, 5, 9, 13),
    ),
    "tricksy_suited": Rules(players=4, tricksy_suited=True),
    "reveal_bids_after_tricks": Rules(players=4, hidden_bids=True, reveal_bids_after_tricks=True),
    "first_dealer_by_draw": Rules(players=5, first_dealer_by_draw=True),
    "combined_forms": Rules(
        players=3,
        hidden_bids=True,
        reveal_bids_after_tricks=True,
        blind_first_round=True,
        tricksy_suited=True,
        lowest_score_deals=True,
        first_dealer_by_draw=True,
        hand_sizes=(1, 5, 9, 13),
    ),
}

#: Seconds a seat waits for the others at a hidden bid (they are asked at once).
BARRIER_WAIT = 10.0


@pytest.fixture
def serve() -> Iterator[Any]:
    """``serve(**config)`` starts a server for the test; all are stopped afterwards."""
    servers: list[ServerThread] = []

    def start(**kw: Any) -> ServerThread:
        kw.setdefault("move_time", 15.0)
        kw.setdefault("shutdown_grace", 0.2)
        server = ServerThread(ArenaConfig(**kw)).__enter__()
        servers.append(server)
        return server

    yield start
    for s in servers:
        s.stop()


# -- what the rules did, from the record ----------------------------------------------------


def _played_by_round(record: GameRecord) -> list[list[tuple[int, Card]]]:
    """The cards played in each round, in order, as the rules core replays the
    record (the referee's own plays of a blind round included)."""
    game = Game(
        Rules.from_dict(record.rules), first_dealer=record.first_dealer, draw=record.draw_cards()
    )
    out = []
    for rr in record.rounds:
        start = len(game.events)
        game.deal(
            [[Card(c) for c in h] for h in rr.hands],
            Card(rr.turned_card) if rr.turned_card else None,
        )
        for mv in rr.moves:
            game.apply(mv.seat, parse_action(mv.action))
        out.append([(e.seat, e.card) for e in game.events[start:] if isinstance(e, CardPlayed)])
    return out


def _game_messages(bot: RawBot, game_id: str) -> list[Any]:
    """The received items (raw and decoded) of one game, GameStarted to GameOver."""
    out: list[Any] = []
    inside = False
    for r in bot.received:
        if isinstance(r.msg, GameInfo):
            inside = r.msg.game_id == game_id
        if inside:
            out.append(r)
            if isinstance(r.msg, GameEnd):
                break
    return out


def check_variant_information(bot: RawBot, record: GameRecord) -> int:
    """Fail if ``bot`` saw a card it may not see; return the cards checked.

    A seat may see its own deal, the turned card, the cards played, and in
    a blind first round every other seat's card, but not its own until it is
    played. Hands, views and plays must match what the rules did."""
    rules = Rules.from_dict(record.rules)
    plays = _played_by_round(record)
    seat: int | None = None
    own: Counter[Card] = Counter()
    visible: set[Card] = set()
    others: tuple[tuple[Card, ...], ...] = ()
    turned: Card | None = None
    played: list[tuple[int, Card]] = []
    expected: list[tuple[int, Card]] = []
    blind = False
    round_no = 0
    checked = 0
    for item in _game_messages(bot, record.game_id):
        msg = item.msg
        assert msg is not None, f"{bot.name}: undecodable message ({item.error})"
        if isinstance(msg, GameInfo):
            seat = msg.seat
            continue
        assert seat is not None
        if isinstance(msg, RoundStart):
            round_no = msg.round
            rr = record.rounds[round_no - 1]
            dealt = [tuple(Card(c) for c in h) for h in rr.hands]
            blind = rules.blind_first_round and round_no == 1
            if blind:
                others = tuple(() if s == seat else h for s, h in enumerate(dealt))
                assert msg.hand == (), f"round 1 is blind: {bot.name} was shown its own card"
                assert msg.others_hands == others
                own = Counter()
                visible = {c for h in others for c in h}
            else:
                assert msg.hand == dealt[seat], f"round {round_no}: hand differs from the deal"
                assert msg.others_hands == ()
                own = Counter(dealt[seat])
                visible = set()
            turned = Card(rr.turned_card) if rr.turned_card else None
            assert msg.turned_card == turned
            played = []
            expected = plays[round_no - 1]
        elif isinstance(msg, TableEvent) and isinstance(msg.event, CardPlayed):
            played.append((msg.event.seat, msg.event.card))
            assert played == expected[: len(played)], "plays differ from the rules' replay"
        allowed = set(own) | visible | {c for _, c in played}
        if turned is not None:
            allowed.add(turned)
        for where, card in _cards_in(item.raw):
            assert card in allowed, (
                f"{bot.name} (seat {seat}) saw {card} in {where} of {type(msg).__name__} "
                f"in round {round_no} before it was played"
            )
            checked += 1
        if isinstance(msg, DecisionRequest):
            v = msg.view
            if blind:
                assert v.hand == () and v.others_hands == others
                assert v.phase is not Phase.PLAY, "nobody chooses a card in the blind round"
            else:
                mine = own - Counter(c for s, c in played if s == seat)
                assert Counter(v.hand) == mine, "the view's hand is not the seat's own hand"
                assert v.others_hands == ()
            assert [c for _, c in v.plays] == [c for _, c in played]
            if bids_hidden(rules, v.phase):
                hidden = [b for s, b in enumerate(v.bids) if s != seat]
                assert hidden == [None] * len(hidden), f"bids shown before they are revealed: {v}"
            if rules.tricksy_suited and v.phase is Phase.PLAY:
                printed = [c.wizard_suit for _, c in v.plays if c.wizard_suit is not None]
                if printed:  # the last suited Wizard played made its suit trump at once
                    assert v.trump is printed[-1], f"trump {v.trump} after {v.plays}"
    assert checked > 0
    return checked


def check_hidden_bids(bot: RawBot, record: GameRecord) -> None:
    """Each round: this seat was asked for its bid before any bid was shown;
    then every BidMade arrived together (nothing in between), in bidding order
    (with reveal_bids_after_tricks: after the round's last trick, before its
    score)."""
    rules = Rules.from_dict(record.rules)
    n = rules.players
    rounds: list[list[Any]] = []
    for item in _game_messages(bot, record.game_id):
        if isinstance(item.msg, RoundStart):
            rounds.append([])
        elif rounds:
            rounds[-1].append(item.msg)
    assert len(rounds) == len(record.rounds)
    for r, msgs in enumerate(rounds):
        made = [
            i
            for i, m in enumerate(msgs)
            if isinstance(m, TableEvent) and isinstance(m.event, BidMade)
        ]
        assert made == list(range(made[0], made[0] + n)), (
            f"round {r + 1}: bids not revealed together"
        )
        asked = [
            i
            for i, m in enumerate(msgs)
            if isinstance(m, DecisionRequest) and m.view.phase is Phase.BID
        ]
        assert len(asked) == 1 and asked[0] < made[0]
        dealer = record.rounds[r].dealer
        assert [msgs[i].event.seat for i in made] == [(dealer + 1 + k) % n for k in range(n)]
        tricks = [
            i
            for i, m in enumerate(msgs)
            if isinstance(m, TableEvent) and isinstance(m.event, TrickWon)
        ]
        scored = [
            i
            for i, m in enumerate(msgs)
            if isinstance(m, TableEvent) and isinstance(m.event, RoundScored)
        ]
        assert len(tricks) == len(record.rounds[r].hands[0]) and len(scored) == 1
        if rules.reveal_bids_after_tricks:
            early = f"round {r + 1}: bids revealed early"
            assert tricks[-1] < made[0] and made[-1] < scored[0], early
        else:
            assert made[-1] < tricks[0]


# -- bots -----------------------------------------------------------------------------------


class VariantBot(RandomBot):
    """A random SDK bot that checks what the SDK gives it under the variants."""

    def __init__(self, seed: int, barrier: threading.Barrier | None = None) -> None:
        super().__init__(seed)
        self.barrier = barrier
        self.problems: list[str] = []
        self.blind_bids = 0
        self.mid_play_choices = 0
        self.tricks = 0
        self.rules: Rules | None = None

    def on_game_start(self, info: GameInfo) -> None:
        self.rules = info.rules

    def bid(self, view: SeatView) -> int:
        if self.barrier is not None:
            self.barrier.wait(BARRIER_WAIT)  # every seat is asked at once
        if view.rules.hidden_bids and any(
            b is not None for s, b in enumerate(view.bids) if s != view.seat
        ):
            self.problems.append(f"hidden bids shown: {view.bids}")
        if view.others_hands:
            self.blind_bids += 1
            if view.hand or view.others_hands[view.seat] or view.round != 1:
                self.problems.append(f"blind view {view}")
        return super().bid(view)

    def choose_trump(self, view: SeatView) -> Suit:
        if view.trick or view.tricks:
            self.mid_play_choices += 1
            if view.phase is not Phase.CHOOSE_TRUMP or view.to_act != view.seat:
                self.problems.append(f"mid-play choice view {view}")
        return super().choose_trump(view)

    def play(self, view: SeatView) -> Card:
        if bids_hidden(view.rules, view.phase) and any(
            b is not None for s, b in enumerate(view.bids) if s != view.seat
        ):
            self.problems.append(f"hidden bids shown in play: {view.bids}")
        if view.rules.reveal_bids_after_tricks and view.bids[view.seat] is None:
            self.problems.append(f"own bid missing in play: {view.bids}")
        return super().play(view)

    def on_trick_end(self, view: SeatView, trick: Trick) -> None:
        self.tricks += 1
        if view.tricks[-1] != trick or view.trick or view.others_hands:
            self.problems.append(f"trick view {view} for {trick}")

    def on_round_end(self, view: SeatView, result: RoundResult) -> None:
        if view.results[-1] != result or view.totals != result.totals:
            self.problems.append(f"round view for {result}")


def _barrier_hook(barrier: threading.Barrier) -> Any:
    """A raw bot's request hook: at a bid, wait until every seat has its request."""

    def hook(bot: RawBot, req: DecisionRequest) -> bool:
        if req.view.phase is Phase.BID:
            barrier.wait(BARRIER_WAIT)
        return False

    return hook


# -- a whole game under each variant ----------------------------------------------------------


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_full_game_under_variant(serve: Any, variant: str) -> None:
    rules = VARIANTS[variant]
    n = rules.players
    server = serve(rules=rules, seed=7)
    barrier = threading.Barrier(n) if rules.hidden_bids else None
    sdk_bot = VariantBot(seed=1, barrier=barrier)
    box: list[RunResult | BaseException] = []

    def sdk() -> None:
        try:
            box.append(
                run_bot(sdk_bot, server.address, name="sdk", games=1, strict=True, reconnect=False)
            )
        except BaseException as e:
            box.append(e)

    sdk_thread = threading.Thread(target=sdk, daemon=True)
    sdk_thread.start()
    raws = [
        RawBot(
            server.address,
            f"{variant}-{i}",
            rule_options=VARIANT_OPTIONS,
            on_request=_barrier_hook(barrier) if barrier is not None else None,
        )
        for i in range(n - 1)
    ]
    run_bots(raws, timeout=150)
    sdk_thread.join(60)
    assert box, "the SDK bot did not finish"
    result = box[0]
    if isinstance(result, BaseException):
        raise result
    for b in raws:
        assert b.status == grpc.StatusCode.OK, (b.status, b.details)
        assert b.rejections == []

    gid = raws[0].messages(GameInfo)[0].game_id
    rec = next(r for r in server.records() if r.game_id == gid)
    assert rec.status == "finished", rec.error
    assert rec.rules == rules.to_dict()
    assert Rules.from_dict(rec.rules) == rules
    assert verify_record(rec) == []
    assert rec.faulted_seats == []
    assert len(rec.rounds) == rules.rounds
    assert GameRecord.from_json(rec.to_json()) == rec

    # the SDK: its model never differed from the referee (strict), no fault
    assert len(result.games) == 1 and result.games[0].game_id == gid
    assert (result.bot_errors, result.rejections, result.mismatches) == (0, 0, 0)
    assert result.faults == []
    assert sdk_bot.problems == []
    assert sdk_bot.tricks == sum(rules.round_sizes)
    assert list(result.games[0].totals) == rec.totals

    # every seat's messages
    for b in raws:
        seat = b.messages(GameInfo)[0].seat
        assert b.messages(GameInfo)[0].rules == rules
        check_variant_information(b, rec)
        moves = [m for rr in rec.rounds for m in rr.moves if m.seat == seat]
        assert len([r for r in b.requests if r.game_id == gid]) == len(moves)
        if rules.hidden_bids:
            check_hidden_bids(b, rec)
        starts = [m for m in b.round_starts if m.game_id == gid]
        assert [m.cards for m in starts] == list(rules.round_sizes)
        if rules.maximus:
            assert [m.trump for m in starts] == list(MAXIMUS_TRUMPS)
            assert all(m.turned_card is None and not m.trump_pending for m in starts)

    text = render(rec)
    assert rules.describe() in text and "final:" in text
    if rules.blind_first_round:
        # nobody plays a card of the blind round: the rules do, after the last bid
        assert not any(m.action.startswith("play") for m in rec.rounds[0].moves)
        assert sdk_bot.blind_bids == 1
        assert "(blind: played by the rules after the bids)" in text.split("round 2:")[0]
    if rules.lowest_score_deals:
        for r in range(1, len(rec.rounds)):
            totals = rec.results[r - 1][3]
            assert totals[rec.rounds[r].dealer] == min(totals)
    choices = [
        req
        for b in raws
        for req in b.requests
        if req.view.phase is Phase.CHOOSE_TRUMP and (req.view.trick or req.view.tricks)
    ]
    if rules.first_dealer_by_draw:
        drawn = rec.draw_cards()
        assert drawn and dealer_of_draw(n, drawn) == rec.first_dealer == rec.rounds[0].dealer
        again = Game(rules, seed=rec.seed)  # the draw comes from the game's deal seed
        assert [list(row) for row in again.draw] == drawn
        assert text.splitlines()[2 + bool(rec.tags)].startswith("first dealer by draw: ")
    else:
        assert rec.draw == [] and rec.first_dealer == 0
    if rules.tricksy_suited:
        dealt = Counter(Card(c) for rr in rec.rounds for h in rr.hands for c in h)
        assert not dealt[Card("W")] and any(dealt[w] for w in SUITED_WIZARDS)
    if not rules.tricksy:
        assert choices == [] and sdk_bot.mid_play_choices == 0
    elif variant == "tricksy":  # a whole game: Wizards are played before the last trick
        assert choices and sdk_bot.mid_play_choices
        assert "from the next trick" in text
        named = [m.event for m in raws[0].messages(TableEvent) if isinstance(m.event, TrumpChosen)]
        assert len(named) >= len(choices) + sdk_bot.mid_play_choices
        assert any(req.view.next_trump is not None for b in raws for req in b.requests)


def test_information_check_catches_a_blind_leak(serve: Any) -> None:
    """The check above does fail when a seat is shown its own blind card."""
    rules = Rules(players=3, blind_first_round=True, hand_sizes=(1, 2))
    server = serve(rules=rules, seed=4)
    bots = run_bots(
        [RawBot(server.address, f"b{i}", rule_options=VARIANT_OPTIONS) for i in range(3)]
    )
    gid = bots[0].messages(GameInfo)[0].game_id
    rec = next(r for r in server.records() if r.game_id == gid)
    b = bots[0]
    check_variant_information(b, rec)
    seat = b.messages(GameInfo)[0].seat
    mine = Card(rec.rounds[0].hands[seat][0])
    first = next(i for i, r in enumerate(b.received) if isinstance(r.msg, RoundStart))
    fake = type(b.received[first].raw)()
    fake.CopyFrom(b.received[first].raw)
    fake.round_started.others_hands[seat].cards.add().CopyFrom(_card_pb(mine))
    b.received[first].raw = fake
    if mine.suit is not None:  # a Wizard or Jester may be visible in another hand too
        with pytest.raises(AssertionError, match="before it was played"):
            check_variant_information(b, rec)


def test_information_checks_catch_early_bids_and_suited_wizards(serve: Any) -> None:
    """The checks above fail when a bid hidden until the tricks are played is
    shown early (in a view, or a BidMade before the last trick) and when a
    suited Wizard in another seat's hand is named."""
    from dataclasses import replace as copy_with

    from wizard_arena.protocol import wire
    rules = Rules(
        players=3,
        hidden_bids=True,
        reveal_bids_after_tricks=True,
        tricksy_suited=True,
        hand_sizes=(2, 12),
    )
    server = serve(rules=rules, seed=4)
    bots = run_bots(
        [RawBot(server.address, f"b{i}", rule_options=VARIANT_OPTIONS) for i in range(3)]
    )
    gid = bots[0].messages(GameInfo)[0].game_id
    rec = next(r for r in server.records() if r.game_id == gid)
    b = bots[0]
    seat = b.messages(GameInfo)[0].seat
    check_variant_information(b, rec)
    check_hidden_bids(b, rec)
    received = list(b.received)

    # a view during play that shows another seat's bid
    i = next(
        k
        for k, r in enumerate(received)
        if isinstance(r.msg, DecisionRequest) and r.msg.view.phase is Phase.PLAY
    )
    raw = type(received[i].raw)()
    raw.CopyFrom(received[i].raw)
    raw.decision_request.view.bids[(seat + 1) % 3] = 0
    b.received[i] = copy_with(received[i], raw=raw, msg=wire.decode_server(raw))
    with pytest.raises(AssertionError, match="bids shown before they are revealed"):
        check_variant_information(b, rec)
    b.received = list(received)

    # the BidMade messages of round 1 moved before its last trick
    made = [
        k
        for k, r in enumerate(received)
        if isinstance(r.msg, TableEvent) and isinstance(r.msg.event, BidMade)
    ][:3]
    last_trick = max(
        k
        for k, r in enumerate(received[: made[0]])
        if isinstance(r.msg, TableEvent) and isinstance(r.msg.event, TrickWon)
    )
    moved = [r for k, r in enumerate(received) if k not in made]
    at = moved.index(received[last_trick])
    b.received = [*moved[:at], *(received[k] for k in made), *moved[at:]]
    with pytest.raises(AssertionError, match="bids revealed early"):
        check_hidden_bids(b, rec)
    b.received = list(received)

    # a suited Wizard of another seat's hand named in a message before it is played
    other = next(
        (r, Card(c))
        for r, rr in enumerate(rec.rounds)
        for s, h in enumerate(rr.hands)
        if s != seat
        for c in h
        if Card(c).wizard_suit is not None
    )
    starts = [k for k, r in enumerate(received) if isinstance(r.msg, RoundStart)]
    k = starts[other[0]]
    raw = type(received[k].raw)()
    raw.CopyFrom(received[k].raw)
    raw.round_started.game_id = f"{gid} {other[1].text}"
    b.received[k] = copy_with(received[k], raw=raw)
    with pytest.raises(AssertionError, match=f"saw {other[1].text} .* before it was played"):
        check_variant_information(b, rec)


def _card_pb(card: Card) -> Any:
    from wizard_arena.protocol import wire
    return wire.card_to_pb(card)


def test_hidden_bids_time_out_per_seat(serve: Any) -> None:
    """A seat that never bids is timed out on its own; the others' bids stand."""
    rules = Rules(players=3, hidden_bids=True, hand_sizes=(1, 2))
    server = serve(rules=rules, move_time=1.5, seed=2)

    def silent(bot: RawBot, req: DecisionRequest) -> bool:
        return req.view.phase is Phase.BID  # never answer a bid

    bots = [RawBot(server.address, f"h{i}", rule_options=VARIANT_OPTIONS) for i in range(2)]
    bots.append(RawBot(server.address, "silent", rule_options=VARIANT_OPTIONS, on_request=silent))
    run_bots(bots, timeout=60)
    gid = bots[0].messages(GameInfo)[0].game_id
    rec = next(r for r in server.records() if r.game_id == gid)
    assert rec.status == "finished" and verify_record(rec) == []
    seat = rec.names.index("silent")
    assert rec.faults[seat] == {"timeout": 2}
    assert [f for s, f in enumerate(rec.faults) if s != seat] == [{}, {}]
    for rr in rec.rounds:
        bids = [m for m in rr.moves if m.action.startswith("bid")]
        assert sorted(m.seat for m in bids) == [0, 1, 2]
        assert [m.fault for m in bids if m.seat == seat] == ["timeout"]
        assert all(m.fault is None for m in bids if m.seat != seat)
    assert all(res[0][seat] == 0 for res in rec.results)  # the default bid
    for b in bots:
        check_hidden_bids(b, rec)


# -- bots that cannot play the variant -----------------------------------------------------------


def test_bot_without_rule_options_is_refused(serve: Any) -> None:
    rules = Rules(players=3, tricksy=True, hidden_bids=True)
    server = serve(rules=rules)
    base = RawBot(server.address, "base-game").start().join(20)
    assert base.status == grpc.StatusCode.FAILED_PRECONDITION
    assert "hidden_bids, tricksy" in base.details
    assert "rule_options" in base.details and "none" in base.details
    assert base.messages() == []  # not even a Welcome
    partial = RawBot(server.address, "partial", rule_options=("tricksy", "maximus"))
    partial.start().join(20)
    assert partial.status == grpc.StatusCode.FAILED_PRECONDITION
    assert "rule option(s) hidden_bids " in partial.details

    with pytest.raises(VersionMismatchError, match="hidden_bids, tricksy") as err:
        run_bot(RandomBot(), server.address, games=1, rule_options=(), reconnect=False)
    assert err.value.code == "FAILED_PRECONDITION"

    info = server_info(server.address)
    assert info.rules == rules and info.rule_options == ("hidden_bids", "tricksy")
    assert set(RULE_OPTIONS) == set(VARIANT_OPTIONS)
    assert server.records() == []


def test_base_game_needs_no_rule_options(serve: Any) -> None:
    server = serve(rules=Rules(players=3))
    assert server_info(server.address).rule_options == ()
    bot = RawBot(server.address, "base", games=None)
    bot.start()
    try:
        deadline = time.monotonic() + 20
        while bot.welcome is None and not bot.done.is_set() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert bot.welcome is not None, (bot.status, bot.details)
    finally:
        bot.close_send()
        bot.join(20)
    assert bot.status == grpc.StatusCode.OK


def test_missing_options() -> None:
    rules = Rules(players=4, blind_first_round=True, lowest_score_deals=True, hand_sizes=(1, 2))
    assert rules.options == ("blind_first_round", "lowest_score_deals", "round_sizes")
    assert missing_options(rules, ()) == list(rules.options)
    assert missing_options(rules, VARIANT_OPTIONS) == []
    assert missing_options(rules, ["round_sizes", "x"]) == [
        "blind_first_round",
        "lowest_score_deals",
    ]
    assert missing_options(Rules(players=4), ()) == []


# -- combinations that cannot work -------------------------------------------------------------


def _serve_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cmd_serve.add_arguments(parser)
    return parser.parse_args(list(argv))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--hidden-bids", "--bid-restriction", "canadian"], "hidden_bids cannot be combined"),
        (["--hidden-bids", "--bid-restriction", "dealer_not_equal"], "hidden_bids cannot"),
        (["--maximus", "--round-sizes", "3,4"], "round_sizes cannot be combined with maximus"),
        (["--blind-first-round", "--round-sizes", "2,3"], "blind_first_round needs a first"),
        (["--blind-first-round", "--maximus"], "blind_first_round needs a first"),
        (["--players", "5", "--round-sizes", "1,13"], "each round deals 1..12 cards"),
        (["--round-sizes", "2,,4"], "whole numbers separated by commas"),
        (["--round-sizes", ""], "whole numbers separated by commas"),
        (["--tricksy", "--tricksy-suited"], "two forms of Tricksy Wizard"),
        (["--reveal-bids-after-tricks"], "reveal_bids_after_tricks is a reveal time"),
    ],
)
def test_serve_refuses_combinations(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    # (the process's logging is left alone: it would keep capsys's stream)
    monkeypatch.setattr(cmd_serve, "configure_logging", lambda *a, **k: None)
    assert cmd_serve.run(_serve_args(*argv, "--port", "0")) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: rules: ") and message in err
    assert "Traceback" not in err


def test_serve_flags_make_the_rules() -> None:
    args = _serve_args(
        "--players", "3", "--hidden-bids", "--blind-first-round", "--tricksy",
        "--lowest-score-deals", "--round-sizes", "1, 3,5",
    )  # fmt: skip
    rules = cmd_serve.rules_from_args(args)
    assert rules == Rules(
        players=3,
        hidden_bids=True,
        blind_first_round=True,
        tricksy=True,
        lowest_score_deals=True,
        hand_sizes=(1, 3, 5),
    )
    assert cmd_serve.rules_from_args(_serve_args("--maximus")) == Rules(maximus=True)
    assert cmd_serve.rules_from_args(_serve_args()) == Rules()
    args = _serve_args(
        "--hidden-bids", "--reveal-bids-after-tricks", "--tricksy-suited", "--first-dealer-by-draw"
    )
    assert cmd_serve.rules_from_args(args) == Rules(
        hidden_bids=True,
        reveal_bids_after_tricks=True,
        tricksy_suited=True,
        first_dealer_by_draw=True,
    )
    # one flag per variant option, named after it
    from wizard_arena.cli.rules_options import VARIANT_FLAGS

    flags = {f.replace("-", "_") for f in VARIANT_FLAGS} | {"round_sizes"}
    assert flags == set(VARIANT_OPTIONS)


def test_serve_command_refuses_without_traceback() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "wizard_arena.cli", "serve", "--maximus", "--round-sizes", "2"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "round_sizes cannot be combined with maximus" in proc.stderr
    assert "Traceback" not in proc.stderr


# -- tournaments -----------------------------------------------------------------------------


def _tournament(tmp: Path, **section: object) -> dict[str, Any]:
    bot = [sys.executable, "-m", "wizard_arena.cli", "bot", "wizard_bots.random_bot:RandomBot"]
    args = ["--server", "{server}", "--token", "{token}", "--name", "{name}", "--quiet"]
    return {
        "tournament": {
            "players": 3,
            "deal_sets": 1,
            "seed": 3,
            "move_time": 10.0,
            "database": str(tmp / "variants.sqlite"),
            **section,
        },
        "entrant": [{"name": f"r{i}", "command": [*bot, *args]} for i in range(3)],
    }


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"hidden_bids": True, "bid_restriction": "canadian"}, "rules: hidden_bids cannot"),
        ({"maximus": True, "round_sizes": [3]}, "rules: round_sizes cannot"),
        ({"blind_first_round": True, "round_sizes": [2, 1]}, "rules: blind_first_round"),
        ({"round_sizes": []}, "rules: round_sizes must list at least one round"),
        ({"round_sizes": [1, 40]}, "each round deals 1..20 cards"),
        ({"round_sizes": "1,2"}, "round_sizes must be a list of whole numbers"),
        ({"round_sizes": [1.5]}, "round_sizes must be a list of whole numbers"),
        ({"tricksy": "yes"}, "tricksy must be true or false"),
        ({"tricksy": True, "tricksy_suited": True}, "rules: tricksy and tricksy_suited"),
        ({"reveal_bids_after_tricks": True}, "rules: reveal_bids_after_tricks is a reveal time"),
        ({"first_dealer_by_draw": "yes"}, "first_dealer_by_draw must be true or false"),
    ],
)
def test_tournament_refuses_combinations(
    tmp_path: Path, section: dict[str, object], message: str
) -> None:
    with pytest.raises(TournamentError, match=message):
        TournamentConfig.from_dict(_tournament(tmp_path, **section))


def test_tournament_variant_keys() -> None:
    data = _tournament(Path("/nonexistent"), tricksy=True, round_sizes=[2, 4])
    config = TournamentConfig.from_dict(data)
    assert config.rules == Rules(players=3, tricksy=True, hand_sizes=(2, 4))
    key = config.plan_key()
    assert key["tricksy"] is True and key["round_sizes"] == [2, 4]
    # a base-game plan has no variant keys (tournaments stored earlier resume)
    base = TournamentConfig.from_dict(_tournament(Path("/nonexistent")))
    assert not set(base.plan_key()) & set(VARIANT_OPTIONS)
    assert config.to_dict()["round_sizes"] == (2, 4)
    json.dumps(config.to_dict())
    forms = TournamentConfig.from_dict(
        _tournament(
            Path("/nonexistent"),
            hidden_bids=True,
            reveal_bids_after_tricks=True,
            tricksy_suited=True,
            first_dealer_by_draw=True,
        )
    )
    assert forms.rules == Rules(
        players=3,
        hidden_bids=True,
        reveal_bids_after_tricks=True,
        tricksy_suited=True,
        first_dealer_by_draw=True,
    )
    key = forms.plan_key()
    for name in ("hidden_bids", "reveal_bids_after_tricks", "tricksy_suited"):
        assert key[name] is True
    assert key["first_dealer_by_draw"] is True


def test_tournament_with_variants(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    section: dict[str, object] = {
        "hidden_bids": True,
        "reveal_bids_after_tricks": True,
        "blind_first_round": True,
        "tricksy": True,
        "lowest_score_deals": True,
        "first_dealer_by_draw": True,
        "round_sizes": [1, 4, 7],
    }
    data = _tournament(tmp_path, **section)
    toml = tmp_path / "variants.toml"
    lines = ["[tournament]"] + [f"{k} = {json.dumps(v)}" for k, v in data["tournament"].items()]
    for e in data["entrant"]:
        lines += ["", "[[entrant]]", f"name = {json.dumps(e['name'])}"]
        lines.append(f"command = {json.dumps(e['command'])}")
    toml.write_text("\n".join(lines) + "\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    proc = subprocess.run(
        [sys.executable, "-m", "wizard_arena.cli", "tournament", str(toml), "--quiet"],
        capture_output=True,
        text=True,
        timeout=150,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    rules = Rules(
        players=3,
        hidden_bids=True,
        reveal_bids_after_tricks=True,
        blind_first_round=True,
        tricksy=True,
        lowest_score_deals=True,
        first_dealer_by_draw=True,
        hand_sizes=(1, 4, 7),
    )
    header = proc.stdout.splitlines()[0]
    assert rules.describe() in header
    assert (
        "hidden_bids, reveal_bids_after_tricks, blind_first_round, tricksy, lowest_score_deals, "
        "first_dealer_by_draw, round_sizes 1,4,7" in header
    )

    db = Path(str(data["tournament"]["database"]))
    with ResultsStore(db) as store:
        games = store.games("finished")
        assert len(games) == 6  # one deal: the 6 seatings of the balanced design at 3
        records = [store.record(g.id) for g in games]
    for rec in records:
        assert rec is not None and rec.rules == rules.to_dict()
        assert verify_record(rec) == []
        assert rec.faulted_seats == []
        assert len(rec.rounds) == 3
        capsys.readouterr()
        ns = argparse.Namespace(game_id=rec.game_id, database=db, verify=True)
        assert cmd_replay.run(ns) == 0
        assert "verified, no difference" in capsys.readouterr().out
        ns.verify = False
        assert cmd_replay.run(ns) == 0
        shown = capsys.readouterr().out
        assert rules.describe() in shown and "(blind: played by the rules after the bids)" in shown
        assert "first dealer by draw: " in shown
    # the draw is recorded with each game; the games of a duplicate set share
    # their deal seed, so the same seat deals first in every rotation
    assert all(r is not None and r.draw for r in records)
    assert len({(json.dumps(r.draw), r.first_dealer) for r in records if r is not None}) == 1

    # resuming with other rules is refused: the variants are part of the plan
    other = TournamentConfig.from_dict(
        {**data, "tournament": {**data["tournament"], "tricksy": False}}
    )
    with pytest.raises(TournamentError, match="does not match the stored tournament"):
        trio.run(lambda: run_tournament(other, resume=True))
    same = TournamentConfig.from_dict(data)
    store = trio.run(lambda: run_tournament(same, resume=True))  # nothing left to play
    store.close()


def test_tournament_refuses_base_game_bot(tmp_path: Path) -> None:
    """An entrant that lists no rule options cannot join a variant tournament:
    the runner stops at once and says why."""
    data = _tournament(tmp_path, tricksy=True)
    script = tmp_path / "base_bot.py"
    script.write_text(
        "import sys\n"
        "from wizard_arena.client import run_bot\n"
        "from wizard_bots.random_bot import RandomBot\n"
        "run_bot(RandomBot(), sys.argv[1], name=sys.argv[2], token=sys.argv[3],\n"
        "        rule_options=(), reconnect=False)\n"
    )
    data["entrant"][0]["command"] = [sys.executable, str(script), "{server}", "{name}", "{token}"]
    config = TournamentConfig.from_dict(data)
    with pytest.raises(TournamentError) as err:
        trio.run(lambda: run_tournament(config))
    # at once (not after connect_timeout): a refused bot can never join
    assert str(err.value).startswith(
        "entrant r0 was refused: it cannot play the rule option(s) tricksy: "
        "this tournament plays 3 players, bid restriction none, tricksy"
    )


def test_records_of_every_variant_verify_and_replay() -> None:
    """Records written from local games under every variant (and a tampered
    one) go through verify_record and render."""
    import random

    from wizard_arena.rules import action_text
    from wizard_referee.referee.record import MoveRecord, RoundRecord

    for name, rules in {
        **VARIANTS,
        "maximus_tricksy": Rules(4, maximus=True, tricksy=True),
    }.items():
        rng = random.Random(name)
        drawn = rules.first_dealer_by_draw
        game = Game(rules, seed=name, first_dealer=None if drawn else 1)
        rec = GameRecord(
            name,
            rules.to_dict(),
            list("abcdef"[: rules.players]),
            name,
            game.first_dealer,
            0.0,
            draw=[[c.text if c else None for c in row] for row in game.draw],
        )
        while not game.is_over:
            if game.phase is Phase.DEAL:
                game.deal()
                rec.rounds.append(
                    RoundRecord(
                        game.round,
                        game.dealer,
                        [[c.text for c in h] for h in game.dealt_hands],
                        game.turned_card.text if game.turned_card else None,
                    )
                )
                continue
            seat = rng.choice(game.acting)
            action = rng.choice(game.legal_actions(seat))
            game.apply(seat, action)
            rec.rounds[-1].moves.append(MoveRecord(seat, action_text(action), 1.0))
        rec.results = [
            [list(r.bids), list(r.tricks), list(r.points), list(r.totals)] for r in game.results
        ]
        rec.totals, rec.ranks, rec.status = list(game.totals), list(game.ranks), "finished"
        assert verify_record(rec) == [], name
        text = render(rec)
        assert text.count("\nround ") == rules.rounds
        heads = [line for line in text.splitlines() if line.startswith("round ")]
        if rules.maximus:
            assert heads[0].endswith("turned -, trump C")
            assert heads[4].endswith("turned -, trump none")
        if rules.blind_first_round:
            assert "(blind: each player sees the others' cards, not their own)" in heads[0]
        if rules.first_dealer_by_draw:
            assert "first dealer by draw: " in text
            good = rec.draw
            rec.draw = []  # a drawn game must keep its draw
            assert any("first dealer is drawn" in p for p in verify_record(rec)), name
            rec.first_dealer = (game.first_dealer + 1) % rules.players  # not the seat drawn
            rec.draw = good
            assert any("but the draw gives" in p for p in verify_record(rec)), name
            rec.first_dealer = game.first_dealer
        if rules.tricksy_suited and any("W" in m.action for r in rec.rounds for m in r.moves):
            assert "(trump " in text
        if rules.hidden_bids:
            # the bids are recorded in arrival order: any order verifies
            rr = rec.rounds[-1]
            first = next(i for i, m in enumerate(rr.moves) if m.action.startswith("bid"))
            n = rules.players
            head, bids, rest = rr.moves[:first], rr.moves[first : first + n], rr.moves[first + n :]
            assert all(m.action.startswith("bid") for m in bids)
            rr.moves = [*head, *reversed(bids), *rest]
            assert verify_record(rec) == [], name
            rr.moves = [*head, *bids, *bids[:1], *rest]  # a seat bidding twice
            assert any("recorded" in p or "refused" in p for p in verify_record(rec)), name


# -- the example bots ---------------------------------------------------------------------------


def _example_bots(kind: str, players: int) -> list[Any]:
    from wizard_bots.heuristic import HeuristicBot
    from wizard_bots.montecarlo import MonteCarloBot

    if kind == "random":
        return [RandomBot(seed=s) for s in range(players)]
    if kind == "heuristic":
        return [HeuristicBot() for _ in range(players)]
    # one Monte Carlo bot (a few samples per decision) among heuristic ones
    return [MonteCarloBot(samples=3, seed=1), *(HeuristicBot() for _ in range(players - 1))]


@pytest.mark.parametrize("kind", ["random", "heuristic", "montecarlo"])
@pytest.mark.parametrize(
    "variant",
    [*VARIANTS, "maximus_tricksy_hidden", "maximus_suited_after_tricks", "blind_tricksy_canadian"],
)
def test_example_bots_play_every_variant(kind: str, variant: str) -> None:
    from wizard_arena.local import play_local

    rules = {
        **VARIANTS,
        "maximus_tricksy_hidden": Rules(players=4, maximus=True, tricksy=True, hidden_bids=True),
        "maximus_suited_after_tricks": Rules(
            players=4,
            maximus=True,
            tricksy_suited=True,
            hidden_bids=True,
            reveal_bids_after_tricks=True,
            first_dealer_by_draw=True,
        ),
        "blind_tricksy_canadian": Rules(
            players=4,
            blind_first_round=True,
            tricksy=True,
            bid_restriction=BidRestriction.CANADIAN,
            hand_sizes=(1, 2, 3, 15, 4),
        ),
    }[variant]
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
        timeout=60,
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

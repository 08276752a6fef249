"""Rule variants end to end: the referee over real gRPC on loopback, the
Python SDK, the refusal of bots that cannot play a variant, records, replay
and tournaments.

For every variant a whole game is played by scripted raw clients and one SDK
bot (in strict mode, so any difference between the view the SDK folds from
the messages with the rules core and the referee's views fails the game).
Each raw client's messages go through an information check: no card of
another seat's hand is seen before it is played, except the others' cards of
a blind first round (shown by the rules), and in that round a seat's own
card is not seen until it is played. With hidden bids no message reveals
another seat's bid before all are in (with reveal_bids_after_tricks: before
the round's last trick is complete), and every seat is asked at once. With
tricksy_suited the Wizards' printed suits are information too: a suited
Wizard is seen only when dealt to the seat, turned or played.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from types import SimpleNamespace
from typing import Any

import grpc
import pytest
import trio

from wizard_arena.bot import GameInfo
from wizard_arena.client import RULE_OPTIONS, RunResult, VersionMismatchError, run_bot, server_info
from wizard_arena.protocol.messages import DecisionRequest, RoundStart, TableEvent
from wizard_arena.rules import (
    SUITED_WIZARDS,
    BidMade,
    Card,
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
from wizard_referee.referee.arena import missing_options
from wizard_referee.referee.record import GameRecord, verify_record
from wizard_referee.tournament.cmd_replay import render

from .memory_bots import MemBot, memory_arena, on_mock_clock, play
from .support import (
    RawBot,
    check_information,
    game_messages,
    run_bots,
    scaled,
)
from .variants import VARIANTS

pytestmark = pytest.mark.timeout(180)


#: Seconds a seat waits for the others at a hidden bid (they are asked at once).
BARRIER_WAIT = 10.0


#: The ``serve`` fixture's defaults here (conftest.py): a long move time, the
#: hidden-bid barrier waits for every seat.
SERVER_DEFAULTS = {"move_time": 15.0}


# -- what the rules did, from the record ----------------------------------------------------


def check_hidden_bids(bot: RawBot, record: GameRecord) -> None:
    """Each round: this seat was asked for its bid before any bid was shown;
    then every BidMade arrived together (nothing in between), in bidding order
    (with reveal_bids_after_tricks: after the round's last trick, before its
    score)."""
    rules = Rules.from_dict(record.rules)
    n = rules.players
    rounds: list[list[Any]] = []
    for item in game_messages(bot, record.game_id):
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


@pytest.mark.e2e
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_full_game_under_variant(serve: Any, variant: str) -> None:
    rules = VARIANTS[variant]
    server = serve(rules=rules, seed=7)
    raws, result, sdk_bot = _play_one_game(server.address, rules, variant)
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
        check_information(b, rec)
        moves = [m for rr in rec.rounds for m in rr.moves if m.seat == seat]
        assert len([r for r in b.requests if r.game_id == gid]) == len(moves)
        if rules.hidden_bids:
            check_hidden_bids(b, rec)
        starts = [m for m in b.round_starts if m.game_id == gid]
        assert [m.cards for m in starts] == list(rules.round_sizes)
        if rules.maximus:
            assert [m.trump for m in starts] == list(MAXIMUS_TRUMPS)
            assert all(m.turned_card is None and not m.trump_pending for m in starts)

    _check_variant_specifics(variant, rules, rec, raws, sdk_bot)


def _play_one_game(
    address: str, rules: Rules, variant: str
) -> tuple[list[RawBot], RunResult, VariantBot]:
    """One game: the SDK's strict bot in a thread and raw bots in the other seats."""
    n = rules.players
    barrier = threading.Barrier(n) if rules.hidden_bids else None
    sdk_bot = VariantBot(seed=1, barrier=barrier)
    box: list[RunResult | BaseException] = []

    def sdk() -> None:
        try:
            box.append(run_bot(sdk_bot, address, name="sdk", games=1, strict=True, reconnect=False))
        except BaseException as e:
            box.append(e)

    sdk_thread = threading.Thread(target=sdk, daemon=True)
    sdk_thread.start()
    raws = [
        RawBot(
            address,
            f"{variant}-{i}",
            rule_options=VARIANT_OPTIONS,
            on_request=_barrier_hook(barrier) if barrier is not None else None,
        )
        for i in range(n - 1)
    ]
    run_bots(raws, timeout=scaled(150))
    sdk_thread.join(60)
    assert box, "the SDK bot did not finish"
    result = box[0]
    if isinstance(result, BaseException):
        raise result
    return raws, result, sdk_bot


def _check_variant_specifics(
    variant: str, rules: Rules, rec: GameRecord, raws: list[RawBot], sdk_bot: VariantBot
) -> None:
    """What each variant's options change in the record, the text and the messages."""
    n = rules.players
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


@pytest.mark.e2e
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
    check_information(b, rec)
    seat = b.messages(GameInfo)[0].seat
    mine = Card(rec.rounds[0].hands[seat][0])
    first = next(i for i, r in enumerate(b.received) if isinstance(r.msg, RoundStart))
    fake = type(b.received[first].raw)()
    fake.CopyFrom(b.received[first].raw)
    fake.round_started.others_hands[seat].cards.add().CopyFrom(_card_pb(mine))
    b.received[first].raw = fake
    if mine.suit is not None:  # a Wizard or Jester may be visible in another hand too
        with pytest.raises(AssertionError, match="before it was played"):
            check_information(b, rec)


@pytest.mark.e2e
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
    check_information(b, rec)
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
        check_information(b, rec)
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
        check_information(b, rec)


def _card_pb(card: Card) -> Any:
    from wizard_arena.protocol import wire

    return wire.card_to_pb(card)


@on_mock_clock
async def test_hidden_bids_time_out_per_seat() -> None:
    """A seat that never bids is timed out on its own; the others' bids stand."""
    rules = Rules(players=3, hidden_bids=True, hand_sizes=(1, 2))

    async def silent(bot: MemBot, req: DecisionRequest) -> bool:
        return req.view.phase is Phase.BID  # never answer a bid

    async def slow_bid(bot: MemBot, req: DecisionRequest) -> bool:
        if req.view.phase is Phase.BID:
            await trio.sleep(1.0)  # the others wait for it, not for the silent seat
        return False

    async with memory_arena(rules=rules, move_time=1.5, seed=2) as arena:
        bots = [
            MemBot("h0", rule_options=VARIANT_OPTIONS, on_request=slow_bid),
            MemBot("h1", rule_options=VARIANT_OPTIONS),
            MemBot("silent", rule_options=VARIANT_OPTIONS, on_request=silent),
        ]
        (rec,) = await play(arena, *bots)
    assert rec.status == "finished" and verify_record(rec) == []
    seat = rec.names.index("silent")
    assert rec.faults[seat] == {"timeout": 2}
    assert [f for s, f in enumerate(rec.faults) if s != seat] == [{}, {}]
    for rr in rec.rounds:
        bids = [m for m in rr.moves if m.action.startswith("bid")]
        assert sorted(m.seat for m in bids) == [0, 1, 2]
        # asked at once: each in its own time, the silent seat's bid last, at its deadline
        assert [(m.seat == seat, m.ms) for m in bids] == [
            (False, 0.0),
            (False, 1000.0),
            (True, 1500.0),
        ]
        assert [m.fault for m in bids if m.seat == seat] == ["timeout"]
        assert all(m.fault is None for m in bids if m.seat != seat)
    assert all(res[0][seat] == 0 for res in rec.results)  # the default bid
    for b in bots:  # (the check reads the items a RawBot receives)
        items = [SimpleNamespace(msg=m) for m in b.received]
        check_hidden_bids(SimpleNamespace(received=items), rec)


# -- bots that cannot play the variant -----------------------------------------------------------


@pytest.mark.e2e
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


@pytest.mark.e2e
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

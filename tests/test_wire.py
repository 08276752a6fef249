"""The wire edge (wizard_arena.protocol.wire): protobuf <-> domain round trips under
every rule variant, and refusal of malformed variant fields."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable

import pytest

from wizard_arena.bot import GameInfo
from wizard_arena.protocol import wire
from wizard_arena.protocol.messages import (
    ActionRejected,
    ClockProbe,
    ClockProbeReply,
    DecisionRequest,
    Hello,
    RoundStart,
    ServerInfo,
    TableEvent,
    Welcome,
)
from wizard_arena.protocol.wire import fast, service, views
from wizard_arena.rules import (
    Card,
    Game,
    GameOver,
    Phase,
    RoundStarted,
    Rules,
    SeatView,
    Suit,
    Trick,
)
from wizard_arena.rules.laws import VARIANT_OPTIONS

from .variants import pick

#: One table of rules per variant, and a few combinations.
VARIANT_RULES = pick(
    "base",
    "hidden_bids",
    "blind_first_round",
    "maximus",
    "tricksy",
    "lowest_score_deals",
    "short_rounds",
    "combined",
    "maximus_tricksy",
    "tricksy_suited",
    "reveal_bids_after_tricks",
    "first_dealer_by_draw",
    "new_forms_to_twenty",
)


def _view_round_trip(view: SeatView) -> SeatView:
    out = wire.pb.SeatView()
    views.view_to_pb(view, out)
    back = wire.pb.SeatView.FromString(out.SerializeToString())
    return views.view_from_pb(back, view.legal_actions, view.time_left)


def _server_round_trip(msg: object) -> object:
    raw = wire.encode_server(msg)  # type: ignore[arg-type]
    # the referee's byte encoder parses to exactly the same message
    assert wire.pb.ServerMessage.FromString(wire.encode_server_bytes(msg)) == raw  # type: ignore[arg-type]
    return wire.decode_server(wire.pb.ServerMessage.FromString(raw.SerializeToString()))


@pytest.mark.parametrize("name", list(VARIANT_RULES))
def test_rules_round_trip(name: str) -> None:
    rules = VARIANT_RULES[name]
    msg = wire.pb.Rules()
    views.rules_to_pb(rules, msg)
    assert views.rules_from_pb(msg) == rules
    assert list(msg.round_sizes) == list(rules.round_sizes)
    assert msg.short_game == ("round_sizes" in rules.options)
    info = ServerInfo("1", (1,), rules, 1.5, False, rules.options)
    assert wire.decode_server_info(wire.encode_server_info(info)) == info
    game_info = GameInfo("g", rules, 1, tuple("abcdef"[: rules.players]), 2.0)
    assert _server_round_trip(game_info) == game_info
    for seed in (1, 2**63 + 5, 2**64 - 1):  # GameStarted.bot_seed: the whole uint64 range
        seeded = GameInfo("g", rules, 1, tuple("abcdef"[: rules.players]), 2.0, seed=seed)
        assert _server_round_trip(seeded) == seeded


@pytest.mark.parametrize("name", list(VARIANT_RULES))
def test_views_and_messages_round_trip(name: str) -> None:
    """Every view of every seat, every decision request and every message of
    whole random games survives the wire unchanged."""
    rules = VARIANT_RULES[name]
    seen = {
        "others_hands": 0,
        "next_trump": 0,
        "hidden": 0,
        "mid_play_choice": 0,
        "suited_wizards": 0,
        "hidden_in_play": 0,
    }
    for seed in range(2):
        rng = random.Random(seed)
        game = Game(rules, seed=f"wire-{name}-{seed}")
        events = 0
        while not game.is_over:
            if game.phase is Phase.DEAL:
                game.deal()
            for seat in range(rules.players):
                view = game.view(seat).with_time_left(0.75)
                assert _view_round_trip(view) == view
                seen["others_hands"] += bool(view.others_hands)
                seen["next_trump"] += view.next_trump is not None
                seen["hidden"] += rules.hidden_bids and view.phase is Phase.BID
                seen["suited_wizards"] += any(c.wizard_suit is not None for c in view.hand)
                seen["hidden_in_play"] += view.phase is Phase.PLAY and None in view.bids
                if view.legal_actions:
                    req = DecisionRequest(f"r-{seat}", "g", view)
                    back = _server_round_trip(req)
                    assert back == req
                    assert isinstance(back, DecisionRequest)
                    assert back.view.legal_actions == view.legal_actions
                    if view.phase is Phase.CHOOSE_TRUMP and (view.trick or view.tricks):
                        seen["mid_play_choice"] += 1
            for ev in game.events[events:]:
                if isinstance(ev, RoundStarted):
                    for seat in range(rules.players):
                        v = game.view(seat)
                        start = RoundStart(
                            "g",
                            ev.round,
                            ev.dealer,
                            ev.cards,
                            v.hand,
                            ev.turned_card,
                            ev.trump,
                            game.phase is Phase.CHOOSE_TRUMP,
                            v.others_hands,
                        )
                        assert _server_round_trip(start) == start
                elif not isinstance(ev, GameOver):
                    assert _server_round_trip(TableEvent("g", ev)) == TableEvent("g", ev)
            events = len(game.events)
            if game.is_over:
                break
            seat = rng.choice(game.acting)
            game.apply(seat, rng.choice(game.legal_actions(seat)))
    if rules.blind_first_round:
        assert seen["others_hands"]
    else:
        assert not seen["others_hands"]
    if rules.tricksy:
        assert seen["next_trump"] and seen["mid_play_choice"]
    if rules.hidden_bids:
        assert seen["hidden"]
    assert bool(seen["suited_wizards"]) == rules.tricksy_suited
    assert bool(seen["hidden_in_play"]) == rules.reveal_bids_after_tricks


@pytest.mark.parametrize("size", [0, 1, 127, 128, 300, 16383, 16384, 2**21 + 5])
def test_framing_matches_protobuf(size: int) -> None:
    """The one piece of wire format written by hand: a length-delimited field
    (field 3 of Hello is ``bot_name``)."""
    name = "x" * size
    framed = fast.framed(3, name.encode())
    assert wire.pb.Hello.FromString(framed).bot_name == name
    if size:  # protobuf omits an empty string; otherwise the bytes are the same
        assert framed == wire.pb.Hello(bot_name=name).SerializeToString()


def test_fragment_cache_is_by_identity_and_bounded() -> None:
    cache = fast.ByIdentity(limit=2)
    a, b = Trick(0, (Card("W"),), 0), Trick(0, (Card("W"),), 0)
    calls: list[str] = []

    def make(tag: str) -> bytes:
        calls.append(tag)
        return tag.encode()

    assert cache.get(a, lambda: make("a")) == b"a"
    assert cache.get(a, lambda: make("again")) == b"a"  # a hit: not made again
    assert cache.get(b, lambda: make("b")) == b"b"  # equal but another object: its own entry
    assert cache.get(object(), lambda: make("c")) == b"c"  # the limit: emptied, then added
    assert cache.get(a, lambda: make("a2")) == b"a2"
    assert calls == ["a", "b", "c", "a2"]


def _view_with_tricks_and_results(min_tricks: int = 2, min_results: int = 2) -> SeatView:
    """A real view of a game in progress with at least ``min_tricks`` tricks
    of the round and ``min_results`` past rounds."""
    game = Game(Rules(players=3), seed="runs")
    rng = random.Random(5)
    while True:
        if game.phase is Phase.DEAL:
            game.deal()
            continue
        seat = game.acting[0]
        if len(game.results) >= min_results and len(game.tricks) >= min_tricks:
            return game.view(seat).with_time_left(1.5)
        game.apply(seat, rng.choice(game.legal_actions(seat)))


def _encodes_as_encode_server(view: SeatView) -> None:
    msg = DecisionRequest("g-7", "g", view, 0.5)
    fast_msg = wire.pb.ServerMessage.FromString(wire.encode_server_bytes(msg))
    assert fast_msg == wire.encode_server(msg)
    assert wire.decode_server(fast_msg) == msg


def test_a_view_ending_like_a_cached_run_but_differing_earlier_encodes_as_its_own() -> None:
    """The joined runs of tricks and results are cached by the run's last
    object: a view put together by hand whose runs end with the same
    objects as a view encoded before, but hold other ones earlier (or fewer,
    or more), is still encoded from its own runs."""
    view = _view_with_tricks_and_results()
    *tricks, last_trick = view.tricks
    *results, last_result = view.results
    _encodes_as_encode_server(view)  # its runs cached, keyed by their last objects
    other_trick = Trick((tricks[0].leader + 1) % 3, tuple(reversed(tricks[0].cards)), 2)
    other_result = results[0]._replace(round=9, points=(-10, 0, 70))
    for hand_built in (
        dataclasses.replace(
            view, tricks=(other_trick, *tricks[1:], last_trick), results=(other_result, last_result)
        ),
        dataclasses.replace(view, tricks=(last_trick,), results=(last_result,)),
        dataclasses.replace(
            view, tricks=(*tricks, *tricks, last_trick), results=(*results, *results, last_result)
        ),
    ):
        assert hand_built.tricks[-1] is last_trick and hand_built.results[-1] is last_result
        _encodes_as_encode_server(hand_built)
        _encodes_as_encode_server(view)  # and the game's own view after it, as before
    # an equal run held in another tuple is the same run
    _encodes_as_encode_server(dataclasses.replace(view, tricks=tuple(list(view.tricks))))


def test_the_runs_cache_checks_the_run_and_is_bounded() -> None:
    """A run's join is kept keyed by its last object and checked against the
    run: a hit looks up no fragment; a run that ends with the same object
    after others is joined again; at the limit the kept joins are emptied.
    (Its own fragments' cache, so that the counts are this test's alone.)"""
    fragments = fast.ByIdentity(64)
    looked: list[Trick] = []
    made: list[Trick] = []

    class Counting:
        def get(self, x: Trick, make: Callable[[], bytes]) -> bytes:
            looked.append(x)
            return fragments.get(x, make)

    runs = fast.Runs(limit=2, fragments=Counting())  # type: ignore[arg-type]
    a, b, c = (Trick(0, (Card("W"),), s) for s in range(3))

    def entry(t: Trick) -> bytes:
        made.append(t)
        return bytes([t.winner])

    def join(run: tuple[Trick, ...]) -> tuple[bytes, int, int]:
        """The join, and the fragments looked up and made for it."""
        n_looked, n_made = len(looked), len(made)
        return runs.join(run, entry), len(looked) - n_looked, len(made) - n_made

    assert join(()) == (b"", 0, 0)
    assert join((a, c)) == (b"\x00\x02", 2, 2)
    assert join((a, c)) == (b"\x00\x02", 0, 0)  # the same run: kept
    assert join(tuple([a, c])) == (b"\x00\x02", 0, 0)  # an equal run: kept
    assert join((b, c)) == (b"\x01\x02", 2, 1)  # the same last object, another run
    assert join((a, b, c)) == (b"\x00\x01\x02", 3, 0)  # c's run was (b, c)
    assert join((a, b, c)) == (b"\x00\x01\x02", 0, 0)
    assert join((a, b)) == (b"\x00\x01", 2, 0)  # a second key
    assert join((a,)) == (b"\x00", 1, 0)  # a third: the limit empties the two kept
    assert join((a, b, c)) == (b"\x00\x01\x02", 3, 0)  # emptied: joined again
    assert join((a,)) == (b"\x00", 0, 0)


def test_play_writes_messages_or_bytes() -> None:
    """The Play response serializer takes a ServerMessage or its bytes, unchanged."""
    msg = wire.encode_server(Welcome(1, "s1", "0.1"))
    assert service.serialize_server(msg) == msg.SerializeToString()
    assert service.serialize_server(b"\x0a\x00") == b"\x0a\x00"


def test_blind_round_start_keeps_seats() -> None:
    hands = ((Card("3H"),), (), (Card("W"),))
    msg = RoundStart("g", 1, 0, 1, (), Card("5S"), Suit.SPADES, False, hands)
    back = _server_round_trip(msg)
    assert back == msg
    assert isinstance(back, RoundStart) and back.others_hands[1] == ()


@pytest.mark.parametrize("text", ["W", "WS", "WH", "WD", "WC", "J", "13H", "1S"])
def test_cards_round_trip(text: str) -> None:
    card = Card(text)
    msg = wire.card_to_pb(card)
    assert wire.card_from_pb(wire.pb.Card.FromString(msg.SerializeToString())) is card
    # a suited Wizard's identity is its wizard_suit; the plain Wizard has none
    if card.is_wizard:
        assert msg.kind == wire.pb.CARD_KIND_WIZARD and msg.suit == wire.pb.SUIT_UNSPECIFIED
        assert (msg.wizard_suit == wire.pb.SUIT_UNSPECIFIED) == (card.wizard_suit is None)


def test_wizard_cards_decode_leniently_but_not_blindly() -> None:
    # a Wizard's suit and rank mean nothing (as before): only wizard_suit tells Wizards apart
    junk = wire.pb.Card(kind=wire.pb.CARD_KIND_WIZARD, suit=wire.pb.SUIT_HEARTS, rank=7)
    assert wire.card_from_pb(junk) is Card("W")
    junk.wizard_suit = wire.pb.SUIT_CLUBS
    assert wire.card_from_pb(junk) is Card("WC")
    bad = wire.pb.Card(kind=wire.pb.CARD_KIND_WIZARD)
    bad.wizard_suit = 9  # type: ignore[assignment]
    with pytest.raises(wire.WireError, match="wizard_suit=9"):
        wire.card_from_pb(bad)
    with pytest.raises(wire.WireError, match="not a card"):
        wire.card_from_pb(wire.pb.Card(kind=wire.pb.CARD_KIND_SUITED, rank=3))


def test_hello_carries_rule_options() -> None:
    hello = Hello("b", rule_options=VARIANT_OPTIONS)
    assert wire.decode_bot(wire.encode_bot(hello)) == hello


def test_the_clock_probe_messages_round_trip() -> None:
    """v1.2: the probes and replies, Hello's request and Welcome's echo, the
    credit of a request (in both encoders) and the cap in ServerInfo."""
    for asked in (False, True):
        hello = Hello("b", clock_probes=asked)
        assert wire.decode_bot(wire.encode_bot(hello)) == hello
        welcome = Welcome(1, "s", "0", minor_version=2, clock_probes=asked)
        assert _server_round_trip(welcome) == welcome
    assert wire.encode_bot(Hello("b")).hello.clock_probes is False  # a v1.1 Hello, unset
    reply = ClockProbeReply("p-7")
    assert wire.encode_bot(reply).WhichOneof("message") == "clock_probe_reply"
    assert wire.decode_bot_bytes(wire.encode_bot(reply).SerializeToString()) == reply
    assert _server_round_trip(ClockProbe("p-7")) == ClockProbe("p-7")
    game = Game(Rules(players=3), seed=5)
    game.deal()
    view = game.view(game.acting[0]).with_time_left(1.0)
    req = DecisionRequest("r-1", "g", view, time_bank=2.5, network_credit=0.187)
    back = _server_round_trip(req)
    assert back == req
    assert wire.encode_server(req).decision_request.network_credit_ms == 187
    assert wire.encode_server(req).decision_request.time_left_ms == 1000  # the move time alone
    rejected = ActionRejected("r-1", "g", "must_follow_suit", "no", 0.25)
    assert _server_round_trip(rejected) == rejected
    info = ServerInfo("1", (1,), Rules(players=3), 1.0, False, (), 2, 0.5)
    assert wire.encode_server_info(info).lag_credit_cap_ms == 500
    assert wire.decode_server_info(wire.encode_server_info(info)) == info


def _pb_rules(**fields: object) -> object:
    msg = wire.pb.Rules(players=3, bid_restriction=wire.pb.BID_RESTRICTION_NONE)
    for k, v in fields.items():
        if k == "round_sizes":
            msg.round_sizes.extend(v)  # type: ignore[call-overload]
        else:
            setattr(msg, k, v)
    return msg


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"short_game": True}, "a short game needs its round_sizes"),
        ({"short_game": True, "round_sizes": [2, 30]}, "each round deals 1..20 cards"),
        (
            {"hidden_bids": True, "bid_restriction": wire.pb.BID_RESTRICTION_CANADIAN},
            "hidden_bids cannot be combined",
        ),
        ({"maximus": True, "short_game": True, "round_sizes": [2]}, "round_sizes cannot"),
        ({"blind_first_round": True, "short_game": True, "round_sizes": [2]}, "blind_first"),
        # a variant's round sizes that the decoder does not derive: refused, not misread
        ({"round_sizes": [2, 4]}, "do not match the rules"),
        ({"round_sizes": [20] * 5}, "do not match the rules"),
        ({"tricksy": True, "tricksy_suited": True}, "two forms of Tricksy Wizard"),
        ({"reveal_bids_after_tricks": True}, "it needs hidden_bids"),
    ],
)
def test_malformed_rules_are_refused(fields: dict[str, object], message: str) -> None:
    with pytest.raises(wire.WireError, match=message):
        views.rules_from_pb(_pb_rules(**fields))  # type: ignore[arg-type]


def test_others_hands_must_cover_every_seat() -> None:
    game = Game(Rules(players=3, blind_first_round=True), seed=3)
    game.deal()
    view = game.view(0)
    out = wire.pb.SeatView()
    views.view_to_pb(view, out)
    del out.others_hands[-1]
    with pytest.raises(wire.WireError, match="one entry per seat"):
        views.view_from_pb(out)

"""Wizard as an OpenSpiel game: ``pyspiel.load_game("python_wizard", {...})``.

Importing this module registers the game with OpenSpiel
(``pyspiel.register_game``), so OpenSpiel's own tools and algorithms load it
by name, with every rule variant as a game parameter (:data:`PARAMETERS`:
``players``, ``bid_restriction``, each on/off variant of
:data:`~wizard_arena.rules.laws.FLAG_OPTIONS`, and ``round_sizes``, the
cards of each round separated by ``;``, empty for the standard game). It
needs the ``open_spiel`` extra (``pip install 'wizard-arena[open_spiel]'``).

**The game.** A sequential game of 3 to 6 players (``player_id`` = seat)
with explicit chance: the first dealer (uniform over the seats, under
``first_dealer_by_draw``; else seat 0), then every round's deal card by card
(outcome = the card's slot :attr:`Card.index <wizard_arena.rules.Card.index>`,
with its share of the cards not dealt yet; the seat left of the dealer
first, around the table, then the turned card if any is left). Player
actions are the course kit's action ids (:mod:`.encoding`: bids 0..20, trump
S H D C, the 64 card slots), so ``num_distinct_actions()`` is 89. The rules
core (:class:`~wizard_arena.rules.Game`) plays every action; with hidden
bids the seats bid one after another in bidding order, none seeing another's
bid. Utility: each seat's points (general-sum): ``rewards()`` are the
points of the round the last player action completed (zeros otherwise),
``returns()`` the points so far.

**Observations.** ``observation_tensor(player)`` is the course kit's
observation (:func:`~.encoding.encode` of the seat's
:class:`~wizard_arena.rules.SeatView`, 1,498 floats; the observer's ``dict``
names its blocks) and ``observation_string(player)`` the same view as text.
Both summarise what the seat may know now and never a hidden card; they do
not recall what the seat saw in earlier rounds or every trump named during
a round, so they are no information state: the game offers no
information-state string or tensor (OpenSpiel's information state must have
perfect recall).

**Searching from a position.** :func:`state_at` wraps a rules-core game in
any position (e.g. a seat's view with sampled hidden hands, as a search
builds it) as a state of this game, ending when a given round is scored:
OpenSpiel's search algorithms then play on from there. Such a state has no
history (``history()`` is empty); it clones and serialises like any other.

>>> game = pyspiel.load_game("python_wizard", {"players": 3, "round_sizes": "1;2"})
>>> state = game.new_initial_state()
>>> state.is_chance_node(), len(state.chance_outcomes())  # the first card dealt
(True, 54)
>>> while state.is_chance_node():
...     state.apply_action(state.chance_outcomes()[0][0])
>>> state.current_player(), [state.action_to_string(a) for a in state.legal_actions()]
(1, ['bid 0', 'bid 1'])
>>> len(state.observation_tensor(1)) == OBS_SIZE
True
"""

from __future__ import annotations

import random
from typing import Any, Final

import numpy as np

from wizard_arena.extras import require
from wizard_arena.rules import (
    BidRestriction,
    Card,
    Game,
    Phase,
    Rules,
    SeatView,
    action_text,
    score_range,
)
from wizard_arena.rules.laws import FLAG_OPTIONS

from .encoding import ACTION_SIZE, BLOCKS, CARD_SLOTS, OBS_SIZE, action_id, action_of, encode

PART = "wizard_arena.rl.openspiel (Wizard as an OpenSpiel game)"
require("open_spiel", PART)
import pyspiel  # noqa: E402  (after require: one line if missing)

__all__ = [
    "PARAMETERS",
    "SHORT_NAME",
    "WizardGame",
    "WizardObserver",
    "WizardState",
    "parameters_of",
    "rules_of",
    "state_at",
    "view_text",
]

#: The game's name in OpenSpiel's registry (OpenSpiel names its Python games so).
SHORT_NAME: Final = "python_wizard"

#: The game parameters and their defaults: standard Wizard at 4 players.
PARAMETERS: Final[dict[str, Any]] = {
    "players": 4,
    "bid_restriction": BidRestriction.NONE.value,
    **dict.fromkeys(FLAG_OPTIONS, False),
    "round_sizes": "",
}

# trump choices a round can ask for at most: the dealer's (a turned Wizard)
# and one per Wizard played (Tricksy)
_TRUMP_CHOICES = 5
_NO_DEALS = random.Random(0)  # the games here never deal from their RNG


def rules_of(params: dict[str, Any]) -> Rules:
    """The :class:`Rules` of a game's parameters (missing ones: the defaults).

    >>> rules_of({"players": 3, "tricksy": True, "round_sizes": "2;4"}).describe()
    '3 players, bid restriction none, tricksy, round_sizes 2,4'
    """
    unknown = set(params) - set(PARAMETERS)
    if unknown:
        raise ValueError(f"unknown parameters {sorted(unknown)}: the game takes {list(PARAMETERS)}")
    p = {**PARAMETERS, **params}
    sizes = str(p["round_sizes"]).strip()
    return Rules(
        players=int(p["players"]),
        bid_restriction=BidRestriction(p["bid_restriction"]),
        hand_sizes=tuple(int(s) for s in sizes.split(";")) if sizes else None,
        **{name: bool(p[name]) for name in FLAG_OPTIONS},
    )


def parameters_of(rules: Rules) -> dict[str, Any]:
    """The game parameters of ``rules`` (those that differ from the defaults).

    >>> parameters_of(Rules(players=3, hidden_bids=True, hand_sizes=(1, 2)))
    {'players': 3, 'hidden_bids': True, 'round_sizes': '1;2'}
    """
    out: dict[str, Any] = {"players": rules.players}
    if rules.bid_restriction is not BidRestriction.NONE:
        out["bid_restriction"] = rules.bid_restriction.value
    out.update({name: True for name in FLAG_OPTIONS if getattr(rules, name)})
    if rules.hand_sizes is not None:
        out["round_sizes"] = ";".join(map(str, rules.hand_sizes))
    return out


_GAME_TYPE = pyspiel.GameType(
    short_name=SHORT_NAME,
    long_name="Wizard (the Wizard Arena rules core, every rule variant)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.REWARDS,
    max_num_players=6,
    min_num_players=3,
    provides_information_state_string=False,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=PARAMETERS,
)


def _chance_nodes(rules: Rules) -> int:
    """The chance nodes of a whole game: the draw, every card dealt and turned."""
    n = len(rules.deck)
    deals = sum(rules.players * s + (rules.players * s < n) for s in rules.round_sizes)
    return deals + rules.first_dealer_by_draw


class WizardGame(pyspiel.Game):  # type: ignore[misc]
    """Wizard under the rules of ``params`` (see :data:`PARAMETERS`)."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**PARAMETERS, **(params or {})}
        rules = rules_of(params)
        low, high = score_range(rules)
        n = rules.players
        info = pyspiel.GameInfo(
            num_distinct_actions=ACTION_SIZE,
            max_chance_outcomes=CARD_SLOTS,
            num_players=n,
            min_utility=float(low),
            max_utility=float(high),
            utility_sum=None,
            max_game_length=sum(n + n * s + _TRUMP_CHOICES for s in rules.round_sizes),
        )
        super().__init__(_GAME_TYPE, info, params)
        self.rules = rules

    def new_initial_state(self) -> WizardState:
        return WizardState(self)

    def max_chance_nodes_in_history(self) -> int:
        return _chance_nodes(self.rules)

    def make_py_observer(
        self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
    ) -> WizardObserver:
        return WizardObserver(iig_obs_type, params)


class _Position:
    """What a state holds: the rules-core game, a deal under way, and the
    round whose scoring ends the state's game. Copied by :meth:`Game.clone`
    (OpenSpiel clones a Python state by deep-copying its attributes)."""

    __slots__ = ("base", "before", "dealing", "drawn", "game", "last_round", "turned")

    def __init__(self, game: Game, last_round: int, drawn: bool) -> None:
        self.game = game
        self.last_round = last_round
        self.base = tuple(game.totals)
        """The totals where the state's game starts (its returns count from them)."""
        self.before = self.base
        """The totals before the last player action (its rewards are the difference)."""
        self.drawn = drawn
        """The first dealer is decided (drawn, or seat 0 without the draw)."""
        self.dealing: list[list[Card]] | None = None
        """The hands dealt so far in a deal under way (by seat), else None."""
        self.turned: Card | None = None

    def __deepcopy__(self, memo: dict[int, Any]) -> _Position:
        new = _Position(self.game.clone(rng=_NO_DEALS), self.last_round, self.drawn)
        new.base = self.base
        new.before = self.before
        if self.dealing is not None:
            new.dealing = [list(h) for h in self.dealing]
        return new

    def __getstate__(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for k, v in state.items():
            setattr(self, k, v)

    # -- the deal, card by card ----------------------------------------------------------

    def deal_size(self) -> tuple[int, bool]:
        """Cards each seat gets in the next round, and whether one is turned."""
        rules = self.game.rules
        size = rules.round_sizes[self.game.round]
        return size, rules.players * size < len(rules.deck)

    def unseen(self) -> list[int]:
        """The deck's cards not dealt yet in the deal under way, by card slot."""
        counts = [0] * CARD_SLOTS
        for c in self.game.rules.deck:
            counts[c.index] += 1
        for hand in self.dealing or ():
            for c in hand:
                counts[c.index] -= 1
        return counts

    def deal_card(self, card: Card) -> None:
        game = self.game
        n = game.players
        if self.dealing is None:
            self.dealing = [[] for _ in range(n)]
        size, turns = self.deal_size()
        dealt = sum(len(h) for h in self.dealing)
        if dealt < n * size:
            self.dealing[(game.next_dealer() + 1 + dealt) % n].append(card)
            dealt += 1
            if dealt < n * size or turns:
                return
        else:
            self.turned = card
        game.deal(self.dealing, self.turned)
        game.drain_events()
        self.dealing = None
        self.turned = None


class WizardState(pyspiel.State):  # type: ignore[misc]
    """One position of a game of Wizard (see the module)."""

    def __init__(self, game: WizardGame) -> None:
        super().__init__(game)
        rules: Rules = game.rules
        drawn = not rules.first_dealer_by_draw
        self._pos = _Position(
            Game.at_round(rules, 1, 0, [0] * rules.players, rng=_NO_DEALS), rules.rounds, drawn
        )

    @property
    def game(self) -> Game:
        """The rules-core game of this state (do not change it: apply actions)."""
        return self._pos.game

    def view(self, player: int) -> SeatView:
        """What ``player`` may know now."""
        return self._pos.game.view(player)

    # -- OpenSpiel's state API -----------------------------------------------------------

    def current_player(self) -> int:
        pos = self._pos
        game = pos.game
        if self.is_terminal():
            return int(pyspiel.PlayerId.TERMINAL)
        if game.phase is Phase.DEAL or not pos.drawn:
            return int(pyspiel.PlayerId.CHANCE)
        return game.acting[0]

    def is_terminal(self) -> bool:
        pos = self._pos
        game = pos.game
        if game.phase is Phase.GAME_OVER:
            return True
        return game.phase is Phase.DEAL and pos.dealing is None and game.round >= pos.last_round

    def _legal_actions(self, player: int) -> list[int]:
        return sorted(action_id(a) for a in self._pos.game.legal_actions(player))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        pos = self._pos
        if not pos.drawn:
            n = pos.game.players
            return [(seat, 1.0 / n) for seat in range(n)]
        counts = pos.unseen()
        total = sum(counts)
        return [(slot, k / total) for slot, k in enumerate(counts) if k]

    def _apply_action(self, action: int) -> None:
        pos = self._pos
        game = pos.game
        if not pos.drawn:  # the draw for the first dealer: its outcome, the seat
            pos.game = Game.at_round(game.rules, 1, int(action), [0] * game.players, rng=_NO_DEALS)
            pos.drawn = True
        elif game.phase is Phase.DEAL:
            pos.deal_card(Card.from_index(int(action)))
        else:
            pos.before = tuple(game.totals)
            game.apply(game.acting[0], action_of(int(action)))
            game.drain_events()

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if not self._pos.drawn:
                return f"first dealer {action}"
            return f"deal {Card.from_index(int(action)).text}"
        return action_text(action_of(int(action)))

    def returns(self) -> list[float]:
        """Each seat's points so far (the final totals once the game is over;
        from :func:`state_at`, since its position)."""
        pos = self._pos
        return [float(t - b) for t, b in zip(pos.game.totals, pos.base, strict=True)]

    def rewards(self) -> list[float]:
        """Each seat's points of the round the last player action completed."""
        pos = self._pos
        return [float(t - b) for t, b in zip(pos.game.totals, pos.before, strict=True)]

    def __str__(self) -> str:
        pos = self._pos
        g = pos.game
        hands = " | ".join(" ".join(c.text for c in h) for h in g.hands)
        text = (
            f"round {g.round}/{g.rules.rounds} dealer {g.dealer} phase {g.phase.value} "
            f"to act {g.to_act}\nhands {hands}\n"
            f"turned {g.turned_card.text if g.turned_card else '-'} trump "
            f"{g.trump.letter if g.trump is not None else '-'} next "
            f"{g.next_trump.letter if g.next_trump is not None else '-'}\n"
            f"bids {' '.join('?' if b is None else str(b) for b in g.bids)} won "
            f"{' '.join(map(str, g.tricks_won))} totals {' '.join(map(str, g.totals))}\n"
            f"tricks {len(g.tricks)} trick {' '.join(c.text for c in g.trick)}"
        )
        if pos.dealing is not None:
            text += "\ndealing " + " | ".join(" ".join(c.text for c in h) for h in pos.dealing)
        if not pos.drawn:
            text += "\nthe first dealer is drawn"
        return text


def state_at(spiel_game: WizardGame, game: Game, last_round: int | None = None) -> WizardState:
    """A state of ``spiel_game`` in the position of the rules-core ``game``
    (a copy; its rules must be the game's), ending when round ``last_round``
    (default: the game's last) is scored. Its history is empty, and its
    returns count the points scored from this position on."""
    if game.rules != spiel_game.rules:
        raise ValueError("the game's rules are not those of the OpenSpiel game")
    if game.phase is Phase.DEAL and game.round == 0:
        raise ValueError("a game not dealt yet: use new_initial_state()")
    state: WizardState = spiel_game.new_initial_state()
    last = game.rules.rounds if last_round is None else last_round
    state._pos = _Position(game.clone(rng=_NO_DEALS), last, True)
    state._pos.game.drain_events()
    return state


# -- observations ----------------------------------------------------------------------------


def view_text(view: SeatView) -> str:
    """A seat's view as one line: what it may know now (OpenSpiel's
    observation string), the same for every deal of the hidden cards.

    >>> g = Game(Rules(players=3), seed=1)
    >>> g.deal()
    >>> view_text(g.view(1))
    'p1 r1/20 c1 d0 bid hand 1D turned 10S trump S next - bids ? ? ? won 0 0 0 totals 0 0 0 plays'
    """
    parts = [
        f"p{view.seat} r{view.round}/{view.rules.rounds} c{view.cards_per_player}",
        f"d{view.dealer} {view.phase.value}",
        "hand " + " ".join(c.text for c in view.hand),
    ]
    if view.others_hands:
        parts.append("sees " + " | ".join(" ".join(c.text for c in h) for h in view.others_hands))
    parts += [
        f"turned {view.turned_card.text if view.turned_card is not None else '-'}",
        f"trump {view.trump.letter if view.trump is not None else '-'}",
        f"next {view.next_trump.letter if view.next_trump is not None else '-'}",
        "bids " + " ".join("?" if b is None else str(b) for b in view.bids),
        "won " + " ".join(map(str, view.tricks_won)),
        "totals " + " ".join(map(str, view.totals)),
        "plays" + "".join(f" {s}:{c.text}" for s, c in view.plays),
    ]
    return " ".join(parts)


class WizardObserver:
    """OpenSpiel's observer of this game: the encoder's vector (``tensor``,
    its blocks named in ``dict``) and :func:`view_text`, for one seat.

    Only the default observation type is offered (a seat's private and public
    information, without perfect recall): it is what the view gives."""

    def __init__(self, iig_obs_type: Any = None, params: dict[str, Any] | None = None) -> None:
        if params:
            raise ValueError(f"observation parameters are not supported: {params}")
        if iig_obs_type is not None and (
            iig_obs_type.perfect_recall
            or not iig_obs_type.public_info
            or iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER
        ):
            raise ValueError(
                "python_wizard observes a seat's view only: its own and the public "
                "information, without perfect recall (no information state)"
            )
        self.tensor = np.zeros(OBS_SIZE, np.float32)
        self.dict = {b.name: self.tensor[b.offset : b.end].reshape(b.shape) for b in BLOCKS}

    def set_from(self, state: WizardState, player: int) -> None:
        self.tensor[:] = encode(state.view(player))

    def string_from(self, state: WizardState, player: int) -> str:
        return view_text(state.view(player))


pyspiel.register_game(_GAME_TYPE, WizardGame)

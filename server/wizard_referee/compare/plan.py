"""What a comparison plays: the bots, the deals, the seats, the seeds.

Deal ``k`` (0, 1, 2, ...) is played twice: game ``dK-A`` with A in the
candidate seat, game ``dK-B`` with B there; the other seats hold the
opponents, the same in both games. The candidate seat turns with the deal
(``k mod players``) and the order of the opponents around the table runs
through all their permutations, one full round of seats per permutation, so
that over ``players * (players - 1)!`` deals every opponent sits at every
distance from the candidate equally often.

Seeds. Both games of a deal share the deal seed ``SEED:dK`` (the same cards)
and the opponents' per-game seeds (``GameStarted.bot_seed``, derived with
:func:`wizard_arena.protocol.seeds.bot_seed` from the comparison's secret,
the key ``dK`` and the seat), so a stochastic opponent draws the same numbers
in both games; the candidate seat's seed has the key ``dK-A`` or ``dK-B``, so
two copies of a stochastic bot are two differently seeded players. Without
duplicate replacement (``duplicate=False``, for measuring what it is worth)
B's game gets a deal and opponent seeds of its own: ``SEED:dK:B`` and keys
``dK-B``.
"""

from __future__ import annotations

import ast
import itertools
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from wizard_arena.protocol.seeds import bot_seed
from wizard_arena.rules import Rules
from wizard_referee.tournament.store import GameSpec

__all__ = [
    "DEFAULT_OPPONENTS",
    "SIDES",
    "BotSpec",
    "ComparePlan",
    "PlannedGame",
    "parse_bot",
]

SIDES = ("A", "B")

#: The opponents when none are given (the example bots, as ``wizard-arena
#: play`` fills seats), taken in turn for the seats around the candidate.
DEFAULT_OPPONENTS = (
    "wizard_bots.heuristic:HeuristicBot",
    "wizard_bots.montecarlo:MonteCarloBot(samples=4)",
    "wizard_bots.random_bot:RandomBot",
)

_CLASS = re.compile(r"^(?P<target>[^\s()]+:[A-Za-z_]\w*)(?:\((?P<args>.*)\))?$", re.DOTALL)


@dataclass(frozen=True)
class BotSpec:
    """A bot as given on the command line: a Python class (``MODULE:CLASS``
    or ``path/to/file.py:CLASS``, optionally with constructor arguments,
    ``MODULE:CLASS(key=value, ...)``) or a command line (anything else)."""

    text: str
    target: str | None = None
    """``MODULE:CLASS`` or ``path.py:CLASS`` of a class (None: a command)."""
    kwargs: dict[str, Any] = field(default_factory=dict)
    command: tuple[str, ...] | None = None

    @property
    def is_class(self) -> bool:
        return self.target is not None

    @property
    def label(self) -> str:
        """A short name: the class name, or the command's program or script."""
        if self.target is not None:
            return self.target.rpartition(":")[2]
        assert self.command is not None
        words = [w for w in self.command[1:] if not w.startswith("-") and "{" not in w]
        main = (
            words[0]
            if words
            and self.command[0].rsplit("/", 1)[-1].startswith(("python", "node", "java", "ruby"))
            else self.command[0]
        )
        return re.sub(r"\.\w+$", "", main.rsplit("/", 1)[-1]) or "bot"


def parse_bot(text: str) -> BotSpec:
    """A bot spec: a class when the text looks like ``MODULE:CLASS``,
    ``path.py:CLASS`` or either with ``(key=value, ...)``; else a command line.

    >>> parse_bot("wizard_bots.montecarlo:MonteCarloBot(samples=4)").kwargs
    {'samples': 4}
    >>> parse_bot("node bots/fox.js {server} {token}").command
    ('node', 'bots/fox.js', '{server}', '{token}')
    >>> parse_bot("my_bot.py:Fox").label, parse_bot("python3 fox.py --fast").label
    ('Fox', 'fox')
    """
    text = text.strip()
    if not text:
        raise ValueError("an empty bot")
    m = _CLASS.match(text)
    if m is None:
        try:
            words = shlex.split(text)
        except ValueError as e:
            raise ValueError(f"{text!r}: not a command line ({e})") from None
        return BotSpec(text, command=tuple(words))
    kwargs: dict[str, Any] = {}
    if m.group("args") is not None and m.group("args").strip():
        try:
            call = ast.parse(f"f({m.group('args')})", mode="eval").body
            assert isinstance(call, ast.Call)
            if call.args:
                raise ValueError("give constructor arguments as key=value")
            for kw in call.keywords:
                if kw.arg is None:
                    raise ValueError("no ** arguments")
                kwargs[kw.arg] = ast.literal_eval(kw.value)
        except (SyntaxError, ValueError) as e:
            raise ValueError(
                f"{text!r}: the arguments must be key=value with Python literal values ({e})"
            ) from None
    return BotSpec(text, m.group("target"), kwargs)


@dataclass(frozen=True)
class PlannedGame:
    """One game of the plan, as stored (``spec``) and as played."""

    spec: GameSpec
    deal: int
    side: str
    """``A`` or ``B``: whose game of the deal this is."""
    candidate_seat: int
    bots: tuple[BotSpec, ...]
    """By seat."""
    bot_seeds: tuple[int, ...]
    """``GameStarted.bot_seed`` by seat."""

    @property
    def tags(self) -> dict[str, Any]:
        return {
            "compare": True,
            "deal": self.deal,
            "side": self.side,
            "candidate_seat": self.candidate_seat,
            "duplicate_set": self.spec.duplicate_set,
        }


@dataclass(frozen=True)
class ComparePlan:
    a: BotSpec
    b: BotSpec
    opponents: tuple[BotSpec, ...]
    """One per seat other than the candidate's (players - 1)."""
    rules: Rules
    seed: int = 1
    duplicate: bool = True
    secret: str = ""
    """The secret of the bots' per-game seeds."""

    def __post_init__(self) -> None:
        if len(self.opponents) != self.rules.players - 1:
            raise ValueError(
                f"{self.rules.players} players need {self.rules.players - 1} opponents, "
                f"got {len(self.opponents)}"
            )

    @property
    def names(self) -> tuple[str, ...]:
        """Entrant names: ``A``, ``B``, then the opponents' (numbered when repeated)."""
        labels = [o.label for o in self.opponents]
        opp = [
            f"{n}-{labels[:i].count(n) + 1}" if labels.count(n) > 1 else n
            for i, n in enumerate(labels)
        ]
        return ("A", "B", *(n if n not in SIDES else f"{n}-opponent" for n in opp))

    def key(self) -> dict[str, Any]:
        """What the games depend on (must match to resume)."""
        return {
            "kind": "compare",
            "a": self.a.text,
            "b": self.b.text,
            "opponents": [o.text for o in self.opponents],
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "duplicate": self.duplicate,
        }

    def seating(self, deal: int) -> tuple[int, tuple[int, ...]]:
        """The candidate's seat and the opponent index in each other seat (in seat order)."""
        players = self.rules.players
        perms = itertools.permutations(range(players - 1))
        count = 1
        for k in range(2, players):
            count *= k
        order = next(itertools.islice(perms, (deal // players) % count, None))
        return deal % players, tuple(order)

    def game(self, deal: int, side: str) -> PlannedGame:
        seat, order = self.seating(deal)
        players = self.rules.players
        candidate = self.a if side == "A" else self.b
        names = self.names
        seats_names: list[str] = []
        bots: list[BotSpec] = []
        rest = iter(order)
        for s in range(players):
            if s == seat:
                seats_names.append(side)
                bots.append(candidate)
            else:
                o = next(rest)
                seats_names.append(names[2 + o])
                bots.append(self.opponents[o])
        own = f"d{deal}-{side}"
        shared = f"d{deal}" if self.duplicate or side == "A" else own
        deal_seed = f"{self.seed}:d{deal}" + ("" if self.duplicate or side == "A" else ":B")
        seeds = tuple(
            bot_seed(self.secret, own if s == seat else shared, s) for s in range(players)
        )
        spec = GameSpec(
            own,
            2 * deal + SIDES.index(side),
            0,
            deal,
            SIDES.index(side),
            deal_seed,
            tuple(seats_names),
        )
        return PlannedGame(spec, deal, side, seat, tuple(bots), seeds)

    def games(self, deals: range) -> list[PlannedGame]:
        """Both games of each deal, A's first."""
        return [self.game(k, side) for k in deals for side in SIDES]

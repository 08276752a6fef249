"""A tournament's configuration: the entrants and the ``[tournament]`` settings,
read from TOML (every bad key reported at once, :mod:`.config_keys`), the
rules of its games and the key its game plan depends on."""

from __future__ import annotations

import shlex
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from wizard_arena.cli.rules_options import rules_from_mapping
from wizard_arena.rules import Rules
from wizard_referee.hosting.config import EntrantConfig, HostConfig
from wizard_referee.referee.policy import PolicyError, RefereePolicy
from wizard_referee.sandbox import OUTPUT_LIMIT
from wizard_referee.storage import is_url, shown
from wizard_referee.tournament.config_keys import (
    LIMIT_KEYS,
    RESOURCE_KEYS,
    TOURNAMENT_KEYS,
    TournamentError,
    entrant_problems,
    listed,
    section_problems,
)
from wizard_referee.tournament.seating import DEFAULT_SEATING

__all__ = ["EntrantConfig", "TournamentConfig", "TournamentError"]


@dataclass(frozen=True)
class TournamentConfig:
    entrants: tuple[EntrantConfig, ...]
    name: str = "tournament"
    players: int = 4
    """Table size, 3 to 6."""
    deal_sets: int = 1
    """Deals per table; each is played once per seating of the design."""
    seating: str | None = None
    """The seatings of a deal (:mod:`.seating`): ``balanced`` (seats and
    neighbours) or ``cyclic`` (seats only). ``None``: ``balanced`` for a new
    tournament, the stored one on ``--resume``."""
    bid_restriction: str = "none"
    seed: int = 1
    parallel: int = 1
    """Tables played at once."""
    database: str = "tournament.sqlite"
    """The results store: an SQLite file, or a ``postgresql://`` URL."""
    host: str = "127.0.0.1"
    port: int = 0
    max_tables: int = 200
    """Use every k-subset of entrants when there are at most this many."""
    connect_timeout: float = 60.0
    output_limit: int = OUTPUT_LIMIT
    """Bytes of output each start of a command entrant's process may write
    to its log (the rest is dropped, one line saying so; 0: no limit)."""
    exclude_faulted: bool = False
    """Keep games in which any seat was faulted out of the ratings."""
    workdir: str = ""
    """Folder entrant commands run in (from a file: relative to its folder, by
    default the folder itself; otherwise default the current one)."""
    hidden_bids: bool = False
    """Rule variant: everyone bids at once; the bids are revealed together."""
    blind_first_round: bool = False
    """Rule variant: round 1, each player sees the others' cards, not their own."""
    maximus: bool = False
    """Rule variant: Wizard Maximus (five rounds of all cards, trump C D H S none)."""
    tricksy: bool = False
    """Rule variant: whoever plays a Wizard names the trump from the next trick on."""
    lowest_score_deals: bool = False
    """Rule variant: from round 2 the player with the fewest points deals."""
    round_sizes: tuple[int, ...] | None = None
    """Rule variant: a short game dealing these numbers of cards, round by round."""
    tricksy_suited: bool = False
    """Rule variant: Tricksy Wizard with suited Wizards (a Wizard's suit is trump at once)."""
    reveal_bids_after_tricks: bool = False
    """Rule variant, with hidden_bids: the bids are revealed after the round's tricks."""
    first_dealer_by_draw: bool = False
    """Rule variant: the first dealer is drawn (highest card; drawn from each game's deal seed)."""
    executor: str = "local"
    """Who plays the games: ``local`` (a referee of our own, ``parallel``
    tables at once) or ``ray`` (warm workers on a Ray cluster, each running
    that machinery; :mod:`wizard_referee.cluster`)."""
    workers: int = 0
    """Ray workers (0: as many as the cluster's resources hold)."""
    ray_address: str = ""
    """The Ray cluster to join (``auto``, ``ray://HOST:10001``); empty: start
    a Ray instance on this machine with every core."""
    ray_working_dir: str = ""
    """A folder Ray sends to every worker (its runtime_env working_dir), in
    which the entrants' commands run; empty: none (the workers share this
    machine's files). Relative to the TOML file."""
    sandbox: str = "none"
    """How command entrants run: ``none`` (as this user, unconfined) or
    ``bwrap`` (each confined: :mod:`wizard_referee.sandbox`)."""
    bot_seed_secret: str | None = None
    """The secret of the bots' per-game seeds (``GameStarted.bot_seed``,
    :mod:`wizard_arena.protocol.seeds`). ``None``: a random one, drawn when the
    tournament is created and kept in its database, so ``--resume`` uses it
    again. Give one only to make a tournament reproducible from its file (a
    bot that learns it can predict the others' seeds, never the deals)."""

    # The referee's policy (RefereePolicy; the keys are made from its SETTINGS,
    # in their order, a test checks): what a competition fixes, ...
    move_time: float = 1.0
    """Seconds allowed for each decision."""
    lag_credit_cap: float = 0.5
    """Seconds of network credit a decision gets at most (the bot's measured
    round trip, added to its deadline; 0: none). See RefereePolicy."""
    time_bank: float = 0.0
    """Seconds per seat and game a decision may run past move_time (0: none)."""
    fault_policy: str = "default"
    """What a fault costs: ``default``, ``forfeit_round`` or ``remove``
    (docs/protocol-reference.md, "Fault policy")."""
    max_faults: int = 3
    """Faults in one game after which fault policy ``remove`` removes the seat."""
    reconnect_window: float = 30.0
    """Seconds a bot whose connection dropped may take its seat back (0: never)."""
    # ... and the tournament's referee's front door and limits
    lag_credit_behind_proxy: bool = False
    """The entrants reach the referee through a proxy or relay (the kernel's
    measure of a connection is then not the bot's)."""
    max_connections: int = 0
    """Open bot streams at most on the tournament's referee (0: no limit)."""
    hello_timeout: float = 5.0
    """Seconds a new stream has to send its Hello."""
    max_greeting: int = 256
    """Streams at most that have not had their Hello answered (0: no limit)."""
    max_greeting_per_peer: int = 16
    """The same from one address, loopback excepted (0: no limit)."""
    auth_backoff: float = 1.0
    """Seconds an address is refused after 3 failed logins in a row, doubling (0: none)."""
    max_sessions_per_token: int = 0
    """Connected sessions at most per entrant token (0: no limit)."""
    max_message_bytes: int = 64 * 1024
    """Largest message a bot may send."""
    max_consecutive_timeouts: int = 10
    """Decisions in a row a bot may let time out before it is cut off (0: no limit)."""

    @property
    def rules(self) -> Rules:
        """The rules of every game (raises ValueError for options that cannot
        be combined; :meth:`validate` turns that into a TournamentError)."""
        return rules_from_mapping(vars(self))

    @property
    def policy(self) -> RefereePolicy:
        """How the referee treats the entrants (raises PolicyError for a
        setting that cannot be; :meth:`validate` turns that into a TournamentError)."""
        return RefereePolicy.from_mapping(vars(self))

    def hosting(self) -> HostConfig:
        """What the host of this tournament's games needs of it."""
        return HostConfig(
            entrants=self.entrants,
            rules=self.rules,
            policy=self.policy,
            parallel=self.parallel,
            sandbox=self.sandbox,
            workdir=self.workdir,
            output_limit=self.output_limit,
            connect_timeout=self.connect_timeout,
            host=self.host,
            port=self.port,
            private=self.database,
        )

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["entrants"] = [
            {
                "name": e.name,
                "command": list(e.command) if e.command else None,
                "external": e.command is None,
            }
            for e in self.entrants
        ]  # tokens are secrets: never stored
        d["database"] = shown(self.database)  # nor a URL's password
        del d["bot_seed_secret"]  # stored apart, drawn when not given
        return d

    def plan_key(self) -> dict[str, Any]:
        """What the game plan depends on (must match to resume). The rule
        variants in force are part of it (absent when not in force, so a
        tournament of the base game stored before variants existed resumes)."""
        key: dict[str, Any] = {
            "entrants": [e.name for e in self.entrants],
            "players": self.players,
            "deal_sets": self.deal_sets,
            "seating": self.seating or DEFAULT_SEATING,
            "seed": self.seed,
            "bid_restriction": self.bid_restriction,
            "max_tables": self.max_tables,
        }
        rules = self.rules.to_dict()
        for name in self.rules.options:
            key[name] = rules[name]
        return key

    @classmethod
    def from_toml(cls, path: str | Path, **overrides: Any) -> TournamentConfig:
        """Read a TOML file (section ``[tournament]`` and ``[[entrant]]`` tables);
        ``overrides`` (not None) replace file values. Relative paths in the
        file are relative to the file's folder."""
        p = Path(path)
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except OSError as e:
            raise TournamentError(f"{p}: cannot read: {e.strerror or e}") from None
        except tomllib.TOMLDecodeError as e:
            raise TournamentError(f"{p}: not valid TOML: {e}") from None
        return cls.from_dict(data, base=p.parent, **overrides)

    @classmethod
    def from_dict(
        cls, data: dict[str, Any], base: Path | None = None, **overrides: Any
    ) -> TournamentConfig:
        """The configuration of a parsed file; ``overrides`` (not None) replace
        its ``[tournament]`` values. TournamentError naming every bad key."""
        problems = [
            f"unknown section [{name}] (a file has [tournament] and [[entrant]] tables)"
            for name in sorted(set(data) - {"tournament", "entrant"})
        ]
        section = data.get("tournament", {})
        if not isinstance(section, dict):
            problems.append("[tournament] must be a table")
            section = {}
        section = {**section, **{k: v for k, v in overrides.items() if v is not None}}
        problems += section_problems(section)
        raw_entrants = data.get("entrant", [])
        problems += entrant_problems(raw_entrants)
        if problems and isinstance(raw_entrants, list):  # reported with the others
            problems += _too_few(len(raw_entrants), section.get("players", cls.players))
        if problems:
            raise TournamentError(listed(problems))
        if section.get("round_sizes") is not None:
            section["round_sizes"] = tuple(section["round_sizes"])
        if base is not None:
            given = {k for k, v in overrides.items() if v is not None}
            _paths_from(base, section, given, database=cls.database, workdir=".")
        entrants = []
        for e in raw_entrants:
            command = e.get("command")
            if isinstance(command, str):
                command = shlex.split(command)
            resources: dict[str, Any] = {k: float(e[k]) for k in RESOURCE_KEYS if k in e}
            resources.update({k: e[k] for k in LIMIT_KEYS if k in e})
            folder = e.get("folder", "")
            if folder and base is not None and not Path(folder).is_absolute():
                folder = str(base / folder)
            entrants.append(
                EntrantConfig(
                    e["name"],
                    tuple(command) if command else None,
                    e.get("token"),
                    folder=folder,
                    **resources,
                )
            )
        config = cls(entrants=tuple(entrants), **section)
        config.validate()
        return config

    def problems(self) -> list[str]:
        """Everything wrong with this configuration (empty: it can be run)."""
        problems = section_problems({k: getattr(self, k) for k in TOURNAMENT_KEYS})
        names = [e.name for e in self.entrants]
        if len(set(names)) != len(names):
            problems.append("entrant names must be unique")
        problems += _too_few(len(self.entrants), self.players)
        if problems:
            return problems  # the rules and the policy need every key right
        try:
            self.rules  # noqa: B018  (the core refuses combinations that cannot work)
        except ValueError as e:
            problems.append(f"rules: {e}")
        try:
            self.policy  # noqa: B018  (RefereePolicy checks its own settings, once)
        except PolicyError as e:
            problems.append(str(e))
        return problems

    def validate(self) -> None:
        """TournamentError listing every problem (see :meth:`problems`)."""
        problems = self.problems()
        if problems:
            raise TournamentError(listed(problems))


def _paths_from(base: Path, section: dict[str, Any], given: set[str], **defaults: str) -> None:
    """The file's paths (``database``, ``workdir``, ``ray_working_dir``; the
    first two by default too) made relative to its folder ``base``; paths
    given on the command line (``given``) stay relative to the current one,
    and a database's URL is no path."""
    for key in ("database", "workdir", "ray_working_dir"):
        value = section.get(key) or defaults.get(key, "")
        if key not in given and value and not is_url(value):
            path = Path(value)
            section[key] = str(path if path.is_absolute() else base / path)


def _too_few(entrants: int, players: Any) -> list[str]:
    """The problem of too few entrants for a table (none when ``players`` is
    itself wrong: that is reported as a bad key)."""
    if section_problems({"players": players}) or entrants >= players:
        return []
    return [
        f"{entrants} entrants cannot fill a table of {players} "
        "(add entrants, or set a smaller players)"
    ]

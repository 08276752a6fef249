"""The rooms of the three packages, what each holds and what it may import:
one row a room (:data:`ROOMS`). tests/test_architecture.py checks every
module's imports against its row; docs/architecture.md's tables of rooms are
made from the rows (:func:`rooms_section`; ``python
scripts/gen_architecture_doc.py`` writes them, the test checks them).

A new room is one more row: its modules, what lives there, what it may
import besides the standard library and itself (rooms of ours by their
entry in ``modules``, other distributions by their top-level package), and
in ``note`` the finer limits that tests/test_architecture.py checks one by one.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PACKAGES = {
    "wizard_arena": ROOT / "sdk" / "wizard_arena",
    "wizard_referee": ROOT / "server" / "wizard_referee",
    "wizard_bots": ROOT / "example_bots" / "wizard_bots",
}
OURS = tuple(PACKAGES)


def within(name: str, *prefixes: str) -> bool:
    """Whether module ``name`` is one of ``prefixes`` or below one."""
    return any(name == p or name.startswith(p + ".") for p in prefixes)


@dataclass(frozen=True)
class Room:
    """One row of the rooms' table: a room, what lives there, and what it may
    import besides the standard library and itself."""

    modules: tuple[str, ...]
    """The room's modules: a package or module and all below it; ``pkg.__init__``
    is a package's own ``__init__`` alone."""
    what: str
    """What lives there (the doc's "what" column)."""
    may: tuple[str, ...] = ()
    """What it may import: rooms of ours (as named in their ``modules``) and
    other distributions' top-level packages (``grpc``)."""
    note: str = ""
    """Limits finer than a room (each checked by a test of its own in
    tests/test_architecture.py)."""


def entry_holds(entry: str, module: str) -> bool:
    """Whether a room's entry names ``module``: the entry and all below it,
    or for ``pkg.__init__`` the package's own module alone."""
    if entry.endswith(".__init__"):
        return module == entry.removesuffix(".__init__")
    return within(module, entry)


def room_of(module: str) -> Room | None:
    """The room that holds ``module``: its row with the longest entry naming it."""
    found = [(len(e), r) for r in ROOMS for e in r.modules if entry_holds(e, module)]
    return max(found, key=lambda t: t[0])[1] if found else None


def allowed(room: Room, module: str) -> bool:
    """Whether ``room`` may import ``module``."""
    top = module.split(".")[0]
    if top in sys.stdlib_module_names:
        return True
    if top not in OURS:
        return top in room.may
    target = room_of(module)
    return target is room or (target is not None and bool(set(target.modules) & set(room.may)))


#: What each room is and what it may import: one row a room, in the order of
#: docs/architecture.md's tables (generated from these rows).
ROOMS: list[Room] = [
    # -- the SDK ----------------------------------------------------------------------------
    Room(
        ("wizard_arena.rules",),
        "the rules core: cards, the deal (and the draw for the first dealer), the `Game` state "
        "machine, the rules themselves (`laws.py`), per-seat views (`view.py`), and the fold of "
        "what a seat observes into its view (`observation.py`)",
        note="no `logging`, `socket`, `threading` or `asyncio`, no global `random`",
    ),
    Room(
        ("wizard_arena.protocol",),
        "protocol v1 as plain values (`messages.py`), fault and reject codes and the event "
        "streams (`codes.py`), per-game bot seeds (`seeds.py`), the wire codec (`wire/`, the one "
        "place that converts protobuf; `wire/files.py` reads the .proto shipped in the package), "
        "and the `proto` verb (`cmd_proto.py`)",
        ("wizard_arena.rules", "wizard_arena.bot", "wizard_arena._generated", "google", "grpc"),
        "of `bot.py` only `GameInfo`; the generated code only inside `wire/`, grpc only in "
        "`wire/service.py` (lazily)",
    ),
    Room(
        ("wizard_arena.bot",),
        "the bot API (`Bot`, `GameInfo`, `GameSummary`, `decide`)",
        ("wizard_arena.rules",),
    ),
    Room(
        ("wizard_arena.local", "wizard_arena.cmd_play"),
        "in-process play (`play_local`) and the `play` verb",
        (
            "wizard_arena.rules",
            "wizard_arena.protocol",
            "wizard_arena.bot",
            "wizard_arena.loader",
            "wizard_arena.cli",
        ),
    ),
    Room(
        ("wizard_arena.loader",),
        "a bot class loaded from `MODULE:CLASS` or `path/to/file.py:CLASS` and built with "
        "keyword arguments, one `SpecError` for what goes wrong (the `bot`, `play`, `compare` "
        "and `check` verbs)",
        ("wizard_arena.bot", "wizard_arena.client"),
        "of `client/` only `AsyncBot`, to recognise one: it loads neither grpc nor trio",
    ),
    Room(
        ("wizard_arena.client",),
        "the gRPC client: `driver` (the protocol logic, no I/O), `blocking` (`run_bot`; its "
        "step `answer`), `session` and `serve` (trio: `open_bot_session`, `serve_bot`; the "
        "`Session` protocol and `serve_sessions` over any session), `connection`, `retry`, "
        "`results` (`RunResult`, `ClientRecord`), `errorlog`; `cmd_bot.py` is the `bot` verb",
        (
            "wizard_arena.__init__",
            "wizard_arena.rules",
            "wizard_arena.protocol",
            "wizard_arena.bot",
            "wizard_arena.loader",
            "grpc",
            "trio",
        ),
        "trio only where an `AsyncBot` or the trio runner is used",
    ),
    Room(
        ("wizard_arena.rl",),
        "the course kit's environments: the observation encoder and action ids (`encoding.py`, "
        "numpy only; a learned bot uses it at the table), a game driven by action ids "
        "(`table.py`), the PettingZoo AEC environment (`aec.py`, as `wizard_v0.env()`), the "
        "Gymnasium one-seat environment (`single.py`), their spaces (`spaces.py`), a league of "
        "earlier policies to train against (`league.py`: snapshots, opponents sampled "
        "uniformly or by the learner's record); needs the "
        "`rl` extra. `openspiel.py` registers Wizard as the OpenSpiel game `python_wizard` "
        "(every rule variant a game parameter; the `open_spiel` extra)",
        (
            "wizard_arena.rules",
            "wizard_arena.bot",
            "wizard_arena.local",
            "wizard_arena.extras",
            "numpy",
            "gymnasium",
            "pettingzoo",
            "pyspiel",
            "open_spiel",
        ),
        "the encoder: numpy and `rules/` alone",
    ),
    Room(
        ("wizard_arena.testing",),
        "`RawBot`, the one scripted raw gRPC client (the misbehaving-bots kit and the tests use "
        "it); `inbox.py`, what a scripted bot received, by kind (the raw bot's and the suite's "
        "in-memory bots'); `relay.py`, a TCP relay on loopback that delays each direction (a "
        "bot far away, on one machine: the network credit's tests and bench)",
        ("wizard_arena.rules", "wizard_arena.protocol", "grpc"),
    ),
    Room(
        ("wizard_arena.conformance",),
        "the rules test-vector runner and the `conformance` verb",
        ("wizard_arena.rules",),
        "the verb never loads grpc",
    ),
    Room(
        ("wizard_arena.cli",),
        "the `wizard-arena` command: a table of verbs, each a module path loaded only when it "
        "runs; the rule options shared by `play`, `serve`, `check` and tournaments",
        ("wizard_arena.__init__", "wizard_arena.rules", "wizard_arena.extras"),
        "each verb's module (of any room) by its module path, loaded when the verb runs",
    ),
    Room(
        ("wizard_arena._generated",),
        "`protoc` and mypy-protobuf output for `proto/wizard_arena/v1/arena.proto` "
        "(`scripts/gen_proto.py`): messages, gRPC stubs, their typed `.pyi`, and a copy of the "
        ".proto (shipped in the wheel)",
        ("google", "grpc"),
    ),
    Room(
        ("wizard_arena.extras",),
        "the optional parts and the pyproject extras that install them (`EXTRAS`); "
        "`require(extra, part, modules=...)`, called by a part's `__init__`, fails in one line "
        "naming the extra",
    ),
    Room(
        ("wizard_arena.__init__",),
        "the package: the rules core's names and the bot API re-exported, `__version__`",
        ("wizard_arena.rules", "wizard_arena.bot"),
    ),
    # -- the server -------------------------------------------------------------------------
    Room(
        ("wizard_referee.referee",),
        "the referee: `bridge.py` (the trio <-> grpc.aio bridge, the only server module that "
        "imports grpc; its grpc.aio thread runs on uvloop where the `[fast]` extra installed "
        "it; `grpc_setup.py` chooses grpc core's listener before grpc loads, and that thread's "
        "event loop), `seat.py` (the `Seat` protocol a table talks to, and `SeatBase`, the trio "
        "side of a seat that the gRPC stream and the in-memory seat share), `memory.py` (an "
        "in-memory seat for tests), `arena.py`, `handshake.py`, `sessions.py` (sessions, "
        "resume, matchmaking), `table.py` (one game; `pending.py`: a seat's pending decision, "
        "the one test of whether an answer counts, and its `Allowance`, the one place that "
        "adds up move time, network credit and time bank; `alarm.py`: the table's one alarm "
        "for the per-move deadlines; `broadcast.py`: what each seat is sent of the game's events; "
        "`seat_state.py`: one seat at a table, with what it does itself: reading its bot and "
        "routing each message (the answer to the decision, anything else a stray), its faults "
        "(charged in the game's `FaultBook`), sending, rejecting, taking the seat back on a new "
        "stream and sending it the game so far; the table keeps the game flow), the network "
        "credit (`clock_probes.py`: a connection's clock probes, sent while no request is open "
        "for the bot, their replies timed; `round_trips.py`: the estimate of a bot's round "
        "trip from them, bounded and capped, pure; `tcp_rtt.py`: the kernel's `tcpi_min_rtt` "
        "of the server's socket to a bot, found among the process's descriptors), "
        "`live.py` (the games in progress, for spectators), `counters.py` (the counts behind "
        "the metrics), `faults.py` (fault codes' meanings, the fault policy and its "
        "bookkeeping), `policy.py` (`RefereePolicy`: deadlines, network credit, time bank, "
        "limits, fault "
        "policy, reconnect, validated once), `record.py` (game records), `listen.py`, "
        "`logs.py`; `cmd_serve.py` is the `serve` verb",
        (
            "wizard_referee.web",
            "wizard_arena.__init__",
            "wizard_arena.rules",
            "wizard_arena.protocol",
            "wizard_arena.bot",
            "wizard_arena.cli",
            "grpc",
            "grpc_health",
            "grpc_reflection",
            "structlog",
            "trio",
        ),
        "grpc only in `bridge.py`; `web/` only in `cmd_serve.py`, when it starts the pages "
        "(`--web`), and `listen.py`, when it checks they can be served",
    ),
    Room(
        ("wizard_referee.hosting",),
        "what plays games on a referee of its own, whoever plans them (a tournament, a "
        "comparison over the referee, the ladder, a Ray worker): its settings (`config.py`: "
        "`HostConfig`, the rules, the referee's policy, the entrants (`EntrantConfig`), how "
        "they run and their limits; `HostError`), the host (`host.py`: `open_host`, "
        "`GameHost.play` of any planned game, `run_game`), the command entrants' instances, "
        "supervised and restarted (`entrants.py`), confined entrants (`confine.py`: "
        '`sandbox = "bwrap"`, each entrant\'s uid, folder, limits and GPUs, the checks before '
        "any game, and each node's own checks, which a Ray worker runs on its node), one "
        "start of a bot's process, confined or not, the one way every bot is started "
        "(`bot_process.py`, `check`'s too), and the launcher that starts them: a process "
        "started before gRPC, so bots are never forked from a gRPC process; it puts a "
        "confined start in its cgroup before its exec, and keeps each bot's output to its "
        "limit (`launcher.py`; `launcher_child.py`, the standard library only)",
        (
            "wizard_referee.referee",
            "wizard_referee.sandbox",
            "wizard_referee.storage",
            "wizard_arena.rules",
            "trio",
        ),
        "never the rooms that use it (tournament, compare, ladder, cluster, check); its "
        "`__init__` imports nothing, so that `check` starts the launcher before gRPC loads; "
        "`launcher_child.py` the standard library alone",
    ),
    Room(
        ("wizard_referee.tournament",),
        "configuration (`config.py`, the key table `config_keys.py`; `hosting()` is its "
        "host's `HostConfig`), the plan (`plan.py`), the tables (`schedule.py`) and who sits "
        "where at each deal (`seating.py`), the executors' table (`executors.py`: `local` or "
        "`ray`, by module path), the runner and its dispatch of games to the free sessions of "
        "the hosting room's host (`dispatch.py`), the results store (`store.py`: its schema, "
        "on the storage room), the leaderboard, the calibration of its intervals "
        "on simulated fields (`calibrate.py`), a record re-read step by step (`replay.py`, for "
        "the `replay` verb and the web replay); the `tournament`, `demo`, `replay` and `export` "
        "verbs",
        (
            "wizard_referee.hosting",
            "wizard_referee.referee",
            "wizard_referee.ratings",
            "wizard_referee.sandbox",
            "wizard_referee.storage",
            "wizard_referee.stats",
            "wizard_referee.web",
            "wizard_arena.rules",
            "wizard_arena.protocol",
            "wizard_arena.cli",
            "wizard_arena.extras",
            "numpy",
            "trio",
        ),
        "`web/` only in `cmd_tournament.py`, when it starts the pages (`--web`); the `ray` "
        "executor by module path",
    ),
    Room(
        ("wizard_referee.sandbox",),
        "running someone else's command confined (docs/untrusted-bots.md): the argv and clean "
        "environment of a confined start (`bwrap.py`: bubblewrap's namespaces and read-only "
        "binds, then `setpriv` to an unprivileged uid; an instance's GPUs and the device files "
        "of those alone; the seccomp filter, `seccomp.py`, with libseccomp's binding "
        "`pyseccomp`), a cgroup per start under the runner's own, v1 or v2, with the "
        "memory, process and CPU limits, which limit was exceeded, a command that enters the "
        "group before its exec (for starters with gRPC threads), and nothing left behind "
        "(`cgroups.py`), whether confinement works here (`probe.py`), the `--sandbox` and limit "
        "flags of `compare` and `check` (`cli.py`)",
        ("pyseccomp",),
        note="no `asyncio` or `threading` either, so that every place that starts a bot can use "
        "it (the hosting room's launcher, for a tournament, `compare`, the ladder, `check` and "
        "the Ray workers)",
    ),
    Room(
        ("wizard_referee.cluster",),
        "the `ray` executor (the optional extra `wizard-arena[ray]`): joining or starting Ray "
        "(`connect.py`), the warm workers (`workers.py`: a Ray actor running the hosting "
        "room's host, i.e. a referee and every command entrant, or playing a comparison "
        "in-process), the coordinator that hands games to idle workers, replays a lost "
        "worker's games and stores each record as it arrives (`coordinator.py`), and the "
        "executors of `tournament` and `compare` (`tournament_play.py`, `compare_play.py`)",
        (
            "wizard_referee.hosting",
            "wizard_referee.tournament",
            "wizard_referee.compare",
            "wizard_referee.referee",
            "wizard_arena.local",
            "wizard_arena.extras",
            "ray",
            "trio",
        ),
        "the only room that imports `ray`, and no room imports it: the executors are named by "
        "module path (`tournament/executors.py`)",
    ),
    Room(
        ("wizard_referee.compare",),
        "the `compare` verb: the plan of duplicate deals, seats and seeds (`plan.py`), the "
        "anytime-valid confidence sequence that decides when to stop (`stats.py`), the results "
        "store and tally of one comparison (`comparison.py`), games in worker processes "
        "(`local_play.py`) or over the hosting room's host (`referee_play.py`); `--why` asks "
        "the analysis room for the split of A - B into bidding and play",
        (
            "wizard_referee.hosting",
            "wizard_referee.tournament",
            "wizard_referee.analysis",
            "wizard_referee.referee",
            "wizard_referee.ratings",
            "wizard_referee.sandbox",
            "wizard_referee.storage",
            "wizard_arena.rules",
            "wizard_arena.protocol",
            "wizard_arena.bot",
            "wizard_arena.local",
            "wizard_arena.loader",
            "wizard_arena.cli",
            "wizard_arena.extras",
            "trio",
        ),
        "the `ray` executor by module path",
    ),
    Room(
        ("wizard_referee.analysis",),
        "the `analyse` verb (`cmd_analyse.py`): each recorded bid and card with the view its "
        "seat had, rebuilt by replaying the record through the rules core, valued by an "
        "evaluator and graded by its loss (`grade.py`), many games over worker processes "
        "(`run.py`), per-bot summaries with intervals and a comparison's split into bidding "
        "and play (`summary.py`)",
        (
            "wizard_referee.tournament",
            "wizard_referee.referee",
            "wizard_referee.ratings",
            "wizard_arena.rules",
            "wizard_arena.loader",
            "wizard_arena.cli",
        ),
        "the evaluator (a bot class, `wizard_bots` by default) by module path only",
    ),
    Room(
        ("wizard_referee.ratings",),
        "Bradley-Terry and Elo with bootstrap intervals; the `ratings` verb",
        ("wizard_referee.stats", "numpy"),
        "it rates results from any source",
    ),
    Room(
        ("wizard_referee.check",),
        "the `check` verb: run a bot against reference opponents under short deadlines, "
        "confined with `--sandbox bwrap` (`cmd_check.py`), analyse the referee's records and "
        "the SDK's structured records (`analysis.py`), report with advice (`report.py`)",
        (
            "wizard_referee.referee",
            "wizard_referee.sandbox",
            "wizard_referee.stats",
            "wizard_referee.hosting",
            "wizard_arena.rules",
            "wizard_arena.protocol",
            "wizard_arena.client",
            "wizard_arena.loader",
            "wizard_arena.cli",
            "trio",
        ),
        "the client for its records and the bot command; its bot started as every bot is, "
        "through the hosting room (`hosting/bot_process.py`): the check is a diagnosis of one "
        "process (its exit status, its standard error, no restarts), so it keeps its own "
        "lobby and game loop",
    ),
    Room(
        ("wizard_referee.web",),
        "the web pages and their JSON API (`app.py`, Starlette, with the pages in `static/`), "
        "what they show read from a results store (SQLite or PostgreSQL) or a referee's "
        "memory in worker threads and cached (`data.py`, the ladder's `ladder.py`; the games "
        "list and the replays of any store of games read by one reader, `games.py`; "
        "`replay.py`, `plot.py`), the tables "
        "in progress as a spectator may "
        "see them (`spectator.py`, from the rules core's `Game.public_view()`), the Prometheus "
        "metrics (`metrics.py`), hypercorn's trio worker (`serve.py`); `cmd_web.py` is the "
        "`web` verb (docs/web.md)",
        (
            "wizard_referee.analysis",
            "wizard_referee.referee",
            "wizard_referee.tournament",
            "wizard_referee.ladder",
            "wizard_referee.ratings",
            "wizard_referee.storage",
            "wizard_referee.stats",
            "wizard_arena.rules",
            "wizard_arena.protocol",
            "wizard_arena.cli",
            "wizard_arena.extras",
            "hypercorn",
            "starlette",
            "prometheus_client",
            "trio",
        ),
        "the `[web]` extra; only the `serve` and `tournament` verbs import this room, inside "
        "the function that starts it (`--web`)",
    ),
    Room(
        ("wizard_referee.ladder",),
        "the ladder, a competition that runs for a season (`wizard-arena ladder`, "
        "docs/ladder.md): its store on the storage room, an SQLite file or a PostgreSQL "
        "database several ladder processes share (`sql.py`: its versioned schema and every "
        "statement, in a subset SQLite and PostgreSQL both run; `store.py`: the season, the "
        "registry of entrants and versions, leases, sets, games, live ratings, the lock that "
        "keeps a second ladder process off an SQLite file), a "
        "season's settings (`season.py`), matchmaking (`matchmaking.py`, pure: the runner and "
        "the simulations share it), the live ratings (`plackett_luce.py`, OpenSkill's "
        "Plackett-Luce), "
        "the official standings (`standings.py`, the tournament's Bradley-Terry with its "
        "printed intervals), the running ladder process over the hosting room's host "
        "(`process.py`), "
        "seasons of simulated fields through the same matchmaker and ratings (`simulate.py`, "
        "with the calibration harness); `cmd_ladder.py` is the `ladder` verb",
        (
            "wizard_referee.hosting",
            "wizard_referee.tournament",
            "wizard_referee.referee",
            "wizard_referee.ratings",
            "wizard_referee.sandbox",
            "wizard_referee.storage",
            "wizard_referee.stats",
            "wizard_referee.web",
            "wizard_arena.rules",
            "wizard_arena.protocol",
            "wizard_arena.cli",
            "wizard_arena.extras",
            "openskill",
            "numpy",
            "trio",
        ),
        "`openskill` (the `[ladder]` extra) in no other room; no database driver (the "
        "storage room's alone); `web/` only in `cmd_ladder.py`, when it starts the pages (`--web`)",
    ),
    Room(
        ("wizard_referee.storage",),
        "a store's database, named by a path (SQLite, `sqlite.py`) or a `postgresql://` URL "
        "(PostgreSQL through psycopg 3, `postgres.py`, the optional extra "
        "`wizard-arena[postgres]`), behind one small interface (`database.py`: portable SQL "
        "with `?` or `:name` placeholders, transactions, `locked` (a claim's `FOR UPDATE "
        "SKIP LOCKED`; SQLite's `BEGIN IMMEDIATE` needs none), the database's clock (for "
        "leases), JSON fields, every driver error one `DatabaseError`), and versioned schemas "
        "(`migrations.py`: a `schema_version` table; an older store migrated after a note, "
        "SQLite's copied first; a newer one refused in one line; a schema may carry schemas "
        "shared with other kinds of store, `Schema.shared`, migrated with it); the tables are "
        "the caller's, but for the played games' columns every store of games shares "
        "(`games.py`: `games` and `seat_results`, which each store extends with its own "
        "columns; their own schema, component `games`, to which a column is added by "
        "declaring it once there, every store getting it on opening; a played game written, "
        "the games and a record read back, with the columns the store has, whichever store "
        "made them)",
        ("wizard_arena.extras", "psycopg"),
        "psycopg in `postgres.py` alone (loaded only for a URL); no other room imports a "
        "database driver, and the others import the room's `__init__` only; no `asyncio` or "
        "`threading`",
    ),
    Room(("wizard_referee.stats",), "small shared statistics (`percentile`)"),
    Room(
        ("wizard_referee.__init__",),
        "the package: it needs the `server` extra and says so in one line",
        ("wizard_arena.extras",),
    ),
    # -- the example bots -------------------------------------------------------------------
    Room(
        ("wizard_bots",),
        "random, heuristic, Monte Carlo (`montecarlo.py`, with `sampling.py`, `budget.py`, "
        "`opponents.py`, `inference.py`, `steer.py`), information-set MCTS (`ismcts.py`) and "
        "learned (`learned/`) bots, OpenSpiel's ISMCTS on the registered game (`spiel.py`, the "
        "`open_spiel` extra), and the misbehaving-bots kit (`misbehaving/`)",
        (
            "wizard_arena.__init__",
            "wizard_arena.rules",
            "wizard_arena.bot",
            "wizard_arena.local",
            "wizard_arena.protocol",
            "wizard_arena.client",
            "wizard_arena.testing",
            "wizard_arena.rl",
            "wizard_arena.extras",
            "numpy",
            "pyspiel",
            "open_spiel",
        ),
        "the SDK's public modules only (none whose name starts with `_`), as a bot author's code",
    ),
]


# -- docs/architecture.md's tables ------------------------------------------------------------

DOC = ROOT / "docs" / "architecture.md"
BEGIN = "<!-- BEGIN GENERATED: scripts/gen_architecture_doc.py from tests/rooms.py; do not edit -->"
END = "<!-- END GENERATED -->"
_TABLES = {
    "wizard_arena": "The SDK: `sdk/wizard_arena/`",
    "wizard_referee": "The server: `server/wizard_referee/`",
    "wizard_bots": "The example bots: `example_bots/wizard_bots/`",
}
_WHOSE = {"wizard_arena": "the SDK's", "wizard_referee": "the server's", "wizard_bots": "the bots'"}


def _label(entry: str) -> str:
    top, _, rest = entry.partition(".")
    if not rest:
        return f"`{top}/`"
    if rest == "__init__":
        return "`__init__.py`"
    path = PACKAGES[top].joinpath(*rest.split("."))
    return f"`{rest.replace('.', '/')}/`" if path.is_dir() else f"`{rest.replace('.', '/')}.py`"


def _may(room: Room) -> str:
    home = room.modules[0].split(".")[0]
    parts = []
    for top in sorted(OURS, key=lambda t: t != home):
        names = [_label(e) for e in room.may if e.split(".")[0] == top]
        if names:
            parts.append(("" if top == home else f"{_WHOSE[top]} ") + ", ".join(names))
    others = [f"`{e}`" for e in room.may if e.split(".")[0] not in OURS]
    if others:
        parts.append(", ".join(others))
    cell = "; ".join(parts) or "nothing else"
    return f"{cell}; {room.note}" if room.note else cell


def rooms_section() -> str:
    """The part of docs/architecture.md between the markers, from ROOMS."""
    lines = [BEGIN]
    for top, heading in _TABLES.items():
        lines += [
            "",
            f"## {heading}",
            "",
            "| room | what | may import (besides the standard library) |",
            "| --- | --- | --- |",
        ]
        for room in ROOMS:
            if room.modules[0].split(".")[0] == top:
                label = ", ".join(_label(e) for e in room.modules)
                lines.append(f"| {label} | {room.what} | {_may(room)} |")
    return "\n".join([*lines, "", END])


def with_rooms_section(doc: str) -> str:
    """``doc`` with its generated part replaced by :func:`rooms_section`."""
    start = doc.index(BEGIN)
    end = doc.index(END, start) + len(END)
    return doc[:start] + rooms_section() + doc[end:]

"""``wizard-arena ladder``: a season (docs/ladder.md).

Sub-commands: ``create`` (the season's settings), the registry (``add``,
``version``, ``retire``, ``rotate-token``, ``list``), ``run`` (the ladder
itself: a referee, matchmaking, ratings; ``--web PORT``) and
``standings``. Every one takes ``--database`` (default ``ladder.sqlite``).
A registry command changes the store in one transaction, or, for bad
input, prints one ``error:`` line and writes nothing (exit status 2); it
may run while the ladder runs, which picks the change up within a second.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from wizard_arena.cli.rules_options import add_rules_arguments, rules_from_args
from wizard_referee.hosting.config import EntrantConfig, HostError
from wizard_referee.hosting.entrants import preflight
from wizard_referee.ladder.season import Season
from wizard_referee.ladder.store import DIAL_IN, LadderStore, StoreError, new_token
from wizard_referee.referee.policy import (
    PROCESS,
    SEASON,
    PolicyError,
    RefereePolicy,
    add_flags,
    names,
)
from wizard_referee.sandbox import SANDBOXES
from wizard_referee.sandbox.cli import add_limit_arguments
from wizard_referee.storage import beside_store, database_target, shown
from wizard_referee.tournament.seating import DEFAULT_SEATING, SEATINGS

DEFAULT_DATABASE = "ladder.sqlite"

Action = Callable[[argparse.Namespace], int]


class CommandError(Exception):
    """Bad input: one line, exit status 2, nothing written."""


def _database(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--database",
        "-d",
        type=database_target,
        default=DEFAULT_DATABASE,
        help="the ladder's store: an SQLite file, or a postgresql:// URL (several ladder "
        f"processes share one PostgreSQL database; default {DEFAULT_DATABASE})",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    c = sub.add_parser("create", help="create a season: its table size, rules and deadlines")
    _database(c)
    c.add_argument("--name", help="the season's name (default: the store's file name)")
    add_rules_arguments(c)
    c.add_argument(
        "--seating",
        choices=SEATINGS,
        default=DEFAULT_SEATING,
        help="the seatings of a duplicate set: balanced (every seat and neighbour equally "
        "often, k(k-1) games at tables of k; the default) or cyclic (k games)",
    )
    add_flags(
        c.add_argument_group("the referee's policy, fixed for the season (as serve's)"),
        names(SEASON),
        unset=True,
    )
    c.add_argument(
        "--sandbox",
        choices=SANDBOXES,
        default="none",
        help="how hosted entrants run: bwrap (confined: docs/untrusted-bots.md) or none "
        "(as this user; the default)",
    )
    c.set_defaults(func=_create)

    a = sub.add_parser(
        "add", help="register an entrant: dial-in (prints its token once) or hosted (--command)"
    )
    _database(a)
    a.add_argument("name", help="the entrant's name (letters, digits, _ . -)")
    _hosted_arguments(a, kept="")
    _token_file(a)
    a.set_defaults(func=_add)

    v = sub.add_parser(
        "version", help="register a new version: a new token (dial-in) or command/folder (hosted)"
    )
    _database(v)
    v.add_argument("name", help="the entrant a new version is registered for")
    _hosted_arguments(v, kept="the previous version's")
    _token_file(v)
    v.set_defaults(func=_version)

    r = sub.add_parser("retire", help="retire an entrant: it plays no more, its ratings stay")
    _database(r)
    r.add_argument("name", help="the entrant to retire (its versions stay in the standings)")
    r.set_defaults(func=_retire)

    t = sub.add_parser("rotate-token", help="a new token for a dial-in entrant (the old one ends)")
    _database(t)
    t.add_argument("name", help="the dial-in entrant whose token is replaced")
    _token_file(t)
    t.set_defaults(func=_rotate)

    li = sub.add_parser("list", help="the entrants and their versions")
    _database(li)
    li.add_argument("--json", action="store_true", help="as JSON")
    li.set_defaults(func=_list)

    u = sub.add_parser("run", help="run the ladder: a referee, matchmaking, ratings, until stopped")
    _database(u)
    _run_arguments(u)
    u.set_defaults(func=_run)

    st = sub.add_parser("standings", help="the standings: official and live ratings")
    _database(st)
    st.add_argument(
        "entry",
        nargs="?",
        metavar="NAME[@vN]",
        help="only this entrant's rows (NAME) or one version's (NAME@vN); default every entry",
    )
    out = st.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="as JSON")
    out.add_argument("--csv", action="store_true", help="as CSV")
    st.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        metavar="N",
        help="bootstrap redraws of the official intervals (default 1000; 0: none)",
    )
    st.set_defaults(func=_standings)


def _run_arguments(u: argparse.ArgumentParser) -> None:
    from wizard_arena.cli.web_options import add_web_arguments, port_number

    u.add_argument("--host", default="127.0.0.1", help="the referee's address (default 127.0.0.1)")
    u.add_argument(
        "--port",
        type=port_number,
        default=50051,
        help="the referee's port, where dial-in bots connect (default 50051; 0: any free)",
    )
    u.add_argument(
        "--tables", type=int, default=0, metavar="N", help="sets played at once at most (0: any)"
    )
    u.add_argument(
        "--instances",
        type=int,
        default=1,
        metavar="N",
        help="processes of each hosted entrant, each at one table at a time (default 1)",
    )
    u.add_argument(
        "--return-window",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="how long an interrupted set waits for its members before it is void (default 120)",
    )
    add_flags(
        u.add_argument_group("the referee's front door and limits (as serve's)"),
        names(PROCESS),
        defaults={"max_sessions_per_token": 1},
    )
    u.add_argument(
        "--lease",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="how long this process's claims on its sets and its sessions' rows last without "
        "renewal (renewed every third of it): after a crash another process sharing the "
        "store takes its sets over this much later (default 30)",
    )
    u.add_argument("--seed", type=int, help="the matchmaker's randomness (default: drawn)")
    u.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        metavar="N",
        help="bootstrap redraws of the official intervals (default 1000; 0: none)",
    )
    u.add_argument(
        "--standings-every",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="the official ratings are computed again at most this often (default 30)",
    )
    u.add_argument("--quiet", action="store_true", help="no progress line")
    u.add_argument(
        "--report",
        type=Path,
        metavar="FILE",
        help="write the run's figures (sets, games, waits, costs per set and game) as JSON "
        "to FILE when it stops",
    )
    u.add_argument(
        "--log-file",
        metavar="PATH",
        help="the ladder's log, JSON lines (default DATABASE.logs/ladder.log; '-': standard error)",
    )
    u.add_argument(
        "--log-level",
        default="warning",
        choices=["debug", "info", "warning", "error"],
        help="the least severe log events written",
    )
    add_web_arguments(u)


def _hosted_arguments(p: argparse.ArgumentParser, kept: str) -> None:
    h = p.add_argument_group("hosted entrants (started by the ladder)")
    h.add_argument(
        "--command",
        help="the command the ladder starts ({server}, {name} replaced, as in a tournament's "
        "[[entrant]]; its token in $WIZARD_ARENA_TOKEN); without it the entrant dials in "
        "with a token",
    )
    h.add_argument("--folder", type=Path, help="the entrant's own folder: its command runs there")
    add_limit_arguments(h, "confined (create --sandbox bwrap)", kept=kept)


def run(args: argparse.Namespace) -> int:
    func: Action = args.func
    try:
        return func(args)
    except (CommandError, StoreError, HostError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


# -- run ------------------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    if args.tables < 0:
        raise CommandError("--tables must not be negative")
    if args.instances < 1:
        raise CommandError("--instances must be at least 1")
    if not args.lease >= 1:
        raise CommandError("--lease must be at least 1 second")
    referee = {name: getattr(args, name) for name in names(PROCESS)}
    try:
        RefereePolicy.from_mapping(referee)
    except PolicyError as e:
        raise CommandError(e.flag()) from None
    with LadderStore.open(args.database) as store:
        season, _, _ = store.season()
    if args.port:
        from wizard_referee.referee.listen import listen_problem

        busy = listen_problem(
            args.host, args.port, "choose another port with --port N", "check --host"
        )
        if busy:
            raise CommandError(busy)
    from wizard_arena.cli.web_options import WebOptions

    web = WebOptions.from_args(args)
    if web.wanted:
        from wizard_referee.referee.listen import web_problem

        problem = web_problem(web, args.port)
        if problem is not None:
            raise CommandError(problem)
    from wizard_referee.referee.grpc_setup import prepare_referee_transport

    prepare_referee_transport()  # before the referee loads grpc
    import trio

    from wizard_referee.ladder.process import RunOptions
    from wizard_referee.referee.logs import configure_logging, get_logger, log_file

    options = RunOptions(
        host=args.host,
        port=args.port,
        tables=args.tables,
        instances=args.instances,
        return_window=args.return_window,
        max_sessions_per_token=referee.pop("max_sessions_per_token"),
        referee=referee,
        lease=args.lease,
        seed=args.seed,
        standings_every=args.standings_every,
        bootstrap=args.bootstrap,
        report=args.report,
    )
    logs = Path(f"{beside_store(args.database, '')}.logs")
    stream = sys.stderr if args.log_file == "-" else log_file(args.log_file or logs / "ladder.log")
    configure_logging(args.log_level, "json" if stream is not sys.stderr else "auto", stream)
    try:
        return trio.run(_serve, args, season, options, get_logger(ladder=season.name))
    finally:
        if stream is not sys.stderr:
            stream.close()


async def _serve(args: argparse.Namespace, season: Season, options: Any, log: Any) -> int:
    import signal
    from functools import partial

    import trio

    from wizard_referee.ladder.process import Ladder, run_ladder
    from wizard_referee.referee.arena import freeze_startup_objects
    from wizard_referee.tournament.cli_errors import runner_error

    def notice(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    progress = None if args.quiet else sys.stderr
    try:
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:
                ladder: Ladder = await nursery.start(
                    partial(run_ladder, args.database, options, log=log, notice=notice,
                            progress=progress, on_arena=_web_starter(args))
                )  # fmt: skip
                freeze_startup_objects()  # the modules loaded so far live until exit
                if progress is not None:
                    print(
                        f"{season.name}: {season.describe()}; bots connect to {ladder.address} "
                        f"(logs in {beside_store(args.database, '')}.logs/)",
                        file=sys.stderr,
                        flush=True,
                    )
                async for _ in signals:
                    ladder.stop()
                    break
    except BaseExceptionGroup as group:
        own = [e for e in _leaves(group) if isinstance(e, StoreError)]
        if own:
            raise own[0] from None
        raise runner_error(group, args.host, args.port) from None
    if progress is not None:
        print(f"stopped after {ladder.stats.summary()}", file=sys.stderr)
        print(f"the store keeps everything: {shown(args.database)}", file=sys.stderr)
    return 0


def _web_starter(args: argparse.Namespace) -> Any:
    """What starts the pages beside the referee (``--web``), or None."""
    from wizard_arena.cli.web_options import WebOptions

    web = WebOptions.from_args(args)
    if not web.wanted:
        return None

    async def on_arena(arena: Any, nursery: Any) -> None:
        from wizard_referee.referee.listen import web_line
        from wizard_referee.web.serve import start_web

        for url in await start_web(nursery, web, arena, ladder=args.database):
            print(web_line(url), file=sys.stderr, flush=True)

    return on_arena


def _leaves(group: BaseException) -> list[BaseException]:
    from wizard_referee.referee.listen import leaves

    return leaves(group)


# -- standings ------------------------------------------------------------------------


def _standings(args: argparse.Namespace) -> int:
    from wizard_referee.ladder.standings import (
        failure_note,
        find_entry,
        official,
        read_failure,
        rows,
        standings_text,
    )

    if args.bootstrap < 0:
        raise CommandError("--bootstrap must not be negative")
    with LadderStore.open(args.database, read_only=True) as store:
        season, _, _ = store.season()
        files = store.files
        versions = store.versions()
        only = None
        if args.entry is not None:
            found = find_entry(store.entrants(), args.entry)
            if isinstance(found, str):
                raise CommandError(f"{found}: 'wizard-arena ladder list' shows them")
            only = {found[1].label} if found[1] else {v.label for v in found[0].versions}
        live: dict[int, tuple[float, float]] = {}
        for _, _, results in store.finished_sets():
            live.update({v: r for v, (_, r) in results.items()})
        fitted = official(store, args.bootstrap)
        table = rows(
            versions,
            live,
            store.set_counts_by_version(),
            store.game_counts(),
            store.online(),
            fitted,
            abandons=store.abandon_counts(),
        )
    if only is not None:
        table = [r for r in table if r["entry"] in only]
    if args.json:
        print(json.dumps({"entries": table, "official": fitted}, indent=2))
        return 0
    if args.csv:
        import csv

        w = csv.DictWriter(sys.stdout, fieldnames=list(table[0]) if table else ["entry"])
        w.writeheader()
        w.writerows(table)
        return 0
    header = f"{season.name}: {season.describe()}"
    print(standings_text(table, fitted, fitted, time.time(), header))
    for note in failure_note(read_failure(files), time.time()):  # (a running ladder's)
        print(f"note: the running ladder's {note}")
    return 0


# -- create ---------------------------------------------------------------------------


def _create(args: argparse.Namespace) -> int:
    try:
        rules = rules_from_args(args)
        policy = {k: getattr(args, k) for k in names(SEASON) if getattr(args, k) is not None}
        season = Season(
            args.name or beside_store(args.database, "").stem,
            players=args.players,
            seating=args.seating,
            rules=rules,
            policy=policy,
            sandbox=args.sandbox,
        )
    except PolicyError as e:
        raise CommandError(e.flag()) from None
    except ValueError as e:
        raise CommandError(str(e)) from None
    with LadderStore.create(args.database, season):
        pass
    where = shown(args.database)
    print(f"{season.name}: {season.describe()}; in {where}")
    print(
        f"next: wizard-arena ladder add NAME --database {where} (an entrant), "
        f"then wizard-arena ladder run --database {where}",
        file=sys.stderr,
    )
    return 0


# -- the registry -----------------------------------------------------------------------


def _hosted(args: argparse.Namespace, store: LadderStore, *, adding: bool) -> dict[str, Any]:
    """The hosted entrant's command, folder and limits the flags give (None
    where not given); CommandError for what cannot start or cannot be kept."""
    limits = {
        k: getattr(args, k)
        for k in ("memory_limit", "max_processes", "cpu_limit")
        if getattr(args, k) is not None
    }
    given = args.command is not None or args.folder is not None
    if adding and not given and limits and limits != _default_limits():
        raise CommandError("--memory-limit, --max-processes and --cpu-limit are for --command")
    if adding and args.folder is not None and args.command is None:
        raise CommandError("--folder is the folder of a hosted entrant's --command: give both")
    command = shlex.split(args.command) if args.command is not None else None
    if args.command is not None and not command:
        raise CommandError("--command is empty")
    folder = None
    if args.folder is not None:
        if not args.folder.is_dir():
            raise CommandError(f"folder {args.folder} does not exist")
        folder = str(args.folder.resolve())
        if store.exclusive and Path(store.target).resolve().is_relative_to(folder):
            raise CommandError(
                f"folder {args.folder} holds the ladder's store {store.where}: "
                "give each entrant a folder of its own"
            )
    if command is not None:
        entrant = EntrantConfig(args.name, tuple(command), folder=folder or "")
        problems = preflight([entrant], ".", "give another --command")
        if problems:
            raise CommandError(problems[0])
        if any("{token}" in part for part in command):
            print(
                "note: {token} puts the entrant's token in its command line, which every user "
                "of this machine sees ('ps'); its environment has it (WIZARD_ARENA_TOKEN, "
                "which wizard-arena bot reads): leave {token} out if the bot reads that",
                file=sys.stderr,
            )
    return {"command": command, "folder": folder, "limits": limits or None}


def _default_limits() -> dict[str, Any]:
    from wizard_referee.sandbox import Limits

    d = Limits()
    return {"memory_limit": d.memory, "max_processes": d.processes, "cpu_limit": d.cpus}


def _token_file(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help="write a new dial-in token to FILE (created or replaced, readable by this user "
        "alone) instead of printing it",
    )


@contextmanager
def _token_to_file(token: str, file: Path | None) -> Iterator[None]:
    """A new token to ``file`` (0600, replaced whole) once the store has it
    (the ``with`` block): written beside it first, so a file that cannot be
    written leaves the store as it was, and a change the store refuses
    leaves the file (the bot's current token) as it was."""
    if file is None:
        yield
        return
    tmp = file.with_name(f"{file.name}.{os.getpid()}.tmp")
    try:
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as out:
            out.write(token + "\n")
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise CommandError(f"--token-file: {e}; nothing was changed") from None
    try:
        yield
        tmp.replace(file)
    finally:
        tmp.unlink(missing_ok=True)


def _print_token(name: str, token: str, what: str, file: Path | None) -> None:
    """A new token: printed once, or where :func:`_token_to_file` put it."""
    connect = (
        f"{name}'s bot connects with it: wizard-arena bot MODULE:CLASS --server HOST:PORT "
        "--token-file FILE (or the token in $WIZARD_ARENA_TOKEN)"
    )
    if file is None:
        print(token)
        print(
            f"{what}: the token above is shown once (the ladder keeps only its hash); {connect}",
            file=sys.stderr,
        )
        return
    print(f"{what}: its token is in {file} (the ladder keeps only its hash); {connect}")


def _add(args: argparse.Namespace) -> int:
    with LadderStore.open(args.database) as store:
        hosted = _hosted(args, store, adding=True)
        if hosted["command"] is None:
            token = new_token()
            with _token_to_file(token, args.token_file):
                store.add_entrant(args.name, token=token)
            what = f"entrant {args.name} added (dial-in, version 1)"
            _print_token(args.name, token, what, args.token_file)
        else:
            store.add_entrant(args.name, **hosted)
            print(f"entrant {args.name} added (hosted, version 1): {args.command}")
    return 0


def _version(args: argparse.Namespace) -> int:
    with LadderStore.open(args.database) as store:
        kind = {e.name: e.kind for e in store.entrants()}.get(args.name)
        hosted = _hosted(args, store, adding=False)
        given = {k: v for k, v in hosted.items() if v is not None}
        if kind == DIAL_IN and not given:
            token = new_token()
            with _token_to_file(token, args.token_file):
                number = store.add_version(args.name, token=token)
            what = f"entrant {args.name}: version {number}"
            _print_token(args.name, token, what, args.token_file)
        else:
            number = store.add_version(args.name, **hosted)
            print(f"entrant {args.name}: version {number}")
    return 0


def _retire(args: argparse.Namespace) -> int:
    with LadderStore.open(args.database) as store:
        store.retire(args.name)
    print(f"entrant {args.name} retired: it plays no more; its ratings stay")
    return 0


def _rotate(args: argparse.Namespace) -> int:
    with LadderStore.open(args.database) as store:
        token = new_token()
        with _token_to_file(token, args.token_file):
            store.rotate_token(args.name, token)
    what = f"entrant {args.name}: new token (the old one is refused)"
    _print_token(args.name, token, what, args.token_file)
    return 0


def _list(args: argparse.Namespace) -> int:
    with LadderStore.open(args.database) as store:
        entrants = store.entrants()
        sets = store.set_counts_by_version()
    if args.json:
        out = []
        for e in entrants:
            out.append(
                {
                    "name": e.name,
                    "kind": e.kind,
                    "created_at": e.created_at,
                    "retired_at": e.retired_at,
                    "versions": [
                        {
                            "number": v.number,
                            "entry": v.label,
                            "command": list(v.command) if v.command else None,
                            "folder": v.folder,
                            "limits": v.limits,
                            "created_at": v.created_at,
                            "ended_at": v.ended_at,
                            "sets": sets.get(v.id, 0),
                        }
                        for v in e.versions
                    ],
                }
            )
        print(json.dumps(out, indent=2))
        return 0
    if not entrants:
        print(f"no entrant yet: wizard-arena ladder add NAME --database {shown(args.database)}")
        return 0
    print(f"{'entrant':<24} {'kind':<8} {'version':>7} {'sets':>6}  {'status':<10} since")
    for e in entrants:
        last = e.versions[-1]
        status = "retired" if e.retired_at is not None else "active"
        since = time.strftime("%Y-%m-%d %H:%M", time.localtime(last.created_at))
        total = sum(sets.get(v.id, 0) for v in e.versions)
        line = f"{e.name:<24} {e.kind:<8} {last.number:>7} {total:>6}  {status:<10} {since}"
        if last.command:
            line += f"  {' '.join(last.command)}"
        print(line)
    return 0

"""A tournament runner's errors a user can fix, as one line each: the
exceptions inside trio's exception groups (entrants that cannot start or
connect, a port in use, a results store that failed)."""

from __future__ import annotations

from typing import Any

from wizard_referee.hosting.config import HostError
from wizard_referee.hosting.entrants import EntrantStartError
from wizard_referee.referee.listen import leaves, serve_failure
from wizard_referee.storage import StorageError
from wizard_referee.tournament.config_keys import TournamentError

__all__ = ["TOURNAMENT_FIXES", "runner_error"]

#: How to choose another port, and another address, in a tournament.
TOURNAMENT_FIXES = (
    "set another port (port = N in [tournament], or --port N)",
    "check host in [tournament] (default 127.0.0.1)",
)


def runner_error(group: BaseExceptionGroup[Any], host: str, port: int) -> BaseException:
    """trio's nurseries wrap errors in groups: surface a tournament runner's
    own errors (entrants that cannot start or connect, a port in use, the
    results store failing: a lost connection to its PostgreSQL server, a full
    disk) as one TournamentError, and Ctrl-C as KeyboardInterrupt; anything
    else stays as it is."""
    errors = leaves(group)
    if any(isinstance(e, KeyboardInterrupt) for e in errors):
        return KeyboardInterrupt()  # Ctrl-C: the command says how to resume
    starts: dict[str, str] = {}
    for e in errors:
        if isinstance(e, EntrantStartError):
            starts.setdefault(e.entrant, str(e))  # one report per entrant
    if starts:
        return TournamentError("\n".join(starts.values()))
    if errors and all(isinstance(e, TournamentError | HostError) for e in errors):
        first = errors[0]
        return first if isinstance(first, TournamentError) else TournamentError(str(first))
    failed = [e for e in errors if isinstance(e, StorageError)]
    if failed:
        return TournamentError(
            f"the results store failed: {failed[0]} (every game stored before is kept: "
            "resume with --resume once the store works again)"
        )
    message = serve_failure(group, host, port, *TOURNAMENT_FIXES)
    return group if message is None else TournamentError(message)

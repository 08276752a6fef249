"""Every SQL statement of the ladder's store, and nothing else.

The statements keep to a subset of SQL that SQLite and PostgreSQL both
run as written: ``TEXT``, ``INTEGER``, ``BIGINT`` and ``DOUBLE PRECISION``
columns (times are Unix seconds, structured values JSON text),
``RETURNING``, ``COALESCE``, ``LIMIT``, no function of one database alone
(no ``json_extract``, no ``INSERT OR ...``, no ``datetime()``). Parameters
are named (``:name``), bound by the storage room from a mapping
(:meth:`~wizard_referee.storage.Database.execute`). The tables are a versioned
schema of the storage room (:data:`LADDER_SCHEMA`), whose ``{id}`` is
the column of an id the database assigns; ``games`` and ``seat_results``
are the storage room's shared tables of played games with the ladder's own
columns (a game's set and seating; a seat's version), written and read
back through it (:mod:`wizard_referee.storage.games`).

Claims and presence are rows with lease expiry times, which several ladder
processes sharing one PostgreSQL store need (a set ``playing`` is claimed
by a runner until ``lease_expires``; a session row says an entry is
connected until ``expires_at``); on SQLite one process holds the store
and the leases are its own.
"""

from __future__ import annotations

from wizard_referee.storage import (
    GAMES_SCHEMA,
    VERSION_TABLE,
    Migration,
    Schema,
    games_table,
    seat_results_table,
)

__all__ = ["LADDER_SCHEMA"]

_TABLES_V1: tuple[str, ...] = (
    """CREATE TABLE season (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        name TEXT NOT NULL,
        settings TEXT NOT NULL,
        secret TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        registry INTEGER NOT NULL,
        finished_sets INTEGER NOT NULL
    )""",
    """CREATE TABLE entrants (
        id {id},
        name TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        retired_at DOUBLE PRECISION
    )""",
    """CREATE TABLE versions (
        id {id},
        entrant_id BIGINT NOT NULL REFERENCES entrants (id),
        number INTEGER NOT NULL,
        command TEXT,
        folder TEXT,
        limits TEXT,
        created_at DOUBLE PRECISION NOT NULL,
        ended_at DOUBLE PRECISION,
        UNIQUE (entrant_id, number)
    )""",
    """CREATE TABLE tokens (
        hash TEXT PRIMARY KEY,
        version_id BIGINT NOT NULL REFERENCES versions (id),
        issued_at DOUBLE PRECISION NOT NULL,
        revoked_at DOUBLE PRECISION,
        revoked_why TEXT
    )""",
    """CREATE TABLE runners (
        id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        started_at DOUBLE PRECISION NOT NULL,
        expires_at DOUBLE PRECISION NOT NULL,
        stopped_at DOUBLE PRECISION
    )""",
    """CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        runner_id TEXT NOT NULL REFERENCES runners (id),
        version_id BIGINT NOT NULL REFERENCES versions (id),
        connected_at DOUBLE PRECISION NOT NULL,
        expires_at DOUBLE PRECISION NOT NULL
    )""",
    """CREATE TABLE sets (
        id {id},
        seats TEXT NOT NULL,
        deal_seed TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at DOUBLE PRECISION NOT NULL,
        claimed_by TEXT,
        lease_expires DOUBLE PRECISION,
        suspended_at DOUBLE PRECISION,
        ended_at DOUBLE PRECISION,
        finish_seq INTEGER UNIQUE,
        why TEXT
    )""",
    games_table(
        ["set_id BIGINT NOT NULL REFERENCES sets (id)", "seating INTEGER NOT NULL"],
        constraints=["UNIQUE (set_id, seating)"],
    ),
    seat_results_table("version_id BIGINT NOT NULL REFERENCES versions (id)"),
    """CREATE TABLE set_results (
        set_id BIGINT NOT NULL REFERENCES sets (id),
        version_id BIGINT NOT NULL REFERENCES versions (id),
        finish_seq INTEGER NOT NULL,
        score INTEGER NOT NULL,
        mu DOUBLE PRECISION NOT NULL,
        sigma DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (set_id, version_id)
    )""",
    "CREATE INDEX versions_entrant ON versions (entrant_id)",
    "CREATE INDEX tokens_version ON tokens (version_id)",
    "CREATE INDEX sets_status ON sets (status)",
    "CREATE INDEX games_set ON games (set_id)",
    "CREATE INDEX seat_results_version ON seat_results (version_id)",
    "CREATE INDEX set_results_version ON set_results (version_id, finish_seq)",
)

#: The ladder's store: its tables as versioned migrations (the storage room
#: runs them, migrates an older store after a note, refuses a newer one).
LADDER_SCHEMA = Schema(
    component="ladder",
    what="a ladder's season",
    noun="a ladder's store",
    migrations=(
        Migration(1, _TABLES_V1),
        Migration(
            2,
            (
                # a dial-in session holds one of its entry's slots (0 .. limit - 1): the
                # unique index keeps the sessions of an entry, on every ladder process
                # sharing the store, within the limit (NULL: a hosted one, no limit)
                "ALTER TABLE sessions ADD COLUMN slot INTEGER",
                "CREATE UNIQUE INDEX sessions_slot ON sessions (version_id, slot)",
                "CREATE INDEX sets_claimed ON sets (claimed_by)",
            ),
        ),
        Migration(
            3,
            (
                # an entry that left a set and did not come back within the return
                # window: the rest of the set is played with its seats' default action
                """CREATE TABLE abandons (
                    set_id BIGINT NOT NULL REFERENCES sets (id),
                    version_id BIGINT NOT NULL REFERENCES versions (id),
                    at DOUBLE PRECISION NOT NULL,
                    PRIMARY KEY (set_id, version_id)
                )""",
                "CREATE INDEX abandons_version ON abandons (version_id)",
            ),
        ),
    ),
    tables=(
        "abandons",
        "set_results",
        "seat_results",
        "games",
        "sets",
        "sessions",
        "runners",
        "tokens",
        "versions",
        "entrants",
        "season",
        VERSION_TABLE,
    ),
    marks=frozenset({"season", "sets", "set_results"}),
    unversioned=1,
    shared=(GAMES_SCHEMA,),
)


# -- the season -------------------------------------------------------------------------

CREATE_SEASON = (
    "INSERT INTO season (id, name, settings, secret, created_at, registry, finished_sets)"
    " VALUES (1, :name, :settings, :secret, :now, 0, 0)"
)
SEASON = "SELECT name, settings, secret, created_at, registry, finished_sets FROM season"
REGISTRY_COUNT = "SELECT registry FROM season"
BUMP_REGISTRY = "UPDATE season SET registry = registry + 1"
NEXT_FINISH = "UPDATE season SET finished_sets = finished_sets + 1 RETURNING finished_sets"
"""The next set's place in the order of finishing; in PostgreSQL it also
locks the season's row until the transaction ends, so that finishes (and
the live ratings they update) follow one another."""

# -- the registry -----------------------------------------------------------------------

ENTRANT_BY_NAME = "SELECT id, name, kind, created_at, retired_at FROM entrants WHERE name = :name"
ADD_ENTRANT = (
    "INSERT INTO entrants (name, kind, created_at) VALUES (:name, :kind, :now) RETURNING id"
)
RETIRE_ENTRANT = "UPDATE entrants SET retired_at = :now WHERE id = :id"
CURRENT_VERSION = (
    "SELECT id, number, command, folder, limits FROM versions"
    " WHERE entrant_id = :entrant AND ended_at IS NULL"
)
LAST_VERSION_NUMBER = "SELECT COALESCE(MAX(number), 0) FROM versions WHERE entrant_id = :entrant"
ADD_VERSION = (
    "INSERT INTO versions (entrant_id, number, command, folder, limits, created_at)"
    " VALUES (:entrant, :number, :command, :folder, :limits, :now) RETURNING id"
)
END_VERSION = "UPDATE versions SET ended_at = :now WHERE id = :id AND ended_at IS NULL"
ADD_TOKEN = "INSERT INTO tokens (hash, version_id, issued_at) VALUES (:hash, :version, :now)"
REVOKE_TOKENS = (
    "UPDATE tokens SET revoked_at = :now, revoked_why = :why"
    " WHERE version_id = :version AND revoked_at IS NULL"
)
TOKEN = "SELECT t.version_id, t.revoked_at, t.revoked_why FROM tokens t WHERE t.hash = :hash"
ENTRANTS = "SELECT id, name, kind, created_at, retired_at FROM entrants ORDER BY name"
VERSIONS = (
    "SELECT v.id, v.entrant_id, e.name, e.kind, v.number, v.command, v.folder, v.limits,"
    " v.created_at, v.ended_at, e.retired_at"
    " FROM versions v JOIN entrants e ON e.id = v.entrant_id ORDER BY e.name, v.number"
)

# -- runners and sessions (leases) ------------------------------------------------------

ADD_RUNNER = (
    "INSERT INTO runners (id, host, pid, started_at, expires_at)"
    " VALUES (:id, :host, :pid, :now, :expires)"
)
CLOCK = "SELECT {now}"
"""The database's clock (``{now}``: :meth:`~wizard_referee.storage.Database.now`):
every lease is of its time, one clock for every machine sharing the store."""
RENEW_RUNNER = "UPDATE runners SET expires_at = :expires WHERE id = :id"
LAPSED_RUNNER = (
    "SELECT host, pid, started_at, expires_at FROM runners"
    " WHERE id = :id AND expires_at < :now AND stopped_at IS NULL"
)
"""A runner renewing a lease that lapsed (it was cut off from the database,
or stalled): its span so far, kept as a row of its own (:data:`ADD_SPAN`)."""
ADD_SPAN = (
    "INSERT INTO runners (id, host, pid, started_at, expires_at, stopped_at)"
    " VALUES (:id, :host, :pid, :started, :until, :until)"
)
RUNNING = "SELECT COUNT(*) FROM runners WHERE expires_at >= :now AND stopped_at IS NULL"
"""Ladder processes running now (their leases running)."""
RESTART_RUNNER = "UPDATE runners SET started_at = :now WHERE id = :id"
STOP_RUNNER = "UPDATE runners SET stopped_at = :now, expires_at = :now WHERE id = :id"
END_OTHER_RUNNERS = "UPDATE runners SET expires_at = :now WHERE id <> :id AND expires_at > :now"
"""A runner that holds the store alone (SQLite) knows every other one has gone."""
LAPSE_OTHER_CLAIMS = (
    "UPDATE sets SET lease_expires = :now - 1 WHERE status = 'playing'"
    " AND (claimed_by IS NULL OR claimed_by <> :id)"
)
LAPSE_OWN_CLAIMS = (
    "UPDATE sets SET lease_expires = :now - 1 WHERE claimed_by = :id AND status = 'playing'"
)
DROP_OTHER_SESSIONS = "DELETE FROM sessions WHERE runner_id <> :id"
DROP_RUNNER_SESSIONS = "DELETE FROM sessions WHERE runner_id = :id"
ADD_SESSION = (
    "INSERT INTO sessions (id, runner_id, version_id, connected_at, expires_at, slot)"
    " VALUES (:id, :runner, :version, :now, :expires, :slot)"
    " ON CONFLICT (version_id, slot) DO UPDATE SET id = excluded.id,"
    " runner_id = excluded.runner_id, connected_at = excluded.connected_at,"
    " expires_at = excluded.expires_at WHERE sessions.expires_at < excluded.connected_at"
)
"""A session's row, in the slot given (NULL: no limit): taken from a
session whose lease lapsed (its process was killed), nothing where a live
session holds it."""
DROP_SESSION = "DELETE FROM sessions WHERE id = :id"
RENEW_SESSIONS = "UPDATE sessions SET expires_at = :expires WHERE runner_id = :runner RETURNING id"
"""This runner's session rows renewed: those still stored (another process
removes the rows of a lease that lapsed, e.g. while this one stalled)."""
DROP_EXPIRED_SESSIONS = "DELETE FROM sessions WHERE expires_at < :now"
ONLINE = "SELECT version_id, COUNT(*) FROM sessions WHERE expires_at >= :now GROUP BY version_id"
LIVE_SESSIONS = (
    "SELECT DISTINCT s.runner_id, s.version_id FROM sessions s JOIN runners r"
    " ON r.id = s.runner_id WHERE s.expires_at >= :now AND r.expires_at >= :now"
    " AND r.stopped_at IS NULL"
)
"""The entries each live runner has connected now (its lease running)."""

# -- sets and games -----------------------------------------------------------------------

ADD_SET = (
    "INSERT INTO sets (seats, deal_seed, status, created_at, claimed_by, lease_expires)"
    " VALUES (:seats, '', 'playing', :now, :runner, :expires) RETURNING id"
)
SET_DEAL = "UPDATE sets SET deal_seed = :deal WHERE id = :id"
RENEW_CLAIMS = (
    "UPDATE sets SET lease_expires = :expires WHERE claimed_by = :runner AND status = 'playing'"
)
LAPSED_CLAIMS = "SELECT id FROM sets WHERE status = 'playing' AND lease_expires < :now"
"""Sets whose runner's claim lapsed (it stopped, or was killed), to be
locked (``FOR UPDATE SKIP LOCKED``: a set another process is taking or
finishing right now is left to it)."""
ORPHANED_TO_SUSPENDED = (
    "UPDATE sets SET status = 'suspended', suspended_at = COALESCE(suspended_at, :now),"
    " claimed_by = NULL,"
    " lease_expires = NULL WHERE id = :id AND status = 'playing' AND lease_expires < :now"
)
"""A set whose claim lapsed waits for its members, as an interrupted set does
(since it was last suspended when no game of it was stored since:
:data:`GAME_STORED`)."""
SUSPENDED_SET = "SELECT id FROM sets WHERE id = :id AND status = 'suspended'"
"""A suspended set, to be locked before it is claimed."""
CLAIM_SUSPENDED = (
    "UPDATE sets SET status = 'playing', claimed_by = :runner, lease_expires = :expires"
    " WHERE id = :id AND status = 'suspended'"
)
"""A suspended set played on (its ``suspended_at`` kept until a game of it
is stored: suspended again before, its return window goes on)."""
CLAIMED = "SELECT id FROM sets WHERE id = :id AND status = 'playing' AND claimed_by = :runner"
OWN_SETS = "SELECT id FROM sets WHERE status = 'playing' AND claimed_by = :runner ORDER BY id"
"""The sets a runner claims (it plays them, or should)."""
"""A set this runner claims, to be locked while a game of it is stored or it
is finished: none is stored by a runner whose claim lapsed and was taken."""
SUSPEND_SET = (
    "UPDATE sets SET status = 'suspended', suspended_at = COALESCE(suspended_at, :now),"
    " lease_expires = NULL, why = :why"
    " WHERE id = :id AND status = 'playing' AND claimed_by = :runner"
)
"""A set its runner cannot play on waits for its members; ``claimed_by``
stays that runner's, the set's holder (its members that left it for another
process are its leavers past the return window)."""
VOID_SET = (
    "UPDATE sets SET status = 'void', ended_at = :now, claimed_by = NULL,"
    " lease_expires = NULL, why = :why WHERE id = :id"
    " AND (status = 'suspended' OR (status = 'playing' AND claimed_by = :runner))"
)
"""Void a set waiting for its members, or one this runner plays."""
FINISH_SET = (
    "UPDATE sets SET status = 'finished', ended_at = :now, finish_seq = :seq,"
    " claimed_by = NULL, lease_expires = NULL"
    " WHERE id = :id AND status = 'playing' AND claimed_by = :runner"
)
SUSPENDED_SETS = (
    "SELECT id, seats, deal_seed, suspended_at, why, claimed_by FROM sets"
    " WHERE status = 'suspended' ORDER BY id"
)
ADD_ABANDON = (
    "INSERT INTO abandons (set_id, version_id, at) VALUES (:set, :version, :now)"
    " ON CONFLICT (set_id, version_id) DO NOTHING"
)
ABANDONED_IN = "SELECT version_id FROM abandons WHERE set_id = :set ORDER BY version_id"
ABANDON_COUNTS = "SELECT version_id, COUNT(*) FROM abandons GROUP BY version_id"
RUNNING_SINCE = (
    "SELECT started_at, CASE WHEN stopped_at IS NOT NULL AND stopped_at < expires_at"
    " THEN stopped_at ELSE expires_at END FROM runners WHERE expires_at > :since"
)
"""The runners' spans (start to stop, or to the end of the lease of one
killed or cut off) that reach past ``since``: when the ladder was running."""
SET_ROW = (
    "SELECT id, seats, deal_seed, status, created_at, suspended_at, ended_at, finish_seq, why"
    " FROM sets WHERE id = :id"
)
SET_COUNTS = "SELECT status, COUNT(*) FROM sets GROUP BY status"
GAMES_OF_SET = "SELECT seating, status FROM games WHERE set_id = :set ORDER BY seating"
GAME_STORED = "UPDATE sets SET suspended_at = NULL WHERE id = :set"
"""A game of a set stored: it was played on, so a later suspension starts
a return window of its own."""
SET_SCORES = (
    "SELECT r.version_id, SUM(r.total) FROM seat_results r JOIN games g ON g.id = r.game_id"
    " WHERE g.set_id = :set GROUP BY r.version_id"
)
LAST_RATING = (
    "SELECT mu, sigma FROM set_results WHERE version_id = :version ORDER BY finish_seq DESC LIMIT 1"
)
ADD_SET_RESULT = (
    "INSERT INTO set_results (set_id, version_id, finish_seq, score, mu, sigma)"
    " VALUES (:set, :version, :seq, :score, :mu, :sigma)"
)

# -- reading: ratings, pages ----------------------------------------------------------------

FINISHED_SETS = (
    "SELECT id, seats, finish_seq FROM sets WHERE status = 'finished' AND finish_seq > :after"
    " ORDER BY finish_seq LIMIT :limit"
)
SET_RESULTS = (
    "SELECT set_id, version_id, finish_seq, score, mu, sigma FROM set_results"
    " WHERE finish_seq > :after AND finish_seq <= :upto ORDER BY finish_seq, version_id"
)
RATED_SEATS = (
    "SELECT g.set_id, g.id, r.version_id, r.total FROM seat_results r"
    " JOIN games g ON g.id = r.game_id JOIN sets s ON s.id = g.set_id"
    " WHERE s.status = 'finished' ORDER BY s.finish_seq, g.seating, r.seat"
)
"""Every seat of every game of a finished set, in the order of finishing:
what the official ratings are fitted to."""
GAME_COUNTS = (
    "SELECT r.version_id, COUNT(*) FROM seat_results r JOIN games g ON g.id = r.game_id"
    " JOIN sets s ON s.id = g.set_id WHERE s.status = 'finished' GROUP BY r.version_id"
)
FINGERPRINT = "SELECT finished_sets, registry FROM season"
GAME_SET = "SELECT g.set_id, s.status FROM games g JOIN sets s ON s.id = g.set_id WHERE g.id = :id"
SET_STATUS = "SELECT status FROM sets WHERE id = :id"
SETS_BY_VERSION = "SELECT version_id, COUNT(*) FROM set_results GROUP BY version_id"
GAMES_OF_ENTRANT = (
    "id IN (SELECT r.game_id FROM seat_results r JOIN versions v"
    " ON v.id = r.version_id WHERE v.entrant_id = :entrant)"
)
"""The condition of an entrant's games (any version), for the list of the
latest (:func:`~wizard_referee.storage.game_rows`)."""
HISTORY_OF = (
    "SELECT r.finish_seq, r.version_id, r.mu, r.sigma FROM set_results r"
    " JOIN versions v ON v.id = r.version_id WHERE v.entrant_id = :entrant"
    " ORDER BY r.finish_seq"
)
"""An entrant's live rating after each of its finished sets."""

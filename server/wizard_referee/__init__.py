"""Wizard Arena referee: the gRPC server, tournaments, results store and ratings.

The rooms:

- :mod:`wizard_referee.referee`: the referee (transport, arena, tables,
  records, the ``serve`` verb);
- :mod:`wizard_referee.tournament`: tournaments (config, schedule, entrants,
  runner, store, leaderboard; ``tournament``, ``demo``, ``replay``);
- :mod:`wizard_referee.ratings`: ratings from game results (``ratings``);
- :mod:`wizard_referee.storage`: a store's database, SQLite or PostgreSQL,
  and its versioned schema;
- :mod:`wizard_referee.compare`: is bot A stronger than bot B? duplicate
  deals and an anytime-valid confidence sequence (``compare``);
- :mod:`wizard_referee.check`: a bot author's pre-entry check (``check``);
- :mod:`wizard_referee.cluster`: tournaments and comparisons on Ray (named
  by module path only, loaded when chosen);
- :mod:`wizard_referee.web`: the web pages and metrics (``web``);
- :mod:`wizard_referee.stats`: small statistics any room may use (a leaf).

May import: the SDK's rules and protocol rooms, the bot API's value types and
its CLI helpers; each room's docstring says which rooms it may use. The
referee room never imports the rooms above it or the SDK's client.

It comes with the ``server`` extra (``pip install 'wizard-arena[server]'``:
numpy, structlog, grpc health and reflection); imported without it, it
fails at once with one line that says so (:mod:`wizard_arena.extras`).
"""

from wizard_arena.extras import require

require("server", "wizard_referee (the referee, tournaments, ratings, compare, check)")

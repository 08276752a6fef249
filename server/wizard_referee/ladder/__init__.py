"""The ladder room: a competition that runs for a season
(``wizard-arena ladder``; docs/ladder.md). Entrants register at any time
(by the organiser), connect when they like and enter new versions, each
version rated as an entry of its own; tables are formed continuously from
the entries available, each playing a duplicate set; the standings are a
live Bayesian rating and the official Bradley-Terry one.

- :mod:`.sql`: the store's versioned schema and every SQL statement, in a
  subset SQLite and PostgreSQL both run; :mod:`.store`: the season, the
  registry, leases, sets, games, ratings, on the storage room (an SQLite
  file, held by one ladder process; or a PostgreSQL database);
- :mod:`.season`: a season's settings, fixed when it is created;
- :mod:`.matchmaking`: the policy that forms tables (pure: the runner and
  the simulations share it); :mod:`.live`: the live ratings (OpenSkill's
  Plackett-Luce); :mod:`.standings`: the official ones (Bradley-Terry with
  the tournament's printed intervals) and the table of both;
- :mod:`.process`: the running ladder over the hosting room's host (a
  referee, the hosted entrants' processes); :mod:`.simulate`: matchmaking
  and ratings on simulated fields;
- :mod:`.cmd_ladder`: the ``ladder`` verb and its sub-commands.

May import: the hosting room (its host, entrants' processes, confinement),
the tournament room (seatings, leaderboard, calibration harness), the referee room, the
ratings room, the sandbox room, the storage room, the SDK's rules, protocol and cli;
``openskill`` (the ``[ladder]`` extra). Never the client, the check,
compare or cluster rooms; the web room only in the function of the
``ladder run`` verb that starts the pages (``--web``).
"""

from __future__ import annotations

from wizard_arena.extras import require

require("ladder", "the ladder (wizard_referee.ladder)")

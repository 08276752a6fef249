"""The tournament room: configuration (:mod:`.config`, :mod:`.config_keys`),
the schedule of tables (:mod:`.schedule`) and the game plan (:mod:`.plan`),
who sits where at each deal (:mod:`.seating`), the runner that plays them
on the hosting room's host (:mod:`.runner`, :mod:`.dispatch`), the results store (:mod:`.store`:
its schema, on :mod:`wizard_referee.storage`'s SQLite or PostgreSQL),
the leaderboard (:mod:`.leaderboard`) and the calibration of its intervals
on simulated fields (:mod:`.calibrate`), one-line CLI errors
(:mod:`.cli_errors`) and the ``tournament``, ``demo``, ``replay`` and
``export`` verbs.

May import: the hosting room, the referee room, the ratings room, the sandbox room, the
storage room, :mod:`wizard_referee.stats`, :mod:`wizard_arena.rules`,
:mod:`wizard_arena.protocol` (the bots' seeds) and :mod:`wizard_arena.cli`.
Never the client or the check room.
"""

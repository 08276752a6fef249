"""The tournament room: configuration (:mod:`.config`, :mod:`.config_keys`),
the schedule of tables (:mod:`.schedule`) and the game plan (:mod:`.plan`),
the entrants' processes (:mod:`.entrants`, :mod:`.launcher`,
:mod:`.launcher_child`; confined with ``sandbox = "bwrap"``: :mod:`.confine`),
seating games on their sessions (:mod:`.seating`), the runner that drives
them through a referee (:mod:`.runner`), the results store (:mod:`.store`:
its schema, on :mod:`wizard_referee.storage`'s SQLite or PostgreSQL),
the leaderboard (:mod:`.leaderboard`) and the calibration of its intervals
on simulated fields (:mod:`.calibrate`), one-line CLI errors
(:mod:`.cli_errors`) and the ``tournament``, ``demo``, ``replay`` and
``export`` verbs.

May import: the referee room, the ratings room, the sandbox room, the
storage room, :mod:`wizard_referee.stats`, :mod:`wizard_arena.rules`,
:mod:`wizard_arena.protocol` (the bots' seeds) and :mod:`wizard_arena.cli`.
Never the client or the check room.
"""

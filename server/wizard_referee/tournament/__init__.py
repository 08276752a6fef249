"""The tournament room: configuration, the schedule, the runner that launches
entrants and seats them through a referee, the results store, the leaderboard,
and the ``tournament``, ``demo`` and ``replay`` verbs.

May import: the referee room, the ratings room, :mod:`wizard_arena.rules`,
:mod:`wizard_arena.cli`. Never the client.
"""

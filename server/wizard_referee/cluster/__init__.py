"""The cluster room: tournaments and comparisons played by warm workers on a
Ray cluster (``executor = "ray"``; the optional extra ``wizard-arena[ray]``).

- :mod:`.connect`: joining a cluster, or starting Ray on this machine
  (on 127.0.0.1), and the ``runtime_env`` that carries the bots' files;
- :mod:`.workers`: the Ray actors. A :class:`~.workers.HostWorker` runs the
  local runner's machinery (:mod:`wizard_referee.hosting.host`: its own
  referee on a loopback port and its own instances of every command
  entrant, restarted when they crash) and plays the games handed to it; a
  :class:`~.workers.LocalWorker` plays a comparison's games in-process;
- :mod:`.coordinator`: hands games to idle workers, replays a game whose
  worker (or node) died on another worker, and gives up on a game only
  after it was lost :data:`~.coordinator.MAX_ATTEMPTS` times;
- :mod:`.tournament_play` and :mod:`.compare_play`: the ``ray`` executor of
  ``wizard-arena tournament`` and ``wizard-arena compare``. The coordinator
  alone writes the results store, once per game, as records arrive.

May import: ray, trio, the hosting room, the tournament room, the compare
room, the referee room and :mod:`wizard_arena.local`. Nothing else imports this room but
through the executors' table of module paths
(:data:`wizard_referee.tournament.executors.EXECUTORS`).
"""

from wizard_arena.extras import require

require("ray", "wizard_referee.cluster (tournaments and comparisons on Ray)")

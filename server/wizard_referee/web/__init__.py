"""The web room: pages to watch the arena, their read-only JSON API, and the
Prometheus metrics.

- :mod:`.app`: the ASGI application (Starlette): the pages, ``/api/...``
  and ``/metrics``; errors as a JSON error or an error page, never a traceback;
- :mod:`.data`: what the pages show, read from a results store or from a
  running arena's memory in a worker thread, and cached (:mod:`.replay`: a
  game's steps for the replay, :mod:`.plot`: the ratings plot as SVG);
  :mod:`.ladder`: the same of a ladder's store (standings, entrants and
  their versions, games withheld while their duplicate set is played);
- :mod:`.spectator`: the tables in progress as a spectator may see them
  (the rules core's public view: no hand before the game ends);
- :mod:`.metrics`: the referee's counters as Prometheus metrics;
- :mod:`.serve`: hypercorn's trio worker inside the caller's nursery
  (``serve --web``, ``tournament --web``); :mod:`.cmd_web`: the ``web`` verb;
- ``static/``: the pages (HTML, plain ES modules, CSS; nothing fetched from
  elsewhere).

May import: the referee room, the tournament room (the store, the
leaderboard, the replay of a record), the ladder room (its store and
standings), the ratings room, the storage room (its errors, a store's
printed name), the SDK's rules, protocol and cli; hypercorn, starlette and
prometheus-client (the ``[web]`` extra). No room imports this one but the
``serve``, ``tournament`` and ``ladder`` verbs,
and they only inside the function that starts the web server.
"""

from __future__ import annotations

from wizard_arena.extras import require

require("web", "the web pages (wizard_referee.web)")

"""The hosting room: what plays games on a referee of its own, whoever
plans them (a tournament, a comparison over the referee, the ladder, a Ray
worker; ``check`` starts its bot here too).

Its small interface:

- :mod:`.config`: :class:`~.config.HostConfig` (the rules, the referee's
  policy, the entrants, how they run and their limits),
  :class:`~.config.EntrantConfig` and :class:`~.config.HostError`;
- :mod:`.host`: :func:`~.host.open_host` runs the referee and every command
  entrant for a block and yields a :class:`~.host.GameHost`, whose
  :meth:`~.host.GameHost.play` plays any planned game (an id, a deal seed,
  the entrant in each seat: :class:`~.host.Planned`);
- :mod:`.bot_process`: :func:`~.bot_process.open_bot_process`, the one way
  a bot's process is started, confined or not;
- :mod:`.launcher` (with :mod:`.launcher_child`): the process that starts
  them, never forked from a gRPC process;
- :mod:`.entrants`: the command entrants' instances, supervised and
  restarted; :mod:`.confine`: what ``sandbox = "bwrap"`` asks of the
  sandbox room, and the checks before any game;
- :mod:`.interrupt`: :func:`~.interrupt.run_interruptible`, how a command
  that hosts games turns Ctrl-C into a cancellation that stops its bots
  and keeps every finished game.

This ``__init__`` imports nothing, so that the launcher can be started
before gRPC loads (``check``).

May import: the referee room, the sandbox room, the storage room's
``__init__`` (a store's path, never its tables) and the SDK's rules core.
Never the tournament, compare, ladder, cluster or check rooms that use it.
"""

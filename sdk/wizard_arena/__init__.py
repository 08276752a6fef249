"""Wizard Arena SDK: the rules core, bot API, local play and the gRPC client.

The rules core (:mod:`wizard_arena.rules`) and the bot base class are
re-exported here::

    from wizard_arena import Bot, Game, Rules, Card, Play

The network client is :mod:`wizard_arena.client` (``run_bot``) and local
play is :mod:`wizard_arena.local` (``play_local``).

The rooms of the SDK:

- :mod:`wizard_arena.rules`: the rules core (pure, standard library only);
- :mod:`wizard_arena.bot`: the bot API; :mod:`wizard_arena.local` and
  :mod:`wizard_arena.cmd_play`: games in one process;
- :mod:`wizard_arena.protocol`: protocol messages as values and the wire
  codec (the only place protobuf is converted);
- :mod:`wizard_arena.client`: the gRPC client; :mod:`wizard_arena.testing`:
  the scripted raw client for tests and misbehaving bots;
- :mod:`wizard_arena.conformance`: the rules-vector runner;
  :mod:`wizard_arena.cli`: the ``wizard-arena`` command.

May import: the rules room and the bot API (re-exported here). No module of
the SDK imports the server (:mod:`wizard_referee`) or the example bots.
"""

from wizard_arena.bot import Bot, GameInfo, GameSummary
from wizard_arena.rules import *  # noqa: F403
from wizard_arena.rules import __all__ as _core_all

__version__ = "0.1.0"
__all__ = [*_core_all, "Bot", "GameInfo", "GameSummary", "__version__"]

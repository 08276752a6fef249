"""Wizard Arena SDK: the rules core, bot API, local play and the gRPC client.

The rules core (:mod:`wizard_arena.rules`) and the bot base class are
re-exported here::

    from wizard_arena import Bot, Game, Rules, Card, Play

The network client is :mod:`wizard_arena.client` (``run_bot``) and local
play is :mod:`wizard_arena.local` (``play_local``).
"""

from wizard_arena.bot import Bot, GameInfo, GameSummary
from wizard_arena.rules import *  # noqa: F403
from wizard_arena.rules import __all__ as _core_all

__version__ = "0.1.0"
__all__ = [*_core_all, "Bot", "GameInfo", "GameSummary", "__version__"]

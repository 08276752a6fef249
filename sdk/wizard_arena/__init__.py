"""Wizard Arena SDK: the rules core, bot API, local play and the gRPC client.

The rules core (:mod:`wizard_arena.core`) is re-exported here::

    from wizard_arena import Game, Rules, Card, Play
"""

from .core import *  # noqa: F403
from .core import __all__ as _core_all

__version__ = "0.1.0"
__all__ = [*_core_all, "__version__"]

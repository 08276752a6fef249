"""Reinforcement-learning environments for Wizard: the course kit's room.

What lives here: the observation encoder and the integer action ids
(:mod:`.encoding`, numpy only: a learned bot at the table uses it too), a
game driven by action ids (:mod:`.table`), the PettingZoo AEC environment
(:mod:`.aec`, published as ``wizard_arena.rl.wizard_v0.env()``), the
Gymnasium single-agent environment (:mod:`.single`: one learning seat
against any :class:`~wizard_arena.bot.Bot` subclasses) and their spaces
(:mod:`.spaces`). The environments need the ``rl`` extra
(``pip install 'wizard-arena[rl]'``: pettingzoo, gymnasium, numpy); importing one
without it fails with a one-line message naming the extra. The encoder needs
numpy alone, which is no base dependency either: without it, importing any
module here (the learned bot imports the encoder) names the ``rl`` extra too.

May import: the rules room, the bot API (:mod:`wizard_arena.bot`) and local
play (:mod:`wizard_arena.local`); never the client, the protocol, the
referee or the example bots (tests/test_architecture.py).
"""

from wizard_arena.extras import require

#: What needs the ``rl`` extra, as its one-line error names it.
PART = "wizard_arena.rl (the course kit's environments and encoder, the learned bot)"

require("rl", PART, modules=("numpy",))  # every module here needs numpy

try:  # Gymnasium's registry: gymnasium.make("WizardArena/Wizard-v0")
    import gymnasium  # noqa: F401
except ImportError:  # the encoder alone (numpy) serves a learned bot at the table
    pass
else:
    from .single import register

    register()

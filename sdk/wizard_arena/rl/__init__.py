"""Reinforcement-learning environments for Wizard: the course kit's room.

What lives here: the observation encoder and the integer action ids
(:mod:`.encoding`, numpy only: a learned bot at the table uses it too), a
game driven by action ids (:mod:`.table`), the PettingZoo AEC environment
(:mod:`.aec`, published as ``wizard_arena.rl.wizard_v0.env()``), the
Gymnasium single-agent environment (:mod:`.single`: one learning seat
against any :class:`~wizard_arena.bot.Bot` subclasses) and their spaces
(:mod:`.spaces`). The environments need the ``rl`` extra
(``pip install 'wizard-arena[rl]'``: pettingzoo, gymnasium); importing one
without it fails with a one-line message naming the extra.

May import: the rules room, the bot API (:mod:`wizard_arena.bot`) and local
play (:mod:`wizard_arena.local`); never the client, the protocol, the
referee or the example bots (tests/test_architecture.py).
"""

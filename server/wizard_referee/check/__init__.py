"""The check room: ``wizard-arena check``, a bot author's pre-entry check of
a bot against misbehaving opponents and short deadlines.

May import: the referee room, :mod:`wizard_arena.rules`, :mod:`wizard_arena.cli`.
"""

"""The check room: ``wizard-arena check``, a bot author's pre-entry check of
a bot against misbehaving opponents and short deadlines.

``cmd_check`` is the verb and runs the check (a referee on loopback, the
opponents, the bot's process); ``analysis`` reads what happened (the game
records, the Python SDK's records of the bot's decisions and faults, the
process's exit and stderr); ``report`` holds the report, its advice and its
printing.

May import: the referee room, the hosting room (the launcher and the one
way a bot's process is started), :mod:`wizard_referee.stats`,
:mod:`wizard_arena.rules`, :mod:`wizard_arena.protocol` (the fault codes),
:mod:`wizard_arena.cli`, :mod:`wizard_arena.client` (the opponents, the bot
command, the SDK's records).
"""

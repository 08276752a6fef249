"""Every decision of stored games graded (``wizard-arena analyse``,
docs/analysis.md): the seat's view rebuilt from the record (:mod:`.grade`),
an evaluator named by module path valuing each legal action, many games on
every core (:mod:`.run`), per-bot summaries and a comparison's split into
bidding and play (:mod:`.summary`); ``cmd_analyse.py`` is the verb.

May import: the tournament's results store and replay, the referee's game
records, the ratings' Student t, the rules core, the SDK's bot loader and
CLI; the evaluator (a bot class: ``wizard_bots`` by default) only by module
path, so this room imports no bot.
"""

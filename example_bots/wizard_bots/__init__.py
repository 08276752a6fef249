"""Example bots for Wizard Arena: ``random``, ``heuristic``, ``montecarlo``
(with :mod:`.sampling`, :mod:`.budget` and :mod:`.opponents`), ``ismcts``
(:mod:`.ismcts`: information-set MCTS over the Monte Carlo bot's sampler),
``spiel-ismcts`` (:mod:`.spiel`: OpenSpiel's own ISMCTS over the same sampler;
the ``open_spiel`` extra), ``learned``
(:mod:`.learned`: bids with a network trained by self-play in the course
kit's environment), and the
misbehaving-bots kit (:mod:`.misbehaving`).

Run one against a server with ``wizard-arena bot wizard_bots.random_bot:RandomBot``.

May import: the SDK's public modules only (:mod:`wizard_arena`, its rules,
bot API, protocol, client, testing and rl rooms), never the referee
(:mod:`wizard_referee`) or generated code: a bot author's code sees what
these bots see.
"""

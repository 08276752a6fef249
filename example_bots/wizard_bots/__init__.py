"""Example bots for Wizard Arena: ``random``, ``heuristic`` and ``montecarlo``.

Run one against a server with ``wizard-arena bot wizard_bots.random_bot:RandomBot``.
"""

"""The ratings room: Bradley-Terry and Elo ratings with bootstrap intervals
(:mod:`.models`; the fits of many bootstrap resamples at once with numpy in
:mod:`.batch`) and the ``wizard-arena ratings`` verb (:mod:`.cmd_ratings`).

May import: nothing of ours but the leaf :mod:`wizard_referee.stats` (it rates
results from any source); numpy.
"""

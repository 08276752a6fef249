"""The compare room: ``wizard-arena compare A B``, is bot A stronger than
bot B? A and B play the same deals from the same seats against the same
opponents (duplicate replacement), and a sequential test stops as soon as
the answer is known.

- :mod:`.plan`: the bots, the deals, the seats and the seeds;
- :mod:`.stats`: paired differences and the anytime-valid confidence
  sequence for their mean that decides when to stop;
- :mod:`.session`: the results store and the tally of one comparison;
- :mod:`.local_play`: games in worker processes (every bot a Python class);
- :mod:`.referee_play`: games over a referee (the tournament's launcher,
  arena and entrants);
- :mod:`.cmd_compare`: the verb.

May import: the tournament room (its store, launcher and entrants), the
referee room, the ratings room (Student's t), the storage room (where a
store's logs go), :mod:`wizard_arena.local`,
the bot loader of :mod:`wizard_arena.client.cmd_bot` and
:mod:`wizard_arena.cli`.
"""

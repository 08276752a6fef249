"""The compare room: ``wizard-arena compare A B``, is bot A stronger than
bot B? A and B play the same deals from the same seats against the same
opponents (duplicate replacement), and a sequential test stops as soon as
the answer is known.

- :mod:`.plan`: the bots, the deals, the seats and the seeds;
- :mod:`.stats`: paired differences and the anytime-valid confidence
  sequence for their mean that decides when to stop;
- :mod:`.session`: the results store and the tally of one comparison;
- :mod:`.local_play`: games in worker processes (every bot a Python class);
- :mod:`.referee_play`: games over a referee, on the hosting room's host
  (:mod:`wizard_referee.hosting.host`: its referee and entrants);
- :mod:`.cmd_compare`: the verb.

May import: the hosting room (its host), the tournament room (its store),
the referee room, the
ratings room (Student's t), the sandbox room (its flags), the storage room
(where a store's logs go), the SDK's rules, protocol, bot API,
:mod:`wizard_arena.local`, the bot loader (:mod:`wizard_arena.loader`) and
:mod:`wizard_arena.cli`; the ``ray`` executor only by module path
(tests/rooms.py has the row).
"""

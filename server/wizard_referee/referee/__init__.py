"""The referee room: the gRPC transport and everything that runs a table.

- :mod:`.seat`: the :class:`~.seat.Seat` protocol, all the arena and the
  tables know of a bot's connection; :mod:`.bridge`: the gRPC transport
  (the trio <-> grpc.aio bridge, the one place the loops meet;
  :mod:`.grpc_setup`: grpc core's settings, chosen before grpc loads);
  :mod:`.memory`: an in-memory transport (tests, no gRPC);
- :mod:`.arena`: the lobby, matchmaking, serving; :mod:`.handshake`: what a
  new stream must say; :mod:`.sessions`: sessions and resume tokens;
  :mod:`.table`: one game (:mod:`.seat_state`: one seat at a table: its
  reader, faults, strays, resume and catch-up; :mod:`.pending`: a seat's pending decision;
  :mod:`.alarm`: the deadlines; :mod:`.broadcast`: what each seat is sent);
  the network credit (:mod:`.clock_probes`: a connection's clock probes;
  :mod:`.round_trips`: the round trip estimated from them; :mod:`.tcp_rtt`:
  the kernel's measure of a connection);
  :mod:`.live`: the games in progress, for spectators;
  :mod:`.counters`: the counts the metrics are made of;
- :mod:`.policy`: the :class:`~.policy.RefereePolicy` (deadlines, network
  credit, time bank, fault policy, limits); :mod:`.faults`: what a fault costs;
- :mod:`.record`: the game record; :mod:`.logs`: structured logging;
  :mod:`.listen`: why a server cannot listen on its address, in one line;
- :mod:`.cmd_serve`: the ``wizard-arena serve`` verb.

May import: :mod:`wizard_arena.rules`, :mod:`wizard_arena.protocol`, the bot
API's value types and :mod:`wizard_arena.cli`. Never the client, the
tournament room or the ratings. Only :mod:`.bridge` imports grpc.
"""

"""The referee room: the gRPC transport and everything that runs a table.

- :mod:`.bridge`: the trio <-> grpc.aio bridge, the one place the loops meet;
- :mod:`.arena`: sessions, the lobby, matchmaking; :mod:`.table`: one game;
- :mod:`.record`: the game record; :mod:`.logs`: structured logging;
- :mod:`.cmd_serve`: the ``wizard-arena serve`` verb.

May import: :mod:`wizard_arena.rules`, :mod:`wizard_arena.protocol.messages`, the bot
API's value types and :mod:`wizard_arena.cli`. Never the client, the
tournament room or the ratings.
"""

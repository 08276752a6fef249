"""The protocol room: the domain values of protocol v1 and the wire codec.

- :mod:`.messages`: the messages a bot and the referee exchange, as plain
  Python values (no protobuf);
- :mod:`.wire`: the one package that converts protobuf messages to and from
  those values (the generated code lives in :mod:`wizard_arena._generated`);
- :mod:`.seeds`: the bots' per-game seeds, derived from a secret.

May import: the rules room (:mod:`wizard_arena.rules`), the bot API's
``GameInfo`` (the GameStarted value), and protobuf; the generated code only
inside :mod:`.wire`, and grpc only in :mod:`.wire.service` (lazily). Never
trio, the client or the referee.
"""

"""The testing room: tools to test a referee (or a bot) from outside, over gRPC.

- :mod:`.raw`: :class:`RawBot`, the one scripted raw gRPC client: it sends
  what it is told (malformed, late, out of turn, or nothing at all) and
  records what it receives. The tests use it, and so does the
  misbehaving-bots kit (:mod:`wizard_bots.misbehaving`).
- :mod:`.inbox`: :class:`Inbox`, what a scripted bot received, read by
  kind (the raw bot's and the suite's in-memory bots').
- :mod:`.relay`: :class:`DelayRelay`, a TCP relay on loopback that delays
  each direction (with jitter, in order): a bot far away from the referee,
  on one machine (the tests of the network credit and its bench use it).

May import: the rules room, the protocol room (:mod:`wizard_arena.protocol`)
and grpc (the relay: the standard library only). Never the referee
(:mod:`wizard_referee`), the SDK client or the CLI: it is a client with none
of the SDK's care, on purpose.
"""

from wizard_arena.testing.inbox import Inbox
from wizard_arena.testing.raw import MessageHook, RawBot, Received, RequestHook, run_bots

__all__ = ["Inbox", "MessageHook", "RawBot", "Received", "RequestHook", "run_bots"]

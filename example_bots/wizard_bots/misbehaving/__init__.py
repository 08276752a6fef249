"""Misbehaving bots: reference clients that break the rules and the protocol on purpose.

They exist to test a referee (does it fault the right seat with the right
code, and does the game go on?) and the tools around it (``wizard-arena
check``, the soak bench). Each one plays legal random moves except for its
one misbehaviour, which it commits at a configurable ``rate`` (a probability
per decision it could misbehave on; per connection for ``wrong-version``),
at most ``limit`` times a game, so that games go on.

=================  ==============================================  ==========================
kind               what it does                                    what the referee records
=================  ==============================================  ==========================
``slow``           answers after the deadline (:class:`SlowBot`,   ``timeout``
                   an SDK bot: the SDK drops the late answer)
``illegal``        plays a card it does not hold or may not        ``illegal`` (rejected; it
                   play, bids above the cards dealt                then answers legally)
                   (:class:`IllegalBot`, sent unchecked)
``malformed``      an empty ``BotMessage``, an action without a    ``malformed`` (rejected; it
                   choice, an invalid card or suit, an unknown     then answers legally)
                   request id (in turn)
``oversized``      a message over the server's 64 KiB limit        the stream ends
                                                                   RESOURCE_EXHAUSTED;
                                                                   ``disconnect``
``never-answer``   ignores the request                             ``timeout``
``disconnect``     drops the connection in the middle of a trick   ``disconnect``
``flood``          sends ``burst`` copies of its answer at once    ``flooding`` and the stream
                                                                   ends RESOURCE_EXHAUSTED
                                                                   when more than the
                                                                   server's inbound limit
                                                                   wait unread (see below)
``wrong-version``  says hello speaking protocol versions 2..3      refused at hello:
                                                                   FAILED_PRECONDITION
=================  ==============================================  ==========================

About ``flood``: the referee cuts a bot off when more than
``ArenaConfig.inbound_limit`` (64) of its messages wait unread. An idle
referee reads as fast as a Python client can send (measured: 5,000 copies
at once were all read, none cut off): the flood costs it work, and the
bot's next answers, queued behind the burst, may time out, but there is no
``flooding`` fault. A busy referee (the soak bench) or one with a small
limit (the tests use 2) falls behind and cuts the bot off.

A client whose stream ended by its own doing (oversized, disconnect, flood,
wrong version) connects again as a new session and waits for the next game;
the game it left is played on by the referee. A game cut short that way and
a refused hello each count as one of the ``games``.

Run one against a server::

    python -m wizard_bots.misbehaving KIND --server HOST:PORT --name NAME \\
        [--token T] [--games N] [--rate P] [--limit K] [--seed S] \\
        [--rule-options NAMES] [--json]

or import it: :func:`run_kind` (blocking), or a client class from
:data:`CLIENTS` (``start()`` runs it in a thread, ``stop()`` ends it).
``--rule-options`` (``rule_options=``) lists the rule options its Hello
declares, so that it can sit at a table of variant rules (e.g.
``round_sizes`` for short games); by default the raw clients declare none,
as a v1 bot written from the .proto alone, and ``slow`` (an SDK bot) every
option the SDK plays.

The parts: :mod:`.kinds` (the kinds, default rates and sizes), :mod:`.bots`
(the SDK bots :class:`SlowBot` and :class:`IllegalBot`), :mod:`.client` (the
raw client :class:`RawClient` and its :class:`Report`: one
:class:`wizard_arena.testing.RawBot` per stream), :mod:`.behaviours` (one raw
client per kind; the one place that builds deliberately broken protobuf
messages, through ``wire.pb``), :mod:`.runner` (:func:`run_kind` and the
command line). May import only the SDK's public modules
(:mod:`wizard_arena.testing` among them), never the referee.

>>> sorted(KINDS) == sorted(DEFAULT_RATES) == sorted([*CLIENTS, "slow"])
True
"""

from wizard_bots.misbehaving.behaviours import (
    CLIENTS,
    DisconnectClient,
    FloodClient,
    IllegalClient,
    MalformedClient,
    NeverAnswerClient,
    OversizedClient,
    WrongVersionClient,
    malformed_message,
    oversized_message,
)
from wizard_bots.misbehaving.bots import IllegalBot, SlowBot
from wizard_bots.misbehaving.client import RawClient, Report
from wizard_bots.misbehaving.kinds import (
    DEFAULT_RATES,
    FLOOD_BURST,
    KINDS,
    OVERSIZED_BYTES,
    WRONG_VERSIONS,
)
from wizard_bots.misbehaving.runner import main, run_kind

__all__ = [
    "CLIENTS",
    "DEFAULT_RATES",
    "FLOOD_BURST",
    "KINDS",
    "OVERSIZED_BYTES",
    "WRONG_VERSIONS",
    "DisconnectClient",
    "FloodClient",
    "IllegalBot",
    "IllegalClient",
    "MalformedClient",
    "NeverAnswerClient",
    "OversizedClient",
    "RawClient",
    "Report",
    "SlowBot",
    "WrongVersionClient",
    "main",
    "malformed_message",
    "oversized_message",
    "run_kind",
]

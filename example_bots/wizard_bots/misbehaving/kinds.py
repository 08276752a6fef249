"""The kinds of misbehaviour, their default rates and sizes."""

from __future__ import annotations

from typing import Final

#: The kinds of misbehaviour, with what each does.
KINDS: Final[dict[str, str]] = {
    "slow": "answers after the deadline",
    "illegal": "plays cards it does not hold or may not play, bids too high",
    "malformed": "empty messages, actions without a choice, invalid cards, unknown request ids",
    "oversized": "a message over the server's 64 KiB limit",
    "never-answer": "ignores decision requests",
    "disconnect": "drops the connection in the middle of a trick",
    "flood": "hundreds of messages at once",
    "wrong-version": "says hello with protocol versions the server does not speak",
}

#: Default rate of each kind: the probability of misbehaving on a decision it
#: could misbehave on (``wrong-version``: on a connection).
DEFAULT_RATES: Final[dict[str, float]] = {
    "slow": 0.05,
    "illegal": 0.1,
    "malformed": 0.1,
    "oversized": 0.01,
    "never-answer": 0.05,
    "disconnect": 0.02,
    "flood": 0.01,
    "wrong-version": 0.5,
}

#: Size of the oversized message: over the referee's 64 KiB limit.
OVERSIZED_BYTES: Final = 70 * 1024
#: Messages a flood sends at once.
FLOOD_BURST: Final = 1000
#: Protocol versions a wrong-version hello claims.
WRONG_VERSIONS: Final = (2, 3)

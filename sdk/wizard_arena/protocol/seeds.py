"""Per-game seeds for bots: reproducible games that give no deal away.

The referee gives each bot, at the start of each game, a seed for its own
randomness (``GameStarted.bot_seed``; :attr:`wizard_arena.bot.GameInfo.seed`
and the ready :attr:`~wizard_arena.bot.GameInfo.rng` in the SDK). It is

    the first 8 bytes (big-endian) of
    HMAC-SHA256(key = SECRET, message = "wizard-arena/bot-seed/v1\\n" GAME_ID "\\n" SEAT)

(0 is replaced by 1: 0 on the wire means "no seed"). ``SECRET`` belongs to
the tournament (its ``bot_seed_secret``, or 32 random bytes drawn and kept in
its database) or to the server (``serve --bot-seed-secret``, or drawn at
start). It is never derived from the deal's seed: from its own seeds a bot
learns nothing of the deal (HMAC-SHA256 is a pseudo-random function, and the
deal seeds do not enter it), nor, as long as the secret has enough entropy,
the seeds of the other seats. The same secret, game id and seat always give
the same seed, so a tournament replays identically when its bots draw only
from it.

>>> s = bot_seed("not a secret", "t0-d0-r0", 0)
>>> s == bot_seed("not a secret", "t0-d0-r0", 0), 0 < s < 2**64
(True, True)
>>> len({bot_seed("k", g, seat) for g in ("a", "b") for seat in range(3)})
6
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

__all__ = ["SEED_CONTEXT", "bot_seed", "local_secret", "new_secret"]

#: Prefix of the HMAC message: the seed of one use of a secret is never the
#: seed of another.
SEED_CONTEXT = b"wizard-arena/bot-seed/v1\n"


def _key(secret: bytes | str) -> bytes:
    return secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)


def bot_seed(secret: bytes | str, game_id: str, seat: int) -> int:
    """The seed of the bot in ``seat`` of game ``game_id``: 1 to 2**64 - 1.
    A text secret is used as its UTF-8 bytes."""
    if seat < 0:
        raise ValueError("seat must not be negative")
    message = SEED_CONTEXT + game_id.encode("utf-8") + b"\n" + str(seat).encode("ascii")
    digest = hmac.new(_key(secret), message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") or 1


def new_secret() -> str:
    """A fresh random secret: 32 random bytes as 64 hex digits."""
    return secrets.token_hex(32)


def local_secret(seed: int | str | None) -> str:
    """The secret of in-process play (:func:`wizard_arena.local.play_local`):
    derived from the game's seed, so that a seeded local game replays whole,
    or random without one. Local bots run in the caller's own process, so
    there is nothing to hide from them; a referee never does this."""
    if seed is None:
        return new_secret()
    return "wizard-arena local play " + repr(seed)

"""What a scripted bot received, read by kind: :class:`Inbox`, shared by
:class:`~wizard_arena.testing.raw.RawBot` (over gRPC) and the test suite's
in-memory bots, so that a test reads either the same way."""

from __future__ import annotations

from typing import Any

from wizard_arena.protocol.messages import (
    ActionRejected,
    DecisionRequest,
    GameEnd,
    RoundStart,
    Welcome,
)

__all__ = ["Inbox"]


class Inbox:
    """A mixin: the messages received, by kind. A subclass says what it
    received (:meth:`messages`, in arrival order)."""

    def messages(self, kind: type | tuple[type, ...] | None = None) -> list[Any]:
        """The messages received of ``kind`` (every one with None), in order."""
        raise NotImplementedError

    @property
    def welcome(self) -> Welcome | None:
        got = self.messages(Welcome)
        return got[0] if got else None

    @property
    def rejections(self) -> list[ActionRejected]:
        return self.messages(ActionRejected)

    @property
    def requests(self) -> list[DecisionRequest]:
        return self.messages(DecisionRequest)

    @property
    def game_ends(self) -> list[GameEnd]:
        return self.messages(GameEnd)

    @property
    def round_starts(self) -> list[RoundStart]:
        return self.messages(RoundStart)

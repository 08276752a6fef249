"""The ``rl`` extra: a missing package of it fails with one line naming the extra."""

from __future__ import annotations

INSTALL = "pip install 'wizard-arena[rl]'"
#: What needs it: the environments, and the encoder (numpy) that the learned bot uses too.
PART = "wizard_arena.rl (the course kit's environments and encoder, the learned bot)"


def missing(error: ImportError) -> ImportError:
    """The error to raise when importing a package of the ``rl`` extra failed.

    >>> print(missing(ImportError("No module named 'pettingzoo'", name="pettingzoo")))
    pettingzoo is missing: wizard_arena.rl (the course kit's environments and encoder, \
the learned bot) needs the rl extra (pip install 'wizard-arena[rl]')
    """
    name = (error.name or "a package").split(".")[0]
    return ImportError(f"{name} is missing: {PART} needs the rl extra ({INSTALL})")

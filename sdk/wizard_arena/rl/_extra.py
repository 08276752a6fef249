"""The ``rl`` extra: a missing package of it fails with one line naming the extra."""

from __future__ import annotations

INSTALL = "pip install 'wizard-arena[rl]'"


def missing(error: ImportError) -> ImportError:
    """The error to raise when importing a package of the ``rl`` extra failed.

    >>> print(missing(ImportError("No module named 'pettingzoo'", name="pettingzoo")))
    pettingzoo is missing: the environments need the rl extra (pip install 'wizard-arena[rl]')
    """
    name = (error.name or "a package").split(".")[0]
    return ImportError(f"{name} is missing: the environments need the rl extra ({INSTALL})")

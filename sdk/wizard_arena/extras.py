"""The optional parts of the package and the extras that install them.

A bot author's ``pip install wizard-arena`` brings what a bot needs: the
rules core, the bot API, local play and the gRPC client (grpcio, protobuf,
trio). Every other part comes with an extra of pyproject.toml
(``[project.optional-dependencies]``), and ``dev`` installs them all:

- ``server``: the referee, tournaments, ratings, compare and check
  (:mod:`wizard_referee`);
- ``web``: the web pages, their JSON API and the metrics
  (:mod:`wizard_referee.web`; with ``server``);
- ``ladder``: the ladder, a season of entrants that come, go and improve
  (:mod:`wizard_referee.ladder`; with ``server``);
- ``ray``: tournaments and comparisons on a Ray cluster
  (:mod:`wizard_referee.cluster`; with ``server``);
- ``postgres``: a results store on PostgreSQL (psycopg 3:
  :mod:`wizard_referee.storage`; with ``server``);
- ``fast``: uvloop, the event loop of the referee's grpc.aio thread where
  it is installed (``server`` brings it; not on Windows; no part requires
  it: without it the referee runs on asyncio's own loop);
- ``rl``: the course kit's Gymnasium and PettingZoo environments and its
  observation encoder (:mod:`wizard_arena.rl`; the learned bot uses the encoder);
- ``open_spiel``: Wizard as an OpenSpiel game (:mod:`wizard_arena.rl.openspiel`,
  with ``rl``) and the example bot that searches it with OpenSpiel's ISMCTS.

:data:`EXTRAS` names the modules each extra brings. A part calls
:func:`require` when it is imported, so that importing it without its extra
fails at once with one line naming the extra to install, not with a
``ModuleNotFoundError`` from somewhere inside. A part added with a new extra
adds it here and in pyproject.toml (tests/test_packaging.py checks that the
two agree).

May import: the standard library only.

>>> require("server", "the referee")  # installed here
>>> sorted(EXTRAS)
['fast', 'ladder', 'open_spiel', 'postgres', 'ray', 'rl', 'server', 'web']
"""

from __future__ import annotations

import importlib.util
import sys

__all__ = ["EXTRAS", "MissingExtraError", "require"]

#: extra -> the (module, distribution) pairs it installs (beside ``server``'s, for
#: ``web``, ``ladder`` and ``ray``: their extras install ``wizard-arena[server]`` too).
EXTRAS: dict[str, tuple[tuple[str, str], ...]] = {
    "server": (
        ("grpc_health", "grpcio-health-checking"),
        ("grpc_reflection", "grpcio-reflection"),
        ("structlog", "structlog"),
        ("numpy", "numpy"),
        # the confined bots' seccomp filter (sandbox = "bwrap": Linux alone)
        *((("pyseccomp", "pyseccomp"),) if sys.platform == "linux" else ()),
    ),
    "web": (
        ("hypercorn", "hypercorn"),
        ("starlette", "starlette"),
        ("prometheus_client", "prometheus-client"),
    ),
    "ladder": (("openskill", "openskill"),),
    "ray": (("ray", "ray"),),
    "postgres": (("psycopg", "psycopg"),),
    "fast": (("uvloop", "uvloop"),),
    "rl": (("pettingzoo", "pettingzoo"), ("gymnasium", "gymnasium"), ("numpy", "numpy")),
    "open_spiel": (("pyspiel", "open_spiel"),),
}


class MissingExtraError(ImportError):
    """A part of the package was imported without the extra it needs."""

    def __init__(self, extra: str, part: str, missing: list[str]) -> None:
        self.extra = extra
        self.missing = missing
        super().__init__(
            f"{part} needs the [{extra}] extra (missing: {', '.join(missing)}): "
            f"pip install 'wizard-arena[{extra}]'"
        )


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require(extra: str, part: str, modules: tuple[str, ...] | None = None) -> None:
    """Raise :class:`MissingExtraError` (an ``ImportError`` whose message is
    one line naming ``extra``) if a module of ``extra`` is not installed
    (``modules``: only these of its modules, for a part that needs only
    them); ``part`` names what needs it. Looks modules up without importing
    them. Every optional part says what it lacks this one way.

    >>> require("rl", "the encoder", modules=("numpy",))
    """
    missing = [
        dist
        for module, dist in EXTRAS[extra]
        if (modules is None or module in modules) and not _installed(module)
    ]
    if missing:
        raise MissingExtraError(extra, part, missing)

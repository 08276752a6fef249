"""The web flags of the verbs that run a referee (``serve``, ``tournament``):
``--web PORT``, ``--web-host``, ``--metrics-port``, ``--spectator-delay``.

Here, in the CLI room, so that a verb's parser has them without loading the
web room (and its ``[web]`` extra) unless ``--web`` or ``--metrics-port`` is given.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

__all__ = ["WebOptions", "add_web_arguments", "port_number"]


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 0 (any free port) to 65535 (beyond,
    the socket raises and gRPC takes the port modulo 65536)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535 (0: any free port), not {port}")
    return port


@dataclass(frozen=True)
class WebOptions:
    """The web flags of ``serve`` and ``tournament``."""

    port: int | None = None
    """``--web PORT`` (None: no pages)."""
    host: str = "127.0.0.1"
    metrics_port: int | None = None
    """``--metrics-port PORT``: ``/metrics`` on a port of its own."""
    spectator_delay: float | None = None

    @property
    def wanted(self) -> bool:
        return self.port is not None or self.metrics_port is not None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> WebOptions:
        return cls(args.web, args.web_host, args.metrics_port, args.spectator_delay)


def add_web_arguments(parser: argparse.ArgumentParser) -> None:
    """``--web PORT``, ``--web-host``, ``--metrics-port``, ``--spectator-delay``."""
    g = parser.add_argument_group("web pages and metrics (the [web] extra; docs/web.md)")
    g.add_argument(
        "--web",
        type=port_number,
        metavar="PORT",
        help="serve the pages (tables in progress, games, ...) and /metrics on this port "
        "(0: any free port)",
    )
    g.add_argument(
        "--web-host", default="127.0.0.1", help="address of the pages (default 127.0.0.1)"
    )
    g.add_argument(
        "--metrics-port",
        type=port_number,
        metavar="PORT",
        help="serve /metrics on a port of its own",
    )
    g.add_argument(
        "--spectator-delay",
        type=float,
        metavar="SECONDS",
        help="show the hands of a running game's rounds that ended at least this long ago "
        "(default: hands only once the game has ended)",
    )

"""The kernel's own measure of a bot's connection: ``tcpi_min_rtt``.

Linux keeps, for every TCP socket, the smallest round trip it has seen
(``struct tcp_info``'s ``tcpi_min_rtt``, microseconds, from data sent to its
acknowledgement; windowed over minutes), readable with
``getsockopt(TCP_INFO)`` on the socket. A bot cannot make it smaller than
the network is, nor larger without delaying its own answers as much: it is
the upper bound of the network credit (:mod:`.round_trips`).

grpcio does not give a servicer its socket, nor the socket's file
descriptor. It does give the peer's address (``context.peer()``,
``ipv4:127.0.0.1:54321``), and grpc core's sockets are this process's own
descriptors: :class:`KernelRtt` finds the one whose peer is the bot and
whose local port is the server's (listing ``/proc/self/fd``, once per
connection), and then reads it on a duplicate of the descriptor, closed at
once (so the referee never holds a bot's connection open), after checking
that the duplicate is still the same socket (its inode: a descriptor number
grpc closed may have been reused for another connection meanwhile).

Where there is no such measure it says ``None`` and the credit is bounded
by the cap (and the bot's fastest answers) alone: a peer that is not TCP
over IP (a Unix socket says 0: the bot is on this machine), a kernel or
platform without ``TCP_INFO`` or ``tcpi_min_rtt`` (before Linux 4.6), a
referee behind a proxy (whose connection is the proxy's: the arena then
reads none), a connection gone.

>>> parse_peer("ipv4:127.0.0.1:5555"), parse_peer("ipv6:[::1]:5555")
(('127.0.0.1', 5555), ('::1', 5555))
>>> parse_peer("ipv6:%5B::1%5D:5555")  # as grpc writes it
('::1', 5555)
>>> parse_peer("unix:/tmp/arena.sock") is None, parse_peer("memory") is None
(True, True)
"""

from __future__ import annotations

import ipaddress
import os
import socket
import struct
from urllib.parse import unquote

__all__ = ["MIN_RTT_OFFSET", "KernelRtt", "min_rtt_of", "parse_peer"]

#: Where ``tcpi_min_rtt`` (a u32, microseconds) lies in ``struct tcp_info``
#: (linux/tcp.h): 8 single bytes, 24 u32 (``tcpi_rto`` .. ``tcpi_total_retrans``),
#: 4 u64 (``tcpi_pacing_rate`` .. ``tcpi_bytes_received``), then
#: ``tcpi_segs_out``, ``tcpi_segs_in``, ``tcpi_notsent_bytes``, ``tcpi_min_rtt``.
MIN_RTT_OFFSET = 8 + 24 * 4 + 4 * 8 + 3 * 4
_NO_SAMPLE = 0xFFFFFFFF
_TCP_INFO = getattr(socket, "TCP_INFO", None)
_FDS = "/proc/self/fd"


def parse_peer(peer: str) -> tuple[str, int] | None:
    """The address and port of a gRPC peer string (``ipv4:HOST:PORT``,
    ``ipv6:[HOST]:PORT``); None for any other kind of peer."""
    kind, _, rest = peer.partition(":")
    if kind not in ("ipv4", "ipv6"):
        return None
    host, _, port = unquote(rest).rpartition(":")  # (grpc writes ipv6:%5B::1%5D:5555)
    host = host.strip("[]")
    try:
        return str(ipaddress.ip_address(host.split("%")[0])), int(port)
    except ValueError:
        return None


def min_rtt_of(sock: socket.socket) -> float | None:
    """``tcpi_min_rtt`` of ``sock`` in seconds (None: not known)."""
    if _TCP_INFO is None:
        return None
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, _TCP_INFO, 256)
    except OSError:
        return None
    if len(info) < MIN_RTT_OFFSET + 4:
        return None
    micros: int = struct.unpack_from("I", info, MIN_RTT_OFFSET)[0]
    if micros == _NO_SAMPLE or micros == 0:
        return None
    return micros / 1e6


def _inode(fd: int) -> str | None:
    try:
        link = os.readlink(f"{_FDS}/{fd}")
    except OSError:
        return None
    return link if link.startswith("socket:") else None


def _names(sock: socket.socket) -> tuple[tuple[str, int], int] | None:
    """(the peer's address and port, the local port) of an IP socket."""
    try:
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            return None
        peer = sock.getpeername()
        local = sock.getsockname()
    except OSError:
        return None
    host = str(ipaddress.ip_address(str(peer[0]).split("%")[0]))
    return (host, int(peer[1])), int(local[1])


def _same_peer(a: tuple[str, int], b: tuple[str, int]) -> bool:
    """One address seen as IPv4 or IPv4-mapped IPv6 (a dual-stack listener)."""
    if a[1] != b[1]:
        return False
    x, y = ipaddress.ip_address(a[0]), ipaddress.ip_address(b[0])
    if isinstance(x, ipaddress.IPv6Address) and x.ipv4_mapped is not None:
        x = x.ipv4_mapped
    if isinstance(y, ipaddress.IPv6Address) and y.ipv4_mapped is not None:
        y = y.ipv4_mapped
    return x == y


class KernelRtt:
    """The kernel's ``tcpi_min_rtt`` of the server's socket to ``peer`` (a
    gRPC peer string) on ``local_port``: call it for the value in seconds,
    None when not known (see the module)."""

    def __init__(self, peer: str, local_port: int) -> None:
        self.peer = peer
        self.address = parse_peer(peer)
        self.local_port = local_port
        self.local = peer.startswith("unix:")
        """A Unix socket: the bot is on this machine."""
        self._fd: int | None = None
        self._inode: str | None = None
        self._looked = False

    def __call__(self) -> float | None:
        if self.local:
            return 0.0
        if self.address is None:
            return None
        if not self._looked:
            self._looked = True
            self._find()
        fd, inode = self._fd, self._inode
        if fd is None:
            return None
        sock = _open_copy(fd)
        if sock is None:
            self._fd = None
            return None
        with sock:
            if _inode(sock.fileno()) != inode:  # grpc closed it; the number is another's now
                self._fd = None
                return None
            return min_rtt_of(sock)

    def _find(self) -> None:
        """The descriptor of the server's socket to the peer, if this process has it."""
        assert self.address is not None
        try:
            fds = os.listdir(_FDS)
        except OSError:
            return
        for name in fds:
            fd = int(name)
            inode = _inode(fd)
            if inode is None:
                continue
            sock = _open_copy(fd)
            if sock is None:
                continue
            with sock:
                names = _names(sock)
                if _inode(sock.fileno()) != inode:
                    continue
            if names is None:
                continue
            peer, local_port = names
            if local_port == self.local_port and _same_peer(peer, self.address):
                self._fd, self._inode = fd, inode
                return


def _open_copy(fd: int) -> socket.socket | None:
    """A socket object on a duplicate of ``fd`` (closed with it: ``fd``
    itself stays grpc's), or None when ``fd`` is no longer a socket."""
    try:
        copy = os.dup(fd)
    except OSError:
        return None
    try:
        return socket.socket(fileno=copy)
    except OSError:
        os.close(copy)  # (still ours: the socket object was not made)
        return None

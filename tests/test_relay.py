"""The delay relay (wizard_arena.testing.relay): bytes come through delayed
each way, in order even with jitter, and a half-close comes through too."""

from __future__ import annotations

import socket
import threading
import time

from wizard_arena.testing.relay import DelayRelay


def _echo_server() -> tuple[socket.socket, threading.Thread]:
    """A server that echoes each connection until it half-closes, then
    half-closes too."""
    server = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        conn, _ = server.accept()
        with conn:
            while data := conn.recv(65536):
                conn.sendall(data)
            conn.shutdown(socket.SHUT_WR)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return server, thread


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        assert chunk, f"the stream ended after {len(out)} of {n} bytes"
        out += chunk
    return out


def test_a_round_trip_takes_both_delays() -> None:
    server, thread = _echo_server()
    with server, DelayRelay(server.getsockname()[:2], delay=0.05, up_delay=0.1) as relay:
        with socket.create_connection(relay.address_tuple) as client:
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            start = time.monotonic()
            client.sendall(b"x")
            assert _recv_exactly(client, 1) == b"x"
            took = time.monotonic() - start
            assert 0.15 <= took < 1.5, took  # 100 ms there, 50 ms back
            client.shutdown(socket.SHUT_WR)
            assert client.recv(1) == b""  # the half-close came back through the relay
        assert relay.connections == 1
    thread.join(timeout=5)


def test_jitter_never_reorders_bytes() -> None:
    """Chunks sent 1 ms apart with a jitter of 30 ms (each drawn on its
    own) arrive in the order sent."""
    server, thread = _echo_server()
    relay = DelayRelay(server.getsockname()[:2], delay=0.03, jitter=0.03, seed=4)
    with server, relay, socket.create_connection(relay.address_tuple) as client:
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sent = b"".join(i.to_bytes(2, "big") for i in range(400))
        for k in range(0, len(sent), 8):
            client.sendall(sent[k : k + 8])
            time.sleep(0.001)
        assert _recv_exactly(client, len(sent)) == sent
        client.shutdown(socket.SHUT_WR)
        assert client.recv(1) == b""
    thread.join(timeout=5)

"""Loopback peers that stall: for the deadlines, over real sockets (no respx)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

TRICKLE_EVERY_S = 0.05
# An answer that never ends: a status line, then one header line sent a byte at a time for far
# longer than any deadline here (20,000 bytes: about 1,000 s), each byte well within any timeout.
ENDLESS_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Slow: " + b"a" * 20_000


@contextmanager
def stalling_peer(first_bytes: bytes = b"", trickle: bytes = b"") -> Iterator[str]:
    """A loopback server that answers each connection with `first_bytes`, then sends `trickle`
    one byte every TRICKLE_EVERY_S, then neither reads nor sends anything more until the test ends."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)  # closing a socket does not wake an accept() blocked on it
    held: list[socket.socket] = []
    over = threading.Event()

    def answer(connection: socket.socket) -> None:
        try:
            connection.sendall(first_bytes)
            for byte in trickle:
                if over.wait(TRICKLE_EVERY_S):
                    return
                connection.sendall(bytes([byte]))
        except OSError:  # the client gave up and closed: what a deadline does
            pass

    def accept() -> None:
        while not over.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            held.append(connection)
            threading.Thread(target=answer, args=(connection,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        over.set()
        thread.join(timeout=5)
        listener.close()
        for connection in held:
            connection.close()

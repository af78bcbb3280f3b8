"""Bytes between a caller and an instance: the request's head read, the request passed on and the
answer relayed back until maxDuration, and the platform's own error answers."""

from __future__ import annotations

import contextlib
import queue
import selectors
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from devstack.standins.function_host.instance import Instance

MAX_HEAD_BYTES = 64 * 1024


def platform_error(status: int, code: str, page: Path | None = None, extra: str = "") -> bytes:
    body = page.read_bytes() if page else f"An error occurred with this function\n\n{code}\n".encode()
    reason = {404: "Not Found", 500: "Internal Server Error", 504: "Gateway Timeout"}.get(status, "Error")
    content_type = "text/html; charset=utf-8" if page else "text/plain; charset=utf-8"
    return (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nx-vercel-error: {code}\r\n{extra}"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body


def read_head(client: socket.socket) -> tuple[bytes | None, bytes]:
    client.settimeout(30)
    data = b""
    with contextlib.suppress(OSError):
        while b"\r\n\r\n" not in data and len(data) < MAX_HEAD_BYTES:
            chunk = client.recv(65536)
            if not chunk:
                return None, b""
            data += chunk
    client.settimeout(None)
    if b"\r\n\r\n" not in data:
        return None, b""
    end = data.index(b"\r\n\r\n") + 4
    return data[:end], data[end:]


def relay(client: socket.socket, instance: Instance, forwarded: bytes, deadline: float, added: bytes) -> str:
    """Pass the request to the instance and its answer back, with the `added` header lines after
    its status line, until the instance closes the connection."""
    status = "-"
    status_line = b""  # the answer's first bytes, until its status line is whole
    try:
        upstream = socket.create_connection(("127.0.0.1", instance.port), timeout=5)
    except OSError:
        client.sendall(platform_error(500, "FUNCTION_INVOCATION_FAILED"))
        return "500 (the runtime refused the connection)"
    upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    client_open = True
    outgoing: queue.Queue[bytes | None] = queue.Queue()
    outgoing.put(forwarded)
    threading.Thread(target=write_all, args=(upstream, outgoing), daemon=True).start()
    with upstream, selectors.DefaultSelector() as selector, closing(outgoing):
        selector.register(upstream, selectors.EVENT_READ)
        selector.register(client, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                instance.kill()
                if status == "-":
                    with contextlib.suppress(OSError):
                        client.sendall(platform_error(504, "FUNCTION_INVOCATION_TIMEOUT"))
                    return "504 (maxDuration)"
                return f"{status} (then killed at maxDuration)"
            for key, _ in selector.select(timeout=min(remaining, 0.5)):
                try:
                    data = key.fileobj.recv(65536)  # type: ignore[union-attr]
                except OSError:
                    data = b""
                if key.fileobj is upstream:
                    if not data:
                        if status == "-":
                            with contextlib.suppress(OSError):
                                client.sendall(platform_error(500, "FUNCTION_INVOCATION_FAILED"))
                            return "500 (no answer)"
                        return status
                    if status == "-":
                        status_line += data
                        if b"\r\n" not in status_line:
                            continue
                        end = status_line.index(b"\r\n") + 2
                        first = status_line[:end]
                        status = first.split(b" ", 2)[1].decode("latin-1") if first.count(b" ") >= 2 else "?"
                        data = first + added + status_line[end:]
                    if client_open:
                        try:
                            client.sendall(data)
                        except OSError:
                            client_open = False  # the caller gave up; the function runs on, as on Vercel
                elif data:
                    outgoing.put(data)
                else:
                    selector.unregister(client)  # the caller closed its side; keep relaying the answer
                    client_open = False


def write_all(sock: socket.socket, outgoing: queue.Queue[bytes | None]) -> None:
    """Writes what the caller sends, in order, on a thread of its own: a function that answers
    before it has read the whole body (a 413) must not keep its answer from being read."""
    while (data := outgoing.get()) is not None:
        try:
            sock.sendall(data)
        except OSError:
            return  # the function closed its side; its answer is read all the same


@contextlib.contextmanager
def closing(outgoing: queue.Queue[bytes | None]) -> Iterator[None]:
    try:
        yield
    finally:
        outgoing.put(None)

"""The deadline inside a download or an upload, over real loopback sockets: a peer that stalls
within the per-read (or per-write) timeout must not hold the worker past the invocation's
deadline. No timing is asserted: a test only checks how the call ended, and a stalled peer that
were not cut off would hold it for the full 30 s (or 20 s) timeout and end another way.

The same for a whole request through deadline_client (the webhook's database call), whose body a
library reads: there a peer that trickles would hold the call for as long as it trickles."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from lib.budget import Deadline, DeadlinePassed
from lib.supabase.client import deadline_client
from lib.supabase.storage import BodyLengthMismatch, Storage
from lib.worker.resend import DownloadError, ResendClient
from tests.support.peers import ENDLESS_HEAD, stalling_peer

HALF_A_SECOND = 0.5


@pytest.fixture
def plain_http() -> Iterator[httpx.Client]:
    with httpx.Client() as client:  # no respx here: real sockets
        yield client


def test_a_download_stalled_mid_body_stops_at_the_deadline(plain_http) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\nContent-Length: 1000\r\n\r\n%PDF-1.4"
    with stalling_peer(head) as url:
        resend = ResendClient(plain_http, url, "re_key", timeout=30.0)
        with pytest.raises(DeadlinePassed):
            resend.download(f"{url}/att_1", max_bytes=10_000, deadline=Deadline(time.monotonic() + HALF_A_SECOND))


def test_without_a_deadline_a_stalled_download_is_an_ordinary_download_failure(plain_http) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n%PDF"
    with stalling_peer(head) as url:
        resend = ResendClient(plain_http, url, "re_key", timeout=HALF_A_SECOND)
        with pytest.raises(DownloadError) as failed:
            resend.download(f"{url}/att_1", max_bytes=10_000)
    assert failed.value.status is None


def test_an_upload_to_a_peer_that_stops_reading_stops_at_the_deadline(plain_http) -> None:
    data = b"\0" * (64 * 1024 * 1024)  # far more than the sockets' buffers hold
    with stalling_peer() as url:
        storage = Storage(plain_http, url, "service-role-key", "fax-attachments")
        with pytest.raises(DeadlinePassed):
            storage.upload("fax_received_emails/x/att_1.pdf", data, "application/pdf",
                           Deadline(time.monotonic() + HALF_A_SECOND))  # fmt: skip


def test_a_deadline_already_passed_sends_nothing(plain_http) -> None:
    with stalling_peer() as url:
        storage = Storage(plain_http, url, "service-role-key", "fax-attachments")
        resend = ResendClient(plain_http, url, "re_key")
        passed = Deadline(time.monotonic() - 1)
        for call in (lambda: storage.upload("k.pdf", b"x", "application/pdf", passed),
                     lambda: resend.download(f"{url}/a", 10, passed),
                     lambda: resend.list_attachments("em_1", passed)):  # fmt: skip
            with pytest.raises(DeadlinePassed):
                call()


# deadline_client: the deadline below the library, for every wait of the request.


class _Answers(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        body = json.dumps([{"ok": True}]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def answering_peer() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_a_peer_that_answers_in_time_is_answered_through_the_deadline_client(answering_peer) -> None:
    with deadline_client(Deadline(time.monotonic() + 30)) as client:
        answers = [client.post(f"{answering_peer}/rpc", content=b"x" * size) for size in (10, 1_000_000)]
    assert [(a.status_code, a.json()) for a in answers] == [(200, [{"ok": True}])] * 2


@pytest.mark.parametrize(("first_bytes", "trickle"), [
    (b"", b""),  # takes the request, never answers
    (b"", ENDLESS_HEAD),  # the headers a byte at a time
    (b"HTTP/1.1 200 OK\r\nContent-Length: 20000\r\n\r\n[", ENDLESS_HEAD),  # the body so
], ids=["never answers", "headers trickle", "body trickles"])  # fmt: skip
def test_a_request_through_the_deadline_client_ends_at_the_deadline(first_bytes, trickle) -> None:
    # Each byte comes well within any per-read timeout: only a deadline for the whole request ends it.
    deadline = Deadline(time.monotonic() + HALF_A_SECOND)
    with (
        stalling_peer(first_bytes, trickle) as url,
        deadline_client(deadline) as client,
        pytest.raises(httpx.ReadTimeout),
    ):
        client.post(f"{url}/rpc", content=b"{}")


def test_a_request_body_the_peer_never_reads_ends_at_the_deadline() -> None:
    data = b"\0" * (64 * 1024 * 1024)  # far more than the sockets' buffers hold
    deadline = Deadline(time.monotonic() + HALF_A_SECOND)
    with stalling_peer() as url, deadline_client(deadline) as client, pytest.raises(httpx.WriteTimeout):
        client.post(f"{url}/rpc", content=data)


def test_a_passed_deadline_does_not_even_connect() -> None:
    passed = Deadline(time.monotonic() - 1)
    with stalling_peer() as url, deadline_client(passed) as client, pytest.raises(httpx.ConnectTimeout):
        client.post(f"{url}/rpc", content=b"{}")


@contextmanager
def reading_peer() -> Iterator[tuple[str, list[bytes]]]:
    """A loopback server that reads one connection to its end and answers nothing: what it read
    (request head and body) is the list's one item once the client has closed the connection."""
    listener = socket.create_server(("127.0.0.1", 0))
    received: list[bytes] = []

    def read() -> None:
        connection, _ = listener.accept()
        with connection:
            data = b""
            while chunk := connection.recv(65536):
                data += chunk
            received.append(data)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", received
    finally:
        thread.join(timeout=5)
        listener.close()


def test_a_streamed_upload_that_ends_short_of_its_stated_length_fails_as_a_request(plain_http) -> None:
    with reading_peer() as (url, received):
        storage = Storage(plain_http, url, "service-role-key", "fax-attachments")
        with pytest.raises(BodyLengthMismatch, match="10 bytes, 100 stated"):
            storage.upload("k.pdf", iter([b"x" * 4, b"x" * 6]), "application/pdf", length=100)
        plain_http.close()  # the pool may keep the aborted connection: closing ends it for the peer
    [request] = received
    head, body = request.split(b"\r\n\r\n", 1)
    assert b"content-length: 100" in head.lower() and b"transfer-encoding" not in head.lower()
    assert body == b"x" * 10, "the connection ended inside the body: no server takes that as a whole request"


def test_a_download_stalled_mid_stream_stops_its_upload_at_the_deadline(plain_http) -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/pdf\r\nContent-Length: 1000\r\n\r\n%PDF-1.4"
    with stalling_peer(head) as resend_url, reading_peer() as (storage_url, received):
        resend = ResendClient(plain_http, resend_url, "re_key", timeout=30.0)
        storage = Storage(plain_http, storage_url, "service-role-key", "fax-attachments")
        deadline = Deadline(time.monotonic() + HALF_A_SECOND)
        opened = resend.open_download(f"{resend_url}/att_1", 10_000, deadline, expected_size=1000)
        with pytest.raises(DeadlinePassed), opened as body:
            storage.upload("k.pdf", body, "application/pdf", deadline, length=1000)
        plain_http.close()
    [request] = received
    assert request.split(b"\r\n\r\n", 1)[1] == b"%PDF-1.4", "Storage got the first bytes, never a whole body"

"""The comparison of an original read back with its row (lib/originals.py), and the read itself
over Storage's HTTP answers (a mock transport): a 404 is a missing original, an object past its
recorded size stops being read, any other refusal is no finding."""

from __future__ import annotations

import hashlib
import time
from uuid import uuid4

import httpx
import pytest

from lib.budget import Deadline
from lib.originals import Outcome, Read, Recorded, compare, read_back
from lib.supabase.storage import UPLOAD_CHUNK_BYTES, Storage, StorageError

CONTENT = b"%PDF-1.4 a fax"


def recorded(content: bytes = CONTENT) -> Recorded:
    return Recorded(
        id=uuid4(),
        fax_received_email_id=uuid4(),
        bucket="fax-attachments",
        storage_path="fax_received_emails/e/att_1.pdf",
        size_bytes=len(content),
        sha256=hashlib.sha256(content).hexdigest(),
    )


def read_of(row: Recorded, content: bytes | None) -> Read:
    if content is None:
        return Read(attachment_id=row.id, found=False)
    return Read(attachment_id=row.id, found=True, size_bytes=len(content), sha256=hashlib.sha256(content).hexdigest())


@pytest.mark.parametrize(
    ("content", "outcome"),
    [
        (CONTENT, Outcome.MATCHES),
        (None, Outcome.MISSING),
        (CONTENT + b" ", Outcome.SIZE_DIFFERS),
        (b"", Outcome.SIZE_DIFFERS),
        (b"%PDF-1.4 a fox", Outcome.SHA256_DIFFERS),  # the same size, other bytes
    ],
)
def test_an_original_is_judged_by_its_presence_then_its_size_then_its_sha256(content, outcome) -> None:
    row = recorded()
    assert compare(row, read_of(row, content)) is outcome


def test_an_object_that_ran_past_its_recorded_size_differs_in_size() -> None:
    row = recorded()
    assert compare(row, Read(attachment_id=row.id, found=True)) is Outcome.SIZE_DIFFERS


def test_the_short_id_is_the_faxs_e_mail_rows_first_eight_characters() -> None:
    row = recorded()
    assert row.fax == str(row.fax_received_email_id)[:8]


def storage_answering(handler) -> Storage:
    return Storage(httpx.Client(transport=httpx.MockTransport(handler)), "http://supabase.test", "sb_secret_x", "b")


def deadline() -> Deadline:
    return Deadline(time.monotonic() + 30)


def test_read_back_hashes_what_storage_serves_with_the_server_key() -> None:
    row = recorded()
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=CONTENT)

    read = read_back(storage_answering(handler), row, deadline())
    assert read == read_of(row, CONTENT) and compare(row, read) is Outcome.MATCHES
    assert seen[0].url.path == "/storage/v1/object/authenticated/b/fax_received_emails/e/att_1.pdf"


def test_read_back_of_a_404_is_a_missing_original() -> None:
    row = recorded()

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, json={"statusCode": "404", "error": "not_found", "message": "Object not found"})

    assert read_back(storage_answering(handler), row, deadline()) == Read(attachment_id=row.id, found=False)


def test_read_back_stops_past_the_recorded_size() -> None:
    row = recorded()
    served = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = b"x" * (row.size_bytes + 3 * UPLOAD_CHUNK_BYTES)
        served.append(len(body))
        return httpx.Response(200, content=body)

    read = read_back(storage_answering(handler), row, deadline())
    assert read == Read(attachment_id=row.id, found=True) and compare(row, read) is Outcome.SIZE_DIFFERS


def test_a_refusal_other_than_404_is_no_finding_about_the_object() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(403, json={"statusCode": "403", "error": "Unauthorized", "message": "invalid signature"})

    with pytest.raises(StorageError) as raised:
        read_back(storage_answering(handler), recorded(), deadline())
    assert raised.value.status == 403

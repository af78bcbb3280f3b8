"""The Storage client (lib/supabase/storage.py): an upload replaces nothing unless asked (x-upsert),
Storage's refusal of an existing key is told apart in both error shapes it has answered, and an
object read back is hashed as it streams."""

from __future__ import annotations

import hashlib

import httpx
import pytest

from lib.budget import Deadline
from lib.supabase.storage import Digest, Storage, StorageError
from tests.unit.fake_supabase import KEY, URL

UPLOADS = f"{URL}/storage/v1/object/fax-attachments/"


@pytest.fixture
def storage(http) -> Storage:
    return Storage(http, URL, KEY, "fax-attachments")


@pytest.mark.parametrize(("upsert", "header"), [(False, "false"), (True, "true")])
def test_an_upload_upserts_only_when_asked(storage, router, upsert, header) -> None:
    route = router.post(url__startswith=UPLOADS).mock(return_value=httpx.Response(200, json={"Key": "k"}))
    storage.upload("a/b.pdf", b"%PDF-", "application/pdf", upsert=upsert)
    assert route.calls.last.request.headers["x-upsert"] == header


@pytest.mark.parametrize(
    ("status", "body", "duplicate"),
    [(400, {"statusCode": "409", "code": "KeyAlreadyExists", "error": "Duplicate",
            "message": "The resource already exists"}, True),
     (400, {"statusCode": "409", "error": "Duplicate", "message": "The resource already exists"}, True),
     (409, {"statusCode": 409, "error": "Duplicate", "message": "x"}, True),
     (400, {"statusCode": "409", "error": "Conflict", "message": "another conflict"}, False),
     (400, {"statusCode": "400", "code": "InvalidKey", "error": "InvalidKey", "message": "Invalid key"}, False),
     (400, {"statusCode": "404", "code": "NoSuchKey", "error": "not_found", "message": "Object not found"}, False)],
    ids=["current shape", "older shape", "a real 409", "another conflict", "invalid key", "no such key"],
)  # fmt: skip
def test_a_refusal_of_an_existing_key_is_told_apart(storage, router, status, body, duplicate) -> None:
    router.post(url__startswith=UPLOADS).mock(return_value=httpx.Response(status, json=body))
    with pytest.raises(StorageError) as refused:
        storage.upload("a/b.pdf", b"%PDF-", "application/pdf")
    assert refused.value.duplicate is duplicate


def test_an_object_read_back_is_hashed_as_it_streams(storage, router) -> None:
    data = b"%PDF-1.4 fax\n" * 10_000
    router.get(url__startswith=f"{URL}/storage/v1/object/authenticated/fax-attachments/").mock(
        return_value=httpx.Response(200, content=iter([data[:70_000], data[70_000:]]))
    )
    digest = Digest()
    assert storage.download_to("a/b.pdf", digest, Deadline(float("inf")), len(data)) == len(data)
    assert (digest.size, digest.sha256) == (len(data), hashlib.sha256(data).hexdigest())

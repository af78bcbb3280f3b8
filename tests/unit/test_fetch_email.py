"""The fetch_email job with Resend, PostgREST and Storage answered by respx: the happy
path, idempotence, the expired-URL refresh, every row of the failure table, originals that are
never replaced (an object already at the key: the same bytes count as stored, others are kept and
the download stored beside them as a version), the discard decided by the database, and the raw
message."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
from typing import Any
from urllib.parse import unquote

import httpx
import pytest

from lib.supabase.storage import Storage
from lib.worker import fetch_email
from lib.worker.loop import STEP_RESERVE, run_invocation
from lib.worker.rate_limit import ResendLimiter
from lib.worker.resend import ResendClient
from tests.unit.fake_resend import PDF, RAW, RAW_URL, RESEND, attachment, page, received
from tests.unit.fake_supabase import KEY, STORAGE_KEY_CHARACTERS, URL, job_row

EMAIL_ROW = "6f1c8b8e-4d0e-4a47-9d51-0c6f3e1b2a10"


@pytest.fixture
def limiter(client, clock) -> ResendLimiter:
    return ResendLimiter(client, STEP_RESERVE, clock, sleep=clock.advance)


@pytest.fixture
def context(client, http, queue, limiter) -> fetch_email.FetchContext:
    return fetch_email.FetchContext(
        queue=queue,
        limiter=limiter,
        resend=ResendClient(http, RESEND, "re_test_key", pacing=limiter),
        storage=Storage(http, URL, KEY, "fax-attachments"),
        max_bytes=1_000,
    )


@pytest.fixture
def job(fake, router) -> dict[str, Any]:
    fake.emails[EMAIL_ROW] = "em_123"
    row = job_row(fax_received_email_id=EMAIL_ROW, attempts=1)
    fake.jobs = [row]
    # Unless a test says otherwise, Resend offers no raw message (raw: null): a test of attachments
    # sees the retrieve request and the note of why there is none, and nothing more.
    router.get(f"{RESEND}/emails/receiving/em_123", name="retrieve").mock(
        return_value=httpx.Response(200, json=received(None))
    )
    return row


def list_route(router, *pages: dict[str, Any] | httpx.Response):
    # json.dumps escapes as JavaScript does: U+0000 as \u0000, a lone surrogate as \ud800.
    responses = [p if isinstance(p, httpx.Response) else httpx.Response(200, content=json.dumps(p)) for p in pages]
    return router.get(f"{RESEND}/emails/receiving/em_123/attachments").mock(side_effect=responses)


def run(queue, context, clock):
    return run_invocation(
        queue, fetch_email.KIND, lambda job, checkpoint: fetch_email.run(job, context, checkpoint), clock
    )


def test_stores_every_attachment_and_completes(queue, fake, router, context, clock, job) -> None:
    listing = list_route(router, page(attachment(1), has_more=True), page(attachment(2)))
    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=PDF))

    summary = run(queue, context, clock)

    assert summary.completed == 1
    first, second = listing.calls
    assert first.request.headers["authorization"] == "Bearer re_test_key"
    assert first.request.headers["user-agent"].startswith("document-jobs/")
    assert second.request.url.params["after"] == "att_1", "pagination continues after the last id"
    uploads = [body for name, body in fake.calls if name == "upload"]
    assert [u["key"] for u in uploads] == [
        f"fax_received_emails/{EMAIL_ROW}/att_1.pdf",
        f"fax_received_emails/{EMAIL_ROW}/att_2.pdf",
    ]
    assert {u["x-upsert"] for u in uploads} == {"false"}, "an original never replaces an object"
    assert [(r["provider_attachment_id"], r["filename"], r["size_bytes"], r["sha256"]) for r in fake.stored] == [
        ("att_1", "請求書_1.pdf", len(PDF), hashlib.sha256(PDF).hexdigest()),
        ("att_2", "請求書_2.pdf", len(PDF), hashlib.sha256(PDF).hexdigest()),
    ]
    names = [name for name, _ in fake.rpc_calls()]
    assert names == [
        "upload", "record_document_attachment_v3",  # the claim's lease is fresh: no extension
        "upload", "record_document_attachment_v3",  # the previous record renewed it
        "record_raw_message_v2",  # Resend offered no raw message: why is noted
        "complete_document_job_and_claim_next_v2",
    ]  # fmt: skip
    assert fake.raw_messages[0]["unavailable"] == "raw_null"


def test_skips_what_is_already_stored(queue, fake, router, context, clock, job) -> None:
    fake.stored = [{"provider_attachment_id": "att_1"}]
    list_route(router, page(attachment(1), attachment(2)))
    downloads = router.get(url__startswith="https://cdn.resend.test/").mock(
        return_value=httpx.Response(200, content=PDF)
    )

    assert run(queue, context, clock).completed == 1
    assert [str(call.request.url) for call in downloads.calls] == ["https://cdn.resend.test/att_2?sig=first"]


def test_an_expired_download_url_is_refreshed_by_listing_again_once(queue, fake, router, context, clock, job) -> None:
    fresh = [attachment(1, download_url="https://cdn.resend.test/att_1?sig=fresh"),
             attachment(2, download_url="https://cdn.resend.test/att_2?sig=fresh")]  # fmt: skip
    listing = list_route(router, page(attachment(1), attachment(2)), page(*fresh))
    router.get(url__regex=r".*sig=first").mock(return_value=httpx.Response(403))
    router.get(url__regex=r".*sig=fresh").mock(return_value=httpx.Response(200, content=PDF))

    assert run(queue, context, clock).completed == 1
    assert len(listing.calls) == 2
    assert len(fake.stored) == 2, "the second attachment uses the fresh listing too"


def test_a_url_still_expired_after_listing_again_is_a_transient_failure(queue, fake, router, context, clock, job):
    listing = list_route(router, page(attachment(1)), page(attachment(1)))
    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(403))

    assert run(queue, context, clock).retried == 1
    assert len(listing.calls) == 2, "listed again once, not more"
    [(_, fail)] = fake.rpc_calls("fail_document_job_v2")
    assert (fail["p_error_code"], fail["p_retryable"]) == ("download_expired", True)


def test_a_missing_email_row_fails_the_job(queue, fake, context, clock) -> None:
    fake.jobs = [job_row(fax_received_email_id="00000000-0000-0000-0000-000000000000")]
    assert run(queue, context, clock).failed == 1
    [(_, fail)] = fake.rpc_calls("fail_document_job_v2")
    assert (fail["p_error_code"], fail["p_retryable"]) == ("email_not_found", False)


def test_keys_are_ascii_for_japanese_names(queue, fake, router, context, clock, job) -> None:
    list_route(router, page(attachment(1, filename="ファクス 受信.TIFF", content_type="image/tiff")))
    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=PDF))

    run(queue, context, clock)

    [upload] = [body for name, body in fake.calls if name == "upload"]
    assert upload["key"] == f"fax_received_emails/{EMAIL_ROW}/att_1.tif"
    assert set(upload["key"]) <= STORAGE_KEY_CHARACTERS
    assert fake.stored[0]["filename"] == "ファクス 受信.TIFF"


def test_provider_text_postgres_cannot_store_is_replaced_and_blocks_nothing(
    queue, fake, router, context, clock, job, caplog
) -> None:
    items = [attachment(1, filename="請求書\x00.pdf"), attachment(2, id="att_\x002", filename="\ud800.pdf"),
             attachment(3)]  # fmt: skip
    list_route(router, page(*items), page(*items))
    downloads = router.get(url__startswith="https://cdn.resend.test/").mock(
        return_value=httpx.Response(200, content=PDF)
    )

    assert run(queue, context, clock).completed == 1

    records = [body for name, body in fake.rpc_calls("record_document_attachment_v3")]
    assert [(r["p_provider_attachment_id"], r["p_filename"]) for r in records] == [
        ("att_1", "請求書\ufffd.pdf"), ("att_\ufffd2", "\ufffd.pdf"), ("att_3", "請求書_3.pdf")]  # fmt: skip
    assert len(fake.stored) == 3, "every attachment recorded, the ones after the odd names too"
    logged = [json.loads(r.getMessage()) for r in caplog.records if "attachment_text_replaced" in r.getMessage()]
    assert [(e["attachment_id"], e["replaced"]) for e in logged] == [
        ("att_1", ["filename"]), ("att_\ufffd2", ["id", "filename"])]  # fmt: skip

    fake.jobs = [job_row(fax_received_email_id=EMAIL_ROW, attempts=1)]
    assert run(queue, context, clock).completed == 1
    assert len(downloads.calls) == 3, "run again, every attachment is recognised as stored and skipped"


def test_an_empty_attachment_id_is_a_malformed_answer_not_a_database_error(queue, fake, router, context, clock, job):
    list_route(router, page(attachment(1, id="")))
    run(queue, context, clock)
    [(_, fail)] = fake.rpc_calls("fail_document_job_v2")
    assert (fail["p_error_code"], fail["p_retryable"]) == ("resend_malformed_response", False)


def test_error_messages_with_text_postgres_cannot_store_are_still_recorded(queue, fake, router, context, clock, job):
    list_route(router, page(attachment(1, id="att_\x00", size=5_000)))
    assert run(queue, context, clock).failed == 1
    [(_, fail)] = fake.rpc_calls("fail_document_job_v2")
    assert (fail["p_error_code"], fail["p_error_message"]) == (
        "attachment_too_large",
        "attachment att_\ufffd: 5000 bytes",
    )


@pytest.mark.parametrize(
    ("filename", "declared", "stored_as", "extension"),
    [("page.html", "text/html", "application/octet-stream", "bin"),
     ("logo.svg", "image/svg+xml", "application/octet-stream", "bin"),
     ("fax.pdf", "application/pdf\r\nX-Injected: 1", "application/octet-stream", "bin"),
     ("fax.pdf", 'application/pdf; name="x\r\nX-Injected: 1"', "application/pdf", "pdf"),
     ("scan.TIF", "application/octet-stream", "image/tiff", "tif")],
    ids=["html", "svg", "CRLF in the type", "CRLF in a parameter", "generic type, known suffix"],
)  # fmt: skip
def test_the_stored_content_type_is_a_document_type_or_octet_stream(
    queue, fake, router, context, clock, job, filename, declared, stored_as, extension
) -> None:
    list_route(router, page(attachment(1, filename=filename, content_type=declared)))
    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=PDF))

    assert run(queue, context, clock).completed == 1

    [upload] = [body for name, body in fake.calls if name == "upload"]
    assert (upload["key"], upload["content_type"]) == (f"fax_received_emails/{EMAIL_ROW}/att_1.{extension}", stored_as)
    assert b"X-Injected" not in upload["raw"], "nothing of the declared type reaches the upload's headers"
    assert fake.uploads[upload["key"]] == PDF
    assert (fake.stored[0]["content_type"], fake.stored[0]["filename"]) == (stored_as, filename)


# The failure table (lib/failures.py), written out independently: (what happens, expected RPC, its arguments).
RESEND_LIST_FAILURES = [
    ("Resend 500", httpx.Response(500, json={"statusCode": 500, "name": "application_error", "message": "x"}),
     "fail_document_job_v2", {"p_error_code": "resend_unavailable", "p_retryable": True, "p_retry_after": None}),
    ("Resend 429 with retry-after", httpx.Response(429, headers={"retry-after": "120"},
     json={"statusCode": 429, "name": "rate_limit_exceeded", "message": "slow down"}),
     "release_document_job_v2", {"p_error_code": "resend_rate_limited", "p_retry_after": "120.000 seconds"}),
    ("Resend 429 without retry-after", httpx.Response(429, json={"statusCode": 429, "name": "rate_limit_exceeded",
                                                                 "message": "slow down"}),
     "release_document_job_v2", {"p_error_code": "resend_rate_limited", "p_retry_after": "1.000 seconds"}),
    ("Resend daily quota", httpx.Response(429, json={"statusCode": 429, "name": "daily_quota_exceeded",
                                                     "message": "quota"}),
     "release_document_job_v2", {"p_error_code": "resend_quota_exceeded", "p_retry_after": "3600.000 seconds"}),
    ("Resend 404", httpx.Response(404, json={"statusCode": 404, "name": "not_found", "message": "no such email"}),
     "fail_document_job_v2", {"p_error_code": "resend_not_found", "p_retryable": False}),
    ("Resend 401", httpx.Response(401, json={"statusCode": 401, "name": "restricted_api_key", "message": "x"}),
     "release_document_job_v2", {"p_error_code": "resend_unauthorized", "p_retry_after": "600.000 seconds"}),
    ("Resend 403", httpx.Response(403, json={"statusCode": 403, "name": "invalid_api_key", "message": "x"}),
     "release_document_job_v2", {"p_error_code": "resend_unauthorized", "p_retry_after": "600.000 seconds"}),
    # A deleted or unknown key, as Resend's current reference answers it from every endpoint but sending.
    ("Resend 400 API key is invalid", httpx.Response(400, json={"statusCode": 400, "name": "validation_error",
                                                                "message": "API key is invalid"}),
     "release_document_job_v2", {"p_error_code": "resend_unauthorized", "p_retry_after": "600.000 seconds"}),
    ("Resend 400 about a field", httpx.Response(400, json={"statusCode": 400, "name": "validation_error",
                                                           "message": "The `limit` field is invalid"}),
     "fail_document_job_v2", {"p_error_code": "resend_rejected", "p_retryable": False}),
    ("Resend 403 without a User-Agent", httpx.Response(403, text="error code: 1010"),
     "release_document_job_v2", {"p_error_code": "resend_unauthorized", "p_retry_after": "600.000 seconds"}),
    ("Resend 404 for the endpoint", httpx.Response(404, json={"statusCode": 404, "name": "not_found",
                                                              "message": "The requested endpoint does not exist."}),
     "release_document_job_v2", {"p_error_code": "resend_misconfigured", "p_retry_after": "600.000 seconds"}),
    ("a proxy's 408", httpx.Response(408, text="Request Timeout"),
     "fail_document_job_v2", {"p_error_code": "resend_timeout", "p_retryable": True}),
    ("Resend 409", httpx.Response(409, json={"statusCode": 409, "name": "concurrent_idempotent_requests",
                                             "message": "in progress"}),
     "fail_document_job_v2", {"p_error_code": "resend_unavailable", "p_retryable": True}),
    ("an undocumented 4xx", httpx.Response(418, text="teapot"),
     "fail_document_job_v2", {"p_error_code": "resend_unexpected_answer", "p_retryable": True}),
    ("Resend malformed: not JSON", httpx.Response(200, text="<html>oops</html>"),
     "fail_document_job_v2", {"p_error_code": "resend_malformed_response", "p_retryable": False}),
    ("Resend malformed: fields missing", httpx.Response(200, json={"object": "list", "data": [{"id": "x"}]}),
     "fail_document_job_v2", {"p_error_code": "resend_malformed_response", "p_retryable": False}),
    ("Resend malformed: data not a list", httpx.Response(200, json={"object": "list", "data": {"id": "x"}}),
     "fail_document_job_v2", {"p_error_code": "resend_malformed_response", "p_retryable": False}),
    ("Resend unreachable", httpx.ConnectError("refused"),
     "fail_document_job_v2", {"p_error_code": "resend_network_error", "p_retryable": True}),
    ("Resend timeout", httpx.ReadTimeout("slow"),
     "fail_document_job_v2", {"p_error_code": "resend_timeout", "p_retryable": True}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "answer", "rpc", "args"), RESEND_LIST_FAILURES, ids=[c[0] for c in RESEND_LIST_FAILURES]
)
def test_resend_failures_drive_the_right_rpc(queue, fake, router, context, clock, job, case, answer, rpc, args):
    route = router.get(f"{RESEND}/emails/receiving/em_123/attachments")
    if isinstance(answer, Exception):
        route.mock(side_effect=answer)
    else:
        route.mock(return_value=answer)

    run(queue, context, clock)

    # The job's outcome; before it, at most the raw message's note (a listing whose items cannot
    # all be fetched keeps the e-mail first: it holds them too).
    *before, (name, body) = fake.rpc_calls()
    assert [n for n, _ in before] in ([], ["record_raw_message_v2"])
    assert name == rpc
    assert {key: body.get(key) for key in args} == args
    assert (body["p_job_id"], body["p_generation"]) == (job["id"], job["generation"])


STORAGE_FAILURES = [
    ("Storage 500", 500, {"statusCode": "500", "error": "internal", "message": "x"}, "storage_unavailable", True),
    ("Storage 429", 429, {"statusCode": "429", "error": "too_many", "message": "x"}, "storage_unavailable", True),
    ("Storage 544", 544, {"statusCode": "544", "error": "DatabaseTimeout", "message": "x"},
     "storage_unavailable", True),
    ("Storage 503 in a 400", 400, {"statusCode": "503", "error": "DatabaseReadOnly", "message": "x"},
     "storage_unavailable", True),
    ("Storage 413 in a 400", 400, {"statusCode": "413", "error": "Payload too large", "message": "x"},
     "storage_too_large", False),
    ("Storage InvalidKey", 400, {"statusCode": "400", "error": "InvalidKey", "message": "Invalid key"},
     "storage_invalid_key", False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "status", "body", "code", "retryable"), STORAGE_FAILURES, ids=[c[0] for c in STORAGE_FAILURES]
)
def test_storage_failures_drive_the_right_rpc(
    queue, fake, router, context, clock, job, case, status, body, code, retryable
):
    list_route(router, page(attachment(1)))
    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=PDF))
    fake.storage_error = (status, body)

    run(queue, context, clock)

    [(_, fail)] = fake.rpc_calls("fail_document_job_v2")
    assert (fail["p_error_code"], fail["p_retryable"]) == (code, retryable)
    assert fake.stored == [], "nothing is recorded for an object that was not stored"


STORAGE_RELEASES = [
    ("Storage 404 Bucket not found in a 400", 400, {"statusCode": "404", "error": "Bucket not found",
                                                    "message": "Bucket not found"}, "storage_bucket_not_found"),
    ("Storage NoSuchBucket", 400, {"statusCode": "404", "code": "NoSuchBucket", "error": "Bucket not found",
                                   "message": "Bucket not found"}, "storage_bucket_not_found"),
    ("Storage 403 AccessDenied", 400, {"statusCode": "403", "code": "AccessDenied", "error": "Unauthorized",
                                       "message": "new row violates row-level security policy"},
     "storage_unauthorized"),
    ("Storage 400 InvalidJWT", 400, {"statusCode": "400", "code": "InvalidJWT", "error": "Invalid JWT",
                                     "message": "Invalid Compact JWS"}, "storage_unauthorized"),
    ("the gateway's 401", 401, {"message": "Invalid API key"}, "storage_unauthorized"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "status", "body", "code"), STORAGE_RELEASES, ids=[c[0] for c in STORAGE_RELEASES])
def test_a_missing_bucket_or_a_refused_key_releases_the_job(queue, fake, router, context, clock, job, case, status,
                                                            body, code) -> None:  # fmt: skip
    list_route(router, page(attachment(1)))
    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=PDF))
    fake.storage_error = (status, body)

    assert run(queue, context, clock).released == 1

    [(_, release)] = fake.rpc_calls("release_document_job_v2")
    assert fake.rpc_calls("fail_document_job_v2") == []
    assert (release["p_error_code"], release["p_retry_after"]) == (code, "600.000 seconds")
    check = "ATTACHMENTS_BUCKET" if code == "storage_bucket_not_found" else "SUPABASE_SECRET_KEY"
    assert check in release["p_error_message"], "the message names the setting to check"
    assert fake.stored == []


@pytest.mark.parametrize("answer", [
    httpx.Response(403, json={"code": "42501", "message": "permission denied for function start_fetch_email_v2",
                              "details": None, "hint": None}),
    httpx.Response(401, json={"code": "PGRST301", "message": "JWSError JWSInvalidSignature", "details": None,
                              "hint": None}),
    httpx.Response(401, json={"message": "Invalid API key", "hint": "Double check your Supabase API key."}),
], ids=["permission denied", "JWT refused", "the gateway's invalid API key"])  # fmt: skip
def test_a_database_that_refuses_the_key_releases_the_job_naming_the_settings(
    queue, fake, router, context, clock, job, caplog, answer
) -> None:
    fake.refused_rpcs["start_fetch_email_v2"] = answer
    caplog.set_level(logging.INFO, "document_jobs")

    assert run(queue, context, clock).released == 1

    [(_, release)] = fake.rpc_calls("release_document_job_v2")
    assert (release["p_error_code"], release["p_retry_after"]) == ("database_unauthorized", "600.000 seconds")
    assert "SUPABASE_SECRET_KEY" in release["p_error_message"]
    [finished] = [json.loads(r.getMessage()) for r in caplog.records if '"job_finished"' in r.getMessage()]
    assert finished["check"] == "SUPABASE_SECRET_KEY (or the legacy SUPABASE_SERVICE_ROLE_KEY)"


@pytest.mark.parametrize("size", ["missing", 12.5, None, "5100", -1])
def test_an_item_without_a_usable_size_is_stored_with_the_size_unknown(
    queue, fake, router, context, clock, job, caplog, size
) -> None:
    odd = attachment(2) | {"size": size}
    if size == "missing":
        del odd["size"]
    list_route(router, page(attachment(1), odd))
    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=PDF))

    assert run(queue, context, clock).completed == 1

    assert [r["provider_attachment_id"] for r in fake.stored] == ["att_1", "att_2"]
    assert fake.stored[1]["size_bytes"] == len(PDF)
    [warning] = [json.loads(r.getMessage()) for r in caplog.records if "attachment_size_unknown" in r.getMessage()]
    assert warning["attachment_ids"] == ["att_2"]


def test_an_unusable_item_is_named_and_the_others_are_stored(queue, fake, router, context, clock, job) -> None:
    broken = {k: v for k, v in attachment(2).items() if k != "download_url"}
    list_route(router, page(attachment(1), broken, attachment(3), {"filename": "x.pdf"}))
    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=PDF))

    assert run(queue, context, clock).failed == 1

    assert [r["provider_attachment_id"] for r in fake.stored] == ["att_1", "att_3"], "the usable ones are stored"
    [(_, fail)] = fake.rpc_calls("fail_document_job_v2")
    assert (fail["p_error_code"], fail["p_retryable"]) == ("resend_malformed_response", False)
    assert "item 2 (id 'att_2'): download_url: Field required" in fail["p_error_message"]
    assert "item 4: id: Field required" in fail["p_error_message"]


def test_an_attachment_id_with_a_lone_surrogate_is_stored_under_its_digest(queue, fake, router, context, clock, job):
    list_route(router, page(attachment(1, id="att_\ud800")))
    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=PDF))

    assert run(queue, context, clock).completed == 1

    [upload] = [body for name, body in fake.calls if name == "upload"]
    digest = hashlib.sha256("att_\ud800".encode("utf-8", "surrogatepass")).hexdigest()
    assert upload["key"] == f"fax_received_emails/{EMAIL_ROW}/{digest}.pdf"
    assert fake.stored[0]["provider_attachment_id"] == "att_\ufffd"


@pytest.mark.parametrize("body", [PDF[:20], PDF + b"more"], ids=["shorter than listed", "longer than listed"])
def test_a_download_of_another_length_than_listed_stores_nothing_and_is_retried(
    queue, fake, router, context, clock, job, body
) -> None:
    # The body ends at (or runs past) a Content-Length that lies about the listed size.
    list_route(router, page(attachment(1)))
    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=body))

    assert run(queue, context, clock).retried == 1

    [(_, fail)] = fake.rpc_calls("fail_document_job_v2")
    assert (fail["p_error_code"], fail["p_retryable"]) == ("download_failed", True)
    assert "listed" in fail["p_error_message"]
    assert [name for name, _ in fake.calls if name == "upload"] == [], "no object stored"
    assert fake.stored == [], "and no row"


@pytest.mark.parametrize(
    ("ids", "stored_ids"),
    [(["att_1", "att_1"], ["att_1", "att_1\ufffd"]),
     (["att\u0000x", "att\ufffdx"], ["att\ufffdx", "att\ufffdx\ufffd"]),
     (["a", "a", "a\ufffd"], ["a", "a\ufffd", "a\ufffd\ufffd"])],
    ids=["the same id twice", "ids that differ only in text Postgres cannot store", "a made-up id taken"],
)  # fmt: skip
def test_attachments_that_would_share_an_id_are_all_kept(
    queue, fake, router, context, clock, job, caplog, ids, stored_ids
) -> None:
    items = [attachment(n, id=i, download_url=f"https://cdn.resend.test/{n}") for n, i in enumerate(ids, start=1)]
    list_route(router, page(*items))
    router.get(url__startswith="https://cdn.resend.test/").mock(
        side_effect=lambda request: httpx.Response(200, content=PDF[:-1] + request.url.path[-1].encode())
    )

    assert run(queue, context, clock).completed == 1

    assert [r["provider_attachment_id"] for r in fake.stored] == stored_ids
    keys = [body["key"] for name, body in fake.calls if name == "upload"]
    assert len(set(keys)) == len(ids), "one object each"
    assert len({fake.uploads[k] for k in keys}) == len(ids), "each with its own bytes"
    logged = [json.loads(r.getMessage()) for r in caplog.records if "attachment_id_disambiguated" in r.getMessage()]
    assert [e["stored_as"] for e in logged] == [i for i, given in zip(stored_ids, ids, strict=True)
                                                if i != given.replace("\u0000", "\ufffd")]  # fmt: skip


@pytest.mark.parametrize("declared", ["listed", "streamed"])
def test_an_attachment_over_the_cap_is_a_permanent_failure(queue, fake, router, context, clock, job, declared):
    size = 5_000 if declared == "listed" else 10  # "streamed": the listing understates the size
    list_route(router, page(attachment(1, size=size)))
    downloads = router.get(url__startswith="https://cdn.resend.test/").mock(
        return_value=httpx.Response(200, content=b"x" * 5_000)
    )

    run(queue, context, clock)

    [(_, fail)] = fake.rpc_calls("fail_document_job_v2")
    assert (fail["p_error_code"], fail["p_retryable"]) == ("attachment_too_large", False)
    assert len(downloads.calls) == (0 if declared == "listed" else 1)


def test_a_database_error_is_transient(queue, fake, router, context, clock, job) -> None:
    fake.refused_rpcs["start_fetch_email_v2"] = httpx.Response(
        503, json={"code": "08006", "message": "connection failure", "details": None, "hint": None}
    )

    run(queue, context, clock)

    [(_, fail)] = fake.rpc_calls("fail_document_job_v2")
    assert (fail["p_error_code"], fail["p_retryable"]) == ("database_error", True)


# The time budget (lib/budget.py) inside a download or an upload, on the fake clock: the
# invocation's budget is 240 s from clock 1000, so its deadline is at 1240.
def released_for_time_budget(fake) -> bool:
    # The invocation stops for its time budget: its last write asks for a follow-up.
    [(_, release)] = fake.rpc_calls("release_document_job_and_follow_up_v2")
    return (release["p_error_code"], release["p_retry_after"]) == ("time_budget", "0.000 seconds")


def test_a_download_trickling_past_the_deadline_is_stopped_and_the_job_released(
    queue, fake, router, context, clock, job
) -> None:
    list_route(router, page(attachment(1, size=1_000)))
    sent = []

    def trickle():
        for _ in range(100):  # 10 bytes every 10 s: each read is quick, the whole would take 1,000 s
            clock.advance(10)
            sent.append(10)
            yield b"x" * 10

    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=trickle()))

    summary = run(queue, context, clock)

    assert (summary.released, summary.completed) == (1, 0)
    assert released_for_time_budget(fake)
    assert len(sent) < 30, "the download stopped at the deadline, not at the end of the body"
    assert clock.now < 1_300, "and the invocation ends before Vercel's maxDuration (300 s)"
    assert [name for name, _ in fake.rpc_calls()] == ["release_document_job_and_follow_up_v2"]


def test_an_upload_sent_past_the_deadline_is_stopped_and_the_job_released(
    queue, fake, router, context, clock, job, monkeypatch
) -> None:
    monkeypatch.setattr("lib.supabase.storage.UPLOAD_CHUNK_BYTES", 10)
    list_route(router, page(attachment(1)))
    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=PDF))
    taken = []

    class SlowReader(httpx.BaseTransport):
        # A transport of its own: respx (and httpx.MockTransport) read a request's whole body
        # before answering, so they cannot play a server that reads slowly.
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            for chunk in request.stream:  # Storage takes 10 bytes every 20 s
                clock.advance(20)
                taken.append(chunk)
            return httpx.Response(200, json={"Key": "k"})

    with httpx.Client(transport=SlowReader()) as storage_http:
        slow = dataclasses.replace(context, storage=Storage(storage_http, URL, KEY, "fax-attachments"))
        summary = run(queue, slow, clock)

    assert (summary.released, summary.completed) == (1, 0)
    assert released_for_time_budget(fake)
    assert 0 < len(taken) < len(PDF) // 10, "the upload stopped at the deadline, not at the end of the body"
    assert fake.stored == []


def test_no_single_network_wait_outlasts_the_deadline(queue, fake, router, context, clock, job) -> None:
    def listing(request: httpx.Request) -> httpx.Response:
        clock.advance(215)  # 25 s left: enough to start an attachment (20 s), less than Resend's 30 s timeout
        return httpx.Response(200, content=json.dumps(page(attachment(1))))

    def download(request: httpx.Request) -> httpx.Response:
        clock.advance(10)  # 15 s left: less than Storage's 20 s timeout
        return httpx.Response(200, content=PDF)

    router.get(f"{RESEND}/emails/receiving/em_123/attachments").mock(side_effect=listing)
    downloads = router.get(url__startswith="https://cdn.resend.test/").mock(side_effect=download)

    summary = run(queue, context, clock)

    assert downloads.calls.last.request.extensions["timeout"]["read"] == pytest.approx(25)
    [upload] = [body for name, body in fake.calls if name == "upload"]
    assert (upload["timeout"]["write"], upload["timeout"]["read"]) == (pytest.approx(15), pytest.approx(15))
    # The attachment is recorded; 15 s is too little to start on the raw message: the next run does.
    assert [r["provider_attachment_id"] for r in fake.stored] == ["att_1"]
    assert (summary.released, released_for_time_budget(fake), router["retrieve"].called) == (1, True, False)


# Streaming: each attachment goes from its download to Storage chunk by chunk, hashed on the way.
class WholeBodyStorage(httpx.BaseTransport):
    """Plays Storage over its own transport (respx reads a request's whole body before answering):
    it stores an upload once it has read as many bytes as its Content-Length states (or the whole
    of a chunked body), as a server does, and leaves the rest unread; a body that fails before then
    stores nothing. DELETE removes the object. `received` records each upload as it is read:
    (stated length, chunks read)."""

    def __init__(self) -> None:
        self.objects: dict[str, bytes] = {}
        self.deleted: list[str] = []
        self.received: list[tuple[int | None, list[bytes]]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        key = unquote(request.url.path.split("/fax-attachments/", 1)[1])
        if request.method == "DELETE":
            self.deleted.append(key)
            if self.objects.pop(key, None) is not None:
                return httpx.Response(200, json={"message": "Successfully deleted"})
            return httpx.Response(400, json={"statusCode": "404", "error": "not_found", "message": "Object not found"})
        stated = request.headers.get("content-length")
        length = None if stated is None else int(stated)
        chunks: list[bytes] = []
        self.received.append((length, chunks))
        for chunk in request.stream:
            chunks.append(chunk)
            if length is not None and sum(map(len, chunks)) >= length:
                break
        self.objects[key] = b"".join(chunks)
        return httpx.Response(200, json={"Key": f"fax-attachments/{key}"})


def with_storage(context: fetch_email.FetchContext, transport: httpx.BaseTransport):
    return dataclasses.replace(context, storage=Storage(httpx.Client(transport=transport), URL, KEY, "fax-attachments"))


def test_a_body_found_longer_after_the_upload_took_the_listed_bytes_is_deleted_and_retried(
    queue, fake, router, context, clock, job, caplog
) -> None:
    list_route(router, page(attachment(1)))  # listed: len(PDF) bytes

    def longer():  # the listed bytes first, then more: Storage has a whole object before the rest comes
        yield PDF
        yield b"and more"

    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=longer()))
    storage = WholeBodyStorage()
    summary = run(queue, with_storage(context, storage), clock)

    assert summary.retried == 1
    [(_, fail)] = fake.rpc_calls("fail_document_job_v2")
    assert (fail["p_error_code"], fail["p_retryable"]) == ("download_failed", True)
    assert "listed" in fail["p_error_message"]
    key = f"fax_received_emails/{EMAIL_ROW}/att_1.pdf"
    assert storage.deleted == [key], "the object Storage took whole was deleted before the job went on"
    assert storage.objects == {}
    assert fake.stored == [], "and no row names it"
    assert "attachment_object_deleted" in caplog.text


def test_a_short_download_cuts_the_upload_off_before_its_stated_length(
    queue, fake, router, context, clock, job
) -> None:
    list_route(router, page(attachment(1, size=len(PDF) + 100)))
    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=PDF))
    storage = WholeBodyStorage()
    summary = run(queue, with_storage(context, storage), clock)

    assert summary.retried == 1
    [(_, fail)] = fake.rpc_calls("fail_document_job_v2")
    assert (fail["p_error_code"], fail["p_retryable"]) == ("download_failed", True)
    [(stated, chunks)] = storage.received
    assert (stated, len(b"".join(chunks))) == (len(PDF) + 100, len(PDF)), "the listed size stated, fewer bytes sent"
    assert storage.objects == {}, "the upload failed as a request: Storage never had a whole body"
    assert storage.deleted == [], "so there is nothing to delete"
    assert fake.stored == []


def test_the_hash_and_size_are_counted_in_the_stream(queue, fake, router, context, clock, job, monkeypatch) -> None:
    monkeypatch.setattr("lib.worker.resend.DOWNLOAD_CHUNK_BYTES", 16)
    monkeypatch.setattr("lib.supabase.storage.UPLOAD_CHUNK_BYTES", 7)
    list_route(router, page(attachment(1)))
    pieces = [PDF[:5], PDF[5:100], PDF[100:]]
    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=iter(pieces)))
    storage = WholeBodyStorage()

    assert run(queue, with_storage(context, storage), clock).completed == 1

    [(stated, chunks)] = storage.received
    assert (stated, b"".join(chunks)) == (len(PDF), PDF), "the listed size is the stated length"
    assert max(map(len, chunks)) <= 7, "streamed in bounded chunks"
    [row] = fake.stored
    assert (row["size_bytes"], row["sha256"]) == (len(PDF), hashlib.sha256(PDF).hexdigest())


def test_an_attachment_of_unknown_size_streams_chunked_under_the_cap(queue, fake, router, context, clock, job) -> None:
    list_route(router, page(attachment(1, size=None)))
    router.get(url__startswith="https://cdn.resend.test/").mock(
        return_value=httpx.Response(200, content=iter([PDF[:50], PDF[50:]]))
    )

    assert run(queue, context, clock).completed == 1

    [upload] = [body for name, body in fake.calls if name == "upload"]
    assert b"transfer-encoding: chunked" in upload["raw"].lower()
    assert fake.stored[0]["sha256"] == hashlib.sha256(PDF).hexdigest()


def test_a_download_stalling_mid_stream_past_the_deadline_leaves_no_object(
    queue, fake, router, context, clock, job
) -> None:
    list_route(router, page(attachment(1)))

    def stalls():
        yield PDF[:100]
        clock.advance(500)  # the next bytes come long after the invocation's deadline
        yield PDF[100:200]
        yield PDF[200:]

    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=stalls()))
    storage = WholeBodyStorage()
    summary = run(queue, with_storage(context, storage), clock)

    assert (summary.released, summary.completed) == (1, 0)
    assert released_for_time_budget(fake)
    assert storage.objects == {}, "the stream stopped in the middle: Storage never had the whole body"
    assert storage.deleted == [] and fake.stored == []


# --- Originals never replaced -------------------------------------------------------------------

KEY_1 = f"fax_received_emails/{EMAIL_ROW}/att_1.pdf"
KEY_1_V2 = f"fax_received_emails/{EMAIL_ROW}/att_1.v2.pdf"
OTHER = b"%PDF-1.4 another fax page\n" * 3


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def one_pdf(router) -> None:
    list_route(router, page(attachment(1)))
    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=PDF))


def test_an_object_already_at_the_key_with_the_same_bytes_counts_as_stored(
    queue, fake, router, context, clock, job, caplog
) -> None:
    caplog.set_level(logging.INFO, "document_jobs")
    one_pdf(router)
    fake.uploads[KEY_1] = PDF  # a worker uploaded it and died before recording it

    assert run(queue, context, clock).completed == 1

    assert fake.uploads == {KEY_1: PDF}, "nothing replaced, nothing beside"
    assert [(name, body["key"]) for name, body in fake.calls if name in ("upload", "download")] == [
        ("upload", KEY_1), ("download", KEY_1)]  # fmt: skip
    assert [(r["version"], r["storage_path"], r["size_bytes"], r["sha256"]) for r in fake.stored] == [
        (1, KEY_1, len(PDF), sha(PDF))]  # fmt: skip
    assert "original_found_stored" in caplog.text


def test_an_object_at_the_key_with_other_bytes_is_kept_and_the_download_stored_beside_it(
    queue, fake, router, context, clock, job, caplog
) -> None:
    one_pdf(router)
    fake.uploads[KEY_1] = OTHER

    assert run(queue, context, clock).completed == 1

    assert fake.uploads == {KEY_1: OTHER, KEY_1_V2: PDF}, "the object found is kept, the download goes beside it"
    [(_, record)] = fake.rpc_calls("record_document_attachment_v3")
    versions = [(v["version"], v["storage_path"], v["size_bytes"], v["sha256"]) for v in record["p_versions"]]
    assert versions == [(1, KEY_1, len(OTHER), sha(OTHER)), (2, KEY_1_V2, len(PDF), sha(PDF))], "both, in one call"
    names = [name for name, _ in fake.rpc_calls()]
    assert names.index("extend_document_job_lease_v2") < names.index("upload", 1), "fenced before storing beside"
    [differs] = [json.loads(r.getMessage()) for r in caplog.records if '"original_differs"' in r.getMessage()]
    assert (differs["found_sha256"], differs["downloaded_sha256"]) == (sha(OTHER), sha(PDF))
    assert "attachment_versions_recorded" in caplog.text


def test_versions_left_by_a_worker_that_died_before_recording_them_are_recorded_as_found(
    queue, fake, router, context, clock, job
) -> None:
    one_pdf(router)
    fake.uploads.update({KEY_1: OTHER, KEY_1_V2: PDF})

    assert run(queue, context, clock).completed == 1

    assert fake.uploads == {KEY_1: OTHER, KEY_1_V2: PDF}
    assert [(r["version"], r["sha256"]) for r in fake.stored] == [(1, sha(OTHER)), (2, sha(PDF))]


def test_a_stale_worker_finding_another_object_stores_nothing_beside_it_and_records_nothing(
    queue, fake, router, context, clock, job
) -> None:
    list_route(router, page(attachment(1, size=None)))  # its listing says no size: a short body goes unnoticed
    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=PDF[:30]))
    fake.uploads[KEY_1] = PDF  # the healthy worker's original, recorded meanwhile

    def frozen_until_its_lease_passed(chunk: bytes) -> None:
        fake.guarded = False

    fake.on_upload_chunk = frozen_until_its_lease_passed

    assert run(queue, context, clock).lost == 1

    assert fake.uploads == {KEY_1: PDF}, "the original is as it was, and nothing was stored beside it"
    assert fake.stored == []
    assert [name for name, _ in fake.rpc_calls() if name not in ("upload", "download")] == [
        "extend_document_job_lease_v2"
    ], "the fenced call before storing beside found the job lost: nothing more"


def test_a_key_given_up_as_wrong_is_never_stored_at_again(queue, fake, router, context, clock, job) -> None:
    one_pdf(router)
    fake.discarded = [KEY_1]

    assert run(queue, context, clock).completed == 1

    assert [body["key"] for name, body in fake.calls if name == "upload"] == [KEY_1_V2]
    assert [(r["version"], r["storage_path"]) for r in fake.stored] == [(2, KEY_1_V2)]


def test_the_database_decides_whether_an_object_found_wrong_is_deleted(queue, fake, router, context, clock, job,
                                                                       caplog) -> None:  # fmt: skip
    list_route(router, page(attachment(1)))

    def longer():
        yield PDF
        yield b"and more"

    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=longer()))
    storage = WholeBodyStorage()
    fake.stored = [{"provider_attachment_id": "att_other", "storage_path": KEY_1}]  # a row names the object
    summary = run(queue, with_storage(context, storage), clock)

    assert summary.retried == 1
    [(_, asked)] = fake.rpc_calls("discard_unrecorded_object_v2")
    assert (asked["p_storage_path"], asked["p_size_bytes"], asked["p_sha256"]) == (KEY_1, len(PDF), sha(PDF))
    assert "listed" in asked["p_reason"]
    assert storage.deleted == [], "a recorded object is never deleted"
    assert "attachment_object_kept" in caplog.text


def test_a_worker_that_lost_its_job_deletes_nothing(queue, fake, router, context, clock, job, caplog) -> None:
    list_route(router, page(attachment(1)))

    def longer():
        yield PDF
        fake.guarded = False  # the lease passes while the body goes on
        yield b"and more"

    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=longer()))
    storage = WholeBodyStorage()

    assert run(queue, with_storage(context, storage), clock).lost == 1

    assert storage.deleted == [] and storage.objects == {KEY_1: PDF}, "left for the database to decide: not deleted"
    assert fake.discarded == []
    assert "attachment_object_left" in caplog.text


# --- The raw message ----------------------------------------------------------------------------

RAW_KEY = f"fax_received_emails/{EMAIL_ROW}/raw/message.eml"


def raw_offered(router, content: bytes | httpx.Response = RAW):
    router["retrieve"].mock(return_value=httpx.Response(200, json=received()))
    answer = content if isinstance(content, httpx.Response) else httpx.Response(200, content=content)
    return router.get(url__startswith="https://inbound.resend.test/").mock(return_value=answer)


def test_the_raw_message_is_stored_beside_the_attachments_with_its_own_digest(
    queue, fake, router, context, clock, job
) -> None:
    one_pdf(router)
    raw_download = raw_offered(router)

    assert run(queue, context, clock).completed == 1

    assert str(raw_download.calls.last.request.url) == RAW_URL
    assert fake.uploads[RAW_KEY] == RAW
    [raw_upload] = [body for name, body in fake.calls if name == "upload" and body["key"] == RAW_KEY]
    assert (raw_upload["content_type"], raw_upload["x-upsert"]) == ("message/rfc822", "false")
    assert b"transfer-encoding: chunked" in raw_upload["raw"].lower(), "its size is not listed: it streams chunked"
    [recorded] = fake.raw_messages
    assert recorded["unavailable"] is None
    assert [(v["version"], v["storage_path"], v["size_bytes"], v["sha256"]) for v in recorded["versions"]] == [
        (1, RAW_KEY, len(RAW), sha(RAW))]  # fmt: skip
    names = [name for name, _ in fake.rpc_calls()]
    assert names[-2:] == ["record_raw_message_v2", "complete_document_job_and_claim_next_v2"], "in the same job"
    retrieve_slots = [n for n, _ in fake.limiter_calls() if n == "reserve_provider_request"]
    assert retrieve_slots == ["reserve_provider_request"], "its request takes a slot of the shared rate limit"


def test_without_a_raw_message_the_fax_is_stored_and_why_is_noted(queue, fake, router, context, clock, job,
                                                                   caplog) -> None:  # fmt: skip
    one_pdf(router)

    assert run(queue, context, clock).completed == 1

    assert [r["provider_attachment_id"] for r in fake.stored] == ["att_1"]
    assert [(m["versions"], m["unavailable"]) for m in fake.raw_messages] == [(None, "raw_null")]
    assert RAW_KEY not in fake.uploads
    assert "raw_message_unavailable" in caplog.text


@pytest.mark.parametrize(
    ("content", "unavailable"),
    [(b"x" * (fetch_email.raw_message_cap(1_000) + 1), "attachment_too_large"),
     (httpx.Response(404, text="<Error><Code>NoSuchKey</Code></Error>"), None)],
    ids=["over its cap: noted", "a failed download: retried"],
)  # fmt: skip
def test_a_raw_message_refused_for_good_is_noted_and_a_passing_failure_retried(
    queue, fake, router, context, clock, job, content, unavailable
) -> None:
    one_pdf(router)
    raw_offered(router, content)

    summary = run(queue, context, clock)

    assert [r["provider_attachment_id"] for r in fake.stored] == ["att_1"], "the fax is stored either way"
    if unavailable:
        assert summary.completed == 1
        assert [m["unavailable"] for m in fake.raw_messages] == [unavailable]
    else:
        assert summary.retried == 1
        [(_, fail)] = fake.rpc_calls("fail_document_job_v2")
        assert (fail["p_error_code"], fail["p_retryable"]) == ("download_failed", True)
        assert fake.raw_messages == []
    assert RAW_KEY not in fake.uploads


def test_a_retry_stores_only_what_is_missing(queue, fake, router, context, clock, job) -> None:
    list_route(router, *[page(attachment(1))] * 3)
    router.get(url__startswith="https://cdn.resend.test/").mock(return_value=httpx.Response(200, content=PDF))
    raw_offered(router, httpx.Response(500))
    assert run(queue, context, clock).retried == 1
    raw_offered(router)
    fake.jobs = [job_row(fax_received_email_id=EMAIL_ROW, attempts=2)]

    assert run(queue, context, clock).completed == 1

    assert [body["key"] for name, body in fake.calls if name == "upload"] == [KEY_1, RAW_KEY], "each once"
    assert len(fake.raw_messages) == 1
    fake.jobs = [job_row(fax_received_email_id=EMAIL_ROW, attempts=3)]
    assert run(queue, context, clock).completed == 1
    assert router["retrieve"].call_count == 2, "a recorded raw message is not asked for again"


def test_a_raw_message_already_at_its_key_counts_as_stored(queue, fake, router, context, clock, job) -> None:
    one_pdf(router)
    raw_offered(router)
    fake.uploads[RAW_KEY] = RAW

    assert run(queue, context, clock).completed == 1

    [recorded] = fake.raw_messages
    assert [(v["version"], v["sha256"]) for v in recorded["versions"]] == [(1, sha(RAW))]
    assert fake.uploads == {RAW_KEY: RAW, KEY_1: PDF}

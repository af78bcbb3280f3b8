"""respx routes that answer the real supabase-py client like PostgREST and Storage would, and
record every call: for unit tests of the worker without a database."""

from __future__ import annotations

import json
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from typing import Any
from urllib.parse import unquote
from uuid import uuid4

import httpx
import respx

URL = "https://project.supabase.test"
# Storage's documented key rule, ^[A-Za-z0-9_/!.*'() &$=@;:+,?-]*$ (a JavaScript regex: "$" is
# the end of the input), written out as a set of characters so that it shares nothing with lib/.
STORAGE_KEY_CHARACTERS = frozenset(string.ascii_letters + string.digits + "_/!.*'() &$=@;:+,?-")
KEY = "sb_secret_unit-tests-key"  # the form of a new project's secret key (not a JWT)


def uploaded_object(headers: httpx.Headers, body: bytes) -> tuple[bytes, str | None]:
    """The object's bytes and content type, from a multipart form (storage3's "file" field) or a raw body."""
    content_type = headers.get("content-type", "")
    if not content_type.startswith("multipart/form-data"):
        return body, content_type or None
    head = f"Content-Type: {content_type}\r\n\r\n".encode()
    message = BytesParser(policy=policy.HTTP).parsebytes(head + body)
    assert isinstance(message, EmailMessage)
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            payload = part.get_payload(decode=True)
            return payload if isinstance(payload, bytes) else b"", part.get("Content-Type")
    raise AssertionError("no file field in the upload")


def job_row(**overrides: Any) -> dict[str, Any]:
    now = datetime.now(UTC).isoformat()
    return {
        "id": str(uuid4()),
        "kind": "fetch_email",
        "fax_received_email_id": str(uuid4()),
        "status": "running",
        "attempts": 1,
        "max_attempts": 5,
        "generation": 1,
        "run_after": now,
        "lease_until": now,
        "created_at": now,
        "started_at": now,
        **overrides,
    }


# What the Resend limiter answers by default: a slot at once.
FREE_SLOT = {"reserved": True, "wait_ms": 0, "limit": 5}
# The calls that start a job and pace its Resend requests, not writes of its outcome.
STARTING_RPCS = (
    "claim_document_jobs",
    "claim_document_job_of_kinds",
    "start_fetch_email_v2",
    "reserve_provider_request",
    "note_provider_rate_limit",
)


@dataclass
class FakeSupabase:
    """`jobs` are handed out in order by claim_document_jobs and complete_document_job_and_claim_next_v2;
    `guarded` is whether every fenced call (the _v2 functions) finds the job still held (False: the
    lease is lost). fail and release answer the state they left the job in, as the database
    decides it; `fail_answer` overrides that decision. start_fetch_email_v2 answers
    from `emails`, `stored` (a row per version), `raw_messages` and `discarded`; it and
    reserve_provider_request hand out `slots` in order (FREE_SLOT once none are left). The
    ..._and_follow_up writes answer `follow_ups` each. Storage refuses an upload without upsert to
    a key that holds an object (in `uploads`), as Storage does, and serves `uploads` and `objects`
    back; discard_unrecorded_object_v2 allows a delete of an object no row of `stored` names."""

    jobs: list[dict[str, Any]] = field(default_factory=list)
    guarded: bool = True
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    emails: dict[str, str] = field(default_factory=dict)  # row id -> provider e-mail id
    stored: list[dict[str, Any]] = field(default_factory=list)
    raw_messages: list[dict[str, Any]] = field(default_factory=list)  # record_raw_message_v2's arguments
    discarded: list[str] = field(default_factory=list)  # the keys discard_unrecorded_object_v2 gave up
    uploads: dict[str, bytes] = field(default_factory=dict)
    storage_error: tuple[int, dict[str, Any]] | None = None
    unreachable_rpcs: set[str] = field(default_factory=set)  # these raise a connection error
    slots: list[dict[str, Any]] = field(default_factory=list)
    follow_ups: int = 0
    refused_rpcs: dict[str, httpx.Response] = field(default_factory=dict)  # these answer this instead
    on_upload_chunk: Callable[[bytes], None] | None = None  # called as each chunk of an upload is read
    fail_answer: str | None = None
    release_answer: str = "queued"  # what release_document_job_v2 answers while the lease holds
    claimed: dict[str, dict[str, Any]] = field(default_factory=dict)  # job id -> the row claim handed out
    # reconcile_emails: what start_reconciliation_v2 answers, and the provider ids already recorded
    reconcile_start: dict[str, Any] = field(
        default_factory=lambda: {
            "stop_before": "2026-12-01T00:00:00+00:00",
            "cursor": None,
            "max_pages": 10,
            "now": "2026-12-01T02:00:00+00:00",
        }
    )
    recorded_ids: list[str] = field(default_factory=list)
    unreadable_noted: list[str] = field(default_factory=list)  # fingerprints, once each
    # prepare_fax: the attachments start_prepare_fax_v2 answers, the views recorded, and the
    # objects Storage serves back (the originals, by key), or the error it answers instead.
    originals: list[dict[str, Any]] = field(default_factory=list)
    views: list[dict[str, Any]] = field(default_factory=list)
    senders: list[dict[str, Any]] = field(default_factory=list)  # what record_fax_sender_v1 was given
    email_headers: dict[str, Any] = field(default_factory=dict)  # the subject and from start_prepare_fax_v3 answers
    objects: dict[str, bytes] = field(default_factory=dict)
    download_error: tuple[int, dict[str, Any]] | None = None

    def rpc_calls(self, name: str | None = None) -> list[tuple[str, dict[str, Any]]]:
        """The calls after a job's start (its writes, and the uploads), in order."""
        return [(n, body) for n, body in self.calls if n not in STARTING_RPCS and (name is None or n == name)]

    def limiter_calls(self) -> list[tuple[str, dict[str, Any]]]:
        return [(n, body) for n, body in self.calls if n in STARTING_RPCS[2:]]

    def install(self, router: respx.MockRouter) -> None:
        router.post(url__regex=rf"{URL}/rest/v1/rpc/(?P<name>\w+)").mock(side_effect=self._rpc)
        router.post(url__regex=rf"{URL}/storage/v1/object/fax-attachments/(?P<key>.+)").mock(side_effect=self._upload)
        router.get(url__regex=rf"{URL}/storage/v1/object/authenticated/fax-attachments/(?P<key>.+)").mock(
            side_effect=self._download
        )
        router.delete(url__regex=rf"{URL}/storage/v1/object/fax-attachments/(?P<key>.+)").mock(side_effect=self._delete)

    def _rpc(self, request: httpx.Request, name: str) -> httpx.Response:
        body = json.loads(request.content or b"{}")
        self.calls.append((name, body))
        if name in self.unreachable_rpcs:
            raise httpx.ConnectError("database unreachable", request=request)
        if name in self.refused_rpcs:
            return self.refused_rpcs[name]
        if b"\\u0000" in request.content:  # as PostgREST answers: Postgres text cannot hold U+0000
            refused = {"code": "22P05", "message": "unsupported Unicode escape sequence",
                       "details": "\\u0000 cannot be converted to text.", "hint": None}  # fmt: skip
            return httpx.Response(400, json=refused)
        if name == "claim_document_job_of_kinds":
            of_kinds = bool(self.jobs) and self.jobs[0].get("kind", "fetch_email") in body["p_kinds"]
            return httpx.Response(200, json=[self._next_job()] if of_kinds else [])
        if name == "claim_document_jobs":
            of_kind = bool(self.jobs) and self.jobs[0].get("kind", "fetch_email") == body["p_kind"]
            return httpx.Response(200, json=[self._next_job()] if of_kind else [])
        if name == "reserve_provider_request":
            return httpx.Response(200, json=self._slot())
        if name == "note_provider_rate_limit":
            return httpx.Response(200, json={"limit": body["p_limit"] or 5, "paused_until": None})
        # Every fenced call answers as the _v2 functions do: {"held", "state"}, and what it adds.
        if name == "complete_document_job_and_claim_next_v2":
            next_job = self._next_job() if self.jobs else None
            return httpx.Response(200, json=self._fenced("completed") | {"next_job": next_job})
        if name == "start_fetch_email_v2":
            return httpx.Response(200, json=self._fenced("running") | (self._start(body) if self.guarded else {}))
        if name in ("fail_document_job_v2", "release_document_job_v2"):
            return httpx.Response(200, json=self._fenced(self._left_in(name, body)))
        if name in ("fail_document_job_and_follow_up_v2", "release_document_job_and_follow_up_v2"):
            left_in = self._left_in(name.replace("_and_follow_up", ""), body)
            return httpx.Response(200, json=self._fenced(left_in) | {"follow_ups": self.follow_ups})
        if name == "complete_document_job_and_follow_up_v2":
            return httpx.Response(200, json=self._fenced("completed") | {"follow_ups": self.follow_ups})
        if name == "record_document_attachment_v3":
            return httpx.Response(200, json=self._fenced("running") | (self._record(body) if self.guarded else {}))
        if name == "record_raw_message_v2":
            if self.guarded:
                email_row = self.claimed.get(body["p_job_id"], {}).get("fax_received_email_id")
                self.raw_messages.append({key.removeprefix("p_"): value for key, value in body.items()}
                                         | {"email_row": email_row})  # fmt: skip
            return httpx.Response(200, json=self._fenced("running"))
        if name == "discard_unrecorded_object_v2":
            recorded = any(r.get("storage_path") == body["p_storage_path"] for r in self.stored)
            if self.guarded and not recorded:
                self.discarded.append(body["p_storage_path"])
            return httpx.Response(200, json=self._fenced("running") | {"discard": self.guarded and not recorded})
        if name == "complete_document_job_v2":
            return httpx.Response(200, json=self._fenced("completed"))
        if name == "start_reconciliation_v2":
            return httpx.Response(200, json=self._fenced("running") | self.reconcile_start)
        if name == "record_reconciled_emails_v3":
            if len(body["p_emails"]) > 100 or len(body["p_unreadable"]) > 100:  # as record_reconciled refuses it
                return httpx.Response(400, json={"code": "22023", "message": "p_emails holds at most 100 e-mails",
                                                 "details": None, "hint": None})  # fmt: skip
            new = [item["id"] for item in body["p_emails"] if item["id"] not in self.recorded_ids]
            self.recorded_ids += new
            noted = [u["fingerprint"] for u in body["p_unreadable"] if u["fingerprint"] not in self.unreadable_noted]
            self.unreadable_noted += noted
            return httpx.Response(200, json=self._fenced("running") | {"recorded": len(new), "late": 0,
                                  "recorded_ids": new, "unreadable_new": len(noted)})  # fmt: skip
        if name == "finish_reconciliation_v3":
            return httpx.Response(200, json=self._fenced("running") | {"continues": body["p_cursor"] is not None})
        if name == "record_fax_sender_v1":
            self.senders.append(body["p_sender"])
            return httpx.Response(200, json=self._fenced("running"))
        if name == "start_prepare_fax_v3":
            job = self.claimed.get(body["p_job_id"], {})
            row = job.get("fax_received_email_id")
            email = {"id": row} | self.email_headers if row else None
            return httpx.Response(200, json=self._fenced("running") | {"email": email, "attachments": self.originals})
        if name == "record_fax_attachment_view_v2":
            if self.guarded:
                self.views.append({key.removeprefix("p_"): value for key, value in body.items()})
            return httpx.Response(200, json=self._fenced("running"))
        if name == "extend_document_job_lease_v2":
            return httpx.Response(200, json=self._fenced("running"))
        raise AssertionError(f"the worker called an RPC the fake does not know: {name}")

    def _record(self, body: dict[str, Any]) -> dict[str, Any]:
        """record_document_attachment_v3 while held: a row per version not yet recorded."""
        attachment = {key: body[f"p_{key}"] for key in ("provider_attachment_id", "filename", "content_type")}
        added = 0
        for version in body["p_versions"]:
            row = attachment | version
            if row not in self.stored:
                self.stored.append(row)
                added += 1
        versions = sum(r["provider_attachment_id"] == attachment["provider_attachment_id"] for r in self.stored)
        return {"added": added, "versions": versions}

    def _fenced(self, state: str) -> dict[str, Any]:
        return {"held": True, "state": state} if self.guarded else {"held": False, "state": None}

    def _next_job(self) -> dict[str, Any]:
        job = self.jobs.pop(0)
        self.claimed[job["id"]] = job
        return job

    def _left_in(self, name: str, body: dict[str, Any]) -> str:
        if name == "release_document_job_v2":
            return self.release_answer
        if self.fail_answer is not None:
            return self.fail_answer
        job = self.claimed.get(body["p_job_id"], {"attempts": 1, "max_attempts": 5})
        return "queued" if body.get("p_retryable", True) and job["attempts"] < job["max_attempts"] else "failed"

    def _slot(self) -> dict[str, Any]:
        return self.slots.pop(0) if self.slots else FREE_SLOT

    def _start(self, body: dict[str, Any]) -> dict[str, Any]:
        job = self.claimed.get(body["p_job_id"], {})
        row_id = job.get("fax_received_email_id")
        if row_id not in self.emails:
            return {"email": None}
        return {
            "email": {"id": row_id, "provider_email_id": self.emails[row_id]},
            "stored_attachment_ids": sorted({r["provider_attachment_id"] for r in self.stored}),
            "raw_message_recorded": any(m["email_row"] == row_id for m in self.raw_messages),
            "discarded_paths": [{"bucket": "fax-attachments", "storage_path": key} for key in self.discarded],
            "resend": self._slot(),
        }

    def _download(self, request: httpx.Request, key: str) -> httpx.Response:
        self.calls.append(("download", {"key": unquote(key)}))
        if self.download_error:
            status, body = self.download_error
            return httpx.Response(status, json=body)
        found = self.objects.get(unquote(key), self.uploads.get(unquote(key)))
        if found is None:
            return httpx.Response(400, json={"statusCode": "404", "code": "NoSuchKey", "error": "not_found",
                                             "message": "Object not found"})  # fmt: skip
        return httpx.Response(200, content=found)

    def _delete(self, request: httpx.Request, key: str) -> httpx.Response:
        self.calls.append(("delete", {"key": unquote(key)}))
        if self.uploads.pop(unquote(key), None) is None:
            return httpx.Response(400, json={"statusCode": "404", "code": "NoSuchKey", "error": "not_found",
                                             "message": "Object not found"})  # fmt: skip
        return httpx.Response(200, json={"message": "Successfully deleted"})

    def _upload(self, request: httpx.Request, key: str) -> httpx.Response:
        chunks = []
        for chunk in request.stream:  # read as a server does, chunk by chunk
            chunks.append(chunk)
            if self.on_upload_chunk:
                self.on_upload_chunk(chunk)
        body = b"".join(chunks)
        data, content_type = uploaded_object(request.headers, body)
        raw = "".join(f"{name}: {value}\r\n" for name, value in request.headers.items()).encode() + body
        self.calls.append(("upload", {"key": unquote(key), "x-upsert": request.headers.get("x-upsert"),
                                      "content_type": content_type, "raw": raw,
                                      "timeout": request.extensions.get("timeout")}))  # fmt: skip
        if self.storage_error:
            status, body = self.storage_error
            return httpx.Response(status, json=body)
        if unquote(key) in self.uploads and request.headers.get("x-upsert") != "true":
            return httpx.Response(400, json={"statusCode": "409", "code": "KeyAlreadyExists", "error": "Duplicate",
                                             "message": "The resource already exists"})  # fmt: skip
        self.uploads[unquote(key)] = data
        return httpx.Response(200, json={"Key": f"fax-attachments/{key}", "Id": str(uuid4())})

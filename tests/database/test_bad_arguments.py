"""The bad-input matrix for the database's API: every argument a caller controls, sent through the
real supabase-py client and the PostgREST stand-in, and the answer each must get. (Webhook
headers and bodies, the worker's authorization and the provider's answers have their matrices in
tests/unit/test_webhook.py, test_worker_handler.py, test_fetch_email.py and test_resend_client.py;
docs/RELIABILITY.md lists them all.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import httpx
import pytest
from postgrest.exceptions import APIError

from lib.settings import SupabaseSettings
from lib.supabase.client import service_client
from lib.supabase.keys import api_headers
from lib.webhook.endpoint import usable_timestamp

NO_JOB = "00000000-0000-0000-0000-000000000000"
NOT_HELD = {"held": False, "state": None}  # the one answer of a fenced call for a job that is not the caller's

# (function, arguments, expected HTTP status, expected SQLSTATE/PostgREST code, words the message must contain)
REFUSED: list[tuple[str, dict[str, Any], int, str, str]] = [
    ("claim_document_jobs", {"p_kind": "fetch_email", "p_limit": 0}, 400, "22023", "p_limit must be between 1"),
    ("claim_document_jobs", {"p_kind": "fetch_email", "p_limit": -3}, 400, "22023", "p_limit"),
    ("claim_document_jobs", {"p_kind": "fetch_email", "p_limit": 100000}, 400, "22023", "p_limit"),
    ("claim_document_jobs", {"p_kind": "fetch_email", "p_lease": "0 seconds"}, 400, "22023", "p_lease must be"),
    ("claim_document_jobs", {"p_kind": "fetch_email", "p_lease": "-5 minutes"}, 400, "22023", "p_lease"),
    ("claim_document_jobs", {"p_kind": "fetch_email", "p_lease": "1000 years"}, 400, "22023",
     "p_lease must be more than 0 and at most 1 hour"),
    ("claim_document_jobs", {"p_kind": "fetch_email", "p_limit": 101}, 400, "22023", "p_limit must be between 1 and"),
    ("claim_document_jobs", {"p_kind": "make_coffee"}, 400, "22023", "unknown job kind 'make_coffee'"),
    ("claim_document_jobs", {"p_kind": None}, 400, "22023", "unknown job kind"),
    ("claim_document_jobs", {"p_kind": "fetch_email", "p_limit": "many"}, 400, "22P02", "integer"),
    ("claim_document_jobs", {"p_kind": "fetch_email", "p_lease": "soon"}, 400, "22007", "interval"),
    ("extend_document_job_lease_v2", {"p_job_id": NO_JOB, "p_generation": 1, "p_lease": "-1 second"}, 400, "22023",
     "p_lease"),
    ("extend_document_job_lease_v2", {"p_job_id": NO_JOB, "p_generation": 1, "p_lease": "1000 years"}, 400, "22023",
     "p_lease must be more than 0 and at most 1 hour"),
    ("extend_document_job_lease_v2", {"p_job_id": None, "p_generation": 1, "p_lease": "5 minutes"}, 400, "22023",
     "p_job_id must not be null"),
    ("extend_document_job_lease_v2", {"p_job_id": "not-a-uuid", "p_generation": 1, "p_lease": "5 minutes"}, 400,
     "22P02", "uuid"),
    ("complete_document_job_v2", {"p_job_id": NO_JOB, "p_generation": None}, 400, "22023", "p_generation must not"),
    ("fail_document_job_v2", {"p_job_id": NO_JOB, "p_generation": 1, "p_error_code": ""}, 400, "22023", "p_error_code"),
    ("fail_document_job_v2", {"p_job_id": NO_JOB, "p_generation": 1, "p_error_code": None}, 400, "22023",
     "p_error_code"),
    ("fail_document_job_v2", {"p_job_id": NO_JOB, "p_generation": 1, "p_error_code": "x", "p_retry_after": "-1 minute"},
     400, "22023", "p_retry_after must be between 0 and 1 day"),
    ("fail_document_job_v2",
     {"p_job_id": NO_JOB, "p_generation": 1, "p_error_code": "x", "p_retry_after": "1000 years"}, 400, "22023",
     "p_retry_after must be between 0 and 1 day"),
    ("fail_document_job_v2", {"p_job_id": NO_JOB, "p_generation": 1, "p_error_code": "x", "p_retryable": None}, 400,
     "22023", "p_retryable"),
    ("release_document_job_v2", {"p_job_id": NO_JOB, "p_generation": 1, "p_retry_after": "-1 minute"}, 400, "22023",
     "p_retry_after"),
    ("release_document_job_v2", {"p_job_id": NO_JOB, "p_generation": 1, "p_retry_after": "1000 years"}, 400, "22023",
     "p_retry_after must be between 0 and 1 day"),
    ("release_document_job_v2", {"p_job_id": None, "p_generation": 1}, 400, "22023", "p_job_id"),
    ("retry_document_job", {"p_job_id": None}, 400, "22023", "p_job_id must not be null"),
    ("cancel_document_job", {"p_job_id": None}, 400, "22023", "p_job_id must not be null"),
    ("enqueue_document_job", {"p_kind": "fetch_email", "p_fax_received_email_id": None}, 400, "22023",
     "p_fax_received_email_id must not be null"),
    ("enqueue_document_job", {"p_kind": "fetch_email", "p_fax_received_email_id": NO_JOB}, 409, "23503",
     f"fax_received_emails {NO_JOB} does not exist"),
    ("enqueue_document_job", {"p_kind": "nope", "p_fax_received_email_id": NO_JOB}, 400, "22023", "unknown job kind"),
    ("record_inbound_email", {"p_provider_email_id": "", "p_webhook_id": "m", "p_data": {}}, 400, "22023",
     "p_provider_email_id must not be empty"),
    ("record_inbound_email", {"p_provider_email_id": None, "p_webhook_id": "m", "p_data": {}}, 400, "22023",
     "p_provider_email_id"),
    ("record_inbound_email", {"p_provider_email_id": "em", "p_webhook_id": "m", "p_data": ["a"]}, 400, "22023",
     "p_data must be a JSON object"),
    ("record_inbound_email", {"p_provider_email_id": "em", "p_webhook_id": "m", "p_data": None}, 400, "22023",
     "p_data"),
    ("invoke_document_jobs", {"p_max_invocations": 0}, 400, "22023", "p_max_invocations must be between 1 and 20"),
    ("invoke_document_jobs", {"p_max_invocations": 21}, 400, "22023", "p_max_invocations must be between 1 and 20"),
    ("set_document_jobs_retention", {"p_completed_job_retention": "1 minute"}, 400, "22023",
     "p_completed_job_retention must be between 1 hour and 10 years"),
    ("set_document_jobs_retention", {"p_completed_job_retention": "1000000 years"}, 400, "22023",
     "p_completed_job_retention must be between 1 hour and 10 years"),
    ("purge_document_jobs", {"p_older_than": "-1 day"}, 400, "22023", "p_older_than must be between 1 hour and 10"),
    ("purge_document_jobs", {"p_older_than": "1000000 years"}, 400, "22023", "p_older_than must be between 1 hour"),
    ("claim_document_jobs", {"p_kind": "fetch_email", "p_surprise": 1}, 404, "PGRST202", "Could not find the function"),
    ("no_such_function", {}, 404, "PGRST202", "Could not find the function"),
]  # fmt: skip

# Calls that are well-formed but name nothing: they answer, and change nothing.
ANSWERED: list[tuple[str, dict[str, Any], Any]] = [
    ("extend_document_job_lease_v2", {"p_job_id": NO_JOB, "p_generation": 1, "p_lease": "5 minutes"}, NOT_HELD),
    ("complete_document_job_v2", {"p_job_id": NO_JOB, "p_generation": -7}, NOT_HELD),
    ("fail_document_job_v2", {"p_job_id": NO_JOB, "p_generation": 1, "p_error_code": "x"}, NOT_HELD),
    ("release_document_job_v2", {"p_job_id": NO_JOB, "p_generation": 1}, NOT_HELD),
    ("retry_document_job", {"p_job_id": NO_JOB}, False),
    ("cancel_document_job", {"p_job_id": NO_JOB}, False),
    ("claim_document_jobs", {"p_kind": "fetch_email", "p_limit": 100}, []),
]


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client() as client:
        yield client


@pytest.fixture
def client(db, stack_env, http):
    settings = SupabaseSettings(supabase_url=stack_env["SUPABASE_URL"],
                                supabase_secret_key=stack_env["SUPABASE_SECRET_KEY"])  # fmt: skip
    return service_client(settings, http)


@pytest.mark.parametrize(("function", "args", "status", "code", "words"), REFUSED,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(REFUSED)])  # fmt: skip
def test_nonsense_is_refused_with_a_clear_error(client, db, stack_env, http, function, args, status, code, words):
    with pytest.raises(APIError) as raised:
        client.rpc(function, args).execute()
    assert (raised.value.code, words in (raised.value.message or "")) == (code, True), raised.value.message
    # supabase-py keeps only the body: the status is read from a raw call.
    raw = http.post(f"{stack_env['SUPABASE_URL']}/rest/v1/rpc/{function}", json=args,
                    headers=api_headers(stack_env["SUPABASE_SECRET_KEY"]))  # fmt: skip
    assert raw.status_code == status
    assert db.execute("select count(*) as n from document_jobs").fetchone()["n"] == 0
    assert db.execute("select count(*) as n from fax_received_emails").fetchone()["n"] == 0


@pytest.mark.parametrize(("function", "args", "answer"), ANSWERED, ids=[c[0] for c in ANSWERED])
def test_calls_that_name_nothing_change_nothing(client, db, function, args, answer) -> None:
    assert client.rpc(function, args).execute().data == answer


# data.created_at: what record_inbound_email takes as the received time, and what the webhook warns
# about (lib/webhook/endpoint.py), must be one rule. Postgres casts words of its own to times.
CREATED_AT = ["2026-11-30T08:15:02Z", "2026-11-30T08:15:02.123Z", "2026-11-30 08:15:02+09:00",
              "2026-11-30T08:15:02.123456+0000", "2026-11-30T08:15", "2026-11-30T08:15:02", "now", "today",
              "yesterday", "tomorrow", "infinity", "-infinity", "epoch", "allballs", "2026-02-30T10:00:00Z",
              "2026-11-30T24:00:00Z", "2026-11-30T23:59:60Z", "2026-11-30", "30/11/2026 08:15", "",
              " 2026-11-30T08:15:02Z", "2026-11-30T08:15:02.1234567Z", "１９９９-01-01T00:00:00Z", None, 1764490502,
              "2026-11-30T08:15:02Z\n"]  # fmt: skip


def test_the_received_time_is_an_iso_8601_date_and_time_and_the_webhook_warns_of_the_same(db) -> None:
    for created_at in CREATED_AT:
        row = db.execute("select * from record_inbound_email(gen_random_uuid()::text, 'msg', %s)",
                         (json.dumps({"created_at": created_at}),)).fetchone()  # fmt: skip
        received = db.execute("select received_at from fax_received_emails where id = %s",
                              (row["fax_received_email_id"],)).fetchone()["received_at"]  # fmt: skip
        assert (received is not None) == usable_timestamp(created_at), created_at
        if received is not None:
            assert received == datetime.fromisoformat(
                created_at.replace("Z", "+00:00") if "+" in created_at or created_at.endswith("Z") else created_at
                + "+00:00"), created_at  # fmt: skip
    words = [c for c in CREATED_AT if isinstance(c, str) and c.isalpha()]
    assert words and not any(usable_timestamp(c) for c in words), "no word Postgres reads as a time"

"""The local API gateway (devstack/standins/gateway.py) as the deployed code sees it: through the real,
unmodified supabase-py client (with the project's legacy JWT keys, which it sends as Supabase
always took them), through lib/'s client with the secret key, plus raw HTTP where the status code
itself is the point; and Supabase's API-key rules, on every path."""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import jwt
import psycopg
import pytest
from postgrest.exceptions import APIError
from psycopg.rows import dict_row
from storage3.exceptions import StorageApiError

from lib.budget import Deadline
from lib.settings import SupabaseSettings
from lib.supabase.client import service_client
from lib.supabase.keys import api_headers
from lib.supabase.storage import Storage, StorageError
from supabase import Client, ClientOptions, create_client

BUCKET = "fax-attachments"
QUEUE_FUNCTIONS = {
    "claim_document_jobs",
    "extend_document_job_lease_v2",
    "complete_document_job_v2",
    "fail_document_job_v2",
    "release_document_job_v2",
    "retry_document_job",
    "enqueue_document_job",
    "record_inbound_email",
    "invoke_document_jobs",
    "purge_document_jobs",
}
PUBLIC_TABLES = ("document_jobs", "fax_received_emails", "fax_received_email_attachments", "document_jobs_claimable")
SAMPLE_VALUES = {
    "uuid": "00000000-0000-4000-8000-000000000000",
    "integer": 1,
    "bigint": 1,
    "text": "x",
    "interval": "1 minute",
    "boolean": False,
    "jsonb": {},
    "timestamp with time zone": "2026-12-01T00:00:00Z",
    "text[]": ["x"],
    "date": "2026-12-01",
}


def role_key(stack_env: dict[str, str], role: str, **claims: Any) -> str:
    return jwt.encode({"role": role, "exp": int(time.time()) + 3600, **claims}, stack_env["SUPABASE_JWT_SECRET"])


def supabase_client(stack_env: dict[str, str], key: str) -> Client:
    # Our own httpx client, as lib/ does: supabase-py warns about its timeout/verify defaults otherwise.
    options = ClientOptions(httpx_client=httpx.Client(timeout=30))
    return create_client(stack_env["SUPABASE_URL"], key, options=options)


@pytest.fixture(scope="session")
def service(stack_env: dict[str, str]) -> Client:
    return supabase_client(stack_env, stack_env["DEVSTACK_LEGACY_SERVICE_ROLE_KEY"])


@pytest.fixture(scope="session")
def anon(stack_env: dict[str, str]) -> Client:
    return supabase_client(stack_env, stack_env["DEVSTACK_LEGACY_ANON_KEY"])


@pytest.fixture(scope="session")
def authenticated(stack_env: dict[str, str]) -> Client:
    return supabase_client(stack_env, role_key(stack_env, "authenticated", sub=str(uuid.uuid4())))


@pytest.fixture(scope="session")
def http(stack_env: dict[str, str]) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=stack_env["SUPABASE_URL"], timeout=30) as client:
        yield client


def service_headers(stack_env: dict[str, str]) -> dict[str, str]:
    return api_headers(stack_env["SUPABASE_SECRET_KEY"])  # {"apikey": <the secret key>}


def new_email(db: psycopg.Connection[dict]) -> str:
    row = db.execute(
        "insert into public.fax_received_emails (provider_email_id, data) values (%s, '{}') returning id",
        (f"email-{uuid.uuid4()}",),
    ).fetchone()
    assert row is not None
    return str(row["id"])


def enqueue(service: Client, email_id: str) -> str:
    rows = service.rpc("enqueue_document_job", {"p_kind": "fetch_email", "p_fax_received_email_id": email_id}).execute()
    return rows.data[0]["job_id"]


def claim(service: Client, limit: int = 1) -> list[dict[str, Any]]:
    return service.rpc("claim_document_jobs", {"p_kind": "fetch_email", "p_limit": limit}).execute().data


# --- RPC ----------------------------------------------------------------------------------------


def test_set_returning_rpc_answers_a_list_of_rows(service: Client, db: psycopg.Connection[dict]) -> None:
    email_id = new_email(db)
    enqueued = service.rpc(
        "enqueue_document_job", {"p_kind": "fetch_email", "p_fax_received_email_id": email_id}
    ).execute()
    assert enqueued.data == [{"job_id": enqueued.data[0]["job_id"], "created": True}]
    again = service.rpc("enqueue_document_job", {"p_kind": "fetch_email", "p_fax_received_email_id": email_id})
    assert again.execute().data == [{"job_id": enqueued.data[0]["job_id"], "created": False}]

    jobs = claim(service)
    assert len(jobs) == 1
    job = jobs[0]
    assert job["id"] == enqueued.data[0]["job_id"]
    assert (job["status"], job["attempts"], job["generation"]) == ("running", 1, 1)
    assert job["fax_received_email_id"] == email_id
    assert job["lease_until"] is not None
    assert claim(service) == []  # nothing left: an empty set is [], not null


def test_rpc_answers_the_functions_value(service: Client, db: psycopg.Connection[dict]) -> None:
    enqueue(service, new_email(db))
    job = claim(service)[0]
    fenced = {"p_job_id": job["id"], "p_generation": job["generation"]}
    done = service.rpc("complete_document_job_v2", fenced).execute()
    assert done.data == {"held": True, "state": "completed"}
    stale = service.rpc("complete_document_job_v2", fenced)
    assert stale.execute().data == {"held": False, "state": None}
    assert service.rpc("cancel_document_job", {"p_job_id": job["id"]}).execute().data is False  # a scalar: the value
    row = db.execute("select status, finished_at from public.document_jobs where id = %s", (job["id"],)).fetchone()
    assert row is not None and row["status"] == "completed" and row["finished_at"] is not None


def test_rpc_arguments_take_the_parameter_types_and_defaults(service: Client, db: psycopg.Connection[dict]) -> None:
    enqueue(service, new_email(db))
    job = claim(service)[0]
    extended = service.rpc(
        "extend_document_job_lease_v2",
        {"p_job_id": job["id"], "p_generation": job["generation"], "p_lease": "50 minutes"},
    ).execute()
    assert extended.data == {"held": True, "state": "running"}
    row = db.execute(
        "select lease_until - now() as left from public.document_jobs where id = %s", (job["id"],)
    ).fetchone()
    assert row is not None and 2900 < row["left"].total_seconds() <= 3000
    failed = service.rpc(
        "fail_document_job_v2",
        {"p_job_id": job["id"], "p_generation": 1, "p_error_code": "boom", "p_retryable": False},
    ).execute()
    assert failed.data == {"held": True, "state": "failed"}  # the defaults: p_error_message, p_retry_after
    row = db.execute("select status, last_error_code from public.document_jobs where id = %s", (job["id"],)).fetchone()
    assert row == {"status": "failed", "last_error_code": "boom"}


def test_record_inbound_email_takes_a_json_object(service: Client, db: psycopg.Connection[dict]) -> None:
    data = {"email_id": "re-1", "from": "fax@example.com", "to": ["in@example.com"], "subject": "請求書"}
    result = service.rpc(
        "record_inbound_email", {"p_provider_email_id": "re-1", "p_webhook_id": "msg_1", "p_data": data}
    ).execute()
    assert len(result.data) == 1 and result.data[0]["duplicate"] is False
    row = db.execute("select data, subject, to_addresses from public.fax_received_emails").fetchone()
    assert row == {"data": data, "subject": "請求書", "to_addresses": ["in@example.com"]}


def test_anon_and_authenticated_are_refused_every_public_function(
    anon: Client, authenticated: Client, admin: psycopg.Connection[dict], db: psycopg.Connection[dict]
) -> None:
    functions = admin.execute(
        """
        select p.proname as name, p.pronargs - p.pronargdefaults as required,
               array(select format_type(t, null) from unnest(p.proargtypes::oid[]) as t) as types,
               coalesce(p.proargnames[1:p.pronargs], array_fill(null::text, array[p.pronargs])) as names
          from pg_proc p where p.pronamespace = 'public'::regnamespace and p.prokind = 'f'
        """
    ).fetchall()
    assert {function["name"] for function in functions} >= QUEUE_FUNCTIONS
    for function in functions:
        arguments = {
            name: SAMPLE_VALUES[sql_type]
            for name, sql_type in list(zip(function["names"], function["types"], strict=True))[: function["required"]]
        }
        for client, role in ((anon, "anon"), (authenticated, "authenticated")):
            with pytest.raises(APIError) as refused:
                client.rpc(function["name"], arguments).execute()
            assert refused.value.code == "42501", (role, function["name"], refused.value)
            assert "permission denied for function" in (refused.value.message or "")
    assert db.execute("select count(*) as n from public.document_jobs").fetchone() == {"n": 0}


def test_refusals_answer_401_for_anon_and_403_for_a_signed_in_user(
    stack_env: dict[str, str], http: httpx.Client
) -> None:
    body = {"p_kind": "fetch_email"}
    as_anon = http.post(
        "/rest/v1/rpc/claim_document_jobs", json=body, headers={"apikey": stack_env["DEVSTACK_LEGACY_ANON_KEY"]}
    )
    assert as_anon.status_code == 401
    assert as_anon.json()["code"] == "42501"
    user = role_key(stack_env, "authenticated")
    signed_in = {"apikey": stack_env["SUPABASE_PUBLISHABLE_KEY"], "Authorization": f"Bearer {user}"}
    as_user = http.post("/rest/v1/rpc/claim_document_jobs", json=body, headers=signed_in)
    assert as_user.status_code == 403
    assert as_user.json()["code"] == "42501"


def test_anon_and_authenticated_are_refused_the_tables(anon: Client, authenticated: Client) -> None:
    for client in (anon, authenticated):
        for table in PUBLIC_TABLES:
            with pytest.raises(APIError) as refused:
                client.table(table).select("*").execute()
            assert refused.value.code == "42501", table


def test_unknown_function_is_pgrst202_and_404(service: Client, stack_env: dict[str, str], http: httpx.Client) -> None:
    with pytest.raises(APIError) as missing:
        service.rpc("no_such_function", {"p_x": 1}).execute()
    assert missing.value.code == "PGRST202"
    assert missing.value.message == "Could not find the function public.no_such_function(p_x) in the schema cache"
    # A known function with an argument it does not have is not found either.
    answer = http.post(
        "/rest/v1/rpc/complete_document_job_v2",
        json={"p_job_id": str(uuid.uuid4())},
        headers=service_headers(stack_env),
    )
    assert answer.status_code == 404
    assert answer.json()["code"] == "PGRST202"


@pytest.mark.parametrize(
    "token",
    ["not-a-jwt", "a.b.c", "WRONG-SECRET", "EXPIRED"],
)
def test_an_invalid_jwt_is_401(token: str, stack_env: dict[str, str], http: httpx.Client) -> None:
    if token == "WRONG-SECRET":
        token = jwt.encode({"role": "service_role"}, "another-secret-that-is-long-enough-for-hs256")
    elif token == "EXPIRED":
        token = role_key(stack_env, "service_role", exp=int(time.time()) - 3600)
    # Beside a legacy key, as always: the JWT reaches PostgREST, which refuses it.
    headers = {"apikey": stack_env["DEVSTACK_LEGACY_ANON_KEY"], "Authorization": f"Bearer {token}"}
    answer = http.post("/rest/v1/rpc/invoke_document_jobs", json={}, headers=headers)
    assert answer.status_code == 401
    assert answer.json()["code"] == "PGRST301"
    assert set(answer.json()) == {"code", "message", "details", "hint"}
    # As the client's own key it is no key of the project's: the gateway refuses it first.
    with pytest.raises(APIError) as refused:
        supabase_client(stack_env, token).rpc("invoke_document_jobs", {}).execute()
    assert (refused.value.code, refused.value.message) == (None, "Invalid API key")


def test_bad_argument_is_400_with_the_functions_message(
    service: Client, stack_env: dict[str, str], http: httpx.Client
) -> None:
    with pytest.raises(APIError) as bad:
        service.rpc("claim_document_jobs", {"p_kind": "fetch_email", "p_limit": 0}).execute()
    assert (bad.value.code, bad.value.message) == ("22023", "p_limit must be between 1 and 100")
    answer = http.post(
        "/rest/v1/rpc/claim_document_jobs",
        json={"p_kind": "fetch_email", "p_limit": 0},
        headers=service_headers(stack_env),
    )
    assert answer.status_code == 400
    malformed = http.post(
        "/rest/v1/rpc/claim_document_jobs",
        json={"p_kind": "fetch_email", "p_lease": "soon"},
        headers=service_headers(stack_env),
    )
    assert (malformed.status_code, malformed.json()["code"]) == (400, "22007")


@pytest.fixture
def probe_functions(admin: psycopg.Connection[dict]) -> Iterator[None]:
    """Functions that exist only for one test: what the migrations do not have (a raise, void, an array)."""
    admin.execute(
        """
        create function public.gateway_probe_raise(p_message text) returns int language plpgsql as $$
        begin raise exception '%', p_message using hint = 'a hint'; end $$;
        create function public.gateway_probe_void() returns void language sql as 'select';
        create function public.gateway_probe_echo(p_data jsonb, p_tags text[] default null, p_n int default 7)
        returns jsonb language sql as $$ select jsonb_build_object('data', p_data, 'tags', p_tags, 'n', p_n) $$;
        """
    )
    try:
        yield
    finally:
        admin.execute(
            "drop function public.gateway_probe_raise(text), public.gateway_probe_void(),"
            " public.gateway_probe_echo(jsonb, text[], int)"
        )


@pytest.mark.usefixtures("probe_functions")
def test_raise_exception_is_p0001_and_400(service: Client, stack_env: dict[str, str], http: httpx.Client) -> None:
    with pytest.raises(APIError) as raised:
        service.rpc("gateway_probe_raise", {"p_message": "it broke"}).execute()
    assert (raised.value.code, raised.value.message, raised.value.hint) == ("P0001", "it broke", "a hint")
    answer = http.post("/rest/v1/rpc/gateway_probe_raise", json={"p_message": "x"}, headers=service_headers(stack_env))
    assert answer.status_code == 400


@pytest.mark.usefixtures("probe_functions")
def test_void_is_204_and_json_and_array_arguments_keep_their_shape(
    service: Client, stack_env: dict[str, str], http: httpx.Client
) -> None:
    void = http.post("/rest/v1/rpc/gateway_probe_void", headers=service_headers(stack_env))
    assert (void.status_code, void.content) == (204, b"")
    echoed = service.rpc("gateway_probe_echo", {"p_data": "just a string", "p_tags": ["a", "b,c", 'd"e']}).execute()
    assert echoed.data == {"data": "just a string", "tags": ["a", "b,c", 'd"e'], "n": 7}
    nested = service.rpc("gateway_probe_echo", {"p_data": {"k": [1, None, True]}, "p_n": 3}).execute()
    assert nested.data == {"data": {"k": [1, None, True]}, "tags": None, "n": 3}


def test_retry_conflict_is_23505_and_409(
    service: Client, db: psycopg.Connection[dict], stack_env: dict[str, str], http: httpx.Client
) -> None:
    email_id = new_email(db)
    first = enqueue(service, email_id)
    job = claim(service)[0]
    service.rpc(
        "fail_document_job_v2",
        {"p_job_id": first, "p_generation": job["generation"], "p_error_code": "x", "p_retryable": False},
    ).execute()
    assert enqueue(service, email_id) != first  # the failed job no longer blocks a new one for the same e-mail
    with pytest.raises(APIError) as conflict:
        service.rpc("retry_document_job", {"p_job_id": first}).execute()
    assert conflict.value.code == "23505"
    assert "cannot be retried" in (conflict.value.message or "")
    assert conflict.value.hint == "Wait for that job to finish, or cancel it, then retry."
    answer = http.post("/rest/v1/rpc/retry_document_job", json={"p_job_id": first}, headers=service_headers(stack_env))
    assert answer.status_code == 409


def test_concurrent_claims_through_the_gateway_never_share_a_job(service: Client, db: psycopg.Connection[dict]) -> None:
    enqueued = {enqueue(service, new_email(db)) for _ in range(24)}

    def claim_until_empty(_: int) -> list[str]:
        taken: list[str] = []
        while jobs := claim(service):
            taken.extend(job["id"] for job in jobs)
        return taken

    with ThreadPoolExecutor(max_workers=8) as pool:
        claimed = [job_id for taken in pool.map(claim_until_empty, range(8)) for job_id in taken]
    assert sorted(claimed) == sorted(enqueued)


# --- tables -------------------------------------------------------------------------------------


def test_table_reads_with_the_filters_the_product_uses(service: Client, db: psycopg.Connection[dict]) -> None:
    for provider_email_id, subject, received_at in [("a", "one", "2026-11-01"), ("b", None, "2026-11-02"),
                                                    ("c", "Three", "2026-11-03")]:  # fmt: skip
        db.execute(
            "insert into public.fax_received_emails (provider_email_id, data, subject, received_at)"
            " values (%s, '{}', %s, %s)",
            (provider_email_id, subject, received_at),
        )
    table = service.table("fax_received_emails")
    one = table.select("provider_email_id,subject,to_addresses").eq("provider_email_id", "a").execute()
    assert one.data == [{"provider_email_id": "a", "subject": "one", "to_addresses": []}]
    some = (
        table.select("provider_email_id")
        .in_("provider_email_id", ["a", "c", "z"])
        .order("provider_email_id", desc=True)
    )
    assert [row["provider_email_id"] for row in some.execute().data] == ["c", "a"]
    since = table.select("provider_email_id").gte("received_at", "2026-11-02").lt("received_at", "2026-11-03").execute()
    assert since.data == [{"provider_email_id": "b"}]
    assert table.select("provider_email_id").ilike("subject", "*thre*").execute().data == [{"provider_email_id": "c"}]
    limited = table.select("provider_email_id").order("provider_email_id").limit(2).execute()
    assert [row["provider_email_id"] for row in limited.data] == ["a", "b"]

    with pytest.raises(APIError) as unknown:
        table.select("id").eq("no_such_column", "x").execute()
    assert unknown.value.code == "42703"
    with pytest.raises(APIError) as no_table:
        service.table("no_such_table").select("*").execute()
    assert no_table.value.code == "PGRST205"


def test_what_the_product_does_not_ask_for_is_refused_not_imitated(
    service: Client, db: psycopg.Connection[dict], stack_env: dict[str, str], http: httpx.Client
) -> None:
    # Nothing in lib/ or api/ writes a table, asks for a single object or filters with another
    # operator: the stand-in says so instead of answering something PostgREST might not.
    table = service.table("fax_received_emails")
    for refused_call in (
        lambda: table.insert({"provider_email_id": "x", "data": {}}).execute(),
        lambda: table.update({"subject": "new"}).eq("provider_email_id", "x").execute(),
        lambda: table.delete().eq("provider_email_id", "x").execute(),
        lambda: table.select("id").neq("provider_email_id", "x").execute(),
        lambda: table.select("id").eq("provider_email_id", "x").single().execute(),
    ):
        with pytest.raises(APIError) as refused:
            refused_call()
        assert refused.value.code == "PGRST100"
    assert db.execute("select count(*) as n from public.fax_received_emails").fetchone()["n"] == 0
    answer = http.get("/rest/v1/rpc/claim_document_jobs", headers=service_headers(stack_env))
    assert (answer.status_code, answer.json()["code"]) == (400, "PGRST100")


# --- storage ------------------------------------------------------------------------------------


@pytest.fixture
def folder() -> str:
    """A fresh key prefix: objects outlive the database reset between tests."""
    return f"tests/{uuid.uuid4()}"


def upload(http: httpx.Client, env: dict[str, str], key: str, body: bytes, content_type: str = "application/pdf",
           upsert: bool = False, headers: dict[str, str] | None = None) -> httpx.Response:  # fmt: skip
    """As lib/supabase/storage.py uploads: the object as a raw body, x-upsert to overwrite."""
    sent = {
        **(headers or service_headers(env)),
        "Content-Type": content_type,
        **({"x-upsert": "true"} if upsert else {}),
    }
    return http.post(f"/storage/v1/object/{BUCKET}/{key}", content=body, headers=sent)


def stored(env: dict[str, str], key: str) -> bytes | None:
    """The object's bytes as the stand-in keeps them (the product never reads an object back)."""
    path = Path(env["DEVSTACK_STORAGE_DIR"]) / BUCKET / key
    return path.read_bytes() if path.is_file() else None


def storage_error(answer: httpx.Response) -> tuple[str, str, str]:
    """Storage answers HTTP 400 with the real status in the body."""
    assert answer.status_code == 400, answer.text
    return answer.json()["statusCode"], answer.json()["error"], answer.json()["message"]


def test_upload_upsert_and_duplicate(folder: str, stack_env: dict[str, str], http: httpx.Client) -> None:
    content = b"%PDF-1.4\r\n" + bytes(range(256)) + b"\r\n--boundary-like\r\n"
    answer = upload(http, stack_env, f"{folder}/a.pdf", content)
    assert answer.status_code == 200 and answer.json()["Key"] == f"{BUCKET}/{folder}/a.pdf"
    uuid.UUID(answer.json()["Id"])
    assert stored(stack_env, f"{folder}/a.pdf") == content

    duplicate = upload(http, stack_env, f"{folder}/a.pdf", b"other")
    assert storage_error(duplicate) == ("409", "Duplicate", "The resource already exists")
    assert duplicate.json()["code"] == "KeyAlreadyExists"
    assert stored(stack_env, f"{folder}/a.pdf") == content

    replaced = upload(http, stack_env, f"{folder}/a.pdf", b"replaced", upsert=True)
    assert replaced.json()["Id"] == answer.json()["Id"]  # an overwrite keeps the object's id
    assert stored(stack_env, f"{folder}/a.pdf") == b"replaced"


def test_what_the_product_does_not_send_is_refused(
    service: Client, folder: str, stack_env: dict[str, str], http: httpx.Client
) -> None:
    # A multipart form (storage3's upload), PUT, and the public read route.
    with pytest.raises(StorageApiError) as form:
        service.storage.from_(BUCKET).upload(f"{folder}/a.pdf", b"%PDF", {"content-type": "application/pdf"})
    assert form.value.status == "400"
    put = http.put(f"/storage/v1/object/{BUCKET}/{folder}/a.pdf", content=b"%PDF", headers=service_headers(stack_env))
    public = http.get(f"/storage/v1/object/public/{BUCKET}/{folder}/a.pdf", headers=service_headers(stack_env))
    assert put.status_code == 404
    assert (public.status_code, public.json()["statusCode"]) == (400, "404"), "a private bucket has no public objects"
    assert stored(stack_env, f"{folder}/a.pdf") is None


def test_the_server_key_reads_an_object_back_and_the_publishable_key_cannot(
    folder: str, stack_env: dict[str, str], http: httpx.Client
) -> None:
    # The admin CLI's download: Storage's authenticated read, with the server key.
    assert upload(http, stack_env, f"{folder}/a.pdf", b"%PDF-1.4 page").status_code == 200
    read = http.get(f"/storage/v1/object/{BUCKET}/{folder}/a.pdf", headers=service_headers(stack_env))
    assert (read.status_code, read.content, read.headers["Content-Type"]) == (200, b"%PDF-1.4 page", "application/pdf")
    refused = http.get(f"/storage/v1/object/{BUCKET}/{folder}/a.pdf",
                       headers=api_headers(stack_env["SUPABASE_PUBLISHABLE_KEY"]))  # fmt: skip
    assert refused.json()["statusCode"] == "403"


def test_the_authenticated_read_serves_the_service_role_and_hides_objects_from_other_roles(
    folder: str, stack_env: dict[str, str], http: httpx.Client
) -> None:
    # "Retrieve an object" (supabase/storage getObject.ts): the bucket found as the super user, the
    # object under the caller's row-level security, which with no storage policies hides every
    # object from any role but service_role (NoSuchKey, not AccessDenied).
    assert upload(http, stack_env, f"{folder}/a.tif", b"II*\x00 a fax", "image/tiff").status_code == 200
    path = f"/storage/v1/object/authenticated/{BUCKET}/{folder}/a.tif"
    read = http.get(path, headers=service_headers(stack_env))
    assert (read.status_code, read.content, read.headers["Content-Type"]) == (200, b"II*\x00 a fax", "image/tiff")
    assert read.headers["ETag"] and read.headers["Last-Modified"]
    hidden = http.get(path, headers=api_headers(stack_env["SUPABASE_PUBLISHABLE_KEY"]))
    assert (hidden.status_code, hidden.json()["statusCode"], hidden.json()["code"]) == (400, "404", "NoSuchKey")
    forged = http.get(path, headers={**service_headers(stack_env), "Authorization": "Bearer not.a.jwt"})
    assert (forged.json()["statusCode"], forged.json()["code"]) == ("403", "InvalidJWT")
    missing = http.get(f"/storage/v1/object/authenticated/{BUCKET}/{folder}/b.tif", headers=service_headers(stack_env))
    assert (missing.status_code, missing.json()["statusCode"], missing.json()["code"]) == (400, "404", "NoSuchKey")
    no_bucket = http.get(f"/storage/v1/object/authenticated/no-such-bucket/{folder}/a.tif",
                         headers=service_headers(stack_env))  # fmt: skip
    assert (no_bucket.json()["statusCode"], no_bucket.json()["code"]) == ("404", "NoSuchBucket")


def test_the_worker_streams_an_object_back_within_a_cap(
    folder: str, stack_env: dict[str, str], http: httpx.Client
) -> None:
    # The prepare_fax job reads each original back (lib/supabase/storage.py download_to), in chunks.
    content = bytes(range(256)) * 1000
    assert upload(http, stack_env, f"{folder}/big.pdf", content).status_code == 200
    storage = Storage(httpx.Client(), stack_env["SUPABASE_URL"], stack_env["SUPABASE_SECRET_KEY"], BUCKET)
    chunks: list[bytes] = []

    class Sink:
        def write(self, chunk: bytes) -> int:
            chunks.append(chunk)
            return len(chunk)

    assert storage.download_to(f"{folder}/big.pdf", Sink(), Deadline(time.monotonic() + 60), len(content)) == len(
        content
    )
    assert b"".join(chunks) == content and len(chunks) > 1
    with pytest.raises(StorageError) as over:
        storage.download_to(f"{folder}/big.pdf", Sink(), Deadline(time.monotonic() + 60), len(content) - 1)
    assert over.value.status == 413
    with pytest.raises(StorageError) as gone:
        storage.download_to(f"{folder}/gone.pdf", Sink(), Deadline(time.monotonic() + 60), len(content))
    assert (gone.value.status, gone.value.code) == (404, "NoSuchKey")


def test_a_streamed_upload_is_stored_whole_or_not_at_all_and_can_be_deleted(
    folder: str, stack_env: dict[str, str]
) -> None:
    # The worker streams each attachment (lib/supabase/storage.py): with the listed length stated,
    # or chunked when the listing gave none. Storage streams either on to its object store and
    # aborts an upload whose connection ends inside the body.
    storage = Storage(httpx.Client(), stack_env["SUPABASE_URL"], stack_env["SUPABASE_SECRET_KEY"], BUCKET)
    storage.upload(f"{folder}/stated.pdf", iter([b"%PDF-1.4 ", b"stated"]), "application/pdf", length=15)
    storage.upload(f"{folder}/chunked.pdf", iter([b"%PDF-1.4 ", b"chunked"]), "application/pdf")
    assert (stored(stack_env, f"{folder}/stated.pdf"), stored(stack_env, f"{folder}/chunked.pdf")) == (
        b"%PDF-1.4 stated", b"%PDF-1.4 chunked")  # fmt: skip

    # A connection that ends inside the body: half-closed, so that the gateway's answer (or its
    # silence) can still be read, and the read returns once it has dealt with the request.
    host, port = httpx.URL(stack_env["SUPABASE_URL"]).host, httpx.URL(stack_env["SUPABASE_URL"]).port
    headers = "".join(f"{name}: {value}\r\n" for name, value in service_headers(stack_env).items())
    for key, framing, body in ((f"{folder}/short.pdf", "Content-Length: 100", b"%PDF-1.4 short"),
                               (f"{folder}/cut.pdf", "Transfer-Encoding: chunked", b"9\r\n%PDF-1.4 \r\n")):  # fmt: skip
        with socket.create_connection((host, port)) as raw:
            head = f"POST /storage/v1/object/{BUCKET}/{key} HTTP/1.1\r\nHost: {host}\r\n{headers}"
            raw.sendall(f"{head}Content-Type: application/pdf\r\n{framing}\r\n\r\n".encode() + body)
            raw.shutdown(socket.SHUT_WR)
            answer = b"".join(iter(lambda: raw.recv(65536), b""))
        assert answer == b"", f"{key}: no answer to a request that never arrived whole"
        assert stored(stack_env, key) is None, f"{key}: and nothing stored"

    storage.delete(f"{folder}/stated.pdf")
    storage.delete(f"{folder}/stated.pdf")  # already gone: counts as deleted
    assert stored(stack_env, f"{folder}/stated.pdf") is None
    assert stored(stack_env, f"{folder}/chunked.pdf") == b"%PDF-1.4 chunked"


@pytest.mark.parametrize("key", ["請求書.pdf", "50%.pdf", "a#b.pdf", "a/../b.pdf", "a//b.pdf", "x.pdf\n", "x\n.pdf"])
def test_keys_outside_supabase_rules_are_invalid(key: str, folder: str, stack_env: dict[str, str],
                                                 http: httpx.Client) -> None:  # fmt: skip
    path = f"{folder}/{key}"
    # Percent-encoded as lib/ encodes keys; dots too, so that httpx does not resolve "..".
    raw = quote(path, safe="/").replace(".", "%2E")
    answer = upload(http, stack_env, raw, b"%PDF")
    assert storage_error(answer)[1:] == ("InvalidKey", f"Invalid key: {path}")


def test_only_service_role_reaches_objects(folder: str, stack_env: dict[str, str], http: httpx.Client) -> None:
    publishable = {"apikey": stack_env["SUPABASE_PUBLISHABLE_KEY"]}
    user = {**publishable, "Authorization": f"Bearer {role_key(stack_env, 'authenticated', sub=str(uuid.uuid4()))}"}
    for headers in (publishable, user):
        refused = upload(http, stack_env, f"{folder}/x.pdf", b"%PDF", headers=headers)
        assert storage_error(refused) == ("403", "Unauthorized", "new row violates row-level security policy")
        sign = http.post(f"/storage/v1/object/sign/{BUCKET}/{folder}/x.pdf", json={"expiresIn": 60}, headers=headers)
        assert storage_error(sign)[0] == "403"
    assert stored(stack_env, f"{folder}/x.pdf") is None  # the refused uploads stored nothing


def test_unknown_bucket(folder: str, stack_env: dict[str, str], http: httpx.Client) -> None:
    answer = http.post(f"/storage/v1/object/no-such-bucket/{folder}/a.pdf", content=b"%PDF",
                       headers={**service_headers(stack_env), "Content-Type": "application/pdf"})  # fmt: skip
    assert storage_error(answer) == ("404", "Bucket not found", "Bucket not found")


def test_bucket_size_limit_is_413(
    admin: psycopg.Connection[dict], folder: str, stack_env: dict[str, str], http: httpx.Client
) -> None:
    previous = admin.execute("select file_size_limit from storage.buckets where id = %s", (BUCKET,)).fetchone()
    assert previous is not None
    admin.execute("update storage.buckets set file_size_limit = 10 where id = %s", (BUCKET,))
    try:
        assert upload(http, stack_env, f"{folder}/fits.pdf", b"0123456789").status_code == 200
        too_large = upload(http, stack_env, f"{folder}/big.pdf", b"0123456789A")
        assert storage_error(too_large) == ("413", "Payload too large", "The object exceeded the maximum allowed size")
    finally:
        admin.execute(
            "update storage.buckets set file_size_limit = %s where id = %s", (previous["file_size_limit"], BUCKET)
        )
    assert stored(stack_env, f"{folder}/fits.pdf") == b"0123456789"


# --- the gateway itself -------------------------------------------------------------------------


def test_unknown_routes_and_the_log(stack_env: dict[str, str], http: httpx.Client) -> None:
    assert http.get("/nowhere", headers=service_headers(stack_env)).status_code == 404
    assert http.get("/storage/v1/nowhere", headers=service_headers(stack_env)).status_code == 404
    log = Path(stack_env["DEVSTACK_FOLDER"], "gateway.log").read_text()
    assert "GET /nowhere 404" in log
    assert "POST /rest/v1/rpc/claim_document_jobs 200" in log
    for secret in (
        stack_env["SUPABASE_SECRET_KEY"],
        stack_env["SUPABASE_PUBLISHABLE_KEY"],
        stack_env["DEVSTACK_LEGACY_SERVICE_ROLE_KEY"],
        stack_env["DEVSTACK_LEGACY_ANON_KEY"],
        stack_env["SUPABASE_JWT_SECRET"],
    ):
        assert secret not in log


# --- API keys (Supabase's rules: guides/api/api-keys) --------------------------------------------

BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36"
CLAIM = "/rest/v1/rpc/claim_document_jobs"


def upload_path(folder: str) -> str:
    return f"/storage/v1/object/{BUCKET}/{folder}/k.pdf"


def gateway_refusal(answer: httpx.Response, message: str) -> bool:
    """The gateway's own 401 (PostgREST's and Storage's bodies have other fields)."""
    return answer.status_code == 401 and answer.json()["message"] == message and "code" not in answer.json()


def test_a_secret_key_in_apikey_alone_is_the_service_role_everywhere(
    stack_env: dict[str, str], http: httpx.Client, db: psycopg.Connection[dict], folder: str
) -> None:
    secret = {"apikey": stack_env["SUPABASE_SECRET_KEY"]}
    assert (http.post(CLAIM, json={"p_kind": "fetch_email"}, headers=secret).json()) == []
    uploaded = http.post(upload_path(folder), content=b"%PDF", headers={**secret, "Content-Type": "application/pdf"})
    assert uploaded.status_code == 200, uploaded.text
    # lib/'s client, over supabase-py: the same key, no Authorization.
    settings = SupabaseSettings(
        supabase_url=stack_env["SUPABASE_URL"], supabase_secret_key=stack_env["SUPABASE_SECRET_KEY"]
    )
    with httpx.Client(timeout=30) as client:
        email_id = new_email(db)
        assert enqueue(service_client(settings, client), email_id)
        assert claim(service_client(settings, client))[0]["fax_received_email_id"] == email_id


def test_a_secret_key_sent_as_bearer_too_reaches_the_services_and_is_refused_as_not_a_jwt(
    stack_env: dict[str, str], http: httpx.Client, folder: str
) -> None:
    """The one case the docs let through the gateway (Authorization exactly equal to apikey), and
    what unmodified supabase-py sends with a secret key: lib/ never sends it."""
    key = stack_env["SUPABASE_SECRET_KEY"]
    with pytest.raises(APIError) as refused:
        supabase_client(stack_env, key).rpc("claim_document_jobs", {"p_kind": "fetch_email"}).execute()
    assert refused.value.code == "PGRST301"
    both = {"apikey": key, "Authorization": f"Bearer {key}", "Content-Type": "application/pdf"}
    upload = http.post(upload_path(folder), content=b"%PDF", headers=both)
    refusal = {"statusCode": "403", "code": "InvalidJWT", "error": "Unauthorized", "message": "Invalid Compact JWS"}
    assert (upload.status_code, upload.json()) == (400, refusal)


def test_a_publishable_key_is_anon_and_with_a_users_jwt_authenticated(
    stack_env: dict[str, str], http: httpx.Client
) -> None:
    publishable = {"apikey": stack_env["SUPABASE_PUBLISHABLE_KEY"]}
    as_anon = http.post(CLAIM, json={"p_kind": "fetch_email"}, headers=publishable)
    assert (as_anon.status_code, as_anon.json()["code"]) == (401, "42501")  # PostgREST's answer to anon
    user = {**publishable, "Authorization": f"Bearer {role_key(stack_env, 'authenticated', sub=str(uuid.uuid4()))}"}
    as_user = http.post(CLAIM, json={"p_kind": "fetch_email"}, headers=user)
    assert (as_user.status_code, as_user.json()["code"]) == (403, "42501")


@pytest.mark.parametrize("key", ["sb_secret_not-this-projects", "sb_publishable_not-this-projects", "OTHER-JWT", "x"])
def test_a_key_the_project_does_not_have_is_401_on_every_path(
    key: str, stack_env: dict[str, str], http: httpx.Client, folder: str
) -> None:
    if key == "OTHER-JWT":
        key = jwt.encode({"role": "service_role"}, "another-secret-that-is-long-enough-for-hs256")
    for answer in (http.post(CLAIM, json={"p_kind": "fetch_email"}, headers={"apikey": key}),
                   http.post(upload_path(folder), content=b"%PDF", headers={"apikey": key})):  # fmt: skip
        assert gateway_refusal(answer, "Invalid API key"), answer.text


def test_without_an_apikey_only_signed_urls_are_served(
    stack_env: dict[str, str], http: httpx.Client, folder: str
) -> None:
    legacy = {"Authorization": f"Bearer {stack_env['DEVSTACK_LEGACY_SERVICE_ROLE_KEY']}"}
    for answer in (http.post(CLAIM, json={"p_kind": "fetch_email"}, headers=legacy),
                   http.post(upload_path(folder), content=b"%PDF", headers=legacy)):  # fmt: skip
        assert gateway_refusal(answer, "No API key found in request"), answer.text
        assert answer.headers["sb-error-code"] == "UNAUTHORIZED_MISSING_API_KEY"
    signed = http.get(f"/storage/v1/object/sign/{BUCKET}/{folder}/k.pdf?token=x")
    assert storage_error(signed)[1] == "Invalid JWT"  # Storage's own answer: the gateway let it through


def test_a_secret_key_from_a_browser_is_401_and_a_publishable_key_is_not(
    stack_env: dict[str, str], http: httpx.Client, folder: str
) -> None:
    secret = {"apikey": stack_env["SUPABASE_SECRET_KEY"], "User-Agent": BROWSER}
    for answer in (http.post(CLAIM, json={"p_kind": "fetch_email"}, headers=secret),
                   http.post(upload_path(folder), content=b"%PDF", headers=secret)):  # fmt: skip
        assert gateway_refusal(answer, "Forbidden use of secret API key in browser"), answer.text
    publishable = {"apikey": stack_env["SUPABASE_PUBLISHABLE_KEY"], "User-Agent": BROWSER}
    assert http.post(CLAIM, json={"p_kind": "fetch_email"}, headers=publishable).json()["code"] == "42501"


def test_a_new_key_beside_an_authorization_that_is_no_jwt_is_refused(
    stack_env: dict[str, str], http: httpx.Client, folder: str
) -> None:
    secret, publishable = stack_env["SUPABASE_SECRET_KEY"], stack_env["SUPABASE_PUBLISHABLE_KEY"]
    for apikey, authorization in ((secret, f"Bearer {publishable}"), (publishable, f"Bearer {secret}"),
                                  (secret, "Bearer not-a-key"), (publishable, f"Basic {publishable}")):  # fmt: skip
        headers = {"apikey": apikey, "Authorization": authorization}
        for answer in (http.post(CLAIM, json={"p_kind": "fetch_email"}, headers=headers),
                       http.post(upload_path(folder), content=b"%PDF", headers=headers)):  # fmt: skip
            assert gateway_refusal(answer, "Invalid authorization header"), answer.text


# --- the database restarts under the gateway (PostgREST: references/connection_pool, "Automatic Recovery")

READ = "/rest/v1/document_jobs?select=id&limit=1"
POOL_MAX = 20  # devstack/standins/gateway.py


def authenticator_connections(admin: psycopg.Connection[dict]) -> int:
    return admin.execute("select count(*) as n from pg_stat_activity where usename = 'authenticator'").fetchone()["n"]


@pytest.mark.slow  # stops and restarts the stack's database
def test_while_its_database_restarts_the_gateway_answers_503_and_then_uses_new_connections(
    stack_env: dict[str, str],
) -> None:
    from devstack import stack

    headers = service_headers(stack_env)
    # A client that gives up well before PostgREST's 10 s pool timeout: no request may wait on a dead connection.
    with httpx.Client(base_url=stack_env["SUPABASE_URL"], timeout=5, headers=headers) as http:
        # Grow the pool to its most: reads held by a lock until every one has a connection of its own.
        with psycopg.connect(stack_env["DEVSTACK_ADMIN_DATABASE_URL"], row_factory=dict_row) as locker, \
                ThreadPoolExecutor(POOL_MAX) as threads:  # fmt: skip
            locker.execute("lock table public.document_jobs in access exclusive mode")
            held = [threads.submit(httpx.get, stack_env["SUPABASE_URL"] + READ, headers=headers, timeout=60)
                    for _ in range(POOL_MAX)]  # fmt: skip
            with psycopg.connect(stack_env["DEVSTACK_ADMIN_DATABASE_URL"], autocommit=True, row_factory=dict_row) as a:
                deadline = time.monotonic() + 30
                while authenticator_connections(a) < POOL_MAX and time.monotonic() < deadline:
                    time.sleep(0.1)
                assert authenticator_connections(a) >= POOL_MAX, "the pool grew to its most"
            locker.rollback()
            assert [future.result().status_code for future in held] == [200] * POOL_MAX

        database = stack.attach(stack_env["DEVSTACK_FOLDER"]).database
        database.stop_server()
        try:
            down = [http.get(READ) for _ in range(3)]
        finally:
            database.start_server()
        back = http.get(READ)
        with ThreadPoolExecutor(POOL_MAX) as threads:
            burst = list(threads.map(lambda _: http.get(READ), range(2 * POOL_MAX)))

    for answer in down:
        assert answer.status_code == 503, answer.text
        assert answer.json()["code"] in ("PGRST000", "PGRST001"), answer.json()
        assert answer.json()["message"].endswith("Retrying the connection.")
        assert int(answer.headers["Retry-After"]) >= 1
    assert down[-1].json()["code"] == "PGRST000", "no connection can be made while the server is down"
    assert back.status_code == 200, back.text
    assert [answer.status_code for answer in burst] == [200] * 2 * POOL_MAX
    log = Path(stack_env["DEVSTACK_FOLDER"], "gateway.log").read_text()
    assert "pooled connections are discarded" in log and "new connections" in log

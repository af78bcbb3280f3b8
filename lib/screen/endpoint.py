"""What api/admin.py does with a request: the admin screen's page and its JSON API.

GET  /admin                                    the page (lib/screen/page.py)
GET  /api/admin/me                             the operator and their role
GET  /api/admin/overview                       jobs by state, failures, hourly series, outages
GET  /api/admin/faxes?from=&to=&sender=&line=&q=&handling=&assignee=&date_from=&date_to=&amount_min=&amount_max=
                    &counterparty=&type=&after_time=&after_id=&limit=
                                               the inbox, and the law's search by the index fields
GET  /api/admin/faxes/<id>                     a fax: its facts, documents (signed view URLs), jobs
POST /api/admin/faxes/<id>/rotation {"rotation"}              clerks and admins: remembered, audited
POST /api/admin/faxes/<id>/index {"values", "reason"?, "version"}  clerks and admins: the index fields, with history
POST /api/admin/faxes/<id>/deletion {"reason"}               admins, past the keep-until date: recorded, deleted
GET  /api/admin/jobs?state=&kind=&code=&from=&to=&sender=&q=&queue_jobs=&after_time=&after_id=&limit=
GET  /api/admin/jobs/<id>                      a job, its attempts, e-mail and attachments
GET  /api/admin/audit?before=&limit=
GET  /api/admin/faxes/<id>/handling                           who is dealing with a fax (its e-mail's id), its marks
POST /api/admin/jobs/<id>/retry     {"reason"?}               admins
POST /api/admin/jobs/<id>/cancel    {"reason"}                admins
POST /api/admin/bulk                {"action", "query"}       admins: count the jobs and keep their ids
POST /api/admin/bulk/<id>/apply     {"reason"}                admins: batches, for up to 8 s a call
POST /api/admin/faxes/<id>/handling {"state", "from"?, "note"?}  clerks and admins: mark a fax
POST /api/admin/handling/bulk       {"scope", "query"}        clerks and admins: count the faxes to mark done
POST /api/admin/handling/bulk/<id>/apply {"note"}             clerks and admins: mark them done, in batches
POST /api/admin/attachments/<id>/download                     a signed Storage URL, valid 60 s
POST /api/admin/operators/invite {"email", "role", "redirect_to"}   admins: Auth e-mails an invitation
POST /api/admin/operators/reset-password {"email", "redirect_to"}   admins: Auth e-mails a recovery link

Every API request carries the operator's access token (Authorization: Bearer); it is verified on
every request. Every read is one call of a document_jobs_operator_* function with the token's user
id and session id, which checks in the same statement that the session is live, the user neither
deleted nor banned, and their role as stored now allows the view (401 session_ended, 403 no_role
otherwise); before any action the operator's role is also confirmed with Auth (lib/screen/auth.py),
and the action's own database call checks Auth's row of the user again (not deleted, not banned,
an admin, or for a mark an admin or a clerk: document_jobs_internal.acting_operator; 401
session_ended, 403 not_admin or read_only otherwise). Viewers read; clerks read and mark faxes;
only admins act on jobs (403 otherwise). The accounts' two calls use Auth's admin API with the
server key, here on the server only (lib/screen/accounts.py, as the CLI's operators invite and
reset-password); the page never holds that key. Answers are JSON with
Cache-Control: no-store, and a Server-Timing header (total, and the database's share).
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import httpx

from lib import log
from lib.attachment_names import download_name
from lib.errors import DatabaseError, Refusal
from lib.http_shell import Reply, json_reply
from lib.screen import calls
from lib.settings import AdminSettings, ConfigError
from lib.storable import is_storable
from lib.supabase.rpc import Executable, execute

if TYPE_CHECKING:
    from lib.screen.auth import Operator, Role
    from supabase import Client

MAX_BODY_BYTES = 64 * 1024
APPLY_BUDGET_S = 8.0  # one apply call's batches; the page calls again until done (maxDuration 60 s)
BULK_BATCH_SIZE = 500
SIGNED_URL_SECONDS = 60
# A thumbnail or a page to view: the list and the viewer may stay open a while before they load them.
SIGNED_VIEW_SECONDS = 600
LIST_LIMIT, MAX_LIST_LIMIT = 50, 200
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
API_HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
# The list's query parameters and the filter keys of document_jobs_internal.job_filter (calls.FILTER_KEYS).
FILTER_PARAMETERS = {
    "kind": "kind", "code": "error_code", "from": "received_from", "to": "received_to", "sender": "sender", "q": "q",
}  # fmt: skip
# The inbox's query parameters and the keys of document_jobs_internal.faxes_filter (calls.FAX_FILTER_KEYS).
FAX_FILTER_PARAMETERS = {
    "from": "received_from", "to": "received_to", "sender": "sender", "line": "line", "q": "q",
    # The law's search, by the index fields (document_jobs_internal.faxes_index_filter).
    "date_from": "date_from", "date_to": "date_to", "amount_min": "amount_min", "amount_max": "amount_max",
    "counterparty": "counterparty", "type": "doc_type",
}  # fmt: skip
# Who may enter a fax's index fields (public.set_fax_index checks the same in Auth's row): who marks it.
INDEXERS: tuple[Role, ...] = ("admin", "clerk")


@dataclass
class Call:
    """One request as the API sees it, and the time its database calls took."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: Mapping[str, str]
    read_body: Callable[[int], bytes]
    started: float = field(default_factory=time.monotonic)
    database_s: float = 0.0

    def first(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None

    def body(self) -> dict[str, Any]:
        raw = self.read_body(MAX_BODY_BYTES)
        if not raw.strip():
            return {}
        try:
            body = json.loads(raw)
        except ValueError:
            raise Refusal("malformed_json", "the body is not valid JSON", 400) from None
        if not isinstance(body, dict):
            raise Refusal("malformed_json", "the body must be a JSON object", 400)
        check_text(body, "the body")
        return body


def check_text(value: Any, where: str) -> None:
    """A 400 `bad_text` for text the database cannot store (U+0000, or a lone surrogate, which JSON
    can spell as \\ud800) anywhere in a query or a body: sent on, it would fail in the database
    (a 503 and an ERROR line that anyone signed in could cause at will)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str) and not is_storable(item):
            raise Refusal("bad_text", f"{where} holds U+0000 or a lone surrogate, which no text may hold", 400)
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


@dataclass
class Context:
    """What a handler works with: settings, one HTTP client for Supabase, the operator and their token."""

    call: Call
    settings: AdminSettings
    http: httpx.Client
    operator: Operator
    token: str
    _client: Client | None = None

    @property
    def client(self) -> Client:
        # supabase-py is the heaviest import: only requests that reach the database pay for it.
        from lib.supabase.client import service_client

        if self._client is None:
            self._client = service_client(self.settings, self.http)
        return self._client

    def read(self, what: str, request: Callable[[Client], Executable]) -> Any:
        """One database call (an RPC, a table read), timed for Server-Timing; a Refusal when it fails."""
        client = self.client  # its import is not the database's time
        started = time.monotonic()
        try:
            return execute(what, request(client))
        except DatabaseError as error:
            raise database_refusal(error) from None
        finally:
            self.call.database_s += time.monotonic() - started

    def rpc(self, function: str, params: dict[str, Any]) -> Any:
        return self.read(function, lambda client: client.rpc(function, params))

    def viewer(self) -> calls.Viewer:
        """The operator's user and session, for a read that checks both in its own database call."""
        if self.operator.session_id is None or not _UUID.match(self.operator.session_id):
            raise Refusal("session_ended", "your access token names no session: sign in again", 401)
        return self.operator.user_id, self.operator.session_id

    def operator_rpc(self, function: str, params: dict[str, Any]) -> Any:
        """A document_jobs_operator_* function: the view, for the operator as Auth stores them now."""
        user_id, session_id = self.viewer()
        return self.rpc(function, {"p_user_id": user_id, "p_session_id": session_id, **params})

    def require_indexer(self) -> Operator:
        """A clerk or an admin, who may enter a fax's index fields, confirmed with Auth now."""
        return self._require(INDEXERS)

    def require_admin(self) -> Operator:
        from lib.screen.auth import ADMIN_ONLY

        return self._require(ADMIN_ONLY)

    def require_marker(self) -> Operator:
        """A clerk or an admin, who may mark who is dealing with a fax."""
        from lib.screen.auth import MARKERS

        return self._require(MARKERS)

    def _require(self, allowed: tuple[Role, ...]) -> Operator:
        from lib.screen.auth import confirm_role, role_refusal

        if self.operator.role not in allowed:
            raise role_refusal(self.operator.role, allowed)
        return confirm_role(self.operator, self.token, self.settings, self.http, allowed)


# The caller's input, refused by the database: invalid parameter, datetime format or field,
# text representation, untranslatable character, character not in repertoire, value out of range.
_BAD_INPUT = ("22023", "22007", "22008", "22P02", "22P05", "22021", "22003")


def database_refusal(error: DatabaseError) -> Refusal:
    """The database's refusal as the operator should see it; its message never holds a secret."""
    if error.code == "22023" and error.hint == "reason_required":  # a correction of an index field (set_fax_index)
        return Refusal("reason_required", error.message, 400)
    if error.code in _BAD_INPUT:
        return Refusal("bad_request", error.message, 400)
    # The document_jobs_operator_* functions' refusals (document_jobs_internal.operator_role).
    if error.code == "28000" and error.hint == "session_ended":
        return Refusal("session_ended", "your session has ended: sign in again", 401)
    if error.code == "42501" and error.hint == "no_role":
        return Refusal("no_role", "this account has no role on the admin screen (ask an admin)", 403)
    # An action's own check of its operator in Auth's row (document_jobs_internal.acting_operator): banned,
    # deleted or no longer of a role that may since confirm_role asked Auth (a mark's handler says
    # read_only for a role that may not mark).
    if error.code == "28000" and error.hint in ("operator_banned", "operator_deleted"):
        return Refusal("session_ended", "your session has ended: sign in again", 401)
    if error.code == "42501" and error.hint == "role_not_allowed":
        return Refusal("not_admin", "only an admin may do this", 403)
    if error.code == "42501":
        return Refusal("forbidden", error.message, 403)
    if error.code == "P0002":
        return Refusal("not_found", error.message, 404)
    # A deletion refused (public.admin_delete_fax): before the keep-until date, or while a job of the fax is live.
    if error.code == "55000" and error.hint == "retention_not_over":
        return Refusal("retention_not_over", error.message, 409)
    if error.code == "55000" and error.hint == "jobs_live":
        return Refusal("jobs_live", error.message, 409)
    log.event("admin_database_error", logging.ERROR, what=error.what, code=error.code, message=error.message)
    return Refusal("database_unavailable", "the database did not answer as expected; try again", 503)


def handle(method: str, target: str, headers: Mapping[str, str], read_body: Callable[[int], bytes]) -> Reply:
    url = urlsplit(target)
    call = Call(method, url.path.rstrip("/") or "/", parse_qs(url.query), headers, read_body)
    try:
        settings = AdminSettings.load()
    except ConfigError as error:
        log.event("admin_misconfigured", logging.ERROR, error=str(error))
        return json_reply(500, {"error": "misconfigured", "message": "the admin screen is not configured"}, API_HEADERS)
    if call.path == "/admin":
        if method != "GET":
            return json_reply(405, {"error": "method_not_allowed"}, {"Allow": "GET"})
        from lib.screen.page import page

        return page(settings.supabase_url, settings.browser_key)
    try:
        body = api(call, settings)
        status = 200
    except Refusal as refusal:
        body = refusal.body()
        status = refusal.status
    total_ms = (time.monotonic() - call.started) * 1000
    timing = f"app;dur={total_ms:.1f}, db;dur={call.database_s * 1000:.1f}"
    extra = {"WWW-Authenticate": f'Bearer error="invalid_token", error_description="{body["error"]}"'} if (
        status == 401) else {}  # fmt: skip
    return json_reply(status, body, {**API_HEADERS, "Server-Timing": timing, **extra})


def api(call: Call, settings: AdminSettings) -> dict[str, Any]:
    route = ROUTES.get((call.method, _route_key(call.path)))
    if route is None:
        if any(key == _route_key(call.path) for _, key in ROUTES):
            raise Refusal("method_not_allowed", f"{call.method} is not allowed here", 405)
        raise Refusal("not_found", "no such page of the admin API", 404)
    from lib.screen.auth import authenticate
    from lib.supabase.client import http_client

    with http_client() as http:
        operator, token = authenticate(call.headers.get("authorization"), settings, http)
        check_text(call.query, "the query")
        return route(Context(call, settings, http, operator, token))


def _route_key(path: str) -> str:
    """/api/admin/jobs/<uuid>/retry -> jobs/{id}/retry"""
    parts = path.removeprefix("/api/admin").strip("/").split("/")
    return "/".join("{id}" if _UUID.match(part) else part for part in parts)


def _id(call: Call) -> str:
    return next(part for part in call.path.split("/") if _UUID.match(part))


# -- reading ------------------------------------------------------------------------------------


def me(context: Context) -> dict[str, Any]:
    """The operator (their e-mail and role as Auth stores them now), what the page's filters
    offer (the job kinds, and the error codes jobs can have), and the office's time zone, which
    the inbox's day shortcuts and typed dates mean (office_settings.time_zone)."""
    from lib.failures import FailureCode

    found: dict[str, Any] = context.operator_rpc("document_jobs_operator_me", {})
    [office] = context.read("office_settings", lambda client: client.table("office_settings").select("time_zone"))
    return {
        "time_zone": office["time_zone"],
        "user_id": found["user_id"],
        "email": found["email"],
        "role": found["role"],
        "kinds": found["kinds"],
        # The worker's codes, and the two the database itself writes (the sweep, a cancellation).
        "error_codes": sorted({code.value for code in FailureCode} | {"cancelled", "lease_expired"}),
    }


def overview(context: Context) -> dict[str, Any]:
    return calls.overview(context.rpc, context.viewer())


def jobs_filter(query: Mapping[str, list[str]]) -> dict[str, Any]:
    """The list's query parameters as a filter of document_jobs_internal.job_filter, which checks it."""
    check_text(query, "the filter")
    found: dict[str, Any] = {}
    states = [state for state in query.get("state", []) if state]
    if states:
        found["states"] = states
    for parameter, key in FILTER_PARAMETERS.items():
        values = [value for value in query.get(parameter, []) if value.strip()]
        if values:
            found[key] = values[0]
    # The screen's jobs console leaves the queue's own jobs (reconciliation's) out unless asked.
    if (query.get("queue_jobs") or [""])[0] == "hide":
        found["fax_jobs_only"] = True
    return found


# The inbox's handling filter: a state, or "open" (not done: new or in progress).
HANDLING_FILTERS = {"open": ["new", "in_progress"], **{state: [state] for state in calls.HANDLING_STATES}}


def faxes_filter(query: Mapping[str, list[str]], operator: Operator | None = None) -> dict[str, Any]:
    """The inbox's query parameters as a filter of document_jobs_internal.faxes_filter; the
    assignee "me" is the operator asking."""
    check_text(query, "the filter")
    found: dict[str, Any] = {}
    for parameter, key in FAX_FILTER_PARAMETERS.items():
        values = [value for value in query.get(parameter, []) if value.strip()]
        if values:
            found[key] = values[0]
    handling = (query.get("handling") or [""])[0]
    if handling:
        if handling not in HANDLING_FILTERS:
            raise Refusal("bad_request", "handling must be open, new, in_progress or done", 400)
        found["handling"] = HANDLING_FILTERS[handling]
    assignee = (query.get("assignee") or [""])[0].strip()
    if assignee:
        if assignee == "me" and (operator is None or not operator.email):
            raise Refusal("bad_request", "assignee=me names no one: this account has no e-mail", 400)
        found["assignee"] = operator.email if assignee == "me" and operator is not None else assignee
    return calls.fax_filter(found)


def jobs(context: Context) -> dict[str, Any]:
    call = context.call
    limit = _int(call.first("limit"), LIST_LIMIT, 1, MAX_LIST_LIMIT, "limit")
    after_time, after_id = _cursor(call)
    return calls.jobs(context.rpc, jobs_filter(call.query), after_time, after_id, limit, context.viewer())


def _cursor(call: Call) -> tuple[str | None, str | None]:
    after_time, after_id = call.first("after_time"), call.first("after_id")
    if (after_time is None) != (after_id is None) or (after_id is not None and not _UUID.match(after_id)):
        raise Refusal("bad_cursor", "after_time and after_id go together, after_id an id", 400)
    if after_time is not None and not _is_timestamp(after_time):
        raise Refusal("bad_cursor", "after_time must be an ISO 8601 time with its offset, as a page gave it", 400)
    return after_time, after_id


def _storage(context: Context, bucket: str) -> Any:
    from lib.supabase.storage import Storage

    return Storage(context.http, context.settings.supabase_url, context.settings.server_key, bucket)


def _signed(context: Context, wanted: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """View URLs (no download name) for (bucket, key) pairs, one Storage request per bucket; a
    thumbnail that cannot be signed now is left out (the page shows none), never the whole page."""
    from lib.supabase.storage import StorageError

    signed: dict[tuple[str, str], str] = {}
    for bucket in sorted({b for b, _ in wanted}):
        keys = sorted({k for b, k in wanted if b == bucket})
        try:
            urls = _storage(context, bucket).signed_urls(keys, SIGNED_VIEW_SECONDS)
        except StorageError as error:
            log.event("admin_sign_failed", logging.WARNING, status=error.status, count=len(keys))
            continue
        signed.update({(bucket, key): url for key, url in urls.items()})
    return signed


def faxes(context: Context) -> dict[str, Any]:
    call = context.call
    limit = _int(call.first("limit"), LIST_LIMIT, 1, MAX_LIST_LIMIT, "limit")
    after_time, after_id = _cursor(call)
    page = calls.faxes(context.rpc, faxes_filter(call.query, context.operator), after_time, after_id, limit,
                       context.viewer())  # fmt: skip
    thumbnails = [(t["bucket"], t["path"]) for fax in page["faxes"] if (t := fax.get("thumbnail"))]
    signed = _signed(context, thumbnails)
    for fax in page["faxes"]:
        thumbnail = fax.pop("thumbnail", None)
        fax["thumbnail_url"] = signed.get((thumbnail["bucket"], thumbnail["path"])) if thumbnail else None
    return page


# What the viewer draws of an attachment: its viewing PDF when the job made one (a TIFF), else the
# original when the browser draws it (PDF.js for a PDF, an image element for a JPEG or PNG).
_DRAWN_AS_IS = {"application/pdf": "pdf", "image/jpeg": "picture", "image/png": "picture"}


def fax(context: Context) -> dict[str, Any]:
    found = calls.fax(context.rpc, _id(context.call), context.viewer())
    if found is None:
        raise Refusal("not_found", "no such fax", 404)
    wanted: list[tuple[str, str]] = []
    for attachment in found["attachments"]:
        kind = "pdf" if attachment.get("view_path") else _DRAWN_AS_IS.get(attachment.get("content_type") or "")
        if attachment.get("view_error_code"):
            kind = None  # a file PDF.js or PDFium could not read: listed and downloadable, not drawn
        attachment["view_kind"] = kind or "none"
        if kind:
            attachment["view_key"] = attachment.get("view_path") or attachment["storage_path"]
            wanted.append((attachment["bucket"], attachment["view_key"]))
        if attachment.get("thumbnail_path"):
            wanted.append((attachment["bucket"], attachment["thumbnail_path"]))
    thumbnail = found["fax"].pop("thumbnail", None)
    if thumbnail:
        wanted.append((thumbnail["bucket"], thumbnail["path"]))
    signed = _signed(context, wanted)
    found["fax"]["thumbnail_url"] = signed.get((thumbnail["bucket"], thumbnail["path"])) if thumbnail else None
    for attachment in found["attachments"]:
        bucket = attachment.pop("bucket")
        view_key = attachment.pop("view_key", None)
        attachment["view_url"] = signed.get((bucket, view_key)) if view_key else None
        if view_key and attachment["view_url"] is None:
            attachment["view_kind"] = "none"
        thumbnail_path = attachment.pop("thumbnail_path", None)
        attachment["thumbnail_url"] = signed.get((bucket, thumbnail_path)) if thumbnail_path else None
        # Where the objects are is the server's: the page asks for a download by the attachment's id.
        attachment.pop("storage_path", None)
        attachment.pop("view_path", None)
    found.pop("own_numbers", None)
    return found


def job(context: Context) -> dict[str, Any]:
    found = calls.job(context.rpc, _id(context.call), context.viewer())
    if found is None:
        raise Refusal("not_found", "no such job", 404)
    return found


def audit(context: Context) -> dict[str, Any]:
    before = context.call.first("before")
    return calls.audit(
        context.rpc,
        _int(before, None, 1, 2**62, "before") if before is not None else None,
        _int(context.call.first("limit"), LIST_LIMIT, 1, MAX_LIST_LIMIT, "limit"),
        context.viewer(),
    )


def download(context: Context) -> dict[str, Any]:
    """A signed Storage URL for one stored attachment, valid for a minute, that downloads it under
    its name made safe (lib/attachment_names.py: the sender's, with the stored type's extension),
    the name the job's page shows. Readers may download; the URL is made for the asking operator only."""
    from lib.supabase.storage import Storage, StorageError

    attachment_id = _id(context.call)
    row: dict[str, Any] | None = context.operator_rpc("document_jobs_operator_attachment",
                                                      {"p_attachment_id": attachment_id})  # fmt: skip
    if row is None:
        raise Refusal("not_found", "no such attachment", 404)
    storage = Storage(context.http, context.settings.supabase_url, context.settings.server_key, row["bucket"])
    name = download_name(row["filename"], row["content_type"])
    try:
        url = storage.signed_url(row["storage_path"], SIGNED_URL_SECONDS, download_as=name)
    except StorageError as error:
        if error.status is None:
            raise Refusal("storage_unavailable", "Storage could not be reached; try again", 503) from None
        log.event("admin_sign_failed", logging.ERROR, status=error.status)
        raise Refusal("storage_unavailable", f"Storage refused to sign the URL ({error.status})", 503) from None
    return {"url": url, "expires_in": SIGNED_URL_SECONDS}


# -- acting -------------------------------------------------------------------------------------


def reason(body: dict[str, Any], required: bool) -> str | None:
    value = body.get("reason")
    if value is not None and not isinstance(value, str):
        raise Refusal("bad_request", "reason must be text", 400)
    if required and not (value or "").strip():
        raise Refusal("bad_request", "give a reason", 400)
    return value


def retry(context: Context) -> dict[str, Any]:
    body = context.call.body()
    who = context.require_admin()
    result = calls.retry(context.rpc, _id(context.call), who.user_id, who.email, reason(body, required=False))
    return _changed_or_conflict(result)


def cancel(context: Context) -> dict[str, Any]:
    body = context.call.body()
    text = reason(body, required=True)
    who = context.require_admin()
    assert text is not None  # required
    return _changed_or_conflict(calls.cancel(context.rpc, _id(context.call), who.user_id, who.email, text))


def rotation(context: Context) -> dict[str, Any]:
    body = context.call.body()
    value = body.get("rotation")
    if value not in (0, 90, 180, 270) or isinstance(value, bool):
        raise Refusal("bad_request", "rotation must be 0, 90, 180 or 270", 400)
    who = context.require_indexer()  # the clerks read the faxes, and turn the sideways ones for everyone
    return calls.set_rotation(context.rpc, _id(context.call), int(value), who.user_id, who.email)


# -- accounts (Supabase Auth) -------------------------------------------------------------------

MAX_EMAIL_LENGTH = 255  # Auth's own limit (GoTrue's validateEmail)
MAX_URL_LENGTH = 2048


def _account_email(body: dict[str, Any]) -> str:
    value = body.get("email")
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_EMAIL_LENGTH or "@" not in value:
        raise Refusal("bad_request", "email must be an e-mail address", 400)
    return value.strip().lower()


def _redirect_to(body: dict[str, Any]) -> str | None:
    """Where Auth's link returns: the screen's own URL, as the page gives it; Auth itself accepts it
    only among the project's Redirect URLs (else its Site URL)."""
    value = body.get("redirect_to")
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_URL_LENGTH or not re.match(r"https?://[^\s]+$", value):
        raise Refusal("bad_request", "redirect_to must be an http(s) URL", 400)
    return value


def _auth_call(call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Auth's admin API's call (lib/screen/accounts.py); past Auth's e-mail limits, the screen's own code."""
    try:
        return call()
    except Refusal as refusal:
        if refusal.code == "auth_refused" and refusal.details.get("auth_code") == "over_email_send_rate_limit":
            raise Refusal("email_rate_limited", refusal.message, 429) from None
        raise


def invite_operator(context: Context) -> dict[str, Any]:
    from lib.screen import accounts
    from lib.screen.auth import ROLES

    body = context.call.body()
    email, redirect_to, role = _account_email(body), _redirect_to(body), body.get("role")
    if role not in ROLES:
        raise Refusal("bad_request", f"role must be one of {', '.join(ROLES)}", 400)
    context.require_admin()
    admin = accounts.AuthAdmin(context.http, context.settings)
    user = _auth_call(lambda: accounts.invite(admin, email, str(role), redirect_to))
    log.event("operator_invited", logging.INFO, by=context.operator.user_id, user=user["id"], role=role)
    return {"email": user["email"], "role": role}


def reset_operator_password(context: Context) -> dict[str, Any]:
    from lib.screen import accounts

    body = context.call.body()
    email, redirect_to = _account_email(body), _redirect_to(body)
    context.require_admin()
    admin = accounts.AuthAdmin(context.http, context.settings)
    user = _auth_call(lambda: accounts.reset_password(admin, email, redirect_to))
    log.event("operator_password_reset_sent", logging.INFO, by=context.operator.user_id, user=user["id"])
    return {"email": user["email"]}


def index(context: Context) -> dict[str, Any]:
    """A fax's index fields entered or corrected; a correction needs a reason (the database says
    which: 400 bad_request); a write made since the page read its version is a 409 index_changed."""
    body = context.call.body()
    values, version = body.get("values"), body.get("version")
    if not isinstance(values, dict) or not (
        version is None or (isinstance(version, int) and not isinstance(version, bool))
    ):
        raise Refusal("bad_request", 'give "values" (the index fields) and "version" (the one the page read)', 400)
    text = reason(body, required=False)
    who = context.require_indexer()
    result = calls.set_index(context.rpc, _id(context.call), values, text, version, who.user_id, who.email)
    if not result.get("changed") and result.get("reason") == "index_changed":
        raise Refusal("index_changed", "someone changed this fax's index since you opened it: reload to see it", 409)
    return result


def deletion(context: Context) -> dict[str, Any]:
    """A fax deleted after its keep-until date, with a reason: 409 retention_not_over before it (the
    date in the message), 409 jobs_live while a job of it is queued or running."""
    body = context.call.body()
    text = reason(body, required=True)
    who = context.require_admin()
    assert text is not None  # required
    return calls.delete_fax(context.rpc, _id(context.call), who.user_id, who.email, text)


def _changed_or_conflict(result: dict[str, Any]) -> dict[str, Any]:
    if not result.get("changed"):
        reason_code = str(result.get("reason"))
        raise Refusal(reason_code, {
            "not_failed": "this job is not failed (any more): only a failed job can be retried",
            "not_live": "this job is not queued or running (any more): only those can be cancelled",
            "another_live_job": "another job for the same e-mail is queued or running",
            "job_deleted": "this job no longer exists",
        }.get(reason_code, reason_code), 409)  # fmt: skip
    return result


def bulk_prepare(context: Context) -> dict[str, Any]:
    body = context.call.body()
    action, query = body.get("action"), body.get("query", "")
    if action not in ("retry", "cancel") or not isinstance(query, str):
        raise Refusal("bad_request", 'give "action" (retry or cancel) and "query" (the job list\'s filter)', 400)
    who = context.require_admin()
    # The very filter the list shows: the list's own query string, read by the list's own parser.
    return calls.prepare_bulk(context.rpc, action, jobs_filter(parse_qs(query.removeprefix("?"))), who.user_id,
                              who.email)  # fmt: skip


def bulk_apply(context: Context) -> dict[str, Any]:
    body = context.call.body()
    text = reason(body, required=False)
    who = context.require_admin()
    deadline = time.monotonic() + APPLY_BUDGET_S
    while True:
        progress = calls.apply_bulk(context.rpc, _id(context.call), who.user_id, text, BULK_BATCH_SIZE)
        if progress["done"] or time.monotonic() > deadline:
            return progress


# -- who is dealing with a fax -----------------------------------------------------------------------


def fax_handling(context: Context) -> dict[str, Any]:
    found = calls.fax_handling(context.rpc, _id(context.call), context.viewer())
    if found is None:
        raise Refusal("not_found", "no such fax", 404)
    return found


def _marking(act: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """A mark's call: the database's refusal of a role that may not (acting_operator) said as a mark's."""
    try:
        return act()
    except Refusal as refusal:
        if refusal.code == "not_admin":
            raise Refusal(
                "read_only", "this account may only read: marking a fax is for a clerk or an admin", 403
            ) from None
        raise


def mark(context: Context) -> dict[str, Any]:
    """One tap: the fax's state set (in_progress: the operator takes it), with its note; 409
    handling_changed, with the fax's handling now, when it moved on since the operator saw it."""
    body = context.call.body()
    state, seen, note = body.get("state"), body.get("from"), body.get("note")
    if state not in calls.HANDLING_STATES or (seen is not None and seen not in calls.HANDLING_STATES):
        raise Refusal("bad_request", '"state" (and "from", when given) must be new, in_progress or done', 400)
    if note is not None and not isinstance(note, str):
        raise Refusal("bad_request", "note must be text", 400)
    who = context.require_marker()
    result = _marking(lambda: calls.mark(context.rpc, _id(context.call), who.user_id, state, note, seen))
    if result.get("reason") == "handling_changed":
        raise Refusal(
            "handling_changed",
            "someone marked this fax since you saw it: here is how it stands now",
            409,
            handling=result["handling"],
        )
    return result


def handling_bulk_prepare(context: Context) -> dict[str, Any]:
    body = context.call.body()
    scope, query = body.get("scope", "jobs"), body.get("query", "")
    if scope not in ("faxes", "jobs") or not isinstance(query, str):
        raise Refusal("bad_request", 'give "scope" (faxes or jobs) and "query" (the inbox\'s or the job list\'s '
                      "filter)", 400)  # fmt: skip
    who = context.require_marker()
    # The very filter the list shows, read by the list's own parser.
    parsed = parse_qs(query.removeprefix("?"))
    found = faxes_filter(parsed, context.operator) if scope == "faxes" else jobs_filter(parsed)
    return _marking(lambda: calls.prepare_handling_bulk(context.rpc, scope, found, who.user_id))


def handling_bulk_apply(context: Context) -> dict[str, Any]:
    body = context.call.body()
    note = body.get("note")
    if note is not None and not isinstance(note, str):
        raise Refusal("bad_request", "note must be text", 400)
    who = context.require_marker()
    deadline = time.monotonic() + APPLY_BUDGET_S
    while True:
        progress = _marking(lambda: calls.apply_handling_bulk(context.rpc, _id(context.call), who.user_id, note,
                                                              BULK_BATCH_SIZE))  # fmt: skip
        if progress["done"] or time.monotonic() > deadline:
            return progress


ROUTES: dict[tuple[str, str], Callable[[Context], dict[str, Any]]] = {
    ("GET", "me"): me,
    ("GET", "overview"): overview,
    ("GET", "faxes"): faxes,
    ("GET", "faxes/{id}"): fax,
    ("POST", "faxes/{id}/rotation"): rotation,
    ("POST", "faxes/{id}/index"): index,
    ("POST", "faxes/{id}/deletion"): deletion,
    ("GET", "jobs"): jobs,
    ("GET", "jobs/{id}"): job,
    ("GET", "audit"): audit,
    ("POST", "jobs/{id}/retry"): retry,
    ("POST", "jobs/{id}/cancel"): cancel,
    ("POST", "bulk"): bulk_prepare,
    ("POST", "bulk/{id}/apply"): bulk_apply,
    ("POST", "attachments/{id}/download"): download,
    ("GET", "faxes/{id}/handling"): fax_handling,
    ("POST", "faxes/{id}/handling"): mark,
    ("POST", "handling/bulk"): handling_bulk_prepare,
    ("POST", "handling/bulk/{id}/apply"): handling_bulk_apply,
    ("POST", "operators/invite"): invite_operator,
    ("POST", "operators/reset-password"): reset_operator_password,
}


def _is_timestamp(text: str) -> bool:
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        return False
    return at.tzinfo is not None and 1 <= at.year <= 9999


def _int(text: str | None, default: int | None, low: int, high: int, name: str) -> int:
    if text is None:
        assert default is not None
        return default
    if not (text.isascii() and text.isdigit() and low <= int(text) <= high):
        raise Refusal("bad_request", f"{name} must be a whole number from {low} to {high}", 400)
    return int(text)

"""The admin screen's SQL functions, as both doors call them: the screen's API (lib/screen/endpoint.py)
and the operator CLI (lib/admin). Every call of these functions goes through here, so that a change
of their parameters is made once and both doors follow it.

`rpc` is the caller's own way of calling a function (its timing, its errors): each door keeps its
words for a refusal; what is asked, and with which parameters, is here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from lib.attachment_names import download_name

Rpc = Callable[[str, dict[str, Any]], Any]
# The screen's operator, from the verified token: their user id and session id. The screen's reads
# pass it, so that the same database call checks the session, the user and the role in Auth's own
# tables (document_jobs_operator_*); the CLI acts with the secret key and has no session, and reads
# document_jobs_admin_* (its operator's role is checked with Auth where it acts).
Viewer = tuple[str, str]


def _read(rpc: Rpc, functions: tuple[str, str], viewer: Viewer | None, params: dict[str, Any]) -> Any:
    """A view's read: `functions` is (the CLI's, the screen's), both named in full at each call so
    that a search for a function's name finds its caller."""
    cli, screen = functions
    if viewer is None:
        return rpc(cli, params)
    return rpc(screen, {"p_user_id": viewer[0], "p_session_id": viewer[1], **params})


# The keys of a filter (document_jobs_internal.job_filter checks and normalizes it): the list's,
# and the bulk actions', on the screen and on the command line alike.
FILTER_KEYS = ("states", "kind", "error_code", "received_from", "received_to", "sender", "q", "fax_jobs_only")
# The inbox's filter (document_jobs_internal.faxes_filter checks and normalizes it).
FAX_FILTER_KEYS = ("received_from", "received_to", "sender", "number", "line", "q", "date_from", "date_to",
                   "amount_min", "amount_max", "counterparty", "doc_type", "handling", "assignee")  # fmt: skip
# A fax's index fields (public.set_fax_index), and the document types it accepts
# (document_jobs_internal.fax_document_types: the database's list is the one that holds).
INDEX_FIELDS = ("transaction_date", "amount", "counterparty", "doc_type")
ACTIONS = ("retry", "cancel")


def job_filter(values: Mapping[str, Any]) -> dict[str, Any]:
    """A filter of these keys, those without a value left out."""
    unknown = set(values) - set(FILTER_KEYS)
    if unknown:
        raise ValueError(f"not a key of a job filter: {', '.join(sorted(unknown))}")
    return {key: value for key, value in values.items() if value not in (None, "", [])}


def overview(rpc: Rpc, viewer: Viewer | None = None) -> dict[str, Any]:
    answer: dict[str, Any] = _read(rpc, ("document_jobs_admin_overview", "document_jobs_operator_overview"), viewer, {})
    return answer


def jobs(
    rpc: Rpc,
    filter: Mapping[str, Any],
    after_created_at: str | None,
    after_id: str | None,
    limit: int,
    viewer: Viewer | None = None,
) -> dict[str, Any]:
    """A page of the job list: {"jobs", "next", "count", "partial", "searched_until"}."""
    page: dict[str, Any] = _read(rpc, ("document_jobs_admin_jobs", "document_jobs_operator_jobs"), viewer, {
        "p_filter": dict(filter), "p_after_created_at": after_created_at, "p_after_id": after_id, "p_limit": limit,
    })  # fmt: skip
    return page


def fax_filter(values: Mapping[str, Any]) -> dict[str, Any]:
    """An inbox filter of these keys, those without a value left out. A sender that is a number,
    or the start of one, as a clerk types it (full-width digits and hyphens too, "(03", "+81 3 1234") is looked for
    as the number's digits (lib/fax/senders.py search_digits), any other text as text."""
    from lib.fax.senders import search_digits

    unknown = set(values) - set(FAX_FILTER_KEYS)
    if unknown:
        raise ValueError(f"not a key of an inbox filter: {', '.join(sorted(unknown))}")
    found = {key: value for key, value in values.items() if value not in (None, "", [])}
    sender = found.get("sender")
    if isinstance(sender, str) and "number" not in found and (digits := search_digits(sender)) is not None:
        del found["sender"]
        found["number"] = digits
    return found


def sender_of(fax: Mapping[str, Any], own_numbers: set[str]) -> dict[str, Any]:
    """Who sent a fax, as the inbox shows it: what its subject and From name say
    (lib/fax/senders.py); for a subject of no known format, the From line's name (the sender's own
    mail), else its address. A station ID that is one of the office's own line numbers is the
    forwarding machine's, never the sender's: no number then."""
    from email.utils import parseaddr

    from lib.fax.senders import WITHHELD_LABELS, inert, parse_sender

    sender = parse_sender(fax.get("subject"), fax.get("from"))
    number, display = sender.number, sender.number_display
    if number is not None and sender.number_source == "station_id" and number in own_numbers:
        number = display = None
    name = sender.name
    if name is None and sender.format is None and fax.get("from"):
        shown_name, address = parseaddr(str(fax["from"]))
        name = inert(shown_name or address) or None
    return {
        "name": name,
        "number": number,
        "number_display": display,
        "withheld": WITHHELD_LABELS[sender.withheld] if sender.withheld else None,
        "format": sender.format,
        "part": sender.part.model_dump() if sender.part else None,
    }


def faxes(
    rpc: Rpc,
    filter: Mapping[str, Any],
    after_received_at: str | None,
    after_id: str | None,
    limit: int,
    viewer: Viewer | None = None,
) -> dict[str, Any]:
    """A page of the inbox: {"faxes", "next", "count", "count_capped", "partial", "searched_until",
    "filter", "lines"}, each fax with its sender as sender_of reads it."""
    page: dict[str, Any] = _read(rpc, ("document_jobs_admin_faxes", "document_jobs_operator_faxes"), viewer, {
        "p_filter": dict(filter), "p_after_received_at": after_received_at, "p_after_id": after_id, "p_limit": limit,
    })  # fmt: skip
    own = {line["number"] for line in page.get("lines") or [] if line.get("number")}
    for fax in page.get("faxes") or []:
        fax["sender"] = sender_of(fax, own)
    return page


def fax(rpc: Rpc, fax_id: str, viewer: Viewer | None = None) -> dict[str, Any] | None:
    """A fax, its attachments (each with its download name) and its jobs; None for no such fax."""
    found: dict[str, Any] | None = _read(rpc, ("document_jobs_admin_fax", "document_jobs_operator_fax"), viewer,
                                         {"p_fax_id": fax_id})  # fmt: skip
    if found is None:
        return None
    sender = found["fax"]["sender"] = sender_of(found["fax"], set(found.get("own_numbers") or []))
    found["counterparty_suggestions"] = counterparty_suggestions(rpc, sender, viewer)
    for attachment in found.get("attachments") or []:
        attachment["download_name"] = download_name(attachment.get("filename"), attachment.get("content_type"))
    return found


def counterparty_suggestions(rpc: Rpc, sender: Mapping[str, Any], viewer: Viewer | None = None) -> list[str]:
    """What the fax's page suggests as its counterparty (取引先): the counterparties entered before
    for faxes from the same number, the latest first, then the name the fax gives its sender."""
    suggested: list[str] = []
    number = sender.get("number")
    if isinstance(number, str) and 3 <= len(number) <= 20 and number.isascii() and number.isdigit():
        functions = ("document_jobs_admin_counterparties", "document_jobs_operator_counterparties")
        suggested += _read(rpc, functions, viewer, {"p_number": number}) or []
    name = sender.get("name")
    # A From line's bare address is no counterparty's name.
    if isinstance(name, str) and name.strip() and "@" not in name and name.strip() not in suggested:
        suggested.append(name.strip()[:200])
    return suggested


def set_index(
    rpc: Rpc,
    fax_id: str,
    values: Mapping[str, Any],
    reason: str | None,
    version: int | None,
    actor_id: str,
    actor_email: str | None,
) -> dict[str, Any]:
    """A fax's index fields set (all four; a missing one is empty), kept in its history:
    {"changed", "reason"?, "index", "version"}."""
    answer: dict[str, Any] = rpc("set_fax_index", {
        "p_actor_id": actor_id, "p_actor_email": actor_email, "p_fax_id": fax_id,
        "p_values": {key: values.get(key) for key in INDEX_FIELDS}, "p_reason": reason, "p_version": version,
    })  # fmt: skip
    return answer


def set_rotation(rpc: Rpc, fax_id: str, rotation: int, actor_id: str, actor_email: str | None) -> dict[str, Any]:
    """The rotation a fax is shown at, remembered and audited: {"changed", "rotation"}."""
    answer: dict[str, Any] = rpc("admin_set_fax_rotation", {
        "p_actor_id": actor_id, "p_actor_email": actor_email, "p_fax_id": fax_id, "p_rotation": rotation,
    })  # fmt: skip
    return answer


def delete_fax(rpc: Rpc, fax_id: str, actor_id: str, actor_email: str | None, reason: str) -> dict[str, Any]:
    """A fax deleted after its keep-until date by an admin, what went recorded first in fax_deletions:
    {"deletion_id", "fax_received_email_id", "keep_until", "objects"} (the objects stay in Storage
    until document-jobs-admin purge-deleted)."""
    answer: dict[str, Any] = rpc("admin_delete_fax", {
        "p_actor_id": actor_id, "p_actor_email": actor_email, "p_fax_id": fax_id, "p_reason": reason,
    })  # fmt: skip
    return answer


def job(rpc: Rpc, job_id: str, viewer: Viewer | None = None) -> dict[str, Any] | None:
    """A job, its attempts, its e-mail and its attachments, each attachment with the name it is
    downloaded as (lib/attachment_names.py); None when there is no such job."""
    functions = ("document_jobs_admin_job", "document_jobs_operator_job")
    found: dict[str, Any] | None = _read(rpc, functions, viewer, {"p_job_id": job_id})
    if found is None:
        return None
    for attachment in found.get("attachments") or []:
        attachment["download_name"] = download_name(attachment.get("filename"), attachment.get("content_type"))
    return found


def audit(rpc: Rpc, before: int | None, limit: int, viewer: Viewer | None = None) -> dict[str, Any]:
    functions = ("document_jobs_admin_audit", "document_jobs_operator_audit")
    entries: dict[str, Any] = _read(rpc, functions, viewer, {"p_before": before, "p_limit": limit})
    return entries


def retry(rpc: Rpc, job_id: str, actor_id: str, actor_email: str | None, reason: str | None) -> dict[str, Any]:
    """One failed job queued again, audited, and a worker started for it: {"changed", "reason"?}."""
    answer: dict[str, Any] = rpc("admin_retry_document_job", {
        "p_job_id": job_id, "p_actor_id": actor_id, "p_actor_email": actor_email, "p_reason": reason,
    })  # fmt: skip
    return answer


def cancel(rpc: Rpc, job_id: str, actor_id: str, actor_email: str | None, reason: str) -> dict[str, Any]:
    """One queued or running job cancelled with a reason, audited: {"changed", "reason"?}."""
    answer: dict[str, Any] = rpc("admin_cancel_document_job", {
        "p_job_id": job_id, "p_actor_id": actor_id, "p_actor_email": actor_email, "p_reason": reason,
    })  # fmt: skip
    return answer


def prepare_bulk(
    rpc: Rpc, action: str, filter: Mapping[str, Any], actor_id: str, actor_email: str | None
) -> dict[str, Any]:
    """The jobs a filter matches that the action can change, counted and kept (a snapshot)."""
    prepared: dict[str, Any] = rpc("prepare_document_jobs_bulk_action", {
        "p_action": action, "p_filter": dict(filter), "p_actor_id": actor_id, "p_actor_email": actor_email,
    })  # fmt: skip
    return prepared


def apply_bulk(rpc: Rpc, bulk_action_id: str, actor_id: str, reason: str | None, batch_size: int) -> dict[str, Any]:
    """The next batch of a prepared bulk action, and where it stands."""
    progress: dict[str, Any] = rpc("apply_document_jobs_bulk_action", {
        "p_bulk_action_id": bulk_action_id, "p_actor_id": actor_id, "p_reason": reason, "p_batch_size": batch_size,
    })  # fmt: skip
    return progress


# -- who is dealing with a fax ----------------------------------------------------------------------

# A fax's handling states, in the order it goes through them (document_jobs_internal.handling_states).
HANDLING_STATES = ("new", "in_progress", "done")


def fax_handling(rpc: Rpc, email_id: str, viewer: Viewer | None = None) -> dict[str, Any] | None:
    """Who is dealing with a fax (its e-mail's id): its state, assignee, note and marks; None when
    there is no such fax."""
    functions = ("document_jobs_admin_fax_handling", "document_jobs_operator_fax_handling")
    found: dict[str, Any] | None = _read(rpc, functions, viewer, {"p_fax_received_email_id": email_id})
    return found


def mark(rpc: Rpc, email_id: str, actor_id: str, state: str, note: str | None,
         from_state: str | None) -> dict[str, Any]:  # fmt: skip
    """One fax marked by a clerk or an admin: {"changed", "reason"?, "handling"}."""
    answer: dict[str, Any] = rpc("mark_fax_handling", {
        "p_fax_received_email_id": email_id, "p_actor_id": actor_id, "p_state": state, "p_note": note,
        "p_from_state": from_state,
    })  # fmt: skip
    return answer


def prepare_handling_bulk(rpc: Rpc, scope: str, filter: Mapping[str, Any], actor_id: str) -> dict[str, Any]:
    """The faxes an inbox filter (scope "faxes") matches, or whose jobs a job filter ("jobs") matches,
    that are not done yet, counted and kept."""
    prepared: dict[str, Any] = rpc("prepare_fax_handling_bulk", {
        "p_scope": scope, "p_filter": dict(filter), "p_actor_id": actor_id,
    })  # fmt: skip
    return prepared


def apply_handling_bulk(rpc: Rpc, bulk_action_id: str, actor_id: str, note: str | None,
                        batch_size: int) -> dict[str, Any]:  # fmt: skip
    """The next batch of a counted bulk mark done, and where it stands."""
    progress: dict[str, Any] = rpc("apply_fax_handling_bulk", {
        "p_bulk_action_id": bulk_action_id, "p_actor_id": actor_id, "p_note": note, "p_batch_size": batch_size,
    })  # fmt: skip
    return progress

"""Only service_role reaches the queue: anon and authenticated are refused everywhere."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.operators import new_account

TABLES = [
    "document_jobs",
    "document_jobs_claimable",
    "document_job_kinds",
    "document_jobs_settings",
    "office_settings",
    "document_jobs_rate_limits",
    "fax_received_emails",
    "fax_received_email_attachments",
    "document_jobs_audit",
    "document_jobs_reconciliation",
    "fax_attachment_views",
    "fax_handling",
    "fax_handling_history",
    "fax_deletions",
    "fax_object_removals",
    "original_verification",
    "original_verify_runs",
    "original_verifications",
    "fax_received_email_raw_messages",
]
# One valid call of each function service_role may call (supabase/tests/003_api_surface.sql).
CALLS = {
    "claim_document_jobs": "select * from claim_document_jobs('fetch_email')",
    "extend_document_job_lease": "select extend_document_job_lease(gen_random_uuid(), 1)",
    "complete_document_job": "select complete_document_job(gen_random_uuid(), 1)",
    "fail_document_job": "select fail_document_job(gen_random_uuid(), 1, 'code')",
    "release_document_job": "select release_document_job(gen_random_uuid(), 1)",
    "retry_document_job": "select retry_document_job(gen_random_uuid())",
    "enqueue_document_job": "select * from enqueue_document_job('fetch_email', gen_random_uuid())",
    "record_inbound_email": "select * from record_inbound_email('em_sec', 'msg', '{}')",
    "invoke_document_jobs": "select invoke_document_jobs()",
    "purge_document_jobs": "select purge_document_jobs()",
    "cancel_document_job": "select cancel_document_job(gen_random_uuid())",
    "document_jobs_stats": "select document_jobs_stats()",
    "set_document_jobs_retention": "select set_document_jobs_retention('30 days')",
    "start_fetch_email": "select start_fetch_email(gen_random_uuid(), 1, 0)",
    "reserve_provider_request": "select reserve_provider_request('resend', 0)",
    "note_provider_rate_limit": "select note_provider_rate_limit('resend')",
    "complete_document_job_and_follow_up": "select complete_document_job_and_follow_up(gen_random_uuid(), 1)",
    "fail_document_job_and_follow_up": "select fail_document_job_and_follow_up(gen_random_uuid(), 1, 'code')",
    "release_document_job_and_follow_up": "select release_document_job_and_follow_up(gen_random_uuid(), 1)",
    # the fenced calls' v2 (the names above stay until a later migration drops them)
    "extend_document_job_lease_v2": "select extend_document_job_lease_v2(gen_random_uuid(), 1, '5 minutes')",
    "complete_document_job_v2": "select complete_document_job_v2(gen_random_uuid(), 1)",
    "complete_document_job_and_claim_next_v2":
        "select complete_document_job_and_claim_next_v2(gen_random_uuid(), 1, 'fetch_email', '5 minutes')",
    "record_document_attachment_v2": "select record_document_attachment_v2(gen_random_uuid(), 1, 'a', 'a.pdf',"
                                     " 'application/pdf', 1, '', 'fax-attachments', 'x/a.pdf')",
    "fail_document_job_v2": "select fail_document_job_v2(gen_random_uuid(), 1, 'code')",
    "release_document_job_v2": "select release_document_job_v2(gen_random_uuid(), 1)",
    "start_fetch_email_v2": "select start_fetch_email_v2(gen_random_uuid(), 1, 0)",
    "complete_document_job_and_follow_up_v2": "select complete_document_job_and_follow_up_v2(gen_random_uuid(), 1)",
    "fail_document_job_and_follow_up_v2": "select fail_document_job_and_follow_up_v2(gen_random_uuid(), 1, 'code')",
    "release_document_job_and_follow_up_v2": "select release_document_job_and_follow_up_v2(gen_random_uuid(), 1)",
    # reconciliation with Resend's list of received e-mails
    "claim_document_job_of_kinds":
        "select * from claim_document_job_of_kinds(array['reconcile_emails', 'fetch_email'])",
    "start_reconciliation_v2": "select start_reconciliation_v2(gen_random_uuid(), 1)",
    "record_reconciled_emails_v2": "select record_reconciled_emails_v2(gen_random_uuid(), 1, '[]')",
    "finish_reconciliation_v2": "select finish_reconciliation_v2(gen_random_uuid(), 1, 0, null, null)",
    "unrecorded_provider_emails": "select unrecorded_provider_emails(array['em_x'])",
    "document_jobs_reconciliation_status": "select document_jobs_reconciliation_status()",
    "set_document_jobs_reconciliation": "select set_document_jobs_reconciliation()",
    "admin_record_reconciled_emails":
        "select admin_record_reconciled_emails(gen_random_uuid(), 'op@example.com', '[]', now(), 0)",
    "start_prepare_fax_v2": "select start_prepare_fax_v2(gen_random_uuid(), 1)",
    "start_prepare_fax_v3": "select start_prepare_fax_v3(gen_random_uuid(), 1)",
    "record_fax_sender_v1": "select record_fax_sender_v1(gen_random_uuid(), 1, '{}')",
    "record_fax_attachment_view_v2":
        "select record_fax_attachment_view_v2(gen_random_uuid(), 1, gen_random_uuid(), repeat('0', 64), null, null,"
        " null, null, null)",
    "count_unprepared_faxes": "select count_unprepared_faxes()",
    "admin_enqueue_prepare_fax_jobs":
        "select admin_enqueue_prepare_fax_jobs(gen_random_uuid(), 'op@example.com', null, 10)",
    "document_jobs_admin_fax_handling": "select document_jobs_admin_fax_handling(gen_random_uuid())",
    "mark_fax_handling": "select mark_fax_handling(gen_random_uuid(), gen_random_uuid(), 'done', '対応済み')",
    "prepare_fax_handling_bulk": "select prepare_fax_handling_bulk('faxes', '{}', gen_random_uuid())",
    # verifying the stored originals
    "enqueue_original_verification": "select enqueue_original_verification()",
    "start_verify_originals_v2": "select start_verify_originals_v2(gen_random_uuid(), 1)",
    "record_original_checks_v2": "select record_original_checks_v2(gen_random_uuid(), 1, 1, '[]')",
    "start_original_verification": "select start_original_verification()",
    "original_verification_items": "select original_verification_items(1)",
    "record_verified_originals": "select record_verified_originals(1, '[]')",
    # the export of the originals
    "export_documents": "select export_documents()",
    # originals never replaced
    "record_document_attachment_v3":
        "select record_document_attachment_v3(gen_random_uuid(), 1, 'a', 'a.pdf', 'application/pdf', '[]')",
    "record_raw_message_v2": "select record_raw_message_v2(gen_random_uuid(), 1, null, 'raw_null')",
    "discard_unrecorded_object_v2":
        "select discard_unrecorded_object_v2(gen_random_uuid(), 1, 'fax-attachments', 'x', 1, repeat('0', 64), 'x')",
    # deleting a fax after its keep-until date (an old one, with an original), and removing its objects
    "admin_delete_fax": "select admin_delete_fax(gen_random_uuid(), 'op@example.com', gen_random_uuid(), 'kept long')",
    "fax_objects_to_remove": "select fax_objects_to_remove()",
    "record_fax_object_removal": "select record_fax_object_removal(gen_random_uuid(), 'op@example.com', 1,"
                                 " 'fax-attachments', 'fax_received_emails/old/att_1.pdf')",
}  # fmt: skip


def all_functions(conn: psycopg.Connection, schema: str) -> list[str]:
    """A call of every function in `schema`, with null for every argument."""
    rows = conn.execute(
        """select format('select %%I.%%I(%%s)', n.nspname, p.proname,
                         (select string_agg('null', ', ') from generate_series(1, p.pronargs))) as call
             from pg_proc p join pg_namespace n on n.oid = p.pronamespace
            where n.nspname = %s""",
        (schema,),
    ).fetchall()
    return [row["call"] for row in rows]


@pytest.mark.parametrize("role", ["anon", "authenticated"])
def test_outsiders_cannot_read_or_write_any_table(db, role) -> None:
    db.execute(f"set role {role}")
    for table in TABLES:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            db.execute(f"select * from public.{table}")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            db.execute(f"delete from public.{table}")


@pytest.mark.parametrize("role", ["anon", "authenticated"])
def test_outsiders_cannot_call_any_function(db, role) -> None:
    calls = all_functions(db, "public")
    assert len(calls) >= len(CALLS)
    db.execute(f"set role {role}")
    for call in [*calls, *CALLS.values()]:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied for function"):
            db.execute(call)


@pytest.mark.parametrize("role", ["service_role", "anon", "authenticated"])
def test_nobody_calls_the_helpers(db, role) -> None:
    """Worker POSTs, argument checks, backoff, the sweep, e-mail parsing: only the functions above use them."""
    calls = all_functions(db, "document_jobs_internal")
    assert any("post_worker" in call for call in calls)
    db.execute(f"set role {role}")
    for call in calls:
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied for schema"):
            db.execute(call)


def test_service_role_can_call_every_function_of_the_contract(db, stack_env) -> None:
    db.execute("insert into fax_received_emails (provider_email_id, data) values ('em_x', '{}')")
    # A fax kept long enough to be deleted (received in 2015), with one original.
    db.execute(
        "insert into fax_received_emails (provider_email_id, data, received_at) values ('em_old', '{}', '2015-06-01')"
    )
    db.execute(
        "insert into fax_received_email_attachments (fax_received_email_id, provider_attachment_id, size_bytes,"
        " sha256, bucket, storage_path) select id, 'att_1', 1, repeat('0', 64), 'fax-attachments',"
        " 'fax_received_emails/old/att_1.pdf' from fax_received_emails where provider_email_id = 'em_old'"
    )
    # The reconciliation, the prepare backfill by hand and the marks act as an admin whom Auth has.
    actor, _ = new_account(stack_env, app_metadata={"document_jobs_role": "admin"})
    for name, call in CALLS.items():
        if name == "enqueue_document_job":
            call = (
                "select * from enqueue_document_job('fetch_email',"
                " (select id from fax_received_emails where provider_email_id = 'em_x'))"
            )
        if name in {
            "admin_record_reconciled_emails",
            "admin_enqueue_prepare_fax_jobs",
            "prepare_fax_handling_bulk",
            "record_fax_object_removal",
        }:
            call = call.replace("gen_random_uuid()", f"'{actor['id']}'")
        if name == "admin_delete_fax":  # the old fax, deleted by an admin Auth has, once the backfill's job is gone
            db.execute("delete from document_jobs where fax_received_email_id in"
                       " (select id from fax_received_emails where provider_email_id = 'em_old')")  # fmt: skip
            call = call.replace("gen_random_uuid()", f"'{actor['id']}'", 1).replace(
                "gen_random_uuid()", "(select id from fax_received_emails where provider_email_id = 'em_old')"
            )
        if name == "record_fax_object_removal":  # the deletion admin_delete_fax recorded
            call = call.replace(", 1,", ", (select max(id) from fax_deletions),")
        if name == "mark_fax_handling":  # a fax that is there, marked by an operator Auth has
            call = call.replace(
                "gen_random_uuid(), gen_random_uuid()",
                f"(select id from fax_received_emails where provider_email_id = 'em_x'), '{actor['id']}'",
            )
        if name in {"original_verification_items", "record_verified_originals"}:  # the run start_... began
            call = call.replace("(1", "((select max(id) from original_verify_runs)")
        db.execute(call)
    assert db.execute("select count(*) as n from document_jobs where kind = 'fetch_email'").fetchone()["n"] == 2


def test_service_role_reads_the_tables(db) -> None:
    for table in TABLES:
        expected = {"document_jobs_settings": 1, "document_job_kinds": 4, "document_jobs_rate_limits": 1,
                    "document_jobs_reconciliation": 1, "original_verification": 1,
                    "office_settings": 1}.get(table, 0)  # fmt: skip
        assert db.execute(f"select count(*) as n from public.{table}").fetchone()["n"] == expected

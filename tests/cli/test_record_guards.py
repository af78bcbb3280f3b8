"""The record of received faxes refuses every change in the database, but its tables' owner (postgres:
a migration, the SQL editor) can still switch a guard off: `health` says so at once and is not healthy
until guard_record_tables puts the guards back (docs/OPERATIONS.md, "The record of received faxes")."""

from __future__ import annotations

import json
from collections.abc import Iterator

import psycopg
import pytest

from lib.explanations import outage_explanation
from tests.support.database import connect
from tests.support.emails import email_with_job

GUARDS = 20  # four triggers on each of the five record tables (document_jobs_internal.record_guards)


@pytest.fixture
def owner(stack_env) -> Iterator[psycopg.Connection[dict]]:
    """postgres, the tables' owner, as the SQL editor is; the guards put back whatever the test did."""
    with connect(stack_env["DATABASE_URL"]) as conn:
        try:
            yield conn
        finally:
            conn.execute("select document_jobs_internal.guard_record_tables()")


def test_health_names_a_guard_the_owner_disabled_and_is_healthy_again_once_it_is_back(cli, db, owner) -> None:
    email_with_job(db)
    status, out, _ = cli("health")
    assert f"record guards: all {GUARDS} in place" in out
    assert json.loads(cli("health", "--json")[1])["record_guards"] == {"guards": GUARDS, "problems": []}

    owner.execute("alter table fax_received_email_attachments disable trigger record_not_updated")
    owner.execute("grant delete on fax_received_emails to service_role")
    # One guard off, the others still hold: the statement trigger refuses the UPDATE, the row
    # trigger the DELETE that the privilege granted back lets service_role ask for.
    with pytest.raises(psycopg.errors.RestrictViolation, match="its rows are never updated"):
        owner.execute("update fax_received_email_attachments set size_bytes = 300")
    with pytest.raises(psycopg.errors.RestrictViolation, match="has no approved deletion"):
        db.execute("delete from fax_received_emails")
    status, out, _ = cli("health")
    assert status == 5, "a record that can be changed is not healthy"
    assert "record guards: 2 NOT in place: the received faxes' rows can be changed or deleted" in out
    assert "  public.fax_received_email_attachments record_not_updated: disabled" in out
    assert "  public.fax_received_emails privileges: granted (DELETE to service_role)" in out
    assert "select document_jobs_internal.guard_record_tables(); puts them back" in out
    data = json.loads(cli("health", "--json")[1])
    assert data["healthy"] is False
    assert {(p["table"], p["guard"], p["problem"]) for p in data["record_guards"]["problems"]} == {
        ("public.fax_received_email_attachments", "record_not_updated", "disabled"),
        ("public.fax_received_emails", "privileges", "granted"),
    }

    assert owner.execute("select document_jobs_internal.guard_record_tables() as n").fetchone()["n"] == 1
    status, out, _ = cli("health")
    assert f"record guards: all {GUARDS} in place" in out and "NOT in place" not in out
    with pytest.raises(psycopg.errors.InsufficientPrivilege):
        db.execute("delete from fax_received_emails")
    with pytest.raises(psycopg.errors.RestrictViolation, match="its rows are never updated"):
        owner.execute("update fax_received_email_attachments set size_bytes = 908")


def test_the_outage_of_an_unguarded_record_is_explained_to_the_operator(cli, db, owner) -> None:
    """What the every-minute health check opens (supabase/tests/037_record_writes_and_health.sql runs it):
    health shows it with lib/failures.py's advice, which says how to put the guards back."""
    owner.execute("drop trigger record_not_truncated on fax_deletions")
    owner.execute("select document_jobs_internal.check_record_guards()")
    status, out, _ = cli("health")
    said = outage_explanation("records_unguarded")
    assert said is not None
    assert status == 5 and "records_unguarded since" in out
    assert said.meaning_en in out and said.operator_en in out and "guard_record_tables()" in said.operator_en
    assert "  public.fax_deletions record_not_truncated: missing" in out
    owner.execute("select document_jobs_internal.guard_record_tables()")
    owner.execute("select document_jobs_internal.check_record_guards()")
    assert "records_unguarded" not in cli("health")[1]

"""python -m lib.admin prepare against the local stack: the backfill of the faxes stored before the
prepare_fax job existed. A dry run counts and enqueues nothing; a run enqueues a job for each fax
with an attachment no job has looked at, batch by batch with its progress on standard error,
audited as the admin of --as; a run again enqueues nothing twice."""

from __future__ import annotations

import json

from tests.support.emails import add_attachment, receive_email


def stored_faxes(db, count: int) -> list[str]:
    """`count` e-mails with an attachment stored before the upgrade (no view): their row ids."""
    ids = []
    for n in range(count):
        email = receive_email(db, f"em_old_{n}", webhook_id=f"msg_old_{n}")
        add_attachment(db, email["fax_received_email_id"], f"att_{n}")
        ids.append(str(email["fax_received_email_id"]))
    return ids


def prepare_jobs(db) -> list[str]:
    rows = db.execute("select fax_received_email_id::text as id from document_jobs where kind = 'prepare_fax'")
    return sorted(row["id"] for row in rows)


def test_a_dry_run_counts_and_enqueues_nothing(cli, db) -> None:
    stored_faxes(db, 3)
    receive_email(db, "em_nothing_stored", webhook_id="msg_nothing")
    status, out, err = cli("prepare", "--dry-run", "--json")
    assert (status, err) == (0, "")
    assert json.loads(out) == {"faxes": 4, "unprepared": 3, "live_jobs": 0, "dry_run": True}
    assert prepare_jobs(db) == []


def test_a_run_enqueues_a_job_per_fax_not_yet_prepared_in_batches_and_once(cli, db, admin, operator) -> None:
    ids = stored_faxes(db, 5)
    receive_email(db, "em_nothing_stored", webhook_id="msg_nothing")
    status, out, err = cli("prepare", "--as", operator, "--batch", "2")
    assert status == 0, err
    assert prepare_jobs(db) == sorted(ids)
    assert "enqueued 5 prepare jobs" in out and f"audited as {operator}" in out
    # Six e-mails in batches of two: three lines of progress, the last at the end.
    progress = err.splitlines()
    assert progress[-1] == "prepare: 6 of 6 faxes looked at, 5 jobs enqueued" and len(progress) == 3
    audit = admin.execute("select actor_email, action, job_count from document_jobs_audit order by id").fetchall()
    assert {row["action"] for row in audit} == {"prepare"} and sum(row["job_count"] for row in audit) == 5
    assert {row["actor_email"] for row in audit} == {operator}

    status, out, _ = cli("prepare", "--as", operator, "--json")
    assert (status, json.loads(out)["enqueued"]) == (0, 0), "a run again enqueues nothing twice"
    assert len(prepare_jobs(db)) == 5


def test_a_run_names_its_admin_and_a_batch_has_bounds(cli, db) -> None:
    status, _, err = cli("prepare")
    assert status == 2 and "--as EMAIL" in err
    status, _, err = cli("prepare", "--dry-run", "--batch", "1001")
    assert status == 2 and "--batch must be between 1 and 1000" in err

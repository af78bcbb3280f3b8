"""Deleting a fax after its keep-until date, on the local stack with the Storage stand-in: a viewer
may not; a fax received today is refused (retention_not_over, its keep-until date said); an old
fax is deleted by an admin with a reason, recorded in fax_deletions first; its objects (the
original, the raw e-mail, the derived thumbnail) stay in Storage until `purge-deleted` removes them
through Storage's API, each removal recorded in fax_object_removals; a second run has nothing to
do."""

from __future__ import annotations

import json
from datetime import date

import httpx

from tests.support.database import as_postgres
from tests.support.emails import receive_email, stored_attachment
from tests.support.operators import admin_api

BUCKET = "fax-attachments"


def upload(env, key: str, content: bytes, content_type: str) -> None:
    headers = {**admin_api(env), "Content-Type": content_type}
    answer = httpx.post(f"{env['SUPABASE_URL']}/storage/v1/object/{BUCKET}/{key}", content=content, headers=headers,
                        timeout=10)  # fmt: skip
    assert answer.status_code == 200, answer.text


def in_storage(env, key: str) -> bool:
    answer = httpx.get(f"{env['SUPABASE_URL']}/storage/v1/object/authenticated/{BUCKET}/{key}",
                       headers=admin_api(env), timeout=10)  # fmt: skip
    assert answer.status_code in (200, 400, 404), answer.text
    return answer.status_code == 200


def fax(db, env, provider_id: str, received: str) -> tuple[str, list[str]]:
    """A fax received at `received` with its original, raw e-mail and thumbnail stored: (its id, the keys)."""
    email_id = str(receive_email(db, provider_id, {"from": "fax@example.jp", "created_at": received})
                   ["fax_received_email_id"])  # fmt: skip
    attachment_id = stored_attachment(db, env, email_id, content=b"%PDF-1.4 an invoice of 2015")
    raw_key = f"fax_received_emails/{email_id}/raw/message.eml"
    thumbnail_key = f"fax_views/{email_id}/{attachment_id}/thumbnail.webp"
    upload(env, raw_key, b"From: fax@example.jp\r\n\r\n", "message/rfc822")
    upload(env, thumbnail_key, b"RIFF....WEBP", "image/webp")
    with as_postgres(db):
        db.execute(
            "insert into fax_received_email_raw_messages (fax_received_email_id, bucket, storage_path, size_bytes,"
            " sha256) values (%s, %s, %s, 24, repeat('c', 64))", (email_id, BUCKET, raw_key),
        )  # fmt: skip
        db.execute(
            "insert into fax_attachment_views (attachment_id, source_sha256, page_count, thumbnail_path)"
            " select id, sha256, 1, %s from fax_received_email_attachments where id = %s",
            (thumbnail_key, attachment_id),
        )
        # Its fetch job ended long ago (and was purged): nothing may store an object for it any more.
        db.execute("delete from document_jobs where fax_received_email_id = %s", (email_id,))
    keys = [f"fax_received_emails/{email_id}/att_1.pdf", raw_key, thumbnail_key]
    assert all(in_storage(env, key) for key in keys)
    return email_id, keys


def test_a_fax_is_deleted_only_after_its_keep_until_date_and_its_objects_removed_in_a_recorded_second_step(
    cli, db, stack_env, operator
) -> None:
    old, old_keys = fax(db, stack_env, "em_2015", "2015-06-01T01:00:00Z")  # kept until 2023-05-31
    new, new_keys = fax(db, stack_env, "em_today", "2026-12-07T01:00:00Z")

    viewer = stack_env["DEVSTACK_VIEWER_EMAIL"]
    status, _, err = cli("--json", "delete-fax", old, "--reason", "kept long enough", "--as", viewer)
    assert status == 1
    refusal = json.loads(err)
    assert refusal["error"] == "not_an_admin"
    assert refusal["message"] == f"{viewer} is a viewer: only an admin may delete faxes"

    status, _, err = cli("--json", "delete-fax", new, "--reason", "too early", "--as", operator)
    assert status == 1
    refusal = json.loads(err)
    assert refusal["error"] == "retention_not_over"
    short = new.replace("-", "")[:8]
    assert (
        refusal["message"]
        == f"fax {short} must be kept until 2034-05-31 (Asia/Tokyo): nothing may delete it before then"
    )
    assert db.execute("select count(*) as n from fax_deletions").fetchone()["n"] == 0

    status, out, err = cli("delete-fax", old, "--reason", "保存期間（2023-05-31 まで）を過ぎたため", "--as", operator)
    assert status == 0, err
    assert f"fax {old[:8]} deleted (kept until 2023-05-31)" in out
    assert "its 3 objects stay in Storage until document-jobs-admin purge-deleted removes them" in out
    deletion = db.execute("select * from fax_deletions").fetchone()
    assert str(deletion["fax_received_email_id"]) == old
    assert (deletion["actor_email"], deletion["reason"]) == (operator, "保存期間（2023-05-31 まで）を過ぎたため")
    assert deletion["what"]["retention"]["keep_until"] == "2023-05-31"
    assert (
        deletion["what"]["attachments"][0]["sha256"]
        == db.execute("select encode(sha256('%PDF-1.4 an invoice of 2015'::bytea), 'hex') as h").fetchone()["h"]
    )
    assert sorted(o["key"] for o in deletion["what"]["objects"]) == sorted(old_keys)
    assert db.execute("select count(*) as n from fax_received_emails where id = %s", (old,)).fetchone()["n"] == 0
    assert db.execute("select count(*) as n from fax_received_email_attachments").fetchone()["n"] == 1, "the new one's"
    assert all(in_storage(stack_env, key) for key in old_keys), "SQL deleted the rows, not the objects"

    status, out, _ = cli("purge-deleted", "--dry-run")
    assert status == 0
    assert out.startswith("3 objects of deleted faxes to remove (dry run: nothing removed)")
    assert all(in_storage(stack_env, key) for key in old_keys)

    status, _, err = cli("--json", "purge-deleted", "--as", viewer)
    assert status == 1 and json.loads(err)["error"] == "not_an_admin"
    assert all(in_storage(stack_env, key) for key in old_keys)

    status, out, err = cli("purge-deleted", "--as", operator)
    assert status == 0, err
    assert f"removed 3 objects of 1 deleted faxes from Storage, each recorded in fax_object_removals as removed by " \
        f"{operator}" in out  # fmt: skip
    assert not any(in_storage(stack_env, key) for key in old_keys)
    assert all(in_storage(stack_env, key) for key in new_keys), "the fax not deleted keeps its objects"
    removals = db.execute("select * from fax_object_removals order by id").fetchall()
    assert [(r["storage_path"], r["kind"], r["actor_email"]) for r in removals] == [
        (old_keys[0], "original", operator), (old_keys[1], "raw_message", operator),
        (old_keys[2], "thumbnail", operator),
    ]  # fmt: skip
    assert {r["deletion_id"] for r in removals} == {deletion["id"]}

    status, out, _ = cli("purge-deleted", "--as", operator)
    assert status == 0 and out.startswith("removed 0 objects"), "a second run has nothing to remove"
    assert date.fromisoformat(deletion["what"]["retention"]["keep_until"]) < date.today()

"""supabase/schema.sql is what the migrations build: a new database gets them through `supabase db
push` (devstack/cluster.py), and its normalised dump (devstack/schema.py) must equal the committed
file, so that a review of a migration shows its effect there."""

from __future__ import annotations

import pytest

from devstack import schema


def test_the_committed_schema_is_what_the_migrations_build() -> None:
    built = schema.build()
    diff = schema.difference(built, schema.SCHEMA_FILE.read_text())
    if diff:  # the diff itself, not pytest's rendering of a long string
        pytest.fail(f"supabase/schema.sql is stale: run `{schema.REGENERATE}` (make schema)\n{diff}", pytrace=False)


def test_the_dump_holds_each_object_once_and_no_volatile_lines() -> None:
    text = schema.SCHEMA_FILE.read_text()
    headers = [line for line in text.splitlines() if line.startswith("-- Name: ")]
    assert len(headers) == len(set(headers))
    assert "-- Dumped " not in text and "\\restrict" not in text and "\nSET " not in text
    assert "CREATE FUNCTION public.claim_document_jobs(" in text
    assert "SELECT cron.schedule('document-jobs', '* * * * *'" in text

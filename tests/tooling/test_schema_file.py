"""supabase/schema.sql is what the migrations build: a new database gets them through `supabase db
push` (devstack/cluster.py), and its dump, arranged by concern (devstack/tools/schema.py), must
equal the committed file, so that a review of a migration shows its effect there."""

from __future__ import annotations

import re

import pytest

from devstack.tools import schema


def test_the_committed_schema_is_what_the_migrations_build() -> None:
    built = schema.build()
    diff = schema.difference(built, schema.SCHEMA_FILE.read_text())
    if diff:  # the diff itself, not pytest's rendering of a long string
        pytest.fail(f"supabase/schema.sql is stale: run `{schema.REGENERATE}`\n{diff}", pytrace=False)


def test_the_file_holds_each_object_once_under_its_heading_and_no_dump_noise() -> None:
    text = schema.SCHEMA_FILE.read_text()
    # A trigger's name is its table's: each record table has the same four guards.
    created = re.findall(
        r"^CREATE (?:UNIQUE )?(FUNCTION|TABLE|VIEW|INDEX|TRIGGER|TYPE|SCHEMA) ([\w.]+)(?:.* ON ([\w.]+))?", text, re.M
    )
    assert len(created) == len(set(created))
    headings = [f"\n-- {heading}\n" for _, heading in schema.GROUPS]
    assert all(text.count(heading) == 1 for heading in headings)
    assert [text.index(heading) for heading in headings] == sorted(text.index(heading) for heading in headings)
    assert "-- Name: " not in text and " OWNER TO " not in text and "\n\n\n\n" not in text
    assert "-- Dumped " not in text and "\\restrict" not in text and "\nSET " not in text
    queue = text.index(dict(schema.GROUPS)["queue"])
    internals = text.index(dict(schema.GROUPS)["internals"])
    assert queue < text.index("CREATE FUNCTION public.claim_document_jobs(") < internals
    assert internals < text.index("CREATE FUNCTION document_jobs_internal.limits()")
    assert "SELECT cron.schedule('document-jobs', '* * * * *'" in text


def test_a_function_without_a_group_stops_the_generation() -> None:
    with pytest.raises(schema.UngroupedObject, match=r"public\.new_call has no group: add it to FUNCTION_GROUPS"):
        schema.group_of("function", "public.new_call")
    assert schema.group_of("function", "document_jobs_internal.new_helper")[0] == "internals"
    assert schema.group_of("relation", "public.new_table")[0] == "tables"


def test_every_group_named_for_a_function_exists() -> None:
    assert {group for _, group in schema.FUNCTION_GROUPS} <= {key for key, _ in schema.GROUPS}


def test_the_record_of_received_faxes_is_a_section_of_its_own() -> None:
    """Which tables are the record (document_jobs_internal.record_tables, read from the database the file is
    dumped from) is the file's first section, and each says so in its comment; every other table is not."""
    text = schema.SCHEMA_FILE.read_text()
    record, tables = text.index(dict(schema.GROUPS)["record"]), text.index(dict(schema.GROUPS)["tables"])
    record_tables = ("public.fax_received_emails", "public.fax_received_email_attachments",
                     "public.fax_received_email_raw_messages", "public.fax_deletions",
                     "public.fax_object_removals")  # fmt: skip
    for table in record_tables:
        assert record < text.index(f"COMMENT ON TABLE {table} IS 'THE RECORD ") < tables, table
        assert record < text.index(f"CREATE TABLE {table} (") < tables, table
    assert tables < text.index("CREATE TABLE public.document_jobs (")
    assert tables < text.index("CREATE TABLE public.fax_attachment_views (")
    assert text.count(" IS 'THE RECORD ") == len(record_tables)
    records = frozenset({"public.fax_received_emails"})
    assert schema.group_of("relation", "public.fax_received_emails", records)[0] == "record"
    assert schema.group_of("relation", "public.document_jobs", records)[0] == "tables"

"""supabase/schema.sql: the whole current schema of a database the migrations built, in one file.

The migrations only upgrade (they are append-only), so the current definition of a function is
the last of its bodies across many files. This file holds each object once: a throwaway cluster
(devstack/cluster.py) gets Supabase's roles and every migration through `supabase db push`, then
pg_dump 15 writes the project's two schemas (public, document_jobs_internal), and the rows the
migrations seed (the job kinds, the settings, the release causes, the outages, the bucket) and
the cron jobs are added from their tables. What changes between two dumps of the same schema
(pg_dump's versions, its \\restrict key, session settings) is dropped, and so are the default
privileges, which belong to the platform (devstack/bootstrap.sql), not to the migrations.

The file is for reading and diffing, never applied, so pg_dump's order is not kept: its banners,
owner lines and blank runs go, and the objects are grouped by concern (GROUPS), each object with
its comment first, then its definition, its constraints, indexes and triggers, and its grants. A
function belongs to the group FUNCTION_GROUPS names for it; a function it does not name stops
the generation (say where it belongs there), so that no object lands in a catch-all.

    python -m devstack.tools.schema           write supabase/schema.sql (also: make schema)
    python -m devstack.tools.schema --check   exit 1 with a unified diff when the file is not current

tests/tooling/test_schema_file.py runs the check in `make test`.
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field

from devstack import cluster

SCHEMA_FILE = cluster.ROOT / "supabase" / "schema.sql"
REGENERATE = "make schema"
SCHEMAS = ("public", "document_jobs_internal")
# The tables whose rows the migrations insert and the functions read as configuration.
SEEDED_TABLES = (
    "public.document_job_kinds",
    "public.document_jobs_settings",
    "public.office_settings",
    "public.document_jobs_reconciliation",
    "document_jobs_internal.outages",
    "document_jobs_internal.release_causes",
)

# The groups, in the file's order: (key, heading). The record's tables are the database's to name
# (document_jobs_internal.record_tables: the same list the guards and the health check use).
GROUPS = (
    ("record", "THE RECORD of received faxes: rows inserted once, never updated or deleted (record_guards)"),
    ("tables", "Everything else that is stored (it changes): schemas, tables, views, indexes, triggers and grants"),
    ("queue", "The queue's calls: enqueue, claim, and the fenced writes of the worker that holds a job"),
    ("worker", "The worker's calls: what each kind of job and a stopping invocation need besides the queue"),
    ("webhook", "The webhook's call: an inbound e-mail recorded and its job enqueued"),
    ("screen", "The admin screen's calls: the overview, the job list, one job, the audit, actions"),
    ("operations", "Operations: health, retention, statistics, and the cron jobs that run the flow"),
    ("internals", "Internals: the helpers in document_jobs_internal, callable by their owner only"),
)
# Where each function goes: an exact "schema.name", or "schema.*" for every function (and type)
# of a schema. Within a group, objects follow this table's order, then their names.
FUNCTION_GROUPS: tuple[tuple[str, str], ...] = (
    ("public.enqueue_document_job", "queue"),
    ("public.claim_document_jobs", "queue"),
    ("public.claim_document_job_of_kinds", "queue"),
    ("public.extend_document_job_lease_v2", "queue"),
    ("public.complete_document_job_v2", "queue"),
    ("public.complete_document_job_and_claim_next_v2", "queue"),
    ("public.fail_document_job_v2", "queue"),
    ("public.release_document_job_v2", "queue"),
    ("public.retry_document_job", "queue"),
    ("public.cancel_document_job", "queue"),
    ("public.invoke_document_jobs", "queue"),
    # The public API's names before _v2 (docs/QUEUE.md, "The public API"): they stay, as thin wrappers.
    ("public.extend_document_job_lease", "queue"),
    ("public.complete_document_job", "queue"),
    ("public.fail_document_job", "queue"),
    ("public.release_document_job", "queue"),
    # The worker's own names before _v2, kept for a deploy that is not atomic (supabase/future_migrations drops them).
    ("public.complete_document_job_and_claim_next", "queue"),
    ("public.start_fetch_email_v2", "worker"),
    ("public.record_document_attachment_v3", "worker"),
    ("public.record_raw_message_v2", "worker"),
    ("public.discard_unrecorded_object_v2", "worker"),
    ("public.record_document_attachment_v2", "worker"),
    ("public.reserve_provider_request", "worker"),
    ("public.note_provider_rate_limit", "worker"),
    ("public.complete_document_job_and_follow_up_v2", "worker"),
    ("public.fail_document_job_and_follow_up_v2", "worker"),
    ("public.release_document_job_and_follow_up_v2", "worker"),
    ("public.start_fetch_email", "worker"),
    ("public.record_document_attachment", "worker"),
    ("public.complete_document_job_and_follow_up", "worker"),
    ("public.fail_document_job_and_follow_up", "worker"),
    ("public.release_document_job_and_follow_up", "worker"),
    ("public.start_reconciliation_v2", "worker"),
    ("public.record_reconciled_emails_v2", "worker"),
    ("public.finish_reconciliation_v2", "worker"),
    ("public.record_reconciled_emails_v3", "worker"),
    ("public.finish_reconciliation_v3", "worker"),
    ("public.start_prepare_fax_v2", "worker"),
    ("public.start_prepare_fax_v3", "worker"),
    ("public.record_fax_sender_v1", "worker"),
    ("public.record_fax_attachment_view_v2", "worker"),
    ("public.start_verify_originals_v2", "worker"),
    ("public.record_original_checks_v2", "worker"),
    ("public.record_inbound_email", "webhook"),
    ("public.document_jobs_admin_overview", "screen"),
    ("public.document_jobs_admin_jobs", "screen"),
    ("public.document_jobs_admin_job", "screen"),
    ("public.document_jobs_admin_audit", "screen"),
    ("public.admin_retry_document_job", "screen"),
    ("public.admin_cancel_document_job", "screen"),
    ("public.prepare_document_jobs_bulk_action", "screen"),
    ("public.apply_document_jobs_bulk_action", "screen"),
    ("public.document_jobs_find_by_id", "screen"),
    ("public.document_jobs_operator_me", "screen"),
    ("public.document_jobs_operator_overview", "screen"),
    ("public.document_jobs_operator_jobs", "screen"),
    ("public.document_jobs_operator_job", "screen"),
    ("public.document_jobs_operator_audit", "screen"),
    ("public.document_jobs_operator_attachment", "screen"),
    ("public.document_jobs_admin_faxes", "screen"),
    ("public.document_jobs_admin_fax", "screen"),
    ("public.document_jobs_operator_faxes", "screen"),
    ("public.document_jobs_operator_fax", "screen"),
    ("public.admin_set_fax_rotation", "screen"),
    ("public.set_fax_index", "screen"),
    ("public.document_jobs_admin_counterparties", "screen"),
    ("public.document_jobs_operator_counterparties", "screen"),
    ("public.document_jobs_admin_fax_handling", "screen"),
    ("public.document_jobs_operator_fax_handling", "screen"),
    ("public.mark_fax_handling", "screen"),
    ("public.prepare_fax_handling_bulk", "screen"),
    ("public.apply_fax_handling_bulk", "screen"),
    ("public.document_jobs_health", "operations"),
    ("public.document_jobs_stats", "operations"),
    ("public.set_document_jobs_retention", "operations"),
    ("public.count_purgeable_document_jobs", "operations"),
    ("public.purge_document_jobs", "operations"),
    ("public.enqueue_document_jobs_reconciliation", "operations"),
    ("public.set_document_jobs_reconciliation", "operations"),
    ("public.document_jobs_reconciliation_status", "operations"),
    ("public.unrecorded_provider_emails", "operations"),
    ("public.admin_record_reconciled_emails", "operations"),
    ("public.count_unprepared_faxes", "operations"),
    ("public.admin_enqueue_prepare_fax_jobs", "operations"),
    ("public.enqueue_original_verification", "operations"),
    ("public.start_original_verification", "operations"),
    ("public.original_verification_items", "operations"),
    ("public.record_verified_originals", "operations"),
    ("public.export_documents", "operations"),
    ("public.set_fax_line", "operations"),
    ("public.remove_fax_line", "operations"),
    ("public.admin_delete_fax", "operations"),
    ("public.fax_objects_to_remove", "operations"),
    ("public.record_fax_object_removal", "operations"),
    ("document_jobs_internal.*", "internals"),
)

HEADER = f"""\
-- The current schema of document-jobs: every function, table, view, index, grant, policy, seeded
-- row and cron job of a database that applied supabase/migrations, each object once, grouped by
-- concern (devstack/tools/schema.py). For reading and diffing, never applied. GENERATED, never
-- edited: a change is a new migration, then `{REGENERATE}`. tests/tooling/test_schema_file.py fails when this
-- file is not what the migrations build.
"""
_BLOCK_HEADER = re.compile(
    r"^--\n-- (?P<data>Data for )?Name: (?P<name>.*); Type: (?P<type>[A-Z ]+); Schema: (?P<schema>[\w-]+);.*\n--\n",
    re.MULTILINE,
)
_NOISE = re.compile(
    r"^(?:\\(?:un)?restrict .*|-- Dumped (?:from|by) .*|SET \w+ = .*;|SELECT pg_catalog\.set_config\('search_path'.*\);"
    r"|--\n-- PostgreSQL database dump(?: complete)?\n--|ALTER [A-Z ]+ .* OWNER TO \w+;)$",
    re.MULTILINE,
)
_BLANK_RUN = re.compile(r"\n{3,}")
_DROPPED_TYPES = {"DEFAULT ACL"}
# Blocks that belong to a table (named "table" or "table constraint").
_TABLE_PARTS = {"TABLE", "VIEW", "ROW SECURITY", "TABLE DATA", "CONSTRAINT", "FK CONSTRAINT", "TRIGGER"}
_CRON_JOBS = """
select format('SELECT cron.schedule(%L, %L, %L);  -- as %s, %s',
              jobname, schedule, command, username, case when active then 'active' else 'inactive' end)
from cron.job order by jobname
"""
_BUCKETS = """
select format('INSERT INTO storage.buckets (id, name, public, file_size_limit, allowed_mime_types) '
              'VALUES (%L, %L, %L, %L, %L);',
              id, name, public, file_size_limit, allowed_mime_types)
from storage.buckets order by id
"""

_RECORD_TABLES = "select record_table from document_jobs_internal.record_tables() order by 1"


class UngroupedObject(Exception):
    """A function (or type) that FUNCTION_GROUPS does not place."""


@dataclass
class Block:
    """One of pg_dump's objects: its type, the object it belongs to, and its SQL without banners."""

    type: str
    owner: str  # "schema.name" of the table, function, type or schema it belongs to
    sql: str
    leads: bool = False  # the object's own comment: it comes first


@dataclass
class DumpedObject:
    kind: str  # "schema", "relation", "function", "type"
    name: str
    blocks: list[Block] = field(default_factory=list)


def _pg_dump(database: cluster.Cluster, *args: str) -> str:
    result = subprocess.run(
        [cluster.PG_BIN / "pg_dump", *args],
        env={**os.environ, **database.libpq_env(cluster.SUPERUSER)},
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise RuntimeError(f"pg_dump failed:\n{result.stderr}")
    return result.stdout


def _clean(sql: str) -> str:
    return _BLANK_RUN.sub("\n\n", sql).strip("\n")


def _owner(kind: str, name: str, schema: str, body: str, sequences: dict[str, str]) -> tuple[str, str, bool]:
    """(object kind, "schema.name", whether the block is that object's own comment) of a block."""
    if kind == "SCHEMA":
        return "schema", name, False
    if kind == "FUNCTION":
        return "function", f"{schema}.{name.split('(')[0]}", False
    if kind == "TYPE":
        return "type", f"{schema}.{name}", False
    if kind in _TABLE_PARTS:
        return "relation", f"{schema}.{name.split(' ')[0]}", False
    if kind == "INDEX":
        match = re.search(r" ON (?:ONLY )?([\w.]+) USING ", body)
        if match is None:
            raise UngroupedObject(f"cannot tell the table of index {name}")
        return "relation", match[1], False
    if kind == "SEQUENCE":
        match = re.search(r"^ALTER TABLE (?:ONLY )?([\w.]+) ", body, re.MULTILINE)
        # A sequence no table owns (one that must outlive its unlogged table's crash) stands alone.
        sequences[f"{schema}.{name}"] = match[1] if match else f"{schema}.{name}"
        return "relation", sequences[f"{schema}.{name}"], False
    if kind in {"COMMENT", "ACL"}:
        target, _, rest = name.partition(" ")
        if target == "SCHEMA":
            return "schema", rest, kind == "COMMENT"
        if target == "FUNCTION":
            return "function", f"{schema}.{rest.split('(')[0]}", kind == "COMMENT"
        if target in {"TABLE", "VIEW"}:
            return "relation", f"{schema}.{rest}", kind == "COMMENT"
        if target == "COLUMN":
            return "relation", f"{schema}.{rest.split('.')[0]}", False
        if target == "SEQUENCE":
            owner = sequences.get(f"{schema}.{rest}", f"{schema}.{rest}")
            return "relation", owner, kind == "COMMENT" and owner == f"{schema}.{rest}"
        if target == "TYPE":
            return "type", f"{schema}.{rest}", kind == "COMMENT"
    raise UngroupedObject(f"pg_dump wrote a {kind} ({name}) that devstack/tools/schema.py does not place")


def _blocks(dump: str) -> list[Block]:
    """pg_dump's objects, each from its "-- Name: ...; Type: ..." header to the next, banners dropped."""
    dump = _NOISE.sub("", dump)
    starts = [match.start() for match in _BLOCK_HEADER.finditer(dump)]
    sequences: dict[str, str] = {}
    blocks = []
    for start, end in zip(starts, [*starts[1:], len(dump)], strict=True):
        text = dump[start:end]
        match = _BLOCK_HEADER.match(text)
        assert match is not None
        kind = "TABLE DATA" if match["data"] else match["type"]
        if kind in _DROPPED_TYPES:
            continue
        body = _clean(text[match.end() :])
        if kind == "TRIGGER":  # pg_dump writes a trigger's ENABLE ALWAYS after a blank line
            body = body.replace("\n\n", "\n")
        if kind == "TABLE DATA":
            # pg_dump writes rows in their physical order, which updates change: sorted, they are stable.
            body = "\n".join(sorted(line for line in body.splitlines() if line))
        object_kind, owner, leads = _owner(kind, match["name"], match["schema"], body, sequences)
        blocks.append(Block(kind, f"{object_kind}:{owner}", body, leads))
    return blocks


def group_of(kind: str, name: str, records: frozenset[str] = frozenset()) -> tuple[str, int]:
    """The group of an object ("schema.name") and its rank in it; UngroupedObject when none is named.
    `records` names the record's tables."""
    if kind == "relation" and name in records:
        return "record", 0
    if kind in {"schema", "relation"}:
        return "tables", (0 if kind == "schema" else 1 + SCHEMAS.index(name.split(".")[0]))
    for rank, (pattern, group) in enumerate(FUNCTION_GROUPS):
        if pattern == name or (pattern.endswith(".*") and name.startswith(pattern[:-1])):
            return group, rank
    raise UngroupedObject(
        f"{kind} {name} has no group: add it to FUNCTION_GROUPS in devstack/tools/schema.py "
        f"(one of {', '.join(key for key, _ in GROUPS)}), then run `{REGENERATE}`"
    )


def arrange(blocks: list[Block], extra: dict[str, list[str]], records: frozenset[str] = frozenset()) -> str:
    """The file: a heading per group, each object's blocks together (its own comment first)."""
    objects: dict[str, DumpedObject] = {}
    for block in blocks:
        kind, _, name = block.owner.partition(":")
        objects.setdefault(block.owner, DumpedObject(kind, name)).blocks.append(block)
    named = {pattern for pattern, _ in FUNCTION_GROUPS if not pattern.endswith(".*")}
    gone = sorted(named - {obj.name for obj in objects.values() if obj.kind == "function"})
    if gone:
        raise UngroupedObject(f"FUNCTION_GROUPS (devstack/tools/schema.py) names {', '.join(gone)}: not in the schema")
    placed: dict[str, list[tuple[int, str, DumpedObject]]] = {key: [] for key, _ in GROUPS}
    for obj in objects.values():
        group, rank = group_of(obj.kind, obj.name, records)
        placed[group].append((rank, obj.name, obj))
    sections = []
    for key, heading in GROUPS:
        parts = []
        for _, _, obj in sorted(placed[key], key=lambda item: item[:2]):
            ordered = sorted(obj.blocks, key=lambda block: not block.leads)  # stable: pg_dump's order otherwise
            parts.append("\n".join(block.sql for block in ordered))
        parts.extend(extra.get(key, []))
        rule = "-- " + "=" * 97
        sections.append(f"{rule}\n-- {heading}\n{rule}\n\n" + "\n\n".join(parts))
    return HEADER + "\n" + "\n\n\n".join(sections) + "\n"


def dump(database: cluster.Cluster) -> str:
    """The arranged schema of `database`."""
    schema = _pg_dump(database, "--schema-only", *(f"--schema={name}" for name in SCHEMAS))
    seeded = _pg_dump(database, "--data-only", "--column-inserts", *(f"--table={name}" for name in SEEDED_TABLES))
    buckets = database.psql("-At", "-c", _BUCKETS, user=cluster.SUPERUSER).strip()
    cron = database.psql("-At", "-c", _CRON_JOBS, user=cluster.SUPERUSER).strip()
    records = database.psql("-At", "-c", _RECORD_TABLES, user=cluster.SUPERUSER).split()
    extra = {
        "tables": [f"-- Storage buckets\n{buckets}"],
        "operations": [f"-- Cron jobs (cron.job)\n{cron}"],
    }
    return arrange(_blocks(schema) + _blocks(seeded), extra, frozenset(records))


def build() -> str:
    """The arranged schema of a new database built from the migrations."""
    database = cluster.start()
    try:
        return dump(database)
    finally:
        database.stop()


def difference(current: str, committed: str) -> str:
    """A unified diff from the committed file to what the migrations build; empty when equal."""
    lines = difflib.unified_diff(
        committed.splitlines(keepends=True),
        current.splitlines(keepends=True),
        fromfile="supabase/schema.sql (committed)",
        tofile="supabase/schema.sql (from the migrations)",
    )
    return "".join(lines)


def main(argv: list[str]) -> int:
    if argv not in ([], ["--check"]):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        current = build()
    except UngroupedObject as error:
        print(f"devstack: {error}", file=sys.stderr)
        return 1
    committed = SCHEMA_FILE.read_text() if SCHEMA_FILE.exists() else ""
    if argv == ["--check"]:
        diff = difference(current, committed)
        if diff:
            print(f"{diff}\nsupabase/schema.sql is not what the migrations build: run `{REGENERATE}`", file=sys.stderr)
            return 1
        return 0
    SCHEMA_FILE.write_text(current)
    print(f"devstack: wrote {SCHEMA_FILE.relative_to(cluster.ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""supabase/schema.sql: the whole current schema of a database the migrations built, in one file.

The migrations only upgrade (they are append-only), so the current definition of a function is
the last of its bodies across many files. This file holds each object once: a throwaway cluster
(devstack/cluster.py) gets Supabase's roles and every migration through `supabase db push`, then
pg_dump 15 writes the project's two schemas (public, document_jobs_internal), and the rows the
migrations seed (the job kinds, the settings, the release causes, the outages, the bucket) and
the cron jobs are added from their tables. What changes between two dumps of the same schema
(pg_dump's versions, its \\restrict key, session settings) is dropped, and so are the default
privileges, which belong to the platform (devstack/bootstrap.sql), not to the migrations.

    python -m devstack schema           write supabase/schema.sql (also: make schema)
    python -m devstack schema --check   exit 1 with a unified diff when the file is not current

tests/test_schema.py runs the check in `make test`.
"""

from __future__ import annotations

import difflib
import os
import re
import subprocess
import sys

from devstack import cluster

SCHEMA_FILE = cluster.ROOT / "supabase" / "schema.sql"
REGENERATE = "python -m devstack schema"
SCHEMAS = ("public", "document_jobs_internal")
# The tables whose rows the migrations insert and the functions read as configuration.
SEEDED_TABLES = (
    "public.document_job_kinds",
    "public.document_jobs_settings",
    "document_jobs_internal.outages",
    "document_jobs_internal.release_causes",
)
HEADER = f"""\
-- The current schema of document-jobs: every function, table, view, index, grant, policy, seeded
-- row and cron job of a database that applied supabase/migrations, each object once, in pg_dump's
-- stable order. GENERATED, never edited: a change is a new migration, then `{REGENERATE}`
-- (make schema). tests/test_schema.py fails when this file is not what the migrations build.
"""
_BLOCK_HEADER = re.compile(r"^--\n-- (?:Data for )?Name: .*; Type: (?P<type>[A-Z ]+);.*\n--\n", re.MULTILINE)
_NOISE = re.compile(
    r"^(?:\\(?:un)?restrict .*|-- Dumped (?:from|by) .*|SET \w+ = .*;|SELECT pg_catalog\.set_config\('search_path'.*\);"
    r"|--\n-- PostgreSQL database dump(?: complete)?\n--)$",
    re.MULTILINE,
)
_DROPPED_TYPES = {"DEFAULT ACL"}
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


def _blocks(dump: str) -> list[tuple[str, str]]:
    """pg_dump's objects as (type, text), each starting at its "-- Name: ...; Type: ..." header."""
    dump = _NOISE.sub("", dump)
    starts = [match.start() for match in _BLOCK_HEADER.finditer(dump)]
    blocks = []
    for start, end in zip(starts, [*starts[1:], len(dump)], strict=True):
        text = dump[start:end]
        match = _BLOCK_HEADER.match(text)
        assert match is not None
        body = text[match.end() :].strip("\n")
        if match["type"] == "TABLE DATA":
            # pg_dump writes rows in their physical order, which updates change: sorted, they are stable.
            body = "\n".join(sorted(line for line in body.splitlines() if line))
        blocks.append((match["type"], text[: match.end()] + "\n" + body + "\n"))
    return blocks


def _section(title: str, lines: str) -> str:
    return f"--\n-- {title}\n--\n\n{lines.strip()}\n"


def dump(database: cluster.Cluster) -> str:
    """The normalised schema of `database`."""
    schema = _pg_dump(database, "--schema-only", *(f"--schema={name}" for name in SCHEMAS))
    seeded = _pg_dump(database, "--data-only", "--column-inserts", *(f"--table={name}" for name in SEEDED_TABLES))
    blocks = [text for kind, text in _blocks(schema) + _blocks(seeded) if kind not in _DROPPED_TYPES]
    blocks.append(_section("Storage buckets", database.psql("-At", "-c", _BUCKETS, user=cluster.SUPERUSER)))
    blocks.append(_section("Cron jobs (cron.job)", database.psql("-At", "-c", _CRON_JOBS, user=cluster.SUPERUSER)))
    return HEADER + "\n" + "\n\n".join(block.strip("\n") + "\n" for block in blocks)


def build() -> str:
    """The normalised schema of a new database built from the migrations."""
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
    current = build()
    committed = SCHEMA_FILE.read_text() if SCHEMA_FILE.exists() else ""
    if argv == ["--check"]:
        diff = difference(current, committed)
        if diff:
            print(f"{diff}\nsupabase/schema.sql is not what the migrations build: run `{REGENERATE}`", file=sys.stderr)
            return 1
        return 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    SCHEMA_FILE.write_text(current)
    print(f"devstack: wrote {SCHEMA_FILE.relative_to(cluster.ROOT)}")
    return 0

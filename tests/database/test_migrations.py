"""The migrations as the Supabase CLI sees them. devstack applies them with `supabase db push`, as
an operator does on a linked project, so the CLI's history must say that every one is applied and
that nothing is left to push."""

from __future__ import annotations

from pathlib import Path

from devstack import cluster

MIGRATIONS = cluster.migrations()


def supabase(stack_env: dict[str, str], *args: str) -> str:
    return cluster.supabase(cluster.Cluster(Path(stack_env["DEVSTACK_FOLDER"])), *args)


def test_every_migration_is_listed_as_applied(stack_env) -> None:
    listed = supabase(stack_env, "migration", "list")

    # One row per version: "`<local>` | `<remote>` | `<time>`", an empty cell where one side lacks it.
    rows = [[cell.strip().strip("`") for cell in line.split("|")] for line in listed.splitlines() if "`" in line]
    versions = [path.name.split("_", 1)[0] for path in MIGRATIONS]
    assert [(local, remote) for local, remote, _ in rows] == [(v, v) for v in versions]


def test_the_history_table_names_every_migration(admin) -> None:
    recorded = admin.execute(
        "select version, name from supabase_migrations.schema_migrations order by version"
    ).fetchall()
    assert [(row["version"], row["name"]) for row in recorded] == [
        tuple(path.stem.split("_", 1)) for path in MIGRATIONS
    ]


def test_a_second_push_has_nothing_to_apply(stack_env) -> None:
    pushed = supabase(stack_env, "db", "push", "--dry-run")
    assert "Remote database is up to date." in pushed

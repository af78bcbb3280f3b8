"""supabase/future_migrations holds migrations written ahead of their release: the drop of the
retired function names waits until no deployed worker calls them (its header says when and how).
Until then it must stay ready: it applies cleanly, with `supabase db push`, to a database that
applied every migration, and nothing deployed (lib/, api/) calls a name it drops."""

from __future__ import annotations

import ast
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from devstack import cluster
from tests.support.projects import project_with, started

FUTURE = cluster.ROOT / "supabase" / "future_migrations"
DROP = FUTURE / "20261205000000_drop_retired_functions.sql"
DEPLOYED = ("lib", "api")
# The drop file's spelling of a type, and PostgreSQL's.
ALIASES = {"int": "integer", "timestamptz": "timestamp with time zone"}
# Retired without a _v2: the CLI's single retry and cancel, replaced by the admin screen's audited calls.
REPLACED_BY_THE_SCREENS = {
    "public.retry_document_job": "public.admin_retry_document_job(uuid,uuid,text,text)",
    "public.cancel_document_job": "public.admin_cancel_document_job(uuid,uuid,text,text)",
}


def dropped() -> dict[str, str]:
    """The functions the drop names, "public.name" -> "public.name(argument types)"."""
    functions = re.findall(r"^drop function (public\.\w+)\(([^)]*)\);", DROP.read_text(), re.MULTILINE)
    return {name: f"{name}({arguments})" for name, arguments in functions}


def string_constants(path: Path) -> Iterator[str]:
    """The string literals of a Python file, docstrings left out (they describe, they do not call)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    docstrings = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.value


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """This project with every migration, and the future one after them, as its header says."""
    return project_with(tmp_path, cluster.migrations())


@pytest.fixture
def current(project: Path) -> Iterator[cluster.Cluster]:
    with started(project) as database:
        yield database


def test_the_drop_comes_after_every_migration_and_takes_the_clis_old_calls() -> None:
    assert cluster.migrations()[-1].name < DROP.name
    text = DROP.read_text().replace("\n-- ", " ")  # the header's sentences, unwrapped
    assert "retry_document_job and cancel_document_job, which the CLI called before it acted through" in text
    assert set(REPLACED_BY_THE_SCREENS) <= set(dropped())


def test_the_drop_applies_to_a_database_of_every_migration_and_keeps_the_v2_calls(
    project: Path, current: cluster.Cluster
) -> None:
    names = dropped()
    with psycopg.connect(current.conninfo(cluster.SUPERUSER), autocommit=True) as conn:
        # Exactly the names a _v2 function replaced, each with the signature it has today.
        replaced = conn.execute(
            "select 'public.' || p.proname, p.oid::regprocedure::text from pg_proc p"
            " where p.pronamespace = 'public'::regnamespace and exists (select from pg_proc v"
            "  where v.pronamespace = p.pronamespace and v.proname = p.proname || '_v2')"
        ).fetchall()
        assert {name for name, _ in replaced} | set(REPLACED_BY_THE_SCREENS) == set(names)
        for signature in names.values():
            assert conn.execute("select to_regprocedure(%s)", (signature,)).fetchone() != (None,), signature
        shutil.copy(DROP, project / "supabase" / "migrations")
        cluster.apply_migrations(current, project)
        for name, signature in names.items():
            assert conn.execute("select to_regprocedure(%s)", (signature,)).fetchone() == (None,), signature
            if name in REPLACED_BY_THE_SCREENS:
                replacement = REPLACED_BY_THE_SCREENS[name]
                assert conn.execute("select to_regprocedure(%s)", (replacement,)).fetchone() != (None,), replacement
                continue
            # The _v2 takes the old arguments, first and in order (it may take more, with defaults:
            # complete_document_job_and_claim_next_v2's p_kinds), so the old name's wrapper still calls it.
            v2 = conn.execute(
                """select p.pronargs - p.pronargdefaults as required, p.proargtypes::regtype[]::text[] as types
                     from pg_proc p where p.oid = to_regproc(%s)""",
                (f"{name}_v2",),
            ).fetchone()
            old_types = [t.strip() for t in signature[len(name) + 1 : -1].split(",")]
            assert v2 is not None, f"{name}_v2"
            assert [ALIASES.get(t, t) for t in v2[1][: len(old_types)]] == [ALIASES.get(t, t) for t in old_types]
            assert v2[0] <= len(old_types), f"{name}_v2 needs no argument the old name did not pass"
        applied = conn.execute("select max(version) from supabase_migrations.schema_migrations").fetchone()
        assert applied == (DROP.name.split("_")[0],)


def test_nothing_deployed_calls_a_name_the_drop_drops() -> None:
    names = {name.removeprefix("public.") for name in dropped()}
    word = re.compile(r"\b(" + "|".join(sorted(names)) + r")\b")
    callers = [
        f"{path.relative_to(cluster.ROOT)}: {text!r}"
        for folder in DEPLOYED
        for path in sorted((cluster.ROOT / folder).rglob("*.py"))
        for text in string_constants(path)
        if word.search(text)
    ]
    assert callers == []

"""supabase/future_migrations holds migrations written ahead of their release: the drop of the
retired function names waits until no deployed worker calls them (its header says when and how).
Until then it must stay ready: it applies cleanly, with `supabase db push` under a timestamp later
than every migration, to a database that applied them all; it keeps the public API, whose tests
(supabase/tests/029_public_api.sql) pass on what is left; it says, function by function, why each
one it drops can go; and nothing deployed (lib/, api/) or measured (bench/) calls a name it drops."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from devstack import cluster
from tests.support.projects import project_with, started

FUTURE = cluster.ROOT / "supabase" / "future_migrations"
DROP = FUTURE / "drop_retired_functions.sql"
PUBLIC_API_TESTS = cluster.ROOT / "supabase" / "tests" / "029_public_api.sql"
CALLERS = ("lib", "api", "bench")
# The public API's fenced calls: each has a _v2 that the worker calls, and stays as its thin wrapper.
KEPT_WITH_A_V2 = {
    "public.extend_document_job_lease",
    "public.complete_document_job",
    "public.fail_document_job",
    "public.release_document_job",
}
# Retired without a _v2: the CLI's single cancel, replaced by the admin screen's audited call.
REPLACED_BY_THE_SCREENS = {"public.cancel_document_job": "public.admin_cancel_document_job(uuid,uuid,text,text)"}
STAMP = "%Y%m%d%H%M%S"
# The drop file's spelling of a type, and PostgreSQL's.
ALIASES = {"int": "integer", "timestamptz": "timestamp with time zone"}


def dropped() -> dict[str, str]:
    """The functions the drop names, "public.name" -> "public.name(argument types)"."""
    functions = re.findall(r"^drop function (public\.\w+)\(([^)]*)\);", DROP.read_text(), re.MULTILINE)
    return {name: f"{name}({arguments})" for name, arguments in functions}


def reasons() -> dict[str, str]:
    """Each dropped function's name -> the comment lines right above its drop (or its group of drops)."""
    found: dict[str, str] = {}
    comment: list[str] = []
    after_drop = False
    for line in DROP.read_text().splitlines():
        drop = re.match(r"drop function public\.(\w+)\(", line)
        if drop:
            found[drop.group(1)] = " ".join(comment)
            after_drop = True
        elif line.startswith("--"):
            if after_drop:
                comment, after_drop = [], False
            comment.append(line.removeprefix("--").strip())
        else:
            comment, after_drop = [], False
    return found


def later_than_every_migration() -> str:
    """A timestamp one second after the newest migration's, as `supabase migration new` would give later."""
    newest = datetime.strptime(cluster.migrations()[-1].name.split("_")[0], STAMP)
    return (newest + timedelta(seconds=1)).strftime(STAMP)


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


def test_the_drop_carries_no_timestamp_and_says_why_each_function_goes() -> None:
    assert not re.match(r"\d", DROP.name), "copied under a new timestamp, it sorts after whatever landed before it"
    text = " ".join(DROP.read_text().split())
    assert "supabase migration new drop_retired_functions" in text
    why = reasons()
    assert set(why) == {name.removeprefix("public.") for name in dropped()}
    for name, comment in why.items():
        assert re.search(rf"\b{name}\b", comment), f"the comment above the drop of {name} names it"
        assert re.search(r"\b(Replaced by|replaced by|Never part of)\b", comment), f"{name}: why it can go"


def test_the_drop_applies_to_a_database_of_every_migration_and_keeps_the_public_api(
    project: Path, current: cluster.Cluster
) -> None:
    names = dropped()
    with psycopg.connect(current.conninfo(cluster.SUPERUSER), autocommit=True) as conn:
        with_a_v2 = {name for (name,) in conn.execute(
            "select 'public.' || p.proname from pg_proc p where p.pronamespace = 'public'::regnamespace"
            " and exists (select from pg_proc v where v.pronamespace = p.pronamespace"
            "  and v.proname = p.proname || '_v2')"
        ).fetchall()}  # fmt: skip
        # Every name a _v2 replaced goes, but the public API's, which stay as its thin wrappers.
        assert with_a_v2 - set(names) == KEPT_WITH_A_V2
        assert set(names) - with_a_v2 == set(REPLACED_BY_THE_SCREENS)
        for signature in names.values():
            assert conn.execute("select to_regprocedure(%s)", (signature,)).fetchone() != (None,), signature
        version = later_than_every_migration()
        shutil.copy(DROP, project / "supabase" / "migrations" / f"{version}_{DROP.name}")
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
        assert applied == (version,)
    # The public API's own tests, on what the drop left.
    proved = subprocess.run(["pg_prove", "--ext", ".sql", str(PUBLIC_API_TESTS)], capture_output=True, text=True,
                            env={**os.environ, **current.libpq_env("postgres")}, timeout=300)  # fmt: skip
    assert proved.returncode == 0, proved.stdout + proved.stderr


def test_nothing_deployed_or_measured_calls_a_name_the_drop_drops() -> None:
    names = {name.removeprefix("public.") for name in dropped()}
    word = re.compile(r"\b(" + "|".join(sorted(names)) + r")\b")
    callers = [
        f"{path.relative_to(cluster.ROOT)}: {text!r}"
        for folder in CALLERS
        for path in sorted((cluster.ROOT / folder).rglob("*.py"))
        for text in string_constants(path)
        if word.search(text)
    ]
    assert callers == []

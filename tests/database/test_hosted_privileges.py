"""The local database grants what hosted Supabase grants, no more (devstack/bootstrap.sql): code or a
test that leans on a privilege hosted Supabase does not give passes here and fails there."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.database import connect


@pytest.fixture
def postgres(stack_env):
    """The role migrations and an operator in the SQL editor use."""
    with connect(stack_env["DATABASE_URL"]) as conn:
        yield conn


@pytest.mark.parametrize(
    "statement",
    [
        "select name from vault.decrypted_secrets",
        "select vault.create_secret('x', 'service_role_secret')",
        "delete from vault.secrets",
    ],
)
def test_service_role_has_no_access_to_vault(db, statement) -> None:
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied for schema vault"):
        db.execute(statement)


def test_postgres_stores_and_reads_vault_secrets(postgres) -> None:
    with postgres.transaction(force_rollback=True):
        postgres.execute("select vault.create_secret('a value', 'operator_secret')")
        row = postgres.execute("select decrypted_secret from vault.decrypted_secrets where name = 'operator_secret'")
        assert row.fetchone()["decrypted_secret"] == "a value"


def test_postgres_reads_cron_jobs_but_may_not_change_the_table(postgres) -> None:
    assert postgres.execute("select count(*) as n from cron.job").fetchone()["n"] >= 1
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied for table job"):
        postgres.execute("update cron.job set active = active")


def test_buckets_are_not_deleted_directly(postgres) -> None:
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="Use the Storage API instead"):
        postgres.execute("delete from storage.buckets where id = 'no-such-bucket'")


def test_buckets_table_has_row_level_security_and_is_open_to_the_api_roles(admin) -> None:
    table = admin.execute("select relrowsecurity from pg_class where oid = 'storage.buckets'::regclass").fetchone()
    assert table["relrowsecurity"] is True
    for role in ("anon", "authenticated", "service_role"):
        privilege = admin.execute(
            "select has_table_privilege(%s, 'storage.buckets', 'select, insert, update, delete') as ok", (role,)
        )
        assert privilege.fetchone()["ok"] is True, role


@pytest.mark.parametrize("role", ["anon", "authenticated", "service_role"])
def test_pg_net_is_open_to_every_role(admin, role) -> None:
    row = admin.execute(
        """select has_schema_privilege(%(role)s, 'net', 'usage') as schema,
                  has_function_privilege(%(role)s, 'net.http_post(text, jsonb, jsonb, jsonb, int)', 'execute') as post,
                  has_table_privilege(%(role)s, 'net._http_response', 'select') as responses""",
        {"role": role},
    ).fetchone()
    assert row == {"schema": True, "post": True, "responses": True}


def test_the_api_roles_inherit_and_authenticator_does_not(admin) -> None:
    rows = admin.execute(
        "select rolname, rolinherit from pg_roles"
        " where rolname in ('anon', 'authenticated', 'service_role', 'authenticator') order by rolname"
    ).fetchall()
    assert {row["rolname"]: row["rolinherit"] for row in rows} == {
        "anon": True,
        "authenticated": True,
        "authenticator": False,
        "service_role": True,
    }


def test_postgres_is_not_a_superuser(admin) -> None:
    assert admin.execute("select rolsuper from pg_roles where rolname = 'postgres'").fetchone()["rolsuper"] is False

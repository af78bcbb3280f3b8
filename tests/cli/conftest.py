"""The CLI's fixture: `cli(*argv)` runs `python -m lib.admin` in-process against the local stack
and answers (exit status, stdout, stderr)."""

from __future__ import annotations

import pytest

from lib.admin import cli as admin


@pytest.fixture
def operator(stack_env) -> str:
    """The stack's admin of the admin screen: who acts, with --as."""
    return stack_env["DEVSTACK_OPERATOR_EMAIL"]


@pytest.fixture
def cli(db, stack_env, monkeypatch, capsys):
    monkeypatch.delenv("DOCUMENT_JOBS_OPERATOR", raising=False)  # who acts: --as, unless a test names them so
    monkeypatch.setenv("SUPABASE_URL", stack_env["SUPABASE_URL"])
    monkeypatch.setenv("SUPABASE_SECRET_KEY", stack_env["SUPABASE_SECRET_KEY"])

    def run(*argv: str) -> tuple[int, str, str]:
        status = admin.main(list(argv))
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run

"""python -m lib.admin operators: roles on the admin screen through Auth's admin API (the local
stack's Auth stand-in), and a sign-in with the account it made."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import uuid
from urllib.parse import parse_qs, parse_qsl, urlsplit

import httpx
import jwt
import pytest

from lib.admin import cli as admin
from tests.support.operators import ban, delete_user, mails, new_account, sign_in


@pytest.fixture
def operators_cli(stack_env, monkeypatch, capsys):
    monkeypatch.setenv("SUPABASE_URL", stack_env["SUPABASE_URL"])
    monkeypatch.setenv("SUPABASE_SECRET_KEY", stack_env["SUPABASE_SECRET_KEY"])

    def run(*argv: str) -> tuple[int, str, str]:
        status = admin.main(["operators", *argv])
        captured = capsys.readouterr()
        return status, captured.out, captured.err

    return run


def test_add_creates_an_account_with_the_role_and_a_password_from_stdin(stack_env) -> None:
    email = f"new-{uuid.uuid4().hex[:8]}@example.com"
    env = {"PATH": "/usr/bin:/bin", "SUPABASE_URL": stack_env["SUPABASE_URL"],
           "SUPABASE_SECRET_KEY": stack_env["SUPABASE_SECRET_KEY"]}  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-m", "lib.admin", "operators", "add", email, "--role", "viewer", "--password-stdin"],
        input="a long password\n", capture_output=True, text=True, env=env, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{email} is an operator (viewer), with a new account"
    session = sign_in(stack_env, email, "a long password")
    assert session["user"]["app_metadata"]["document_jobs_role"] == "viewer"


def test_add_sets_the_role_of_an_existing_account_and_remove_takes_it_away(operators_cli, stack_env) -> None:
    account, _ = new_account(stack_env)
    status, out, _ = operators_cli("add", account["email"].upper(), "--role", "admin")
    assert status == 0 and out.strip() == f"{account['email']} is now an operator (admin)"
    status, out, _ = operators_cli("list", "--json")
    listed = {o["email"]: o["role"] for o in json.loads(out)}
    assert listed[account["email"]] == "admin" and listed[stack_env["DEVSTACK_VIEWER_EMAIL"]] == "viewer"
    status, out, _ = operators_cli("remove", account["email"])
    assert status == 0 and "no longer an operator" in out
    status, _, err = operators_cli("remove", account["email"])
    assert status == 1 and err.strip() == f"error: {account['email']} is not an operator"


def test_a_new_account_needs_a_password(operators_cli, monkeypatch) -> None:
    monkeypatch.setattr(sys, "stdin", open("/dev/null"))  # noqa: SIM115  # not a terminal: nothing to ask
    status, _, err = operators_cli("add", f"none-{uuid.uuid4().hex[:8]}@example.com", "--role", "admin")
    assert status == 1 and "give a password (--password-stdin)" in err


def test_without_settings_it_says_which(monkeypatch, capsys) -> None:
    monkeypatch.delenv("SUPABASE_URL", raising=False)
    assert admin.main(["operators", "list"]) == 3
    assert "SUPABASE_URL" in capsys.readouterr().err
    for name in ("SUPABASE_SECRET_KEY", "SUPABASE_SERVICE_ROLE_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert admin.main(["operators", "list"]) == 3
    err = capsys.readouterr().err
    assert "SUPABASE_URL (Field required)" in err
    assert "SUPABASE_SECRET_KEY or SUPABASE_SERVICE_ROLE_KEY must be set" in err


def test_list_prints_each_operators_last_sign_in_as_every_command_prints_times(operators_cli, stack_env, monkeypatch):
    account, password = new_account(stack_env, app_metadata={"document_jobs_role": "viewer"})
    never = new_account(stack_env, app_metadata={"document_jobs_role": "viewer"})[0]
    sign_in(stack_env, account["email"], password)
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        status, out, _ = operators_cli("list")
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    lines = {line.split()[1]: line for line in out.splitlines()}
    assert status == 0
    # The offset form, in the operator's zone (TZ), with how long ago beside it: not raw ISO 8601.
    signed_in = r"\(last sign-in: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+09:00 \(.+\)\)$"
    assert re.search(signed_in, lines[account["email"]]), out
    assert lines[never["email"]].endswith("(last sign-in: never)"), out


def test_list_shows_an_operator_whom_auth_has_banned_or_deleted_as_such(operators_cli, stack_env, admin) -> None:
    banned, _ = new_account(stack_env, app_metadata={"document_jobs_role": "admin"})
    deleted, _ = new_account(stack_env, app_metadata={"document_jobs_role": "viewer"})
    lifted, _ = new_account(stack_env, app_metadata={"document_jobs_role": "admin"})
    soft, _ = new_account(stack_env, app_metadata={"document_jobs_role": "admin"})
    ban(stack_env, banned["id"], "24h")
    ban(stack_env, lifted["id"], "24h")
    ban(stack_env, lifted["id"], "none")
    # Auth's soft delete clears app_metadata (GoTrue's SoftDeleteUser): the role goes with it.
    delete_user(stack_env, soft["id"], soft=True)
    # A row with deleted_at that kept its role (written in Auth's tables, as Auth's role; GoTrue's
    # own soft delete never leaves one): deleted all the same.
    with admin.transaction():
        admin.execute("set local role supabase_auth_admin")
        admin.execute("update auth.users set deleted_at = now() - interval '1 hour' where id = %s", (deleted["id"],))

    status, out, _ = operators_cli("list")

    assert status == 0
    lines = {line.split()[1]: line for line in out.splitlines()}
    time = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d\d:\d\d"
    assert re.search(rf"\)  BANNED until {time} \(in 23 h\): may not sign in or act$", lines[banned["email"]]), out
    assert re.search(rf"\)  DELETED {time} \(1 h ago\): may not sign in or act$", lines[deleted["email"]]), out
    assert lines[lifted["email"]].endswith("(last sign-in: never)"), "a lifted ban is no ban"
    assert soft["email"] not in out and soft["id"] not in out
    listed = {o["id"]: o for o in json.loads(operators_cli("list", "--json")[1])}
    assert (listed[banned["id"]]["standing"], listed[deleted["id"]]["standing"], listed[lifted["id"]]["standing"]) == (
        "banned", "deleted", "active")  # fmt: skip
    assert listed[banned["id"]]["banned_until"] and listed[deleted["id"]]["deleted_at"]
    assert soft["id"] not in listed


def test_invite_has_auth_email_a_link_and_sets_the_role_and_the_link_gives_a_password(operators_cli, stack_env) -> None:
    email = f"clerk-{uuid.uuid4().hex[:8]}@example.com"
    screen = "http://127.0.0.1:9/admin"
    status, out, err = operators_cli("invite", email, "--role", "clerk", "--redirect-to", screen)
    assert status == 0, err
    assert out.strip() == f"{email} is invited (clerk): Auth has e-mailed a link to set a password"
    [mail] = mails(stack_env, email)
    assert mail["type"] == "invite" and parse_qs(urlsplit(mail["link"]).query)["redirect_to"] == [screen]
    listed = {o["email"]: o for o in json.loads(operators_cli("list", "--json")[1])}
    assert listed[email]["role"] == "clerk"
    # The link signs the new clerk in (the screen then asks for a password: updateUser's PUT /user).
    landed = dict(parse_qsl(urlsplit(httpx.get(mail["link"], timeout=10).headers["Location"]).fragment))
    assert jwt.decode(landed["access_token"], options={"verify_signature": False})["app_metadata"][
        "document_jobs_role"] == "clerk"  # fmt: skip
    httpx.put(f"{stack_env['SUPABASE_URL']}/auth/v1/user", json={"password": "the clerk's own"}, timeout=10,
              headers={"apikey": stack_env["SUPABASE_PUBLISHABLE_KEY"],
                       "Authorization": f"Bearer {landed['access_token']}"}).raise_for_status()  # fmt: skip
    assert sign_in(stack_env, email, "the clerk's own")["user"]["email"] == email
    # An account in use is not invited again: the command says what to do instead.
    status, _, err = operators_cli("invite", email, "--role", "viewer")
    assert status == 1 and f"'operators add {email} --role viewer'" in err
    assert len(mails(stack_env, email)) == 1


def test_reset_password_has_auth_email_its_recovery_link(operators_cli, stack_env) -> None:
    account, password = new_account(stack_env, app_metadata={"document_jobs_role": "clerk"})
    status, out, err = operators_cli("reset-password", account["email"])
    assert status == 0, err
    assert out.strip() == f"Auth has e-mailed {account['email']} a link to set a new password"
    [mail] = mails(stack_env, account["email"])
    assert mail["type"] == "recovery"
    # Without --redirect-to, the link returns to Auth's Site URL: the screen's (docs/DEPLOY.md).
    assert parse_qs(urlsplit(mail["link"]).query)["redirect_to"] == [stack_env["ADMIN_URL"]]
    assert sign_in(stack_env, account["email"], password), "the password stays until the operator sets a new one"
    # Auth's limit (one recovery e-mail a minute per user) is reported as Auth words it.
    status, _, err = operators_cli("reset-password", account["email"])
    assert status == 1 and "For security purposes, you can only request this after" in err
    status, _, err = operators_cli("reset-password", f"nobody-{uuid.uuid4().hex[:8]}@example.com")
    assert status == 1 and "has no account" in err

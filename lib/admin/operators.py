"""Who may use the admin screen: document-jobs-admin operators add | invite | reset-password | list | remove.

document-jobs-admin operators add EMAIL --role admin|clerk|viewer [--password-stdin]
document-jobs-admin operators invite EMAIL --role admin|clerk|viewer [--redirect-to URL]
document-jobs-admin operators reset-password EMAIL [--redirect-to URL]
document-jobs-admin operators list [--json]
document-jobs-admin operators remove EMAIL

An operator is a user of the project's Supabase Auth whose app_metadata.document_jobs_role is
"admin" (may do everything), "clerk" (may read, and mark who is dealing with a fax: the office's
people) or "viewer" (may read). app_metadata can only be written with the server key,
through Auth's admin API (POST/PUT /auth/v1/admin/users), which is what this does; users cannot
give themselves a role. "add" creates the user (e-mail confirmed) when there is none, with the
password read from standard input (--password-stdin) or asked for at the terminal; for an
existing user it sets the role and leaves the password alone. "remove" takes the role away and
keeps the user: a removed operator's next request is refused at once, though their token is still
valid (the admin function asks Auth before every action, and every read checks the role Auth
stores now in the same database call: document_jobs_operator_*). "remove" is how a clerk who
leaves is deactivated.

"invite" is Auth's own invitation (POST /auth/v1/invite, the admin API: docs
reference/javascript/auth-admin-inviteuserbyemail): Auth creates the account without a password
and e-mails a link; the role is set at once (PUT /admin/users/{id}), and the link signs the new
operator in on the screen, which asks them for a password. "reset-password" has Auth e-mail its
password recovery link (POST /auth/v1/recover: reference/javascript/auth-resetpasswordforemail),
the very e-mail the sign-in page's 「パスワードをお忘れですか」 sends: the operator sets a new
password on the screen; nobody else ever knows it. Both links return to --redirect-to when it is
among the project's Redirect URLs, else to Auth's Site URL (docs/DEPLOY.md: the screen's URL).
Auth sends the e-mails through the project's SMTP settings and refuses past its rate limits (one
recovery e-mail a minute per user, and the project's e-mails an hour): the refusal is reported.

"list" says of each operator whether Auth has banned them (banned_until ahead: until when) or
deleted them (deleted_at), as Auth's admin API answers the user (GoTrue's User: banned_until and
deleted_at, github.com/supabase/auth internal/models/user.go): such an operator keeps their role
but may neither sign in nor act, on the screen or with --as (standing(); the database refuses
them too, in the same call as the action: document_jobs_internal.acting_operator). A soft delete
through Auth clears app_metadata (SoftDeleteUser), and a hard delete removes the user: either way
the role goes with it, so such a user is no longer listed at all.

Reads SUPABASE_URL and SUPABASE_SECRET_KEY (or the legacy SUPABASE_SERVICE_ROLE_KEY). Exit
status: 0, 1 (Auth refused), 2 (arguments), 3 (settings), 4 (Auth could not be reached): the
CLI's table (lib/admin/cli.py), which reports every refusal raised here.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import httpx

from lib.admin import PROGRAM, display
from lib.errors import Refusal
from lib.screen.accounts import AuthAdmin, invite, reset_password
from lib.screen.auth import ROLE_CLAIM, ROLES
from lib.settings import ConfigError, SupabaseSettings

__all__ = ["AuthAdmin", "add", "invite", "main", "remove", "reset_password"]

ROLE_HELP = "admin: may do everything; clerk: may read and mark faxes; viewer: may read"
REDIRECT_HELP = "the admin screen's URL, if Auth's Site URL is not it (it must be among the Redirect URLs)"
MIN_PASSWORD_LENGTH = 6  # Supabase Auth's default minimum


def role_of(user: dict[str, Any]) -> str | None:
    role = (user.get("app_metadata") or {}).get(ROLE_CLAIM)
    return role if role in ROLES else None


def standing(user: dict[str, Any], now: datetime) -> str:
    """Whether Auth lets the user act now, as GoTrue decides it: "deleted" (deleted_at set),
    "banned" (banned_until ahead: IsBanned), else "active" (a ban that is over included)."""
    if user.get("deleted_at"):
        return "deleted"
    banned_until = user.get("banned_until")
    if banned_until and _time(banned_until) > now:
        return "banned"
    return "active"


def _time(value: str) -> datetime:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return datetime.max.replace(tzinfo=UTC)  # a ban that cannot be read is a ban (lib/screen/auth.py)


def summary(user: dict[str, Any], now: datetime) -> dict[str, Any]:
    return {"email": user.get("email"), "role": role_of(user), "id": user["id"],
            "last_sign_in_at": user.get("last_sign_in_at"), "standing": standing(user, now),
            "banned_until": user.get("banned_until"), "deleted_at": user.get("deleted_at")}  # fmt: skip


def listed(operator: dict[str, Any], now: datetime) -> str:
    """One operator of `operators list`: role, e-mail, last sign-in, and a ban or deletion."""
    when = display.local_time(operator["last_sign_in_at"], now) or "never"
    line = f"{operator['role']:<7} {display.text(operator['email'])}  (last sign-in: {when})"
    if operator["standing"] == "banned":
        line += f"  BANNED until {display.local_time(operator['banned_until'], now)}: may not sign in or act"
    elif operator["standing"] == "deleted":
        line += f"  DELETED {display.local_time(operator['deleted_at'], now)}: may not sign in or act"
    return line


def add(admin: AuthAdmin, email: str, role: str, password: str | None) -> tuple[dict[str, Any], bool]:
    """The operator and whether the user was created."""
    existing = admin.find(email)
    if existing is not None:
        return admin.set_role(existing["id"], role), False
    if password is None:
        raise Refusal("password_required", f"{email} has no account yet: give a password (--password-stdin)")
    if len(password) < MIN_PASSWORD_LENGTH:
        raise Refusal("password_too_short", f"the password must be at least {MIN_PASSWORD_LENGTH} characters")
    return admin.create(email, password, role), True


def remove(admin: AuthAdmin, email: str) -> dict[str, Any]:
    existing = admin.find(email)
    if existing is None or role_of(existing) is None:
        raise Refusal("not_an_operator", f"{email} is not an operator")
    return admin.set_role(existing["id"], None)


def read_password(from_stdin: bool) -> str | None:
    if from_stdin:
        return sys.stdin.readline().rstrip("\n")
    if not sys.stdin.isatty():
        return None
    first = getpass.getpass("password for the new account: ")
    if getpass.getpass("again: ") != first:
        raise Refusal("passwords_differ", "the two passwords differ")
    return first


def parser(prog: str = f"{PROGRAM} operators") -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog=prog, description="Who may use the admin screen (Supabase Auth users).")
    commands = root.add_subparsers(dest="command", required=True)
    adding = commands.add_parser("add", help="give an account a role (creating it if needed)")
    adding.add_argument("email")
    adding.add_argument("--role", choices=ROLES, required=True, help=ROLE_HELP)
    adding.add_argument("--password-stdin", action="store_true", help="read a new account's password from stdin")
    inviting = commands.add_parser("invite", help="have Auth e-mail an invitation; the role is set at once")
    inviting.add_argument("email")
    inviting.add_argument("--role", choices=ROLES, required=True, help=ROLE_HELP)
    inviting.add_argument("--redirect-to", help=REDIRECT_HELP)
    resetting = commands.add_parser("reset-password", help="have Auth e-mail a link to set a new password")
    resetting.add_argument("email")
    resetting.add_argument("--redirect-to", help=REDIRECT_HELP)
    listing = commands.add_parser("list", help="every account with a role, and whether Auth has banned or deleted it")
    listing.add_argument("--json", action="store_true")
    commands.add_parser("remove", help="take an account's role away (the account stays)").add_argument("email")
    return root


def main(argv: Sequence[str]) -> int:
    """Raises a Refusal, which the CLI reports (lib/admin/cli.py main)."""
    args = parser().parse_args(argv)
    try:
        settings = SupabaseSettings.load()
    except ConfigError as error:
        raise Refusal("settings", str(error), 500) from None
    with httpx.Client() as http:
        admin = AuthAdmin(http, settings)
        if args.command == "add":
            user, created = add(admin, args.email, args.role, read_password(args.password_stdin))
            print(f"{user['email']} is {'now ' if not created else ''}an operator ({args.role})"
                  + (", with a new account" if created else ""))  # fmt: skip
        elif args.command == "invite":
            user = invite(admin, args.email, args.role, args.redirect_to)
            print(f"{user['email']} is invited ({args.role}): Auth has e-mailed a link to set a password")
        elif args.command == "reset-password":
            user = reset_password(admin, args.email, args.redirect_to)
            print(f"Auth has e-mailed {user['email']} a link to set a new password")
        elif args.command == "remove":
            user = remove(admin, args.email)
            print(f"{user['email']} is no longer an operator (the account stays)")
        else:
            now = datetime.now(UTC)
            operators = [summary(u, now) for u in admin.users() if role_of(u)]
            operators.sort(key=lambda o: (o["role"] or "", o["email"] or ""))
            if args.json:
                print(json.dumps(operators, indent=2, ensure_ascii=False))
            else:
                for o in operators:
                    print(listed(o, now))
                if not operators:
                    print("no operators")
    return 0

"""Auth's e-mailed links: a password recovery (POST /recover), an invitation (POST /invite, the
admin API's), the link's landing (GET /verify), and a new password (PUT /user), as GoTrue does them
(github.com/supabase/auth internal/api/recover.go, invite.go, verify.go, mail.go, user.go,
internal/mailer/templatemailer/templatemailer.go, internal/utilities/request.go,
internal/tokens/service.go; docs: reference/javascript/auth-resetpasswordforemail,
auth-updateuser, auth-admin-inviteuserbyemail, guides/auth/redirect-urls,
guides/auth/auth-smtp, guides/auth/rate-limits):

- POST /recover {"email"} answers 200 {} whether or not a user has that e-mail (no enumeration);
  for a user, it e-mails a link {SUPABASE_URL}/auth/v1/verify?token=<hash>&type=recovery&
  redirect_to=<url>. The token is GoTrue's GenerateTokenHash: the hex SHA-224 of the e-mail and a
  six-digit code, stored in auth.users.recovery_token with recovery_sent_at.
- POST /invite {"email", "data"} (the admin API: the secret key) creates the user without a
  password (user_metadata from data) and e-mails a link of type invite (confirmation_token,
  confirmation_sent_at, invited_at); a confirmed user with that e-mail: 422 email_exists.
- The URL the link returns to (GetReferrer): the request's redirect_to when it is allowed, else its
  Referer when allowed, else the Site URL. Allowed (IsRedirectURLValid): the Site URL's scheme, host
  and port (any port for localhost); any loopback IP; or a match of the allow list (the
  "Redirect URLs" of the dashboard; here exact URLs, or a trailing "**" for any path under one).
- GET /verify?token&type&redirect_to (no API key: Supabase's gateway lets the e-mailed link through
  without one) answers 303 to the redirect URL with the session in its fragment
  (#access_token&expires_at&expires_in&refresh_token&sb&token_type&type, url.Values' order), a
  session of its own; the token is used once (Recover clears it; an invitation confirms the
  e-mail). A token unknown, used, or older than the links' lifetime (GoTrue's MAILER_OTP_EXP, a
  day): 303 to the URL with #error=access_denied&error_code=otp_expired&error_description=Email+
  link+is+invalid+or+has+expired&sb (prepErrorRedirectURL); a banned user: user_banned likewise.
- PUT /user {"password"} with the user's access token sets a new password (at least 6 characters,
  else 422 weak_password; the same as before: 422 same_password), clears the e-mailed tokens and
  ends the user's other sessions (User.UpdatePassword: LogoutAllExceptMe).
- Rate limits as GoTrue's: one recovery e-mail a minute per user (SMTP_MAX_FREQUENCY: 429
  over_email_send_rate_limit "For security purposes, you can only request this after N
  seconds."), and e-mails in all per hour (RATE_LIMIT_EMAIL_SENT, 30 by default; hosted Auth's
  built-in sender allows far fewer: 429 over_email_send_rate_limit "email rate limit exceeded").

Nothing is sent anywhere: each e-mail is captured (the gateway's GET /_control/auth/mail lists them
for tests and for a developer, its link and code included).
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

import psycopg
from psycopg.types.json import Jsonb

from devstack.standins.auth.errors import AuthError
from devstack.standins.auth.state import USER_COLUMNS, State

OTP_LENGTH = 6
LINK_LIFETIME_S = 86400  # GoTrue's MAILER_OTP_EXP default
MAX_FREQUENCY_S = 60.0  # GoTrue's SMTP_MAX_FREQUENCY default
EMAILS_PER_HOUR = 30  # GoTrue's RATE_LIMIT_EMAIL_SENT default
DEFAULT_SITE_URL = "http://localhost:3000"  # the Supabase CLI's site_url
MIN_PASSWORD_LENGTH = 6
SUBJECTS = {"recovery": "Reset Your Password", "invite": "You have been invited"}  # GoTrue's default subjects
INVALID_LINK = "Email link is invalid or has expired"
_LOOPBACK = ("localhost", "127.0.0.1", "::1")


@dataclass
class Mail:
    to: str
    type: str
    subject: str
    link: str
    code: str
    sent_at: float

    def as_json(self) -> dict[str, Any]:
        return {"to": self.to, "type": self.type, "subject": self.subject, "link": self.link, "code": self.code,
                "sent_at": self.sent_at}  # fmt: skip


@dataclass
class Outbox:
    """The e-mails Auth has sent, and its links' settings (the project's Site URL, Redirect URLs)."""

    site_url: str = DEFAULT_SITE_URL
    allow_list: tuple[str, ...] = ()
    max_frequency_s: float = MAX_FREQUENCY_S
    emails_per_hour: int = EMAILS_PER_HOUR
    sent: list[Mail] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def configure(self, settings: dict[str, Any]) -> None:
        with self.lock:
            if "site_url" in settings:
                self.site_url = str(settings["site_url"] or DEFAULT_SITE_URL)
            if "uri_allow_list" in settings:
                self.allow_list = tuple(str(url) for url in settings["uri_allow_list"] or ())
            if "max_frequency_s" in settings:
                value = settings["max_frequency_s"]
                self.max_frequency_s = MAX_FREQUENCY_S if value is None else float(value)
            if "emails_per_hour" in settings:
                value = settings["emails_per_hour"]
                self.emails_per_hour = EMAILS_PER_HOUR if value is None else int(value)

    def mails(self, to: str | None) -> list[dict[str, Any]]:
        with self.lock:
            return [mail.as_json() for mail in self.sent if to is None or mail.to == to.strip().lower()]

    def send(self, mail: Mail) -> None:
        """Captures the e-mail, or refuses it past the hourly limit (GoTrue's limiterOpts.Email)."""
        with self.lock:
            recent = sum(1 for sent in self.sent if sent.sent_at > mail.sent_at - 3600)
            if recent >= self.emails_per_hour:
                raise AuthError(429, "over_email_send_rate_limit", "email rate limit exceeded")
            self.sent.append(mail)

    def allowed(self, url: str) -> bool:
        """GoTrue's IsRedirectURLValid."""
        if not url:
            return False
        try:
            base, target = urlsplit(self.site_url), urlsplit(url)
            base_port, target_port = base.port, target.port
        except ValueError:
            return False
        host = target.hostname or ""
        if host == base.hostname and target.scheme == base.scheme and (target_port == base_port or host in _LOOPBACK):
            return True
        if host in ("127.0.0.1", "::1"):  # an IP address: only a loopback one
            return True
        without_fragment = url.split("#", 1)[0]
        for pattern in self.allow_list:
            if pattern.endswith("**") and without_fragment.startswith(pattern[:-2]):
                return True
            if without_fragment == pattern:
                return True
        return False

    def redirect_url(self, asked: str | None, referer: str | None) -> str:
        """GoTrue's GetReferrer: redirect_to when allowed, else the Referer when allowed, else the Site URL."""
        for url in (asked or "", referer or ""):
            if self.allowed(url):
                return url
        return self.site_url


def token_hash(email: str, code: str) -> str:
    """GoTrue's crypto.GenerateTokenHash: fmt.Sprintf("%x", sha256.Sum224([]byte(email + otp)))."""
    return hashlib.sha224((email + code).encode()).hexdigest()


def link(issuer: str, token: str, kind: str, redirect_to: str) -> str:
    """The e-mail's ConfirmationURL: {API_EXTERNAL_URL}/verify?token=&type=&redirect_to= (getPath)."""
    return f"{issuer}/verify?token={quote(token, safe='')}&type={kind}&redirect_to={quote(redirect_to, safe='')}"


def _new_code() -> str:
    return "".join(secrets.choice("0123456789") for _ in range(OTP_LENGTH))


def recover(state: State, outbox: Outbox, issuer: str, email: str, redirect_to: str) -> None:
    """POST /recover for a valid e-mail: nothing for an unknown one, else the link e-mailed."""
    with state.transaction() as cursor:
        user = cursor.execute(
            "select id, email, recovery_sent_at is not null and recovery_sent_at + make_interval(secs => %s) > now()"
            " as too_soon, ceil(extract(epoch from recovery_sent_at + make_interval(secs => %s) - now()))::int"
            " as left_s from auth.users where email = %s and aud = 'authenticated' and deleted_at is null for update",
            (outbox.max_frequency_s, outbox.max_frequency_s, email),
        ).fetchone()
        if user is None:
            return
        if user["too_soon"]:
            wait = f"For security purposes, you can only request this after {max(user['left_s'], 0)} seconds."
            raise AuthError(429, "over_email_send_rate_limit", wait)
        code = _new_code()
        token = token_hash(email, code)
        outbox.send(Mail(email, "recovery", SUBJECTS["recovery"], link(issuer, token, "recovery", redirect_to), code,
                         time.time()))  # fmt: skip
        cursor.execute("update auth.users set recovery_token = %s, recovery_sent_at = now() where id = %s",
                       (token, user["id"]))  # fmt: skip


def invite(
    state: State, outbox: Outbox, issuer: str, email: str, data: dict[str, Any], redirect_to: str
) -> dict[str, Any]:
    """POST /invite: the user (created without a password when there is none) and the link e-mailed."""
    code = _new_code()
    token = token_hash(email, code)
    try:
        with state.transaction() as cursor:
            user = cursor.execute("select id, email_confirmed_at from auth.users where email = %s for update",
                                  (email,)).fetchone()  # fmt: skip
            if user is not None and user["email_confirmed_at"] is not None:
                raise AuthError(422, "email_exists", "A user with this email address has already been registered")
            if user is None:
                user = cursor.execute(
                    """insert into auth.users (instance_id, id, aud, role, email, raw_app_meta_data, raw_user_meta_data,
                                               created_at, updated_at)
                        values ('00000000-0000-0000-0000-000000000000', %s, 'authenticated', 'authenticated', %s,
                                %s, %s, now(), now())
                        returning id""",
                    (uuid.uuid4(), email, Jsonb({"provider": "email", "providers": ["email"]}), Jsonb(data)),
                ).fetchone()
                assert user is not None
            outbox.send(Mail(email, "invite", SUBJECTS["invite"], link(issuer, token, "invite", redirect_to), code,
                             time.time()))  # fmt: skip
            row = cursor.execute(
                "update auth.users set confirmation_token = %s, confirmation_sent_at = now(), invited_at = now(),"
                f" updated_at = now() where id = %s returning {USER_COLUMNS}",
                (token, user["id"]),
            ).fetchone()
    except psycopg.errors.UniqueViolation as error:
        raise AuthError(422, "email_exists", "A user with this email address has already been registered") from error
    assert row is not None
    return row


def verified_user(state: State, token: str, kind: str) -> dict[str, Any]:
    """GET /verify's token: its user, the token used up (Recover; an invitation's signupVerify
    confirms the e-mail too). An AuthError for a token unknown, expired, or a banned user."""
    column, sent = ("recovery_token", "recovery_sent_at") if kind == "recovery" else (
        "confirmation_token", "confirmation_sent_at")  # fmt: skip
    with state.transaction() as cursor:
        user = cursor.execute(
            f"select id, {sent} + make_interval(secs => %s) < now() as expired,"
            " banned_until is not null and banned_until > now() as banned"
            f" from auth.users where {column} = %s and {column} <> '' for update",
            (LINK_LIFETIME_S, token),
        ).fetchone()
        if user is None:
            raise AuthError(403, "otp_expired", INVALID_LINK)
        if user["banned"]:
            raise AuthError(403, "user_banned", "User is banned")
        if user["expired"]:
            raise AuthError(403, "otp_expired", INVALID_LINK)
        row = cursor.execute(
            f"update auth.users set {column} = '', email_confirmed_at = coalesce(email_confirmed_at, now()),"
            f" last_sign_in_at = now(), updated_at = now() where id = %s returning {USER_COLUMNS}",
            (user["id"],),
        ).fetchone()
    assert row is not None
    return row


def session_fragment(session: dict[str, Any], kind: str) -> str:
    """AccessTokenResponse.AsRedirectURL's fragment, in url.Values.Encode's (sorted) order."""
    values = {"access_token": session["access_token"], "expires_at": str(session["expires_at"]),
              "expires_in": str(session["expires_in"]), "refresh_token": session["refresh_token"], "sb": "",
              "token_type": session["token_type"], "type": kind}  # fmt: skip
    return urlencode(sorted(values.items()))


def error_fragment(error: AuthError) -> str:
    """prepErrorRedirectURL's fragment (oauthErrorMap: 403 access_denied, 400 invalid_request)."""
    oauth = {400: "invalid_request", 401: "unauthorized_client", 403: "access_denied", 500: "server_error"}
    values = {"error_code": error.error_code, "error_description": error.message, "sb": ""}
    if error.status in oauth:
        values["error"] = oauth[error.status]
    return urlencode(sorted(values.items()))


def set_password(state: State, user_id: str, session_id: str, password: str) -> dict[str, Any]:
    """PUT /user {"password"}: User.UpdatePassword, the user's other sessions ended."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise AuthError(422, "weak_password", f"Password should be at least {MIN_PASSWORD_LENGTH} characters.")
    with state.transaction() as cursor:
        same = cursor.execute(
            "select encrypted_password is not null and encrypted_password <> ''"
            " and encrypted_password = extensions.crypt(%s, encrypted_password) as same from auth.users where id = %s",
            (password, user_id),
        ).fetchone()
        if same is not None and same["same"]:
            raise AuthError(422, "same_password", "New password should be different from the old password.")
        row = cursor.execute(
            "update auth.users set encrypted_password = extensions.crypt(%s, extensions.gen_salt('bf', 10)),"
            " recovery_token = '', recovery_sent_at = null, confirmation_token = '', confirmation_sent_at = null,"
            f" updated_at = now() where id = %s returning {USER_COLUMNS}",
            (password, user_id),
        ).fetchone()
        cursor.execute("delete from auth.sessions where user_id = %s and id <> %s", (user_id, session_id))
    assert row is not None
    return row

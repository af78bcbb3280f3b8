"""The admin API's answer to input the database cannot take: NUL (%00) and lone surrogates
anywhere in a query or a body, and a cursor that is not one the API gave. Each is a 400 with a
stable code before any database call, and no ERROR line (which anyone signed in could cause)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from lib.errors import DatabaseError, Refusal
from lib.screen import endpoint
from lib.screen.auth import Operator


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Any:
    calls: list[str] = []
    operator = Operator(
        user_id="00000000-0000-0000-0000-000000000001",
        email="a@example.com",
        role="admin",
        session_id="00000000-0000-0000-0000-000000000002",
    )
    monkeypatch.setattr("lib.screen.auth.authenticate", lambda *_: (operator, "token"))
    monkeypatch.setattr(
        endpoint.Context, "rpc", lambda self, function, params: calls.append(function) or {"changed": True}
    )
    monkeypatch.setattr(endpoint.Context, "require_admin", lambda self: operator)

    def run(method: str, target: str, body: bytes = b"") -> tuple[int, str]:
        from urllib.parse import parse_qs, urlsplit

        url = urlsplit(target)
        call = endpoint.Call(method, url.path, parse_qs(url.query), {"authorization": "Bearer x"}, lambda _: body)
        try:
            endpoint.api(call, None)  # type: ignore[arg-type]
        except Refusal as refusal:
            return refusal.status, refusal.code
        return 200, "ok"

    run.calls = calls  # type: ignore[attr-defined]
    return run


JOB = "/api/admin/jobs/0b0e5e1c-4b5a-4d3e-9a1b-2c3d4e5f6a7b"


@pytest.mark.parametrize("target", [
    "/api/admin/jobs?q=a%00b", "/api/admin/jobs?kind=%00", "/api/admin/jobs?state=failed&code=x%00",
])  # fmt: skip
def test_nul_in_a_query_is_bad_text(api: Any, target: str, caplog: pytest.LogCaptureFixture) -> None:
    assert api("GET", target) == (400, "bad_text")
    assert api.calls == [] and not [r for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize("body", [
    b'{"reason": "a\\u0000b"}', b'{"reason": "\\ud800"}', b'{"reason": "ok \\udfff end"}', b'{"\\ud83d": 1}',
])  # fmt: skip
def test_nul_or_a_lone_surrogate_in_a_body_is_bad_text(api: Any, body: bytes) -> None:
    assert api("POST", f"{JOB}/retry", body) == (400, "bad_text")
    assert api("POST", f"{JOB}/cancel", body) == (400, "bad_text")
    assert api.calls == []


def test_a_surrogate_pair_is_text_like_any_other(api: Any) -> None:
    assert api("POST", f"{JOB}/retry", b'{"reason": "\\ud83d\\ude00"}') == (200, "ok")


def test_nul_in_a_bulk_filter_is_bad_text(api: Any) -> None:
    assert api("POST", "/api/admin/bulk", b'{"action": "retry", "query": "q=%00"}') == (400, "bad_text")
    assert api.calls == []


@pytest.mark.parametrize("cursor", [
    "after_time=yesterday&after_id=0b0e5e1c-4b5a-4d3e-9a1b-2c3d4e5f6a7b",
    "after_time=2026-12-02T06:29:59&after_id=0b0e5e1c-4b5a-4d3e-9a1b-2c3d4e5f6a7b",  # no offset
    "after_time=2026-13-02T06:29:59%2B00:00&after_id=0b0e5e1c-4b5a-4d3e-9a1b-2c3d4e5f6a7b",
    "after_time=2026-12-02T06:29:59%2B00:00&after_id=0b0e5e1c",
    "after_time=2026-12-02T06:29:59%2B00:00",
    "after_id=0b0e5e1c-4b5a-4d3e-9a1b-2c3d4e5f6a7b",
])  # fmt: skip
def test_a_tampered_cursor_is_bad_cursor(api: Any, cursor: str) -> None:
    assert api("GET", f"/api/admin/jobs?{cursor}") == (400, "bad_cursor")
    assert api.calls == []


def test_the_cursor_the_api_gives_is_taken(api: Any) -> None:
    cursor = "after_time=2026-12-02T06:29:59.123456%2B00:00&after_id=0b0e5e1c-4b5a-4d3e-9a1b-2c3d4e5f6a7b"
    assert api("GET", f"/api/admin/jobs?{cursor}") == (200, "ok")
    assert api.calls == ["document_jobs_operator_jobs"]


@pytest.mark.parametrize("sqlstate", ["22023", "22007", "22008", "22P02", "22P05", "22021"])
def test_the_database_refusing_input_is_a_400_without_an_error_line(
    sqlstate: str, caplog: pytest.LogCaptureFixture
) -> None:
    refusal = endpoint.database_refusal(DatabaseError("rpc", "invalid input", code=sqlstate))
    assert (refusal.status, refusal.code) == (400, "bad_request")
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


def test_any_other_database_error_is_still_a_503_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    refusal = endpoint.database_refusal(DatabaseError("rpc", "boom", code="XX000"))
    assert (refusal.status, refusal.code) == (503, "database_unavailable")
    assert [r.levelno for r in caplog.records] == [logging.ERROR]


@pytest.mark.parametrize(
    ("hint", "status", "code"),
    [("operator_banned", 401, "session_ended"), ("operator_deleted", 401, "session_ended"),
     ("role_not_allowed", 403, "not_admin"), ("no_role", 403, "no_role")],
)  # fmt: skip
def test_an_actions_own_check_of_its_admin_is_answered_as_the_screens_check_is(hint: str, status: int,
                                                                               code: str) -> None:  # fmt: skip
    """The action's call refuses an admin Auth banned, deleted or demoted after confirm_admin asked
    (document_jobs_internal.acting_operator): the screen answers it as it answers its own check."""
    sqlstate = "28000" if hint.startswith("operator_") else "42501"
    refusal = endpoint.database_refusal(DatabaseError("rpc", "refused", code=sqlstate, hint=hint))
    assert (refusal.status, refusal.code) == (status, code)

"""The chaos run's budget (chaos/audit.py): a job that ends failed outside the permanent faults is
a failed check unless the run's own faults took all its attempts, and the check prints the job's
attempt history with the fault each attempt met."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from chaos.audit import attempt_history
from chaos.faults import Faults

T0 = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


class Rows:
    """What attempt_history reads of the database: the job's attempts, oldest first."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def execute(self, query: str, params: tuple[Any, ...]) -> Rows:
        return self

    def fetchall(self) -> list[dict[str, Any]]:
        return self.rows


def attempt(n: int, outcome: str, error: str | None, start_s: float, end_s: float) -> dict[str, Any]:
    return {"attempt": n, "generation": n, "outcome": outcome, "error_code": error, "error_message": error,
            "started_at": T0 + timedelta(seconds=start_s), "finished_at": T0 + timedelta(seconds=end_s)}  # fmt: skip


FIVE = [attempt(1, "retried", "resend_unavailable", 0, 1), attempt(2, "retried", "download_failed", 2, 3),
        attempt(3, "lease_expired", None, 4, 12), attempt(4, "lease_expired", None, 13, 21),
        attempt(5, "failed", "resend_timeout", 22, 23)]  # fmt: skip


def faults(**kw: Any) -> Faults:
    f = Faults()
    f.given = {"em_1": ["503 on list", "500 on download"]}
    f.hit_jobs["job_1"].add("kill")
    for key, value in kw.items():
        setattr(f, key, value)
    return f


def test_a_job_whose_faults_took_every_attempt_is_over_budget() -> None:
    history = attempt_history(Rows(FIVE), "job_1", "em_1", faults(), {"job_1": ["complete_document_job_v2:before"]})
    # two provider faults, two expired leases each explained (its kill, its dropped completion)
    assert history.faults_met == 4
    history = attempt_history(Rows(FIVE), "job_1", "em_1", faults(), {})
    assert history.faults_met == 3, "an expired lease nothing explains is not the run's fault"


def test_a_kill_inside_an_expired_attempt_explains_it() -> None:
    # A kill while the claim was in flight: the job was not in the log, so not marked as hit.
    events = [(T0.timestamp() + 15, "kill pid 7 (jobs ['job_2'])")]
    history = attempt_history(Rows(FIVE), "job_1", "em_1", faults(events=events), {})
    assert history.faults_met == 4
    outside = [(T0.timestamp() + 30, "kill pid 7 (jobs ['job_2'])")]
    assert attempt_history(Rows(FIVE), "job_1", "em_1", faults(events=outside), {}).faults_met == 3


def test_the_history_names_each_attempt_and_fault() -> None:
    text = attempt_history(Rows(FIVE), "job_1", "em_1", faults(), {}).render()
    assert "faults given ['503 on list', '500 on download']" in text and "kill (this job)" in text
    assert text.count("\n  attempt ") == 5 and "attempt 5 generation 5: failed resend_timeout" in text

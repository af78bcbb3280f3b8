"""The chaos run's budget (chaos/audit.py): a job that ends failed outside the permanent faults is
a failed check unless the run's own faults took all its attempts. An expired lease is the run's
only when a fault of that attempt explains it: a kill or a freeze of the instance the attempt ran
in (the attempt records its invocation, the function host's log names the invocation's
instance), or a dropped write of that job by that attempt's generation. Each attempt counts once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from chaos.audit import Routed, attempt_history, excuse, instances
from chaos.faults import Faults, InstanceFault

T0 = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
S0 = T0.timestamp()
# Job 1's invocations: the third and fourth attempts ran in pid 7, the others in pid 8.
WHERE = {f"dev1::inv{n}": Routed(7 if n in (3, 4) else 8, S0 + 2 * n - 0.5) for n in range(1, 6)}


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
            "invocation_id": f"dev1::inv{n}", "started_at": T0 + timedelta(seconds=start_s),
            "finished_at": T0 + timedelta(seconds=end_s)}  # fmt: skip


# Attempt 3 held its lease from 6 s to 12 s, attempt 4 from 8 s to 14 s (finished_at: when it passed).
FIVE = [attempt(1, "retried", "resend_unavailable", 2, 3), attempt(2, "retried", "download_failed", 4, 5),
        attempt(3, "lease_expired", "lease_expired", 6, 12), attempt(4, "lease_expired", "lease_expired", 8, 14),
        attempt(5, "failed", "resend_timeout", 10, 11)]  # fmt: skip
DROPPED = {"job_1": [{"write": "complete_document_job_v2:before", "generation": 4, "costs_attempt": True}]}


def faults(*events: InstanceFault, given: list[str] | None = None) -> Faults:
    f = Faults()
    f.given = {"em_1": given if given is not None else ["503 on list", "500 on download"]}
    f.events = list(events)
    return f


def history(f: Faults, dropped: dict[str, list[dict[str, Any]]] | None = None, rows: list[dict[str, Any]] = FIVE):
    return attempt_history(Rows(rows), "job_1", "em_1", f, dropped or {}, WHERE)  # type: ignore[arg-type]


def test_another_instances_kill_excuses_nothing() -> None:
    # pid 8 killed while attempt 3 (in pid 7) held its lease: another job's kill, not this attempt's.
    other = history(faults(InstanceFault("kill", 8, S0 + 7, jobs=("job_2",))))
    assert other.excuses == {} and other.faults_met == 2, "two provider faults, no expired lease explained"


def test_a_kill_of_the_attempts_own_instance_excuses_it() -> None:
    own = history(faults(InstanceFault("kill", 7, S0 + 7)))
    # one kill of pid 7 at 7 s: attempts 3 (6 s to 12 s) and 4 (claimed in pid 7 at 8 s, its
    # invocation sent there at 7.5 s) ran there, but only 3 was live at the kill.
    assert set(own.excuses) == {3} and own.excuses[3].what == "kill pid 7 at " + f"{S0 + 7:.1f}"
    assert own.faults_met == 3


def test_a_kill_while_the_claim_was_in_flight_excuses_the_attempt() -> None:
    # Invocation 4 was sent to pid 7 at 7.5 s; the kill at 7.8 s came before its claim committed (8 s).
    assert set(history(faults(InstanceFault("kill", 7, S0 + 7.8))).excuses) == {3, 4}
    # A kill of an earlier process with the same pid, before the invocation was sent there: not it.
    assert set(history(faults(InstanceFault("kill", 7, S0 + 5))).excuses) == set()


def test_a_kill_of_the_instance_after_the_attempt_ended_excuses_nothing() -> None:
    late = history(faults(InstanceFault("kill", 7, S0 + 14.5)))  # both leases had passed (12 s, 14 s)
    assert late.excuses == {} and late.faults_met == 2
    assert set(history(faults(InstanceFault("kill", 7, S0 + 13))).excuses) == {4}, "4's lease ran to 14 s"


def test_a_freeze_of_the_instance_excuses_the_attempts_it_overlapped() -> None:
    frozen = history(faults(InstanceFault("freeze", 7, S0 + 11, until=S0 + 20)))
    assert set(frozen.excuses) == {3, 4} and frozen.faults_met == 4
    before = history(faults(InstanceFault("freeze", 7, S0 + 1, until=S0 + 5.9)))  # thawed before 3 began
    assert before.excuses == {}
    assert history(faults(InstanceFault("freeze", 8, S0 + 7, until=S0 + 20))).excuses == {}, "another instance"


def test_a_dropped_write_excuses_only_that_jobs_attempt_of_that_generation() -> None:
    assert set(history(faults(), DROPPED).excuses) == {4}
    assert history(faults(), {"job_2": DROPPED["job_1"]}).excuses == {}, "another job's drop"
    other_generation = {"job_1": [DROPPED["job_1"][0] | {"generation": 2}]}
    assert history(faults(), other_generation).excuses == {}


def test_a_job_whose_faults_took_every_attempt_is_over_budget() -> None:
    given = ["503 on list", "500 on download", "timeout on list"]
    full = history(faults(InstanceFault("kill", 7, S0 + 7, jobs=("job_1",)), given=given), DROPPED)
    assert {generation: e.what.split()[0] for generation, e in full.excuses.items()} == {3: "kill", 4: "dropped"}
    assert full.faults_met == 5
    assert history(faults(InstanceFault("kill", 7, S0 + 7), given=given)).faults_met == 4, "4's expiry: nothing"


def test_each_attempt_counts_once_and_faults_that_spend_none_count_nothing() -> None:
    # Three provider faults, but only three attempts ended with a provider's error: three at most.
    many = ["503 on list", "500 on download", "timeout on list", "503 on list"]
    assert history(faults(given=many)).faults_met == 3
    # A 429 of the rate limit releases its job, an expired URL is listed again: no attempt spent.
    assert history(faults(given=["429 on list", "expired URL on download"])).faults_met == 0
    # An attempt that ended with an error of our own making is not a provider fault's.
    ours = [a | {"error_code": "storage_unavailable"} if a["outcome"] == "retried" else a for a in FIVE]
    assert history(faults(), rows=ours).faults_met == 1


def test_a_dropped_failure_write_is_the_attempt_of_the_error_it_reported() -> None:
    # Attempt 3 met the 503 and its failure's write was dropped: its lease passed. One attempt, one fault.
    rows = [attempt(1, "retried", "download_failed", 2, 3), attempt(3, "lease_expired", "lease_expired", 6, 12)]
    dropped = {"job_1": [{"write": "fail_document_job_v2:before", "generation": 3, "costs_attempt": False}]}
    counted = history(faults(), dropped, rows)
    assert counted.excuses[3].what == "dropped fail_document_job_v2:before" and not counted.excuses[3].spends
    assert counted.faults_met == 2
    assert history(faults(given=["503 on list"]), dropped, rows).faults_met == 1


def test_the_history_names_each_attempt_its_instance_and_its_excuse() -> None:
    text = history(faults(InstanceFault("kill", 7, S0 + 7)), DROPPED).render()
    assert "faults given ['503 on list', '500 on download']" in text
    assert text.count("\n  attempt ") == 5 and "attempt 5 generation 5: failed resend_timeout" in text
    assert f"dev1::inv3): kill pid 7 at {S0 + 7:.1f}" in text
    assert "dev1::inv4): dropped complete_document_job_v2:before" in text
    assert "nothing of the run's" not in text
    assert "dev1::inv3) : nothing of the run's" in history(faults()).render()


def test_the_instances_come_from_the_function_hosts_lines(tmp_path: Path) -> None:
    log = tmp_path / "function_host.log"
    log.write_text('{"event": "function_host_invocation", "invocation_id": "dev1::a", "pid": 7, "at": 1.5}\n'
                   '{"event": "job_started", "job_id": "j", "generation": 1, "pid": 8, "at": 2.0}\n'
                   "function_host: POST /api/internal/document_jobs -> 200 12ms\n"
                   '{"event": "function_host_invocation", "invocation_id": "dev1::b", "pi')  # fmt: skip
    assert instances(log) == {"dev1::a": Routed(7, 1.5)}


def test_excuse_reads_an_attempt_with_no_known_invocation_as_unexplained() -> None:
    row = attempt(3, "lease_expired", "lease_expired", 6, 12) | {"invocation_id": None}
    assert excuse(row, faults(InstanceFault("kill", 7, S0 + 7)), [], WHERE) is None

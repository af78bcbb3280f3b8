"""What the chaos run checks, from the database's history of every job row (a trigger installed for
the run only) and the workers' own log lines: every job ended as it must, every attachment stored
once with the provider's bytes, no stale write accepted, no two live lease holders at once, and no
lease passed that a fault of the run does not explain (a kill or a freeze of the instance that held
the attempt, a dropped write of that attempt)."""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg

from chaos import phases
from chaos.faults import SPENDS_NO_ATTEMPT, Faults

# Every update of a job row, with the generation and status before and after (installed for the run only).
AUDIT = """
create table public.chaos_job_audit (
    job_id uuid, old_generation int, new_generation int, old_status text, new_status text,
    old_lease_until timestamptz, at timestamptz default clock_timestamp()
);
create function public.chaos_audit() returns trigger language plpgsql security definer set search_path = '' as $$
begin
    insert into public.chaos_job_audit (job_id, old_generation, new_generation, old_status, new_status, old_lease_until)
    values (new.id, old.generation, new.generation, old.status, new.status, old.lease_until);
    return new;
end $$;
create trigger chaos_audit after update on public.document_jobs for each row execute function public.chaos_audit();
"""


@dataclass
class Execution:
    """One worker's run of one job, from its logs (or its kill)."""

    job_id: str
    generation: int
    pid: int
    started: float
    ended: float | None = None
    outcome: str | None = None
    lease_held_until: float | None = None


def executions(log_file: Path, killed: dict[int, float]) -> list[Execution]:
    found: dict[tuple[str, int], Execution] = {}
    for line in log_file.read_text(errors="replace").splitlines():
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("event") not in ("job_started", "job_finished"):
            continue
        key = (event["job_id"], event["generation"])
        if event["event"] == "job_started":
            found[key] = Execution(event["job_id"], event["generation"], event["pid"], event["at"])
        elif key in found:
            found[key].ended = event["at"]
            found[key].outcome = event["outcome"]
            found[key].lease_held_until = event["lease_held_until"]
    for execution in found.values():
        if execution.ended is None and execution.pid in killed:
            execution.ended, execution.outcome = killed[execution.pid], "killed"
    return list(found.values())


@dataclass(frozen=True)
class Routed:
    """Where an invocation ran: the pid of its instance, and when the function host sent it there."""

    pid: int
    at: float


def instances(log_file: Path) -> dict[str, Routed]:
    """Each invocation (its x-vercel-id, as the attempt history records it) with its instance, from
    the function host's lines (devstack/standins/function_host/host.py, note_invocation)."""
    found: dict[str, Routed] = {}
    for line in log_file.read_text(errors="replace").splitlines():
        if line.startswith('{"event": "function_host_invocation"'):
            with contextlib.suppress(ValueError, KeyError):
                event = json.loads(line)
                found[event["invocation_id"]] = Routed(event["pid"], event["at"])
    return found


@dataclass(frozen=True)
class Excuse:
    """What made an attempt's lease pass. `spends`: the fault took the attempt; a dropped failure
    write did not (the error it reported had already ended the attempt: it is counted as that
    error's)."""

    what: str
    spends: bool = True


def excuse(attempt: dict[str, Any], faults: Faults, drops: list[dict[str, Any]],
           where: dict[str, Routed]) -> Excuse | None:  # fmt: skip
    """Why this attempt's lease passed, if the run's faults say: a kill of the instance that held the
    attempt (after the host sent its invocation there, so that a claim in flight at the kill counts,
    and before the lease passed), a freeze of that instance while the attempt was live, or a dropped
    write of this job by this attempt's generation. Another instance's kill, a kill after the lease
    passed, another job's drop: nothing. None when nothing explains it."""
    start, end = attempt["started_at"].timestamp(), attempt["finished_at"].timestamp()
    routed = where.get(attempt["invocation_id"] or "")
    for fault in faults.events:
        if routed is None or fault.pid != routed.pid:
            continue
        if fault.kind == "kill" and routed.at <= fault.at <= end:
            return Excuse(str(fault))
        if fault.kind == "freeze" and fault.at <= end and fault.ends >= start:
            return Excuse(str(fault))
    mine = [drop for drop in drops if drop["generation"] == attempt["generation"]]
    for drop in sorted(mine, key=lambda drop: not drop["costs_attempt"]):
        return Excuse(f"dropped {drop['write']}", spends=drop["costs_attempt"])
    return None


@dataclass
class AttemptHistory:
    """One job's attempts as the database recorded them, beside the faults the run gave it: what a
    failed check prints, to tell an attempt the harness spent from one the product spent."""

    job_id: str
    attempts: list[dict[str, Any]]
    given: list[str]  # the provider faults set up for its e-mail
    excuses: dict[int, Excuse]  # generation -> what made that attempt's lease pass

    @property
    def faults_met(self) -> int:
        """Attempts the run's faults took, each attempt counted once: every expired lease that a
        fault of its own explains, and, for each provider fault given that spends an attempt, one
        attempt that ended with a provider's error (or whose lease passed because its failure's
        write was dropped). Released attempts spent nothing and are not counted."""
        expired = sum(1 for e in self.excuses.values() if e.spends)
        errors = sum(1 for a in self.attempts if a["outcome"] in ("retried", "failed")
                     and (a["error_code"] or "").startswith(PROVIDER_ERRORS))  # fmt: skip
        errors += sum(1 for e in self.excuses.values() if not e.spends)
        provider = sum(1 for fault in self.given if fault not in SPENDS_NO_ATTEMPT)
        return expired + min(errors, provider)

    def render(self) -> str:
        lines = [f"  job {self.job_id}: faults given {self.given or 'none'}"]
        for a in self.attempts:
            why = self.excuses.get(a["generation"])
            lines.append(
                f"  attempt {a['attempt']} generation {a['generation']}: {a['outcome']}"
                f" {a['error_code'] or ''} {(a['error_message'] or '')[:120]!r}"
                f" ({a['started_at']:%H:%M:%S.%f} to {a['finished_at']:%H:%M:%S.%f}, {a['invocation_id']})"
                + (f": {why.what}" if why else " : nothing of the run's" if a["outcome"] == "lease_expired" else "")
            )
        return "\n".join(lines)


# The error codes of Resend's answers and downloads: what the provider faults end an attempt with.
PROVIDER_ERRORS = ("resend_", "download_")
ATTEMPTS = """select attempt, generation, outcome, error_code, error_message, invocation_id,
                     coalesce(started_at, finished_at) as started_at, finished_at
                from document_job_attempts"""


def attempt_history(conn: psycopg.Connection, job_id: str, email_id: str, faults: Faults,
                    dropped: dict[str, list[dict[str, Any]]], where: dict[str, Routed]) -> AttemptHistory:  # fmt: skip
    attempts = conn.execute(f"{ATTEMPTS} where job_id = %s order by generation", (job_id,)).fetchall()
    excuses = {}
    for a in attempts:
        if a["outcome"] == "lease_expired" and (why := excuse(a, faults, dropped.get(job_id, []), where)):
            excuses[a["generation"]] = why
    return AttemptHistory(job_id, attempts, faults.given.get(email_id, []), excuses)


def expiries(conn: psycopg.Connection, faults: Faults, dropped: dict[str, list[dict[str, Any]]],
             where: dict[str, Routed]) -> tuple[dict[str, int], list[str]]:  # fmt: skip
    """Every expired lease of the run (any kind of job), counted by what excuses it, and those that
    nothing of the run's excuses, each with where it ran."""
    counted: Counter[str] = Counter()
    unexcused = []
    for a in conn.execute(f"{ATTEMPTS.replace('select ', 'select job_id::text, ', 1)} where outcome = 'lease_expired'"):
        why = excuse(a, faults, dropped.get(a["job_id"], []), where)
        counted[why.what.split(" ")[0] if why else "not excused"] += 1
        if why is None:
            routed = where.get(a["invocation_id"] or "")
            unexcused.append(f"job {a['job_id']} generation {a['generation']} ({a['started_at']:%H:%M:%S.%f} to "
                             f"{a['finished_at']:%H:%M:%S.%f}) in {a['invocation_id']}, "
                             f"{f'instance pid {routed.pid}' if routed else 'no instance known'}")  # fmt: skip
    names = {"kill": "excused by a kill of its instance", "freeze": "excused by a freeze of its instance",
             "dropped": "excused by a dropped write of it", "not excused": "not excused"}  # fmt: skip
    return {names[k]: n for k, n in counted.items()}, unexcused


def check(conn: psycopg.Connection, env: dict[str, str], emails: list[dict[str, Any]], faults: Faults,
          runs: list[Execution], dropped: dict[str, list[dict[str, Any]]],
          where: dict[str, Routed]) -> tuple[list[str], dict[str, Any]]:  # fmt: skip
    problems: list[str] = []
    jobs = {str(r["provider_email_id"]): r for r in conn.execute(
        """select e.provider_email_id, j.id::text as job_id, j.status, j.attempts, j.max_attempts,
                  j.generation, j.last_error_code
             from fax_received_emails e join document_jobs j on j.fax_received_email_id = e.id
            where j.kind = 'fetch_email'""")}  # fmt: skip
    over_budget = 0
    for data in emails:
        job = jobs.get(data["email_id"])
        expected = "failed" if data["email_id"] in faults.permanent_emails else "completed"
        if job is None or job["status"] == expected:
            if job is None:
                problems.append(f"e-mail {data['email_id']}: no job, expected {expected}")
            continue
        history = attempt_history(conn, job["job_id"], data["email_id"], faults, dropped, where)
        if expected == "completed" and job["status"] == "failed" and history.faults_met >= job["max_attempts"]:
            over_budget += 1  # the harness's faults took every attempt: failing is right
            print(f"e-mail {data['email_id']}: failed, its {history.faults_met} faults took all its attempts\n"
                  f"{history.render()}")  # fmt: skip
            continue
        problems.append(f"e-mail {data['email_id']}: job {job['status']}, expected {expected}, "
                        f"after {history.faults_met} fault(s) of the run\n{history.render()}")  # fmt: skip

    # Exactly once, in the table and in Storage, with the provider's bytes.
    rows = conn.execute(
        """select e.provider_email_id, e.id::text as email_row, a.provider_attachment_id, a.sha256, a.storage_path
             from fax_received_email_attachments a join fax_received_emails e on e.id = a.fax_received_email_id"""
    ).fetchall()
    by_email: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_email[row["provider_email_id"]].append(row)
    storage = Path(env["DEVSTACK_STORAGE_DIR"]) / "fax-attachments"
    digests = phases.provider_digests(env)
    for data in emails:
        if data["email_id"] in faults.permanent_emails:
            continue
        stored = by_email.get(data["email_id"], [])
        if sorted(r["provider_attachment_id"] for r in stored) != sorted(a["id"] for a in data["attachments"]):
            problems.append(f"e-mail {data['email_id']}: attachment rows differ from the provider's list")
            continue
        folder = storage / "fax_received_emails" / stored[0]["email_row"]
        # The attachments' objects (the e-mail's raw message is in a folder of its own, raw/).
        files = [p for p in folder.glob("*") if p.is_file() and not p.name.endswith("#meta.json")]
        if len(files) != len(stored):
            problems.append(f"e-mail {data['email_id']}: {len(files)} objects for {len(stored)} attachments")
        for row in stored:
            if hashlib.sha256((storage / row["storage_path"]).read_bytes()).hexdigest() != row["sha256"]:
                problems.append(f"attachment {row['provider_attachment_id']}: stored bytes differ from the sha256")
            if row["sha256"] != digests.get(row["provider_attachment_id"]):
                problems.append(f"attachment {row['provider_attachment_id']}: not the provider's bytes")

    # No stale write accepted: every outcome a worker says it recorded shows in the job's history as
    # a transition out of "running" made while the row still had that worker's generation. (Had a
    # stale generation's write been accepted, the transition would carry a later generation.)
    audit = conn.execute("select * from chaos_job_audit order by at").fetchall()
    transitions = {
        (str(r["job_id"]), r["old_generation"], r["new_status"])
        for r in audit
        if r["old_status"] == "running" and r["new_generation"] == r["old_generation"]
    }
    claims = sum(1 for r in audit if r["new_generation"] > r["old_generation"])
    expected_status = {"completed": "completed", "retried": "queued", "failed": "failed", "released": "queued"}
    unmatched = [run for run in runs if run.outcome in expected_status
                 and (run.job_id, run.generation, expected_status[run.outcome]) not in transitions]  # fmt: skip
    for run in unmatched:
        problems.append(f"job {run.job_id}: generation {run.generation} reported {run.outcome}, "
                        "but no such write by that generation is in the database's history")  # fmt: skip

    # No two live lease holders at once: when executions of one job overlap, the earlier one's
    # lease had passed before the later one claimed the job, in the database's record (the
    # lease_until the claim replaced) and as the earlier worker itself knew it. The times are the
    # database's where it has them: a log line is written after the write it reports, and a worker
    # whose instance is slow or frozen in between would seem to hold the job longer than it did.
    claim_rows = {(str(r["job_id"]), r["new_generation"]): r for r in audit
                  if r["new_generation"] > r["old_generation"]}  # fmt: skip
    gave_up: dict[tuple[str, int], float] = {}
    for r in audit:
        if r["old_status"] == "running" and r["new_status"] != "running" and r["new_generation"] == r["old_generation"]:
            gave_up.setdefault((str(r["job_id"]), r["old_generation"]), r["at"].timestamp())
    overlaps = 0
    per_job: dict[str, list[Execution]] = defaultdict(list)
    for run in runs:
        per_job[run.job_id].append(run)
    for job_runs in per_job.values():
        job_runs.sort(key=lambda r: r.generation)
        for earlier, later in itertools.pairwise(job_runs):
            claim = claim_rows.get((later.job_id, later.generation))
            claimed_at = claim["at"].timestamp() if claim else later.started
            ends = [t for t in (earlier.ended, gave_up.get((earlier.job_id, earlier.generation))) if t is not None]
            if not ends or min(ends) <= claimed_at:
                continue  # no overlap (or a frozen run still unaccounted for: it wrote nothing, see above)
            overlaps += 1
            replaced = claim["old_lease_until"] if claim and claim["old_status"] == "running" else None
            held = max(earlier.lease_held_until or 0.0, replaced.timestamp() if replaced else 0.0)
            if held > claimed_at + 0.001:  # the log rounds to the millisecond
                problems.append(f"job {earlier.job_id}: generations {earlier.generation} and {later.generation} "
                                f"held live leases at once")  # fmt: skip

    # Throttling spends no attempt: a 429 of the rate limit (injected, or met at the rate-limited
    # stand-in) and a wait for the limiter longer than the budget end their attempt as a release.
    throttled = conn.execute(
        """select outcome, count(*) as n from document_job_attempts
            where error_code in ('resend_rate_limited', 'resend_rate_limit_wait') group by 1"""
    ).fetchall()
    for row in throttled:
        if row["outcome"] != "released":
            problems.append(f"{row['n']} attempt(s) spent on throttling (outcome {row['outcome']})")

    # Every lease that passed, of every job: the run caused it, or an attempt was lost that no
    # fault explains (a worker that outlived its lease, a write lost on the way: the product's).
    expired, unexcused = expiries(conn, faults, dropped, where)
    problems += [f"a lease passed that no fault of the run explains: {line}" for line in unexcused]
    invocations = [r["invocation_id"] for r in conn.execute("select invocation_id from document_job_attempts")]
    placed = sum(1 for invocation in invocations if invocation in where)

    outcomes = Counter(run.outcome or "unfinished" for run in runs)
    statuses = Counter(job["status"] for job in jobs.values())
    errors = Counter(job["last_error_code"] for job in jobs.values() if job["last_error_code"])
    figures = {
        "emails": len(emails),
        "attachments": sum(len(d["attachments"]) for d in emails),
        "attachment_rows": len(rows),
        "jobs": dict(statuses),
        "jobs failed because the run's faults took all their attempts": over_budget,
        "claims": claims,
        "executions": dict(outcomes),
        "overlapping_executions_checked": overlaps,
        "stale_writes_refused (outcome lost)": outcomes.get("lost", 0),
        "recorded_outcomes_without_matching_write": len(unmatched),
        "last_error_codes": dict(errors),
        "attempts ended by throttling": {row["outcome"]: row["n"] for row in throttled},
        "attempts whose instance is known": f"{placed} of {len(invocations)}",
        "lease expiries": expired,
    }
    return problems, figures

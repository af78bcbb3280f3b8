"""make chaos: the queue under crashes, frozen workers, provider faults and dropped database calls.

On a stack of its own, with short leases and backoffs (settings, not code changes):
- delivers signed webhooks for N e-mails with 2-5 attachments each; every webhook kicks the
  worker, and a simulated cron tick calls invoke_document_jobs every 2 s (the real pg_cron
  ticks too, once a minute), so invocations overlap;
- the Resend sample provider enforces Resend's team rate limit (5 requests a second) throughout,
  so the workers' shared limiter, the cap on invocations in flight and the follow-ups are part
  of every run;
- on a seed: SIGKILLs worker instances mid-job; SIGSTOPs one past its leases and SIGCONTs it
  after its jobs were claimed again (the function host runs Fluid compute, devstack/function_host.py:
  an instance serves several invocations at once, and a kill or a freeze takes all of them); the
  Resend sample provider answers 5xx, 429 with retry-after, slowly, not at all (timeouts) and with
  expired download URLs; the local gateway drops the
  connection of complete/fail calls before or after they commit; a few e-mails get a permanent
  404;
- then checks, and prints: every job completed (or failed only where a permanent fault was
  injected); every attachment stored exactly once, in Storage and in the table, with the
  provider's bytes; no write by a stale generation accepted; no two live lease holders ever
  working on one job at once; no attempt spent on throttling (a 429 of the rate limit, or a wait
  for the limiter, ends its attempt as a release);
- then runs the phases of devstack/chaos_phases.py on the same stack: a deleted Resend key (the
  jobs wait, the outage alert fires once, a key fix drains them) and lying Content-Lengths
  (nothing wrong stored).

.venv/bin/python -m devstack.chaos [--emails 500] [--seed 1] [--write-docs]
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import itertools
import json
import os
import random
import signal
import sys
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg
from psycopg.rows import dict_row

from devstack import chaos_phases, inbound, lifecycle, stack

LEASE_S = 6
WORKER = "api/internal/document_jobs.py"
DOCS = Path(__file__).resolve().parent.parent / "docs" / "RELIABILITY.md"
FIGURES_START, FIGURES_END = "<!-- chaos figures: start -->", "<!-- chaos figures: end -->"

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
class Faults:
    kills: int = 0  # worker instances
    jobs_killed: int = 0  # the jobs they were running
    freezes: int = 0
    permanent_emails: set[str] = field(default_factory=set)
    transient_emails: set[str] = field(default_factory=set)


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


# Transient faults an e-mail may be given, each once. A job meets at most two of them, one kill
# and one freeze: fewer failures than its 5 attempts, so every job must end completed unless it
# was given a permanent fault.
TRANSIENT_FAULTS = (
    {"kind": "status", "status": 503, "target": "list"},
    {"kind": "status", "status": 429, "name": "rate_limit_exceeded", "retry_after": 1, "target": "list"},
    {"kind": "timeout", "delay_s": 2.5, "target": "list"},
    {"kind": "status", "status": 500, "target": "download"},
    {"kind": "expired_url", "target": "download"},
)


def configure_faults(env: dict[str, str], emails: list[dict[str, Any]], rng: random.Random, faults: Faults) -> None:
    provider = env["RESEND_API_URL"]
    ids = [data["email_id"] for data in emails]
    faults.permanent_emails = set(rng.sample(ids, max(1, len(ids) // 50)))
    for email_id in ids:
        if email_id in faults.permanent_emails:
            chosen = [{"kind": "status", "status": 404, "name": "not_found", "target": "list"}]
        elif rng.random() < 0.4:
            faults.transient_emails.add(email_id)
            chosen = [fault | {"count": 1} for fault in rng.sample(TRANSIENT_FAULTS, rng.randint(1, 2))]
        else:
            continue
        for fault in chosen:
            httpx.post(
                f"{provider}/_control/faults", json=fault | {"email_id": email_id}, timeout=10
            ).raise_for_status()
    # Slow answers fail nothing; they widen the windows in which workers overlap.
    httpx.post(f"{provider}/_control/faults", json={"kind": "slow", "delay_s": 0.4, "probability": 0.03},
               timeout=10).raise_for_status()  # fmt: skip
    httpx.post(
        f"{env['SUPABASE_URL']}/_control/faults",
        json={
            "rpcs": [
                "complete_document_job",
                "complete_document_job_and_claim_next",
                "fail_document_job",
                "complete_document_job_and_follow_up",
                "fail_document_job_and_follow_up",
            ],
            "probability": 0.03,
            "seed": rng.random(),
        },
        timeout=10,
    ).raise_for_status()


def running_workers(invocations: Path) -> list[int]:
    pids = []
    for entry in invocations.glob("*"):
        try:
            if entry.read_text() == WORKER and Path(f"/proc/{entry.name}").exists():
                pids.append(int(entry.name))
        except (OSError, ValueError):
            continue  # it finished while we looked
    return pids


class ActiveJobs:
    """Which jobs (and generations) each worker process is working on right now, from the function
    host's log: under Fluid compute one instance runs several invocations, so several jobs."""

    def __init__(self, log_file: Path) -> None:
        self.log_file = log_file
        self.offset = 0
        self.by_pid: dict[int, dict[str, int]] = defaultdict(dict)

    def refresh(self) -> dict[int, dict[str, int]]:
        with open(self.log_file, "rb") as log:
            log.seek(self.offset)
            chunk = log.read()
        complete = chunk[: chunk.rfind(b"\n") + 1]
        self.offset += len(complete)
        for line in complete.decode(errors="replace").splitlines():
            if line.startswith('{"event": "job_'):
                event = json.loads(line)
                jobs = self.by_pid[event["pid"]]
                if event["event"] == "job_started":
                    jobs[event["job_id"]] = event["generation"]
                elif event["event"] == "job_finished" and jobs.get(event["job_id"]) == event["generation"]:
                    del jobs[event["job_id"]]
        return {pid: jobs for pid, jobs in self.by_pid.items() if jobs}


class Chaos:
    def __init__(self, env: dict[str, str], rng: random.Random, faults: Faults) -> None:
        self.env = env
        self.rng = rng
        self.faults = faults
        self.invocations = Path(env["DEVSTACK_FOLDER"]) / "invocations"
        self.active = ActiveJobs(Path(env["DEVSTACK_FOLDER"]) / "function_host.log")
        self.killed: dict[int, float] = {}  # pid -> when
        self.frozen: tuple[int, dict[str, int], float] | None = None  # pid, its jobs and generations, since
        self.hit_jobs: dict[str, set[str]] = defaultdict(set)  # job -> "kill", "freeze": once each per job

    def step(self, conn: psycopg.Connection, now: float) -> None:
        workers = set(running_workers(self.invocations))
        active = self.active.refresh()
        mid_job = [pid for pid in active if pid in workers and pid not in self.killed]
        if not self.every_claim_logged(conn):
            # Some instance holds a job its log does not show yet: it would be hit outside its budget.
            # About half the steps are skipped so, hence the odds below are twice what they were.
            mid_job = []
        # A kill or a freeze takes every job of the instance: only instances none of whose jobs met
        # that fault yet are candidates, so that no job meets more faults than it has attempts.
        killable = [pid for pid in mid_job if all("kill" not in self.hit_jobs[job] for job in active[pid])]
        if killable and self.rng.random() < 0.3:
            victim = self.rng.choice(killable)
            for job in active[victim]:
                self.hit_jobs[job].add("kill")
            os.kill(victim, signal.SIGKILL)
            self.killed[victim] = time.time()
            (self.invocations / str(victim)).unlink(missing_ok=True)
            self.faults.kills += 1
            self.faults.jobs_killed += len(active[victim])
            mid_job.remove(victim)
        freezable = [pid for pid in mid_job if all("freeze" not in self.hit_jobs[job] for job in active[pid])]
        if self.frozen is None and freezable and self.rng.random() < 0.2:
            victim = self.rng.choice(freezable)
            for job in active[victim]:
                self.hit_jobs[job].add("freeze")
            os.kill(victim, signal.SIGSTOP)
            self.frozen = (victim, dict(active[victim]), now)
            self.faults.freezes += 1
        elif self.frozen:
            # Thaw once every job of the frozen worker was claimed again (its lease passed), so that
            # it comes back as a stale holder of each; or after a while if nobody claimed them.
            _, jobs, since = self.frozen
            rows = conn.execute("select id::text, generation from document_jobs where id = any(%s::uuid[])",
                                (list(jobs),)).fetchall()  # fmt: skip
            if all(row["generation"] > jobs[row["id"]] for row in rows) or now - since > 6 * LEASE_S:
                self.thaw()

    def every_claim_logged(self, conn: psycopg.Connection) -> bool:
        """Whether every running job (and generation) in the database is in some instance's log. An
        instance runs several invocations, and one may be between its claim and the job_started
        line; read after the log, so a claim the log missed shows here."""
        logged = {(job, generation) for jobs in self.active.by_pid.values() for job, generation in jobs.items()}
        running = conn.execute("select id::text, generation from document_jobs where status = 'running'")
        return all((row["id"], row["generation"]) in logged for row in running)

    def thaw(self) -> None:
        if self.frozen:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.frozen[0], signal.SIGCONT)
            self.frozen = None


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


def check(conn: psycopg.Connection, env: dict[str, str], emails: list[dict[str, Any]], faults: Faults,
          runs: list[Execution]) -> tuple[list[str], dict[str, Any]]:  # fmt: skip
    problems: list[str] = []
    jobs = {str(r["provider_email_id"]): r for r in conn.execute(
        """select e.provider_email_id, j.id::text as job_id, j.status, j.attempts, j.generation, j.last_error_code
             from fax_received_emails e join document_jobs j on j.fax_received_email_id = e.id""")}  # fmt: skip
    for data in emails:
        job = jobs.get(data["email_id"])
        expected = "failed" if data["email_id"] in faults.permanent_emails else "completed"
        if job is None or job["status"] != expected:
            problems.append(f"e-mail {data['email_id']}: job {job and job['status']}, expected {expected}")

    # Exactly once, in the table and in Storage, with the provider's bytes.
    rows = conn.execute(
        """select e.provider_email_id, e.id::text as email_row, a.provider_attachment_id, a.sha256, a.storage_path
             from fax_received_email_attachments a join fax_received_emails e on e.id = a.fax_received_email_id"""
    ).fetchall()
    by_email: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_email[row["provider_email_id"]].append(row)
    storage = Path(env["DEVSTACK_STORAGE_DIR"]) / "fax-attachments"
    digests = chaos_phases.provider_digests(env)
    for data in emails:
        if data["email_id"] in faults.permanent_emails:
            continue
        stored = by_email.get(data["email_id"], [])
        if sorted(r["provider_attachment_id"] for r in stored) != sorted(a["id"] for a in data["attachments"]):
            problems.append(f"e-mail {data['email_id']}: attachment rows differ from the provider's list")
            continue
        folder = storage / "fax_received_emails" / stored[0]["email_row"]
        files = [p for p in folder.glob("*") if not p.name.endswith("#meta.json")]
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

    outcomes = Counter(run.outcome or "unfinished" for run in runs)
    statuses = Counter(job["status"] for job in jobs.values())
    errors = Counter(job["last_error_code"] for job in jobs.values() if job["last_error_code"])
    figures = {
        "emails": len(emails),
        "attachments": sum(len(d["attachments"]) for d in emails),
        "attachment_rows": len(rows),
        "jobs": dict(statuses),
        "claims": claims,
        "executions": dict(outcomes),
        "overlapping_executions_checked": overlaps,
        "stale_writes_refused (outcome lost)": outcomes.get("lost", 0),
        "recorded_outcomes_without_matching_write": len(unmatched),
        "last_error_codes": dict(errors),
        "attempts ended by throttling": {row["outcome"]: row["n"] for row in throttled},
    }
    return problems, figures


def run(email_count: int, seed: int, time_limit_s: float, write_docs: bool) -> int:
    rng = random.Random(seed)
    faults = Faults()
    started_at = time.monotonic()
    print(f"chaos: {email_count} e-mails, seed {seed}, lease {LEASE_S} s, backoff base 1 s")
    # The stack's function host runs Fluid compute, as Vercel does: concurrent invocations share
    # warm instances, so a kill or a freeze hits every invocation of its instance at once.
    running = stack.start({"JOB_LEASE_SECONDS": str(LEASE_S), "RESEND_TIMEOUT_SECONDS": "1.5"})
    env = running.env
    chaos = Chaos(env, rng, faults)
    try:
        with psycopg.connect(env["DEVSTACK_ADMIN_DATABASE_URL"], autocommit=True, row_factory=dict_row) as conn:
            conn.execute(AUDIT)
            conn.execute("update document_jobs_settings set backoff_base = '1 second'")
            stack.store_vault_secrets(conn, env)
            emails = [
                inbound.add_email(env["RESEND_API_URL"], attachments=rng.randint(2, 5)) for _ in range(email_count)
            ]
            configure_faults(env, emails, rng, faults)

            delivered: list[int] = []

            def deliver_all() -> None:
                def deliver(data: dict[str, Any]) -> int:
                    return inbound.deliver_until_accepted(env["FUNCTIONS_URL"], env["RESEND_WEBHOOK_SECRET"], data)

                with ThreadPoolExecutor(8) as pool:
                    delivered.extend(pool.map(deliver, emails))

            sender = threading.Thread(target=deliver_all)
            sender.start()
            next_tick = 0.0
            while True:
                now = time.monotonic()
                if now >= next_tick:
                    conn.execute("select invoke_document_jobs()")  # the cron path, on a 2 s tick
                    next_tick = now + 2
                chaos.step(conn, now)
                live = conn.execute(
                    "select count(*) as n from document_jobs where status in ('queued', 'running')"
                ).fetchone()["n"]
                if not sender.is_alive() and live == 0 and chaos.frozen is None:
                    break
                if now - started_at > time_limit_s:
                    print(f"chaos: time limit of {time_limit_s:.0f} s reached with {live} live jobs")
                    break
                time.sleep(0.25)
            chaos.thaw()
            sender.join()
            time.sleep(1)  # let a thawed or straggling invocation finish its last (refused) writes
            runs = executions(Path(env["DEVSTACK_FOLDER"]) / "function_host.log", chaos.killed)
            problems, figures = check(conn, env, emails, faults, runs)
            # Then the phases of failures that are not the job's own, on the same stack.
            phase_problems, figures["phases"] = chaos_phases.run_all(conn, env, max(4, email_count // 20))
            problems += phase_problems
        provider_faults = httpx.get(f"{env['RESEND_API_URL']}/_control/stats", timeout=10).json()
        rate_limit = httpx.get(f"{env['RESEND_API_URL']}/_control/rate_limit", timeout=10).json()
        gateway_faults = httpx.get(f"{env['SUPABASE_URL']}/_control/faults", timeout=10).json()
    finally:
        chaos.thaw()
        stack.stop(running)
    figures["faults"] = {
        "worker instances killed (SIGKILL)": faults.kills,
        "jobs running on the killed instances": faults.jobs_killed,
        "worker instances frozen past their leases (SIGSTOP/SIGCONT)": faults.freezes,
        "e-mails with a permanent 404": len(faults.permanent_emails),
        "e-mails given one or two transient faults": len(faults.transient_emails),
        **{
            f"provider {k.removeprefix('fault:').rstrip(':')}": v
            for k, v in provider_faults.items()
            if k.startswith("fault:")
        },
        **{f"dropped connection: {k}": v for k, v in gateway_faults.items()},
    }
    figures["Resend rate limit"] = {
        "requests a second allowed": rate_limit["per_second"],
        "API requests": rate_limit["requests"],
        "429s answered for it": rate_limit["refused"],
        "busiest second (requests)": rate_limit["busiest_second"],
    }
    figures["webhook answers"] = dict(Counter(delivered))
    figures["seconds"] = round(time.monotonic() - started_at, 1)
    report = render(figures, problems, email_count, seed)
    print(report)
    if write_docs:
        write_figures(report)
    return 1 if problems else 0


def render(figures: dict[str, Any], problems: list[str], email_count: int, seed: int) -> str:
    title = (
        f"Chaos run: {email_count} e-mails, seed {seed}, {figures['seconds']} s, lease {LEASE_S} s, backoff base 1 s"
    )
    lines = [title, "", "| figure | value |", "|---|---|"]
    for key, value in figures.items():
        if isinstance(value, dict):
            for sub, n in sorted(value.items()):
                lines.append(f"| {key}: {sub} | {n} |")
        elif key != "seconds":
            lines.append(f"| {key} | {value} |")
    lines += ["", "Checks: " + ("all passed" if not problems else f"{len(problems)} FAILED")]
    lines += [f"- {problem}" for problem in problems[:50]]
    return "\n".join(lines)


def write_figures(report: str) -> None:
    text = DOCS.read_text()
    start, end = text.index(FIGURES_START) + len(FIGURES_START), text.index(FIGURES_END)
    DOCS.write_text(text[:start] + "\n" + report + "\n" + text[end:])


def main() -> None:
    parser = argparse.ArgumentParser(description="the queue under crashes, stale workers and faults")
    parser.add_argument("--emails", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=1200)
    parser.add_argument("--write-docs", action="store_true", help=f"put the figures into {DOCS.name}")
    args = parser.parse_args()
    with lifecycle.guarded(stack.stop_record):
        code = run(args.emails, args.seed, args.time_limit, args.write_docs)
    sys.exit(code)


if __name__ == "__main__":
    main()

"""The chaos run's faults: the provider's and the gateway's, set up front for chosen e-mails through
the fault layer (chaos/layer/), and the worker instances killed (SIGKILL) or frozen past their
leases (SIGSTOP) while they run jobs."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg

LEASE_S = 6  # the run's job lease (JOB_LEASE_SECONDS): short, so that frozen workers outlive theirs
WORKER = "api/internal/document_jobs.py"


@dataclass
class InstanceFault:
    """A kill (SIGKILL) or a freeze (SIGSTOP, then SIGCONT at `until`) of one worker instance."""

    kind: str  # "kill" or "freeze"
    pid: int
    at: float  # wall time
    until: float | None = None  # a freeze's thaw; a kill is over at once
    jobs: tuple[str, ...] = ()  # the jobs the instance's log showed, for the printed history

    @property
    def ends(self) -> float:
        """When the instance ran again (never, for a kill: its work ended at `at`)."""
        return self.at if self.kind == "kill" else self.until if self.until is not None else float("inf")

    def __str__(self) -> str:
        return f"{self.kind} pid {self.pid} at {self.at:.1f}"


@dataclass
class Faults:
    kills: int = 0  # worker instances
    jobs_killed: int = 0  # the jobs they were running
    freezes: int = 0
    permanent_emails: set[str] = field(default_factory=set)
    transient_emails: set[str] = field(default_factory=set)
    # What each fault was, for the attempt history a failed check prints.
    given: dict[str, list[str]] = field(default_factory=dict)  # e-mail id -> its provider faults
    events: list[InstanceFault] = field(default_factory=list)  # the kills and freezes, in order
    hit_jobs: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # job -> "kill", "freeze"


# Transient faults an e-mail may be given, each once. A job meets at most two of them, one kill
# and one freeze, and one dropped database call (chaos/layer/gateway.py): usually fewer failures
# than its 5 attempts. Where they add up to its attempts (a kill that lands while a claim is in
# flight hits a job the log does not show yet, so it is not spared a second kill; a drop comes on
# top), the job may end failed: the audit counts the attempts the faults took from the database's
# attempts, each once, and expects completed whenever they stay below its attempts.
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
            faults.given[email_id] = [describe(fault) for fault in chosen]
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
                "complete_document_job_v2",
                "complete_document_job_and_claim_next_v2",
                "fail_document_job_v2",
                "complete_document_job_and_follow_up_v2",
                "fail_document_job_and_follow_up_v2",
            ],
            "probability": 0.03,
            "seed": rng.random(),
        },
        timeout=10,
    ).raise_for_status()


# Provider faults after which the worker goes on in the same attempt or gives it back: a 429 of
# the rate limit releases the job without spending an attempt, an expired URL is listed again
# once. The audit counts the others, one attempt each at most.
SPENDS_NO_ATTEMPT = frozenset({"429 on list", "expired URL on download"})


def describe(fault: dict[str, Any]) -> str:
    what = {"status": f"{fault.get('status')}", "timeout": "timeout", "expired_url": "expired URL"}[fault["kind"]]
    return f"{what} on {fault['target']}"


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
        # pid, its jobs and generations, since (the run's clock), the fault as recorded
        self.frozen: tuple[int, dict[str, int], float, InstanceFault] | None = None
        self.hit_jobs = faults.hit_jobs  # job -> "kill", "freeze": once each per job

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
            self.faults.events.append(InstanceFault("kill", victim, self.killed[victim], jobs=tuple(active[victim])))
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
            freeze = InstanceFault("freeze", victim, time.time(), jobs=tuple(active[victim]))
            self.frozen = (victim, dict(active[victim]), now, freeze)
            self.faults.events.append(freeze)
            self.faults.freezes += 1
        elif self.frozen:
            # Thaw once every job of the frozen worker was claimed again (its lease passed), so that
            # it comes back as a stale holder of each; or after a while if nobody claimed them.
            _, jobs, since, _ = self.frozen
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
            self.frozen[3].until = time.time()
            self.frozen = None

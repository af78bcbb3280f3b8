"""Memory of one Fluid instance running its concurrency limit of jobs, for two attachment sizes:
1 MiB and ATTACHMENT_MAX_BYTES (40 MiB by default, the most a job may store), against Vercel's
default function memory.

Under Fluid compute one instance serves several invocations as threads of one process, so what
each holds adds up. For each size, `concurrency` e-mails with one attachment of that size each are
served by a sample provider in this process and their jobs enqueued without a kick (the cron job
paused); then as many worker calls at once go through one new instance (devstack/standins/function_host/,
fluid mode, that concurrency), each claiming one job. The instance's peak resident set (VmHWM in
/proc/<pid>/status) is read after a first call with an empty queue (the imports: the idle
instance) and after the wave. Each attachment streams from the download to Storage in bounded
chunks (lib/worker/resend.py), so the goal is a peak of at most the idle instance plus 8 MiB a
job, and a cost per job that does not grow with the attachment (1 MiB and 40 MiB within 2x).
Before streaming, the report of 2026-12-01 measured the same wave at 40 MiB on this machine: its
figures are quoted as `BEFORE`.

A Vercel function under Fluid compute has 2 GB of memory by default (the Standard size, 1 vCPU /
2 GB: Vercel's changelog "Higher defaults and limits for Vercel Functions running Fluid compute";
also Hobby's maximum, docs: functions/limitations; taken as 2 GiB here), and the figure must fit
in half of it.

python -m devstack run -- .venv/bin/python -m bench.instance_memory [--quick]
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psycopg
from psycopg.types.json import Jsonb

from bench import flow
from bench.common import Section, Table, connect, empty_shared_tables, env, fmt, run_alone
from devstack.stack import WORKER_PATH
from devstack.standins.function_host import DEFAULT_CONCURRENCY, FunctionHost
from devstack.standins.resend import ResendProvider, SampleAttachment, SampleEmail
from devstack.vercel_build import Build
from lib.settings import WorkerSettings

MIB = 1024 * 1024
FUNCTION_MEMORY_MIB = 2048  # Vercel's default function memory, 2 GB
HEADROOM = 2
WORKER = "/api/internal/document_jobs"
GOAL_PER_JOB_MIB = 8  # the goal: the idle instance plus 8 MiB a job, at most
# Before streaming (docs/BENCHMARKS.md of 2026-12-01, the same wave of 8 jobs of 40 MiB on this
# machine): a job held its attachment whole.
BEFORE = {"warm_mib": 58.0, "peak_mib": 451.0, "per_job_mib": 49.2, "concurrency": 8, "attachment_mib": 40.0}


def peak_mib(pid: int) -> float:
    """The process's peak resident set so far (VmHWM), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for {pid}")


def enqueue(admin: psycopg.Connection, emails: list[SampleEmail]) -> list[str]:
    ids = [row[0] for row in admin.execute(
        """insert into public.fax_received_emails (provider, provider_email_id, data)
           select 'resend', x ->> 'email_id', x from jsonb_array_elements(%s) x returning id::text""",
        (Jsonb([email.webhook_data() for email in emails]),),
    )]  # fmt: skip
    admin.execute("select public.enqueue_document_job('fetch_email', id) from unnest(%s::uuid[]) id", (ids,))
    return ids


def jobs_in_half(warm: float, per_job: float) -> float:
    """How many such jobs at once one instance holds within half of the default memory."""
    return (FUNCTION_MEMORY_MIB / HEADROOM - warm) / per_job if per_job > 0 else float("inf")


def wave(admin: psycopg.Connection, provider: ResendProvider, provider_url: str, emails: list[SampleEmail],
         concurrency: int) -> tuple[float, float]:  # fmt: skip
    """(VmHWM after a first call with an empty queue, VmHWM after `concurrency` jobs at once) of one new instance."""
    secret = {"Authorization": f"Bearer {env('INTERNAL_FUNCTION_SECRET')}"}
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as state, open(os.devnull, "wb") as quiet:
        project_env = {**os.environ, "RESEND_API_URL": provider_url, "RESEND_API_KEY": provider.api_key}
        host = FunctionHost(Build(Path(env("DEVSTACK_VERCEL_BUILD"))), project_env, Path(state), mode="fluid",
                            concurrency=concurrency, log=quiet)  # fmt: skip
        threading.Thread(target=host.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        url = f"http://127.0.0.1:{host.server_address[1]}{WORKER_PATH}"
        rows: list[str] = []
        try:
            assert httpx.post(url, headers=secret, timeout=120).json()["claimed"] == 0  # imports, one claim
            [instance] = host.warm_instances(WORKER)
            assert instance.process is not None
            warm = peak_mib(instance.process.pid)
            rows = enqueue(admin, emails)
            with ThreadPoolExecutor(concurrency) as pool:
                answers = list(pool.map(lambda _: httpx.post(url, headers=secret, timeout=300), range(concurrency)))
            peak = peak_mib(instance.process.pid)
            completed = sum(answer.json()["completed"] for answer in answers)
            if completed != concurrency or host.warm_instances(WORKER) != [instance] or instance.peak < concurrency:
                raise RuntimeError(f"not {concurrency} jobs at once on one instance: {[a.text for a in answers]}")
        finally:
            host.shutdown()
            host.stop_instances()
            empty_shared_tables(admin)
            stored = Path(env("DEVSTACK_STORAGE_DIR")) / "fax-attachments" / "fax_received_emails"
            for row in rows:  # up to 40 MiB each: not left on the disk for the rest of the run
                shutil.rmtree(stored / row, ignore_errors=True)
    return warm, peak


def run(quick: bool = False) -> Section:
    concurrency = 2 if quick else DEFAULT_CONCURRENCY
    cap = WorkerSettings.model_fields["attachment_max_bytes"].default
    sizes = [MIB // 4, MIB] if quick else [MIB, cap]
    provider = ResendProvider("re_bench_" + os.urandom(8).hex())
    emails: dict[int, list[SampleEmail]] = {}
    for size in sizes:
        content = b"%PDF-1.4\n" + os.urandom(size - 9)  # incompressible, exactly `size`
        emails[size] = [provider.add_email(SampleEmail(f"bench-memory-{size}-{n}", (
            SampleAttachment("fax.pdf", "application/pdf", content),))) for n in range(concurrency)]  # fmt: skip
    measured: dict[int, tuple[float, float]] = {}
    with connect() as admin, flow.cron_paused(admin), provider.serve() as provider_url:
        if admin.execute("select count(*) from vault.secrets where name = 'document_jobs_url'").fetchone()[0]:
            raise RuntimeError("a Vault secret would let the stack's own worker take these jobs")
        for size in sizes:
            measured[size] = wave(admin, provider, provider_url, emails[size], concurrency)
    small, large = sizes
    (warm_small, peak_small), (warm, peak) = measured[small], measured[large]
    per_job_small = (peak_small - warm_small) / concurrency
    per_job = (peak - warm) / concurrency
    goal = warm + concurrency * GOAL_PER_JOB_MIB
    spread = max(per_job, per_job_small) / min(per_job, per_job_small) if min(per_job, per_job_small) > 0 else None
    section = Section(
        "instance_memory",
        "Memory of one Fluid instance",
        f"Peak resident set (VmHWM) of one new worker instance serving {concurrency} jobs at once (the function host's "
        f"concurrency), each storing one attachment of {small / MIB:g} MiB, then of another new instance with "
        f"{large / MIB:g} MiB each (ATTACHMENT_MAX_BYTES), against Vercel's default function memory "
        f"({FUNCTION_MEMORY_MIB} MiB) with {HEADROOM}x headroom; idle: the instance after its first call (the "
        "imports, an empty claim). Each attachment streams from the download to Storage in bounded chunks. Before "
        "streaming: the report of 2026-12-01, the same wave at 40 MiB on this machine. One run.",
    )
    table = Table("one instance, MiB", ["what", "idle MiB", "peak MiB", "per job MiB", "share of 2 GB",
                                        "such jobs in half of 2 GB"])  # fmt: skip
    for size in sizes:
        w, p = measured[size]
        j = (p - w) / concurrency
        table.add(f"{concurrency} jobs of {size / MIB:g} MiB at once, streamed", fmt(w, 0), fmt(p, 0), fmt(j, 1),
                  f"{p / FUNCTION_MEMORY_MIB:.0%}", fmt(jobs_in_half(w, j), 0))  # fmt: skip
    before_jobs = jobs_in_half(BEFORE["warm_mib"], BEFORE["per_job_mib"])
    table.add(f"{BEFORE['concurrency']:.0f} jobs of {BEFORE['attachment_mib']:.0f} MiB at once, held whole (before)",
              fmt(BEFORE["warm_mib"], 0), fmt(BEFORE["peak_mib"], 0), fmt(BEFORE["per_job_mib"], 1),
              f"{BEFORE['peak_mib'] / FUNCTION_MEMORY_MIB:.0%}", fmt(before_jobs, 0))  # fmt: skip
    table.notes.append(
        f"goal at {large / MIB:g} MiB: a peak of at most idle + {concurrency} x {GOAL_PER_JOB_MIB} MiB = "
        f"{fmt(goal, 0)} "
        f"MiB: {'met' if peak <= goal else 'NOT met'} ({fmt(peak, 0)} MiB); per job, {large / MIB:g} MiB against "
        f"{small / MIB:g} MiB: {fmt(spread, 2) if spread else 'n/a'}x apart (goal: within 2x): "
        f"{'met' if spread is not None and spread <= 2 else 'NOT met'}"
    )
    table.notes.append(
        f"{'fits' if HEADROOM * peak <= FUNCTION_MEMORY_MIB else 'does NOT fit'} with {HEADROOM}x headroom; the last "
        "column is how many jobs of that size at once one instance holds within half of 2 GB at the measured cost "
        "per job (Vercel publishes no per-instance concurrency for Python)"
    )
    section.tables.append(table)
    section.figures.update(
        warm_mib=warm, peak_mib=peak, per_job_mib=per_job, concurrency=concurrency, attachment_mib=large / MIB,
        jobs_in_half=jobs_in_half(warm, per_job), small_mib=small / MIB, small_warm_mib=warm_small,
        small_peak_mib=peak_small, small_per_job_mib=per_job_small, per_job_spread=spread, goal_mib=goal,
        before_peak_mib=BEFORE["peak_mib"], before_per_job_mib=BEFORE["per_job_mib"], before_jobs_in_half=before_jobs,
    )  # fmt: skip
    return section


def main() -> None:
    run_alone(run, "memory of one Fluid instance")


if __name__ == "__main__":
    main()

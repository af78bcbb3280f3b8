"""Memory of one Fluid instance running its concurrency limit of jobs, each with an attachment of
ATTACHMENT_MAX_BYTES (40 MiB by default: the most any job holds), against Vercel's default
function memory.

Under Fluid compute one instance serves several invocations as threads of one process, so what
each holds adds up. `concurrency` e-mails with one attachment of that size each are served by a
sample provider in this process and their jobs enqueued without a kick (the cron job paused);
then as many worker calls at once go through one instance (devstack/standins/function_host/, fluid mode,
that concurrency), each claiming one job. The instance's peak resident set (VmHWM in
/proc/<pid>/status) is read after a first call with an empty queue (the imports) and after the
wave. A Vercel function under Fluid compute has 2 GB of memory by default (the Standard size, 1
vCPU / 2 GB: Vercel's changelog "Higher defaults and limits for Vercel Functions running Fluid
compute"; also Hobby's maximum, docs: functions/limitations; taken as 2 GiB here), and the figure
must fit in half of it.

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


def run(quick: bool = False) -> Section:
    concurrency = 2 if quick else DEFAULT_CONCURRENCY
    size = MIB if quick else WorkerSettings.model_fields["attachment_max_bytes"].default
    content = b"%PDF-1.4\n" + os.urandom(size - 9)  # incompressible, exactly the cap
    provider = ResendProvider("re_bench_" + os.urandom(8).hex())
    emails = [
        provider.add_email(SampleEmail(f"bench-memory-{n}", (SampleAttachment("fax.pdf", "application/pdf", content),)))
        for n in range(concurrency)
    ]
    secret = {"Authorization": f"Bearer {env('INTERNAL_FUNCTION_SECRET')}"}
    with (
        connect() as admin,
        flow.cron_paused(admin),
        provider.serve() as provider_url,
        tempfile.TemporaryDirectory(prefix="bench-memory-") as state,
        open(os.devnull, "wb") as quiet,
    ):
        if admin.execute("select count(*) from vault.secrets where name = 'document_jobs_url'").fetchone()[0]:
            raise RuntimeError("a Vault secret would let the stack's own worker take these jobs")
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
            for row in rows:  # 40 MiB each: not left on the disk for the rest of the run
                shutil.rmtree(stored / row, ignore_errors=True)
    per_job = (peak - warm) / concurrency
    fits = (FUNCTION_MEMORY_MIB / HEADROOM - warm) / per_job if per_job > 0 else float("inf")
    section = Section(
        "instance_memory",
        "Memory of one Fluid instance",
        f"Peak resident set (VmHWM) of one worker instance serving {concurrency} jobs at once (the function host's "
        f"concurrency), each storing one attachment of {size / MIB:.0f} MiB (ATTACHMENT_MAX_BYTES), against Vercel's "
        f"default function memory ({FUNCTION_MEMORY_MIB} MiB) with {HEADROOM}x headroom. One run.",
    )
    table = Table("one instance, MiB", ["what", "MiB", "share of 2 GB"])
    table.add("after its first call (imports, an empty claim)", fmt(warm, 0), f"{warm / FUNCTION_MEMORY_MIB:.0%}")
    table.add(f"peak, {concurrency} jobs of {size / MIB:.0f} MiB at once", fmt(peak, 0),
              f"{peak / FUNCTION_MEMORY_MIB:.0%}")  # fmt: skip
    table.add("per concurrent job (peak less the first call, divided)", fmt(per_job, 1), "")
    table.notes.append(
        f"{'fits' if HEADROOM * peak <= FUNCTION_MEMORY_MIB else 'does NOT fit'} with {HEADROOM}x headroom; at this "
        f"cost per job, about {fits:.0f} jobs of that size at once would fill half of 2 GB"
    )
    section.tables.append(table)
    section.figures.update(warm_mib=warm, peak_mib=peak, per_job_mib=per_job, concurrency=concurrency,
                           attachment_mib=size / MIB, jobs_in_half=fits)  # fmt: skip
    return section


def main() -> None:
    run_alone(run, "memory of one Fluid instance")


if __name__ == "__main__":
    main()

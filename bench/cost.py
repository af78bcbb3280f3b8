"""What a fax costs: the units each provider bills, per fax and per 1,000 faxes, and a table in US
dollars from list prices kept in one place (PRICES below).

Vercel bills a Fluid function by its active CPU time, by its provisioned memory for as long as an
instance serves, and by invocations; Supabase by its compute size (a fixed monthly price), what the
database and Storage hold, and egress. Measured here, on the local stack, for faxes of one
attachment of about 100 KiB, 1 MiB and 40 MiB, one at a time (each webhook once the previous fax
is stored) and in a burst (300 webhooks at once at the small sizes, 30 at 40 MiB):

- active CPU: the CPU time (user + system, /proc/<pid>/stat) of the webhook's and the worker's
  instances of a function host of this bench's own (devstack/standins/function_host/, Fluid mode, the local
  host's concurrency of 8), started and warmed before each run: waiting on Resend's rate limiter
  or on a download costs wall time, not CPU. An instance the run had to start counts from its
  start (its imports included);
- instance-seconds: the seconds during which an instance served at least one request (polled every
  20 ms), at the local host's concurrency of 8: Vercel packs as many invocations into an instance
  as it sees fit, so these are an estimate of what it would bill for provisioned memory;
- peak memory: the instances' peak resident set (VmHWM), per function;
- invocations: the requests each function served, and the worker's by who queued each POST (the
  kick of a new e-mail, a follow-up of the worker's own fan-out, the cron's calls), and the cron
  job's ticks meanwhile;
- database calls: the requests PostgREST served (counted by the local gateway; pg_cron's own calls
  run inside the database and are not among them), and Storage's;
- Resend: the API requests the sample provider (this bench's own, 5 a second as Resend's team
  limit) served, and the downloads (another host, not rate limited).

The idle cost of a day: the cron jobs every minute (their commands: invoke_document_jobs and the
health check) timed on an empty queue and counted for 1,440 minutes, with the worker calls they
make, and one scheduled reconciliation with nothing to find, through the host, for each of its runs.

python -m devstack run -- .venv/bin/python -m bench.cost [--quick]
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psycopg

from bench import flow, prepare_job
from bench.common import Section, Table, connect, empty_shared_tables, env, fmt, run_alone
from bench.instance_memory import FUNCTION_MEMORY_MIB, peak_mib
from devstack import stack
from devstack.standins.function_host import DEFAULT_CONCURRENCY, FunctionHost
from devstack.standins.resend import ResendProvider, SampleAttachment, SampleEmail
from devstack.tools import inbound
from devstack.vercel_build import Build

KIB, MIB = 1024, 1024 * 1024
WORKER, WEBHOOK = "/api/internal/document_jobs", "/api/webhooks/resend"
ROUTES = {"webhook": WEBHOOK, "worker": WORKER}
POLL_S = 0.02
MINUTES_A_DAY = 1440
READ_ON = "2026-12-03"  # the day the price pages were read


@dataclass(frozen=True)
class Price:
    """A list price as an input: its value, what it is per, the page it was read on and when."""

    usd: float
    per: str
    source: str  # the page the figure was read on
    read_on: str  # the page's own date when it shows one, else the day it was read
    # "read": the figure is on `source`; "copy": on a copy of `source` at another address (`note` says
    # where); "assumed": on no page reachable, `note` says why
    status: str
    note: str = ""


# The ONE place the prices live: a new price changes one line. The product reference names Vercel's
# billing units, not their prices. The functions run in hnd1 (Tokyo), next to the office's database
# (docs/DEPLOY.md, "Regions"), so Vercel's compute is priced at hnd1's rates.
VERCEL_FUNCTIONS = "https://vercel.com/docs/functions/usage-and-pricing"
VERCEL_PRO = "https://vercel.com/docs/plans/pro-plan"
VERCEL_REGION_COPY = (
    "read in a copy of that page kept in a public repository (the page dated 2026-04-03), not on Vercel's own "
    "hosts, whose copies reachable here say only that the price varies by region; the third-party "
    "https://tomodahinata.com/en/blog/vercel-cost-active-cpu-pricing-optimization-guide (2026-06-28) gives the same "
    "hnd1 figures; Vercel's own page for the region, https://vercel.com/docs/pricing/regional-pricing/hnd1, could "
    "not be read here"
)
VERCEL_PRO_COPY = "read in a copy of that page kept in a public repository (the page dated 2026-07-15)"
SUPABASE_BILLING = "https://supabase.com/docs/guides/platform/org-based-billing"
SUPABASE_COMPUTE = "https://supabase.com/docs/guides/platform/manage-your-usage/compute"
PRICES: dict[str, Price] = {
    "vercel_pro_fee": Price(20.0, "month: the Pro platform fee, one deploying seat", VERCEL_PRO, "2026-07-15", "copy",
                            VERCEL_PRO_COPY),
    "vercel_pro_credit": Price(20.0, "month of usage credit, in the fee, spent before any usage is billed",
                               VERCEL_PRO, "2026-07-15", "copy", VERCEL_PRO_COPY),
    "vercel_active_cpu": Price(0.202, "CPU-hour (Pro, hnd1)", VERCEL_FUNCTIONS, "2026-04-03", "copy",
                               VERCEL_REGION_COPY),
    "vercel_provisioned_memory": Price(0.0167, "GB-hour (Pro, hnd1)", VERCEL_FUNCTIONS, "2026-04-03", "copy",
                                       VERCEL_REGION_COPY),
    "vercel_invocations": Price(0.60, "million invocations (Pro, every region)", VERCEL_FUNCTIONS, READ_ON, "read"),
    "supabase_plan": Price(
        25.0,
        "month: the Pro plan, Micro compute ($0.01344 an hour) covered by its $10 of compute credits",
        SUPABASE_COMPUTE,
        READ_ON,
        "read",
    ),
    "supabase_storage": Price(0.021, "GB-month of Storage beyond the plan's 100 GB", SUPABASE_BILLING, READ_ON, "read"),
    "supabase_egress": Price(0.09, "GB of egress beyond the plan's 250 GB", SUPABASE_BILLING, READ_ON, "read"),
}  # fmt: skip
SUPABASE_STORAGE_INCLUDED_GB = 100  # the Pro plan's Storage (SUPABASE_BILLING), before supabase_storage applies
FUNCTION_MEMORY_GB = FUNCTION_MEMORY_MIB / 1024  # what an instance is provisioned with (vercel.json sets no memory)


@dataclass(frozen=True)
class Settings:
    sizes: dict[str, int]  # label -> attachment bytes
    one_at_a_time: dict[str, int]  # faxes
    burst: dict[str, int]
    quiet: tuple[str, int]  # the bill's fax: (size label, faxes), each fax meeting cold instances
    idle_calls: int


FULL = Settings(
    sizes={"100 KiB": 100 * KIB, "1 MiB": MIB, "40 MiB": 40 * MIB},
    one_at_a_time={"100 KiB": 10, "1 MiB": 10, "40 MiB": 4},
    burst={"100 KiB": 300, "1 MiB": 300, "40 MiB": 30},
    quiet=("1 MiB", 10),  # a fax of a few pages, as the office's are
    idle_calls=60,
)
QUICK = Settings(sizes={"100 KiB": 100 * KIB}, one_at_a_time={"100 KiB": 2}, burst={"100 KiB": 4},
                 quiet=("100 KiB", 2), idle_calls=3)  # fmt: skip


@dataclass
class Usage:
    """What one run of faxes used, as each provider counts it."""

    faxes: int
    attachment_bytes: int
    wall_s: float = 0.0
    cpu_s: dict[str, float] = field(default_factory=dict)  # by function
    instance_s: dict[str, float] = field(default_factory=dict)
    peak_mib: dict[str, float] = field(default_factory=dict)
    instances_started: dict[str, int] = field(default_factory=dict)
    invocations: dict[str, int] = field(default_factory=dict)  # served by the host, by function
    posts: Counter[str] = field(default_factory=Counter)  # the worker's POSTs by who made them (CALLERS)
    cron_ticks: int = 0
    database_calls: int = 0
    storage_calls: int = 0
    resend_requests: int = 0
    downloads: int = 0

    def per_fax(self, value: float) -> float:
        return value / self.faxes


def combined(runs: list[Usage]) -> Usage:
    """Runs of the same faxes, one after another, as one: their counts added, peaks the highest."""
    total = Usage(sum(r.faxes for r in runs), runs[0].attachment_bytes, wall_s=sum(r.wall_s for r in runs))
    for run in runs:
        for name in ROUTES:
            total.cpu_s[name] = total.cpu_s.get(name, 0.0) + run.cpu_s[name]
            total.instance_s[name] = total.instance_s.get(name, 0.0) + run.instance_s[name]
            total.peak_mib[name] = max(total.peak_mib.get(name, 0.0), run.peak_mib[name])
            total.instances_started[name] = total.instances_started.get(name, 0) + run.instances_started[name]
            total.invocations[name] = total.invocations.get(name, 0) + run.invocations[name]
        total.posts += run.posts
        total.cron_ticks += run.cron_ticks
        total.database_calls += run.database_calls
        total.storage_calls += run.storage_calls
        total.resend_requests += run.resend_requests
        total.downloads += run.downloads
    return total


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (/proc/<pid>/stat, fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def gateway_counts() -> Counter[str]:
    answer = httpx.get(f"{env('SUPABASE_URL')}/_control/requests", timeout=10)
    answer.raise_for_status()
    return Counter(answer.json())


# Who queued each worker POST, read from the call stack of the insert into worker_requests that
# post_worker makes for every POST: the kick (a new e-mail's enqueue), a follow-up (an invocation's
# last write starting the next), the cron's every-minute fan-out, reconciliation's kick, or else.
CALLERS = ("kick", "follow_up", "cron", "reconciliation", "other")
POSTS_SCHEMA = "bench_cost_posts"
POSTS_SETUP = f"""
create schema {POSTS_SCHEMA};
create table {POSTS_SCHEMA}.posts (caller text not null);
create function {POSTS_SCHEMA}.note() returns trigger language plpgsql security definer set search_path = '' as $$
declare
    v_stack text;
begin
    get diagnostics v_stack = pg_context;
    insert into {POSTS_SCHEMA}.posts (caller) values (case
        when v_stack like '%function public.invoke_document_jobs()%' then 'cron'
        when v_stack like '%function public.enqueue_document_jobs_reconciliation()%' then 'reconciliation'
        when v_stack like '%function document_jobs_internal.start_workers(%' then 'follow_up'
        when v_stack like '%function public.enqueue_document_job(%' then 'kick'
        else 'other' end);
    return null;
end $$;
create trigger {POSTS_SCHEMA} after insert on document_jobs_internal.worker_requests
    for each row execute function {POSTS_SCHEMA}.note();
"""


@contextlib.contextmanager
def posts_noted(admin: psycopg.Connection) -> Iterator[None]:
    """Each worker POST noted with who queued it, for this bench only: the schema (and, with its
    function, the trigger) goes afterwards."""
    admin.execute(f"drop schema if exists {POSTS_SCHEMA} cascade")
    admin.execute(POSTS_SETUP)
    try:
        yield
    finally:
        admin.execute(f"drop schema if exists {POSTS_SCHEMA} cascade")


def take_posts(admin: psycopg.Connection) -> Counter[str]:
    """The POSTs noted since the last take, by caller."""
    rows = admin.execute(f"delete from {POSTS_SCHEMA}.posts returning caller").fetchall()
    return Counter(caller for (caller,) in rows)


@contextlib.contextmanager
def reconciliation_paused(admin: psycopg.Connection) -> Iterator[None]:
    """The every-10-minutes reconciliation off while anything is measured (a run of it would list
    the faxes' e-mails in among them, or be claimed by a warm-up; its own cost is the idle day's,
    run by hand), as it was afterwards."""
    query = "select active from cron.job where jobname = 'document-jobs-reconcile'"
    was = [active for (active,) in admin.execute(query).fetchall()]
    switch = "select cron.alter_job(jobid, active := %s) from cron.job where jobname = 'document-jobs-reconcile'"
    admin.execute(switch, (False,))
    try:
        yield
    finally:
        if was:
            admin.execute(switch, (was[0],))


@contextlib.contextmanager
def vault_pointing_at(admin: psycopg.Connection, worker_url: str) -> Iterator[None]:
    """The Vault secrets naming this bench's own function host; what was there before comes back after."""
    wanted = {stack.WORKER_URL_SECRET: worker_url, stack.WORKER_SECRET_SECRET: env("INTERNAL_FUNCTION_SECRET")}
    before = dict(admin.execute("select name, decrypted_secret from vault.decrypted_secrets where name = any(%s)",
                                (list(wanted),)).fetchall())  # fmt: skip
    admin.execute("delete from vault.secrets where name = any(%s)", (list(wanted),))
    for name, value in wanted.items():
        stack.store_vault_secret(admin, name, value)
    try:
        yield
    finally:
        admin.execute("delete from vault.secrets where name = any(%s)", (list(wanted),))
        for name, value in before.items():
            stack.store_vault_secret(admin, name, value)


class Meter:
    """The function host's instances, their CPU and busy time, and its log of invocations."""

    def __init__(self, host: FunctionHost, log: Path) -> None:
        self.host, self.log = host, log
        self.busy: Counter[str] = Counter()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def instances(self, route: str) -> list[tuple[int, object]]:
        return [(i.process.pid, i) for i in self.host.warm_instances(route) if i.process is not None]

    def cpu(self) -> dict[str, dict[int, float]]:
        found: dict[str, dict[int, float]] = {}
        for name, route in ROUTES.items():
            found[name] = {}
            for pid, _ in self.instances(route):
                with contextlib.suppress(OSError):
                    found[name][pid] = cpu_seconds(pid)
        return found

    def invocations(self) -> Counter[str]:
        counted: Counter[str] = Counter()
        for line in self.log.read_text(errors="replace").splitlines():
            match = re.match(r"function_host: POST (\S+) ", line)
            if match:
                path = match.group(1).split("?")[0]
                function = "webhook" if path == WEBHOOK else "worker" if path.startswith("/api/internal/") else "other"
                counted[function] += 1
        return counted

    def _poll(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(POLL_S):
            now = time.monotonic()
            for name, route in ROUTES.items():
                self.busy[name] += sum(now - last for i in self.host.warm_instances(route) if i.in_flight > 0)
            last = now

    def start(self) -> None:
        self.busy.clear()
        self._stop.clear()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join()


def warm(host_url: str) -> None:
    """Each function's instance started and its imports done, before anything is counted."""
    secret = {"Authorization": f"Bearer {env('INTERNAL_FUNCTION_SECRET')}"}
    assert httpx.post(f"{host_url}{stack.WORKER_PATH}", headers=secret, timeout=120).json()["claimed"] == 0
    unsigned = httpx.post(f"{host_url}{WEBHOOK}", content=b"{}", timeout=120)
    assert unsigned.status_code in (400, 401), unsigned.text


def stored_count(admin: psycopg.Connection, ids: list[str]) -> int:
    return admin.execute(
        """select count(*) from public.fax_received_email_attachments a
             join public.fax_received_emails e on e.id = a.fax_received_email_id
            where e.provider_email_id = any(%s)""",
        (ids,),
    ).fetchone()[0]


def live_jobs(admin: psycopg.Connection) -> int:
    return admin.execute("select count(*) from public.document_jobs where status in ('queued', 'running')").fetchone()[
        0
    ]


def faxes_run(admin: psycopg.Connection, host: FunctionHost, meter: Meter, provider: ResendProvider, host_url: str,
              content: bytes, count: int, burst: bool, cold: bool = False) -> Usage:  # fmt: skip
    """`count` faxes of one attachment `content` through webhook, kick and worker; what they used.
    Cold: no instance runs when the first webhook comes (a quiet office's fax, an hour after the
    last one), so the run pays each function's start, imports included; else both were warmed."""
    host.stop_instances()
    if not cold:
        warm(host_url)
    prefix = f"bench-cost-{os.urandom(4).hex()}"
    attachment = (SampleAttachment("fax.pdf", "application/pdf", content),)
    emails = [provider.add_email(SampleEmail(f"{prefix}-{n}", attachment)) for n in range(count)]
    ids = [email.email_id for email in emails]
    secret = env("RESEND_WEBHOOK_SECRET")
    take_posts(admin)
    cpu_before, gateway_before = meter.cpu(), gateway_counts()
    invocations_before, provider_before = meter.invocations(), provider.rate_limit.stats()
    started_at = admin.execute("select clock_timestamp()").fetchone()[0]
    started = time.monotonic()
    meter.start()

    def deliver(email: SampleEmail) -> None:
        body = inbound.event(email.webhook_data())
        answer = inbound.deliver(host_url, body, inbound.signed_headers(secret, body))
        if answer.status_code != 200:
            raise RuntimeError(f"the webhook answered {answer.status_code}: {answer.text}")

    try:
        if burst:
            with ThreadPoolExecutor(DEFAULT_CONCURRENCY) as pool:
                list(pool.map(deliver, emails))
        else:
            # One at a time: each fax meets a quiet queue, its preparation done and its invocation over
            # (the next webhook, in while the last fax was being prepared, was claimed by that
            # invocation or left it a job to start a follow-up for).
            for n, email in enumerate(emails, start=1):
                deliver(email)
                flow.wait_until(
                    lambda n=n: stored_count(admin, ids) >= n and live_jobs(admin) == 0 and flow.in_flight(admin) == 0,
                    300,
                    "the fax to be stored and prepared",
                    0.2,
                )
        flow.wait_until(lambda: stored_count(admin, ids) >= count and live_jobs(admin) == 0, 900, "the faxes", 0.2)
        flow.wait_until(lambda: flow.in_flight(admin) == 0, 330, "every worker invocation to answer", 0.2)
        flow.wait_until(lambda: all(i.in_flight == 0 for r in ROUTES.values() for i in host.warm_instances(r)), 60,
                        "the instances to finish")  # fmt: skip
    finally:
        meter.stop()
    usage = Usage(count, len(content), wall_s=time.monotonic() - started)
    cpu_after = meter.cpu()
    for name, route in ROUTES.items():
        usage.cpu_s[name] = sum(cpu - cpu_before[name].get(pid, 0.0) for pid, cpu in cpu_after[name].items())
        usage.instances_started[name] = len(set(cpu_after[name]) - set(cpu_before[name]))
        usage.instance_s[name] = meter.busy[name]
        usage.peak_mib[name] = max((peak_mib(pid) for pid, _ in meter.instances(route)), default=0.0)
    invoked = meter.invocations() - invocations_before
    usage.invocations = {"webhook": invoked["webhook"], "worker": invoked["worker"]}
    usage.posts = take_posts(admin)
    usage.cron_ticks = admin.execute(
        """select count(*) from cron.job_run_details d join cron.job j using (jobid)
            where j.jobname = 'document-jobs' and d.start_time >= %s""",
        (started_at,),
    ).fetchone()[0]
    served = gateway_counts() - gateway_before
    usage.database_calls = sum(n for path, n in served.items() if "/rest/v1/" in path)
    usage.storage_calls = sum(n for path, n in served.items() if "/storage/v1/" in path)
    provider_after = provider.rate_limit.stats()
    usage.resend_requests = provider_after["requests"] - provider_before["requests"]
    usage.downloads = provider_after["downloads"] - provider_before["downloads"]
    flow.clean_up(admin)
    return usage


@dataclass(frozen=True)
class Idle:
    invoke_ms: float  # one run of the every-minute cron job's command on an empty queue, a round trip included
    health_ms: float  # one run of the health check's command
    cron_posts_per_minute: Counter[str]  # worker POSTs the two commands queued a run, by caller
    reconcile_every_minutes: int  # the document-jobs-reconcile schedule the database holds
    reconcile: Usage  # one reconciliation, nothing missed, through the host: its kick, follow-ups, CPU, Resend
    reconcile_cold: Usage  # the same, its worker started by the run (a quiet office's)


def cron_command(admin: psycopg.Connection, job: str) -> str:
    return str(admin.execute("select command from cron.job where jobname = %s", (job,)).fetchone()[0])


def idle(admin: psycopg.Connection, calls: int, host: FunctionHost, meter: Meter, provider: ResendProvider,
         host_url: str) -> Idle:  # fmt: skip
    """The cron's every-minute jobs on an empty queue, their commands as pg_cron runs them (as
    postgres), and one scheduled reconciliation with nothing to find, through the host."""
    empty_shared_tables(admin)
    take_posts(admin)
    with psycopg.connect(env("DATABASE_URL"), autocommit=True) as conn:
        timed = {}
        for name, job in (("invoke", "document-jobs"), ("health", "document-jobs-health")):
            statement = cron_command(admin, job)
            conn.execute(statement)  # the plans cached, as in pg_cron's long-lived worker
            started = time.perf_counter()
            for _ in range(calls):
                conn.execute(statement)
            timed[name] = (time.perf_counter() - started) * 1000 / calls
    posts = take_posts(admin)
    per_minute = Counter({caller: n / (calls + 1) for caller, n in posts.items()})
    every = admin.execute("select every_minutes from public.document_jobs_reconciliation").fetchone()[0]
    warm_run = reconciliation_run(admin, host, meter, provider, host_url, cold=False)
    cold_run = reconciliation_run(admin, host, meter, provider, host_url, cold=True)
    return Idle(timed["invoke"], timed["health"], per_minute, every, warm_run, cold_run)


def reconciliation_run(admin: psycopg.Connection, host: FunctionHost, meter: Meter, provider: ResendProvider,
                       host_url: str, cold: bool) -> Usage:  # fmt: skip
    """One scheduled reconciliation with nothing to find, through the host: the worker warmed first,
    or (cold) started by the run itself, as in a quiet office ten minutes after its last call."""
    host.stop_instances()
    if not cold:
        warm(host_url)
    cpu_before, gateway_before = meter.cpu(), gateway_counts()
    invocations_before, provider_before = meter.invocations(), provider.rate_limit.stats()
    started = time.monotonic()
    meter.start()
    try:
        admin.execute(cron_command(admin, "document-jobs-reconcile"))
        flow.wait_until(lambda: live_jobs(admin) == 0, 120, "the reconciliation", 0.1)
        flow.wait_until(lambda: flow.in_flight(admin) == 0, 120, "every worker invocation to answer", 0.1)
        flow.wait_until(lambda: all(i.in_flight == 0 for r in ROUTES.values() for i in host.warm_instances(r)), 60,
                        "the instances to finish")  # fmt: skip
    finally:
        meter.stop()
    run = Usage(1, 0, wall_s=time.monotonic() - started)
    cpu_after = meter.cpu()
    for name, route in ROUTES.items():
        run.cpu_s[name] = sum(cpu - cpu_before[name].get(pid, 0.0) for pid, cpu in cpu_after[name].items())
        run.instance_s[name] = meter.busy[name]
        run.peak_mib[name] = max((peak_mib(pid) for pid, _ in meter.instances(route)), default=0.0)
        run.instances_started[name] = len(set(cpu_after[name]) - set(cpu_before[name]))
    invoked = meter.invocations() - invocations_before
    run.invocations = {"webhook": invoked["webhook"], "worker": invoked["worker"]}
    run.posts = take_posts(admin)
    served = gateway_counts() - gateway_before
    run.database_calls = sum(n for path, n in served.items() if "/rest/v1/" in path)
    run.resend_requests = provider.rate_limit.stats()["requests"] - provider_before["requests"]
    empty_shared_tables(admin)
    return run


def split(usage: Usage) -> tuple[int, int, int, int]:
    """The worker's POSTs: kick, follow-ups, cron, other (reconciliation's among the other)."""
    p = usage.posts
    return p["kick"], p["follow_up"], p["cron"], p["other"] + p["reconciliation"]


def dollars(usage: Usage, per: int = 1000) -> dict[str, float]:
    """Vercel's three units for `per` faxes, in US dollars, at PRICES."""
    scale = per / usage.faxes
    cpu_h = sum(usage.cpu_s.values()) * scale / 3600
    gb_h = sum(usage.instance_s.values()) * scale / 3600 * FUNCTION_MEMORY_GB
    invocations = sum(usage.invocations.values()) * scale
    return {
        "cpu": cpu_h * PRICES["vercel_active_cpu"].usd,
        "memory": gb_h * PRICES["vercel_provisioned_memory"].usd,
        "invocations": invocations / 1e6 * PRICES["vercel_invocations"].usd,
        "storage_month": usage.attachment_bytes * per / 1024**3 * PRICES["supabase_storage"].usd,
    }


MONTHLY_FAXES = (100, 1_000, 10_000)  # the bill's rows
DAYS_A_MONTH = 30


@dataclass(frozen=True)
class Units:
    """What Vercel bills for a piece of work: active CPU, instance time (provisioned memory for as
    long as an instance serves), invocations."""

    cpu_s: float
    instance_s: float
    invocations: float

    def __add__(self, other: Units) -> Units:
        return Units(self.cpu_s + other.cpu_s, self.instance_s + other.instance_s, self.invocations + other.invocations)

    def times(self, n: float) -> Units:
        return Units(self.cpu_s * n, self.instance_s * n, self.invocations * n)

    @property
    def gb_hours(self) -> float:
        return self.instance_s / 3600 * FUNCTION_MEMORY_GB

    def usd(self) -> float:
        """At PRICES: hnd1's active CPU and memory, and invocations with no included million (an
        upper bound: the Pro plan's $20 credit is what pays for them, see monthly_bill)."""
        return (
            self.cpu_s / 3600 * PRICES["vercel_active_cpu"].usd
            + self.gb_hours * PRICES["vercel_provisioned_memory"].usd
            + self.invocations / 1e6 * PRICES["vercel_invocations"].usd
        )


def units(usage: Usage, function: str) -> Units:
    """One function's units in a run, per fax (per run, for a reconciliation's run of one)."""
    return Units(usage.per_fax(usage.cpu_s[function]), usage.per_fax(usage.instance_s[function]),
                 usage.per_fax(usage.invocations[function]))  # fmt: skip


def fax_steps(usage: Usage, prepare: Units) -> dict[str, Units]:
    """What one fax sets off, step by step, each with the units measured for it: the webhook that
    records the e-mail, then each job the fax's e-mail gets: fetch_email (the worker's units in the
    runs above, whose faxes are not real documents and get no view), then prepare_fax, measured
    apart (bench/prepare_job.py, the typical fax: its CPU, and its wall time as the instance's), in
    the invocation that fetched the fax (no invocation of its own). A job kind added per fax is one
    more line; the bill adds every line."""
    return {
        "webhook: the e-mail recorded, its job enqueued and kicked": units(usage, "webhook"),
        "fetch_email job: the attachments stored (the worker)": units(usage, "worker"),
        f"prepare_fax job: pages counted, viewing PDF and thumbnail ({prepare_job.TYPICAL}; the worker)": prepare,
    }


def prepare_units(measured: dict[str, prepare_job.Run]) -> Units:
    """The prepare job of the typical fax as the bill counts it: its CPU, its wall time as
    instance-seconds, no invocation of its own."""
    typical = measured[prepare_job.TYPICAL]
    return Units(typical.cpu_s, typical.wall_s, 0.0)


@dataclass(frozen=True)
class MonthlyBill:
    """One month of the office's bill, in US dollars, at PRICES."""

    faxes: int
    fax_units: Units  # the month's faxes, every step
    reconciliation_units: Units  # the month's scheduled reconciliations
    storage_gb_added: float  # what the month's faxes add to Storage, kept for good

    @property
    def vercel_usage_usd(self) -> float:
        return (self.fax_units + self.reconciliation_units).usd()

    @property
    def vercel_usd(self) -> float:
        """The platform fee, and what the usage costs beyond the credit the fee includes."""
        return PRICES["vercel_pro_fee"].usd + max(0.0, self.vercel_usage_usd - PRICES["vercel_pro_credit"].usd)

    @property
    def supabase_usd(self) -> float:
        """The plan, while Storage holds less than the plan's own (months_within_storage)."""
        return PRICES["supabase_plan"].usd

    @property
    def total_usd(self) -> float:
        return self.vercel_usd + self.supabase_usd

    @property
    def months_within_storage(self) -> float:
        """How many months of such faxes the plan's Storage holds before supabase_storage applies."""
        return SUPABASE_STORAGE_INCLUDED_GB / self.storage_gb_added if self.storage_gb_added else float("inf")

    @property
    def storage_usd_added_a_month(self) -> float:
        """Past the plan's Storage, what each month of faxes adds to every later month's bill."""
        return self.storage_gb_added * PRICES["supabase_storage"].usd


def monthly_bill(faxes: int, steps: dict[str, Units], reconciliation_run_units: Units, reconcile_every_minutes: int,
                 fax_bytes: int) -> MonthlyBill:  # fmt: skip
    """`faxes` a month, each costing the sum of `steps`; reconciliation on its schedule all month."""
    per_fax = sum(steps.values(), Units(0.0, 0.0, 0.0))
    runs = DAYS_A_MONTH * MINUTES_A_DAY // reconcile_every_minutes
    return MonthlyBill(faxes, per_fax.times(faxes), reconciliation_run_units.times(runs), faxes * fax_bytes / 1024**3)


def run(quick: bool = False) -> Section:
    settings = QUICK if quick else FULL
    provider = ResendProvider("re_bench_" + os.urandom(8).hex())
    runs: dict[tuple[str, str], Usage] = {}
    with (
        connect() as admin,
        provider.serve() as provider_url,
        tempfile.TemporaryDirectory(prefix="bench-cost-") as state,
    ):
        flow.clean_up(admin)
        log = Path(state) / "host.log"
        project_env = {**os.environ, "RESEND_API_URL": provider_url, "RESEND_API_KEY": provider.api_key}
        with open(log, "wb") as log_file:
            host = FunctionHost(Build(Path(env("DEVSTACK_VERCEL_BUILD"))), project_env, Path(state) / "host",
                                mode="fluid", concurrency=DEFAULT_CONCURRENCY, log=log_file)  # fmt: skip
            threading.Thread(target=host.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
            host_url = f"http://127.0.0.1:{host.server_address[1]}"
            meter = Meter(host, log)
            try:
                with (
                    vault_pointing_at(admin, host_url + stack.WORKER_PATH),
                    posts_noted(admin),
                    reconciliation_paused(admin),
                ):
                    # First, while the sample provider lists no e-mail: a reconciliation with nothing to
                    # find, run by hand (the schedule paused: one it started on a ten-minute mark would
                    # be claimed by the warm-up, or counted among the measured calls).
                    idle_day = idle(admin, settings.idle_calls, host, meter, provider, host_url)
                    for label, size in settings.sizes.items():
                        content = b"%PDF-1.4\n" + os.urandom(size - 9)
                        for mode, counts in (("one at a time", settings.one_at_a_time), ("burst", settings.burst)):
                            runs[(label, mode)] = faxes_run(admin, host, meter, provider, host_url, content,
                                                            counts[label], mode == "burst")  # fmt: skip
                    # The quiet office: one fax an hour, each meeting no running instance.
                    label, count = settings.quiet
                    content = b"%PDF-1.4\n" + os.urandom(settings.sizes[label] - 9)
                    quiet = combined([faxes_run(admin, host, meter, provider, host_url, content, 1, False,
                                                cold=True) for _ in range(count)])  # fmt: skip
            finally:
                host.shutdown()
                host.stop_instances()
                flow.clean_up(admin)
    with connect() as admin:
        prepared = prepare_job.typical_fax(admin, 1 if quick else 3)
    result = section(settings, runs, idle_day, quiet, prepare_units(prepared))
    result.tables.append(prepare_job.cost_table(PRICES, FUNCTION_MEMORY_GB, prepared))  # the prepare job's unit
    for label, measured in prepared.items():
        key = "tiff" if label == prepare_job.TYPICAL else "pdf"
        result.figures |= {f"prepare_cpu_s_{key}": measured.cpu_s, f"prepare_wall_s_{key}": measured.wall_s,
                           f"prepare_usd_per_1000_{key}": measured.cpu_s * 1000 / 3600 * PRICES["vercel_active_cpu"].usd
                           + measured.wall_s * 1000 / 3600 * FUNCTION_MEMORY_GB
                           * PRICES["vercel_provisioned_memory"].usd}  # fmt: skip
    return result


def section(settings: Settings, runs: dict[tuple[str, str], Usage], idle_day: Idle, quiet: Usage,
            prepare: Units) -> Section:  # fmt: skip
    result = Section(
        "cost",
        "What a fax costs",
        " ".join(__doc__.split("\n\n", 1)[1].split("\n\npython -m", 1)[0].split())
        + " Instance-seconds are those of the local host's concurrency of 8 (Vercel's own packing may differ). "
        "One run per row.",
    )
    units = Table(
        "units billed, per fax (one attachment each)",
        ["size, run", "faxes", "webhook CPU ms", "worker CPU ms", "instance-s (conc. 8)", "peak MiB webhook / worker",
         "instances started", "invocations webhook / worker", "worker: kick / follow-ups / cron / other",
         "cron ticks", "DB calls", "Storage calls",
         "Resend API requests", "downloads", "wall s (run)"],
    )  # fmt: skip
    money = Table(
        "US dollars per 1,000 faxes (Vercel Pro; Supabase's Pro plan is a fixed monthly price)",
        ["size, run", "active CPU $", f"provisioned memory $ ({FUNCTION_MEMORY_GB:g} GB)", "invocations $",
         "Vercel total $", "Supabase Storage $ a month, beyond 100 GB"],
    )  # fmt: skip
    kinds = Table(
        "worker invocations per 1,000 faxes, by who started them",
        ["size, run", "kick (pg_net's POST per webhook)", "follow-ups (the worker's fan-out)", "the cron's calls",
         "other", "worker invocations served", "webhook invocations"],
    )  # fmt: skip
    for (label, mode), u in runs.items():
        name = f"{label}, {mode}"
        served = (fmt(u.per_fax(u.invocations[f]) * 1000, 0) for f in ("worker", "webhook"))
        kinds.add(name, *(fmt(u.per_fax(n) * 1000, 0) for n in split(u)), *served)
        units.add(
            name, u.faxes, fmt(u.per_fax(u.cpu_s["webhook"]) * 1000, 1), fmt(u.per_fax(u.cpu_s["worker"]) * 1000, 1),
            fmt(u.per_fax(sum(u.instance_s.values())), 3),
            f"{fmt(u.peak_mib['webhook'], 0)} / {fmt(u.peak_mib['worker'], 0)}",
            f"{u.instances_started['webhook']} / {u.instances_started['worker']}",
            f"{fmt(u.per_fax(u.invocations['webhook']), 2)} / {fmt(u.per_fax(u.invocations['worker']), 2)}",
            " / ".join(fmt(u.per_fax(n), 2) for n in split(u)),
            u.cron_ticks, fmt(u.per_fax(u.database_calls), 2), fmt(u.per_fax(u.storage_calls), 2),
            fmt(u.per_fax(u.resend_requests), 2), fmt(u.per_fax(u.downloads), 2), fmt(u.wall_s, 1),
        )  # fmt: skip
        d = dollars(u)
        total = d["cpu"] + d["memory"] + d["invocations"]
        money.add(name, f"{d['cpu']:.4f}", f"{d['memory']:.4f}", f"{d['invocations']:.4f}", f"{total:.4f}",
                  f"{d['storage_month']:.4f}")  # fmt: skip
        key = f"{label.replace(' ', '').lower()}_{'burst' if mode == 'burst' else 'single'}"
        result.figures |= {f"usd_per_1000_{key}": total, f"cpu_ms_{key}": u.per_fax(sum(u.cpu_s.values())) * 1000,
                           f"instance_s_{key}": u.per_fax(sum(u.instance_s.values())),
                           f"peak_worker_mib_{key}": u.peak_mib["worker"],
                           f"posts_unattributed_{key}": u.invocations["worker"] - sum(split(u))}  # fmt: skip
        for kind, n in zip(("kick", "follow_up", "cron", "other"), split(u), strict=True):
            result.figures[f"{kind}_per_fax_{key}"] = u.per_fax(n)
    units.notes.append(
        "CPU: user + system time of the instances (/proc/<pid>/stat), warm at the start of each run; an instance a "
        "run had to start counts from its start. Instance-seconds: seconds an instance served at least one request, "
        "both functions, at the local host's concurrency of 8. Invocations: served by the host; the worker's split by "
        "who queued each POST (the call stack of post_worker's insert into worker_requests, noted by a trigger of "
        "this bench's own): the kick (enqueue_document_job), follow-ups (start_workers after an invocation's last "
        "write), the cron (invoke_document_jobs), other (reconciliation's is paused here: the idle day has it). "
        "DB calls: PostgREST requests through the gateway (the webhook's record included)"
    )
    kinds.notes.append(
        "each worker POST counted where it was queued (kick, follow-up, cron) and each invocation where it was "
        "served (the host's log): the two agree when every POST was answered within the run"
    )
    day = Table("the idle cost of a day (no fax)", ["what", "a day", "US dollars a day"])
    cron_s = (idle_day.invoke_ms + idle_day.health_ms) * MINUTES_A_DAY / 1000
    posts = sum(idle_day.cron_posts_per_minute.values()) * MINUTES_A_DAY
    price = PRICES["vercel_invocations"].usd / 1e6
    day.add(f"pg_cron: document-jobs (invoke_document_jobs) every minute ({fmt(idle_day.invoke_ms, 2)} ms a call)",
            f"{MINUTES_A_DAY:,} calls", "in Supabase's fixed compute")  # fmt: skip
    day.add(f"pg_cron: document-jobs-health every minute ({fmt(idle_day.health_ms, 2)} ms a call)",
            f"{MINUTES_A_DAY:,} calls", "in Supabase's fixed compute")  # fmt: skip
    day.add("database time of the two, round trips included", f"{fmt(cron_s, 1)} s", "in Supabase's fixed compute")
    day.add("worker invocations the two make on an empty queue (counted by caller)", fmt(posts, 0),
            f"{posts * price:.4f}")  # fmt: skip
    every = idle_day.reconcile_every_minutes
    a_day = MINUTES_A_DAY // every
    r = idle_day.reconcile
    r_invocations = r.invocations["worker"]
    r_split = " + ".join(f"{n} {caller}" for caller, n in sorted(r.posts.items())) or "none"
    day.add(f"reconciliation every {every} min, nothing to find: worker invocations ({r_split} a run, measured)",
            f"{r_invocations * a_day}", f"{r_invocations * a_day * price:.4f}")  # fmt: skip
    r_cpu_h, r_gb_h = (
        sum(r.cpu_s.values()) * a_day / 3600,
        sum(r.instance_s.values()) * a_day / 3600 * FUNCTION_MEMORY_GB,
    )
    day.add(f"their active CPU ({fmt(sum(r.cpu_s.values()) * 1000, 0)} ms a run)", f"{fmt(r_cpu_h * 3600, 1)} s",
            f"{r_cpu_h * PRICES['vercel_active_cpu'].usd:.4f}")  # fmt: skip
    day.add(f"their provisioned memory ({fmt(sum(r.instance_s.values()), 2)} instance-s a run)",
            f"{fmt(r_gb_h, 4)} GB-h", f"{r_gb_h * PRICES['vercel_provisioned_memory'].usd:.4f}")  # fmt: skip
    day.add(f"their Resend listing requests ({r.resend_requests} a run)", f"{r.resend_requests * a_day}",
            "Resend: within its rate limit (no per-request price)")  # fmt: skip
    idle_usd = (
        (posts + r_invocations * a_day) * price
        + r_cpu_h * PRICES["vercel_active_cpu"].usd
        + (r_gb_h * PRICES["vercel_provisioned_memory"].usd)
    )
    day.add("Vercel, the day", "", f"{idle_usd:.4f}")
    inputs = Table("the prices, inputs (bench/cost.py PRICES: one line each)",
                   ["input", "US dollars", "per", "status", "source", "read on"])  # fmt: skip
    for name, price in PRICES.items():
        inputs.add(name, f"{price.usd:g}", price.per, price.status + (f" ({price.note})" if price.note else ""),
                   price.source, price.read_on)  # fmt: skip
    inputs.notes.append(
        "each price as read on its page, or on a copy of it where the status says so (read on: the page's own date "
        "where it shows one, else the day it was read). The region is hnd1 (Tokyo), where docs/DEPLOY.md puts the "
        "functions, next to the office's database; the Supabase pages read give no regional prices. The tables per "
        "1,000 faxes and per day are usage at list prices; the monthly bill adds the plans' fees and spends Vercel "
        "Pro's credit first. Egress is not in: the flow uploads (ingress); egress comes from reading faxes back, "
        f"which this bench does not measure. Memory is the default {FUNCTION_MEMORY_GB:g} GB, since vercel.json "
        "sets none"
    )
    inputs.notes.append(
        "the memory setting stays the default: the project's product reference (Vercel: functions/fluid-compute, "
        "functions/runtimes/python, functions/limitations) names no memory size below it for a Python function under "
        "Fluid compute, so none is set (https://vercel.com/docs/functions/configuring-functions/memory is the page "
        "to check); what streaming changes is how many jobs one instance carries (section Memory of one Fluid "
        "instance), hence how many instances, and how much provisioned memory, a burst needs"
    )
    bill_tables, bill_figures = bill(settings, runs, idle_day, quiet, prepare)
    result.tables += [units, kinds, money, day, *bill_tables, inputs]
    result.figures |= bill_figures
    result.figures |= {"idle_invoke_ms": idle_day.invoke_ms, "idle_health_ms": idle_day.health_ms,
                       "idle_posts_a_day": posts, "idle_cron_s": cron_s, "idle_usd": idle_usd,
                       "idle_reconcile_invocations_a_day": r_invocations * a_day,
                       "idle_reconcile_listings": r.resend_requests}  # fmt: skip
    return result


if __name__ == "__main__":
    run_alone(run, __doc__)


def bill(settings: Settings, runs: dict[tuple[str, str], Usage], idle_day: Idle, quiet: Usage,
         prepare: Units) -> tuple[list[Table], dict[str, float | None]]:  # fmt: skip
    """The office's monthly bill from the measured units: a quiet office's faxes (each meeting cold
    instances) and reconciliations (each starting the worker), with the warm figures beside them."""
    label, _ = settings.quiet
    warm = runs[(label, "one at a time")]
    every = idle_day.reconcile_every_minutes
    steps, warm_steps = fax_steps(quiet, prepare), fax_steps(warm, prepare)
    reconcile, reconcile_warm = units(idle_day.reconcile_cold, "worker"), units(idle_day.reconcile, "worker")
    model = Table(
        f"one fax of {label}, step by step: the bill's model (a job kind added per fax is one more row)",
        ["step", "active CPU ms, cold / warm", "instance-s, cold / warm", "invocations",
         "US dollars per 1,000, cold / warm"],
    )  # fmt: skip

    def row(name: str, cold: Units, hot: Units) -> None:
        model.add(name, f"{fmt(cold.cpu_s * 1000, 0)} / {fmt(hot.cpu_s * 1000, 0)}",
                  f"{fmt(cold.instance_s, 2)} / {fmt(hot.instance_s, 2)}", fmt(cold.invocations, 2),
                  f"{cold.times(1000).usd():.4f} / {hot.times(1000).usd():.4f}")  # fmt: skip

    for name, cold in steps.items():
        row(name, cold, warm_steps[name])
    zero = Units(0.0, 0.0, 0.0)
    row("a fax, every step", sum(steps.values(), zero), sum(warm_steps.values(), zero))
    row(f"a scheduled reconciliation, nothing to find (every {every} min; per run)", reconcile, reconcile_warm)
    model.notes.append(
        f"cold: {quiet.faxes} faxes one after another, each sent when no instance of either function ran, as in a "
        "quiet office whose faxes come an hour apart: each pays both functions' start (the runtime, the imports, "
        f"the first connection), {fmt(quiet.per_fax(sum(quiet.instances_started.values())), 1)} instances started a "
        "fax; the reconciliation likewise started its worker. Warm: the same size one at a time with both functions "
        "warmed first (the units table above). A cold start's CPU counts as active CPU and its time as instance "
        "time: an upper bound, since Vercel does not publish how long it keeps a paused instance, and a warm one "
        "costs only the warm column"
    )
    table = Table(
        f"the office's monthly bill, US dollars (Vercel Pro with the functions in hnd1, Supabase Pro; faxes of "
        f"{label}; a quiet office: every fax and every reconciliation meets cold instances)",
        ["faxes a month", "active CPU h", f"provisioned memory GB-h ({FUNCTION_MEMORY_GB:g} GB)", "invocations",
         "Vercel usage at hnd1's prices $ (if all warm)", "Vercel Pro $: the fee, usage beyond its credit",
         "Supabase Pro $", "the office pays $ a month", "Storage added GB a month",
         "months of it in the plan's 100 GB"],
    )  # fmt: skip
    figures: dict[str, float | None] = {}
    for faxes in MONTHLY_FAXES:
        month = monthly_bill(faxes, steps, reconcile, every, warm.attachment_bytes)
        floor = monthly_bill(faxes, warm_steps, reconcile_warm, every, warm.attachment_bytes)
        used = month.fax_units + month.reconciliation_units
        table.add(f"{faxes:,}", fmt(used.cpu_s / 3600, 3), fmt(used.gb_hours, 2), f"{used.invocations:,.0f}",
                  f"{month.vercel_usage_usd:.2f} ({floor.vercel_usage_usd:.2f})", f"{month.vercel_usd:.2f}",
                  f"{month.supabase_usd:.2f}", f"{month.total_usd:.2f}", fmt(month.storage_gb_added, 2),
                  fmt(month.months_within_storage, 0))  # fmt: skip
        figures |= {f"bill_total_usd_{faxes}": month.total_usd, f"bill_vercel_usd_{faxes}": month.vercel_usd,
                    f"bill_supabase_usd_{faxes}": month.supabase_usd,
                    f"bill_vercel_usage_usd_{faxes}": month.vercel_usage_usd,
                    f"bill_vercel_usage_warm_usd_{faxes}": floor.vercel_usage_usd,
                    f"bill_storage_gb_{faxes}": month.storage_gb_added,
                    f"bill_months_within_storage_{faxes}": month.months_within_storage,
                    f"bill_storage_usd_added_{faxes}": month.storage_usd_added_a_month}  # fmt: skip
    per_fax, per_warm_fax = sum(steps.values(), zero), sum(warm_steps.values(), zero)
    figures |= {
        "bill_fax_cpu_ms_cold": per_fax.cpu_s * 1000,
        "bill_fax_cpu_ms_warm": per_warm_fax.cpu_s * 1000,
        "bill_fax_instance_s_cold": per_fax.instance_s,
        "bill_fax_instance_s_warm": per_warm_fax.instance_s,
        "bill_reconcile_cpu_ms_cold": reconcile.cpu_s * 1000,
        "bill_reconcile_cpu_ms_warm": reconcile_warm.cpu_s * 1000,
        "bill_reconciliations_a_month": DAYS_A_MONTH * MINUTES_A_DAY // every,
        "bill_fax_mib": warm.attachment_bytes / MIB,
    }
    most = monthly_bill(MONTHLY_FAXES[-1], steps, reconcile, every, warm.attachment_bytes)
    table.notes.append(
        f"the fee (${PRICES['vercel_pro_fee'].usd:g}, one deploying seat) includes "
        f"${PRICES['vercel_pro_credit'].usd:g} of usage credit a month, spent before any usage is billed, so the "
        "office pays the fee alone while the "
        f"functions' usage stays under it ({most.vercel_usage_usd / PRICES['vercel_pro_credit'].usd:.0%} of it at "
        f"{MONTHLY_FAXES[-1]:,} faxes). Invocations are priced with no included million (an upper bound). Supabase "
        "Pro is a fixed price, its Micro compute within its compute credits, while Storage holds under the plan's "
        f"{SUPABASE_STORAGE_INCLUDED_GB} GB: the faxes are kept for good (the office's legal record), so each month "
        "adds its column of GB, and once the plan's Storage is full each month of faxes adds "
        f"${PRICES['supabase_storage'].usd:g} a GB to every later month (${most.storage_usd_added_a_month:.2f} a month "
        f"for a month of {MONTHLY_FAXES[-1]:,}). Not in the bill: reading faxes back (Storage egress, within the "
        "plan's 250 GB while each fax is read a few times), the admin screen's own requests, a second deploying seat "
        f"(${PRICES['vercel_pro_fee'].usd:g} a month each), Resend's plan, and taxes"
    )
    return [model, table], figures

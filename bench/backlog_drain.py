"""Backlog drain: the invoke fan-out against one worker invocation per cron tick.

`jobs` e-mails (one sample fax each) are added to the sample provider and recorded with their
fetch_email jobs directly (no webhook, so no kick); the cron job is paused and a short simulated
tick calls invoke_document_jobs(p_max_invocations) every `tick_s` seconds instead of pg_cron's
minute, until every job is completed. The worker is the real one, on the function host, over the
PostgREST and Storage stand-ins and the sample provider. A run of each arm only: the single-
invocation arm alone takes ~100 ticks; the tick count, and so the ratio, hardly varies.

python -m devstack run -- .venv/bin/python -m bench.backlog_drain [--quick]
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import psycopg
from psycopg.types.json import Jsonb

from bench import flow
from bench.common import Section, Table, connect, env, fmt, fmt_ratio, ratio, run_alone, vault_secrets

JOBS_PER_INVOCATION = 3  # lib/worker.py MAX_JOBS_PER_INVOCATION
ARMS = {"fan-out (p_max_invocations 4)": 4, "one invocation per tick": 1}


@dataclass(frozen=True)
class Settings:
    jobs: int
    tick_s: float
    timeout_s: float


FULL = Settings(jobs=300, tick_s=2.0, timeout_s=400)
QUICK = Settings(jobs=6, tick_s=0.5, timeout_s=30)


@dataclass(frozen=True)
class Drain:
    seconds: float
    ticks: int
    posts: int
    idle_posts: int  # worker invocations that found no job to claim
    statuses: dict[str, int]


def enqueue(admin: psycopg.Connection, jobs: int) -> None:
    emails = flow.add_emails(jobs, attachments=1)
    ids = [row[0] for row in admin.execute(
        """insert into public.fax_received_emails (provider, provider_email_id, data)
           select 'resend', x ->> 'email_id', x from jsonb_array_elements(%s) x returning id""",
        (Jsonb(emails),),
    )]  # fmt: skip
    admin.execute("select public.enqueue_document_job('fetch_email', id) from unnest(%s::uuid[]) id", (ids,))


def remaining(admin: psycopg.Connection) -> int:
    return admin.execute("select count(*) from public.document_jobs where status <> 'completed'").fetchone()[0]


def drain(admin: psycopg.Connection, settings: Settings, max_invocations: int) -> Drain:
    enqueue(admin, settings.jobs)
    with connect(env("DATABASE_URL")) as caller:
        started_db = admin.execute("select clock_timestamp()").fetchone()[0]
        started = time.monotonic()
        ticks = posts = 0
        while remaining(admin):
            if time.monotonic() - started > settings.timeout_s:
                raise TimeoutError(f"the backlog was not drained in {settings.timeout_s:g} s")
            if time.monotonic() >= started + ticks * settings.tick_s:
                posts += caller.execute("select public.invoke_document_jobs(%s)", (max_invocations,)).fetchone()[0]
                ticks += 1
            time.sleep(0.05)
    finished = admin.execute("select max(finished_at) from public.document_jobs").fetchone()[0]
    statuses = dict(admin.execute("select status, count(*) from public.document_jobs group by 1").fetchall())
    answered = "select count(*) from net._http_response"
    flow.wait_until(lambda: admin.execute(answered).fetchone()[0] >= posts, 30, "every worker POST answered", 0.1)
    idle = admin.execute("select count(*) from net._http_response where content::jsonb ->> 'claimed' = '0'").fetchone()[
        0
    ]
    return Drain((finished - started_db).total_seconds(), ticks, posts, idle, statuses)


def run(quick: bool = False) -> Section:
    settings = QUICK if quick else FULL
    section = Section(
        "backlog_drain",
        "Backlog drain",
        f"{settings.jobs} fetch_email jobs (one sample fax each, real worker, cron job paused), "
        f"invoke_document_jobs called every {settings.tick_s:g} s instead of every minute; time from the first "
        "tick to the last completion. One run per arm. With pg_cron's real one-minute tick a drain takes "
        f"ceil(jobs / (3 x invocations per tick)) minutes, since each tick's invocations end well within the minute.",
    )
    table = Table(
        f"draining {settings.jobs} queued jobs",
        ["arm", f"seconds ({settings.tick_s:g} s tick)", "ticks until drained", "worker POSTs",
         "POSTs that found no job", "minutes with the real 1-min tick (computed)"],
    )  # fmt: skip
    results: dict[str, Drain] = {}
    with connect() as admin, vault_secrets(admin), flow.cron_paused(admin):
        flow.clean_up(admin)
        try:
            for label, max_invocations in ARMS.items():
                results[label] = result = drain(admin, settings, max_invocations)
                flow.clean_up(admin)
                table.add(label, fmt(result.seconds, 1), result.ticks, result.posts, result.idle_posts,
                          math.ceil(settings.jobs / (JOBS_PER_INVOCATION * max_invocations)))  # fmt: skip
                if set(result.statuses) != {"completed"}:
                    table.notes.append(f"{label}: jobs ended {result.statuses}")
        finally:
            flow.clean_up(admin)
    fan, one = results["fan-out (p_max_invocations 4)"], results["one invocation per tick"]
    section.figures |= {
        "fanout_s": fan.seconds, "single_s": one.seconds, "fanout_ticks": fan.ticks, "single_ticks": one.ticks,
        "speedup": ratio(one.seconds, fan.seconds),
    }  # fmt: skip
    table.notes.append(f"one invocation per tick / fan-out, time: {fmt_ratio(ratio(one.seconds, fan.seconds))}")
    section.tables.append(table)
    return section


if __name__ == "__main__":
    run_alone(run, __doc__)

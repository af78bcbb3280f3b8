"""Burst drain: a burst of e-mails at once against Resend's rate limit, the shared limiter on and off.

`emails` e-mails with one sample fax each are recorded at once through record_inbound_email, the
webhook's own call with its kick, from 8 connections (on Vercel every webhook has an instance of
its own; here 300 cold webhook processes would spend the machine's two cores on starting Python,
not on the drain). The kicks, the follow-ups and the cron start the real worker on the function
host, over the PostgREST and Storage stand-ins and the Resend stand-in, which limits the team to
5 API requests a second as Resend does. The cron job runs as deployed.

Arms, in the same run: the limiter on (as deployed), off (document_jobs_rate_limits.enabled =
false: every worker calls Resend when it likes and meets its 429s, which release the job without
an attempt either way), and on with a cap of two invocations per slot a second (8) instead of
the default three (12), the figure behind the default. Drain: from the first e-mail recorded to the last job
completed, against the rate-limited minimum, the API calls needed / (rate x (1 - share left to
others)): no drain that keeps to the limiter can be faster.

python -m devstack run -- .venv/bin/python -m bench.burst_drain [--quick]
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import psycopg
from psycopg.types.json import Jsonb

from bench import flow
from bench.common import Section, Table, connect, env, fmt, fmt_ratio, ratio, run_alone, vault_secrets
from devstack.standins.resend import RESEND_RATE_LIMIT

# label: (limiter enabled, max_invocations_in_flight; None: the default cap)
ARMS: dict[str, tuple[bool, int | None]] = {
    "limiter on": (True, None),
    "limiter off": (False, None),
    "limiter on, cap 8": (True, 8),
}
CONNECTIONS = 8  # recording the burst


@dataclass(frozen=True)
class Settings:
    emails: int
    timeout_s: float


FULL = Settings(emails=300, timeout_s=900)
# Quick: few enough that the limiter-off arm's 429s are over in a cron tick or two (each tick's
# workers meet the limit at once, and a released job waits for the next tick: 12 e-mails took 405 s).
QUICK = Settings(emails=4, timeout_s=420)


@dataclass(frozen=True)
class Drain:
    seconds: float
    minimum_s: float
    api_calls_needed: int
    refused: int  # 429s the stand-in answered
    requests: int  # API requests the stand-in saw
    busiest_second: int
    downloads_over_limit: int  # downloads that would have been refused, had they counted
    attempts_on_429: int
    throttled_releases: int
    peak_in_flight: int
    cap: int
    posts: int
    statuses: dict[str, int]


def reset_limiter(admin: psycopg.Connection, enabled: bool, cap: int | None) -> None:
    admin.execute(
        "update public.document_jobs_rate_limits set enabled = %s, next_at = default, paused_until = null"
        " where provider = 'resend'",
        (enabled,),
    )
    admin.execute("update public.document_jobs_settings set max_invocations_in_flight = %s", (cap,))


def record_burst(emails: list[dict[str, Any]]) -> None:
    """Every e-mail's record_inbound_email at once, as service_role (the webhook's key)."""

    def record(chunk: list[dict[str, Any]]) -> None:
        with psycopg.connect(env("DATABASE_URL"), autocommit=True) as conn:
            conn.execute("set role service_role")
            for data in chunk:
                conn.execute(
                    "select * from public.record_inbound_email(%s, %s, %s)",
                    (data["email_id"], f"msg_{data['email_id']}", Jsonb(data)),
                )

    with ThreadPoolExecutor(CONNECTIONS) as pool:
        list(pool.map(record, [emails[n::CONNECTIONS] for n in range(CONNECTIONS)]))


def live_jobs(admin: psycopg.Connection) -> int:
    return admin.execute("select count(*) from public.document_jobs where status in ('queued', 'running')").fetchone()[
        0
    ]


def drain(admin: psycopg.Connection, settings: Settings, enabled: bool, cap: int | None) -> Drain:
    provider = env("RESEND_API_URL")
    reset_limiter(admin, enabled, cap)
    emails = flow.add_emails(settings.emails, attachments=1)
    httpx.post(f"{provider}/_control/rate_limit", json={"per_second": RESEND_RATE_LIMIT}, timeout=10).raise_for_status()
    started = admin.execute("select clock_timestamp()").fetchone()[0]
    record_burst(emails)
    flow.wait_until(lambda: live_jobs(admin) == 0, settings.timeout_s, "the burst to drain", 0.2)
    # The fetches' end: the faxes' preparations follow them (the claim order), and take no Resend request.
    fetched = "select max(finished_at) from public.document_jobs where kind = 'fetch_email'"
    finished = admin.execute(fetched).fetchone()[0]
    flow.wait_until(lambda: flow.in_flight(admin) == 0, 330, "every worker invocation to answer", 0.2)
    seen = httpx.get(f"{provider}/_control/rate_limit", timeout=10).json()
    rate, share = admin.execute(
        "select requests_per_second, share_for_others from public.document_jobs_rate_limits where provider = 'resend'"
    ).fetchone()
    attempts_on_429, throttled_releases = admin.execute(
        """select count(*) filter (where outcome <> 'released' and error_code = 'resend_rate_limited'),
                  count(*) filter (where outcome = 'released'
                                     and error_code in ('resend_rate_limited', 'resend_rate_limit_wait'))
             from public.document_job_attempts"""
    ).fetchone()
    calls = 2 * settings.emails  # a job lists its attachments (one page) and retrieves its e-mail (the raw URL)
    return Drain(
        seconds=(finished - started).total_seconds(),
        minimum_s=calls / (rate * (1 - float(share))),
        api_calls_needed=calls,
        refused=seen["refused"],
        requests=seen["requests"],
        busiest_second=seen["busiest_second"],
        downloads_over_limit=seen["downloads_over_limit_if_counted"],
        attempts_on_429=attempts_on_429,
        throttled_releases=throttled_releases,
        peak_in_flight=flow.peak_in_flight(admin),
        cap=admin.execute("select document_jobs_internal.invocation_cap()").fetchone()[0],
        posts=admin.execute("select count(*) from document_jobs_internal.worker_requests").fetchone()[0],
        statuses=dict(admin.execute("select status, count(*) from public.document_jobs group by 1").fetchall()),
    )


def run(quick: bool = False) -> Section:
    settings = QUICK if quick else FULL
    section = Section(
        "burst_drain",
        "Burst drain at the provider's rate limit",
        f"A burst of {settings.emails} e-mails with one sample fax each, recorded at once through "
        f"record_inbound_email (the webhook's own call, with its kick) from {CONNECTIONS} connections, drained by "
        "the real worker on the function host against the Resend stand-in, which limits the team to "
        f"{RESEND_RATE_LIMIT} API requests a second as Resend does (every one-second span; downloads come from "
        "another host and are not limited). The cron job runs as deployed. One run per arm, in the same run: "
        "the shared limiter on, off (every worker calls Resend when it likes), and on with a cap of 8 invocations in "
        "flight instead of the default. Drain: from the first e-mail "
        "recorded to the last job completed; minimum: the API calls needed (two a job: the listing and the "
        "e-mail's retrieval) / (rate x (1 - "
        "the share left to other applications)), the fastest drain that keeps to the limiter. In flight: worker "
        "invocations between their POST and pg_net's record of the answer, as the cap counts them. This "
        "supersedes the backlog-drain section, which measured the fixed fan-out of 4 invocations a cron tick: "
        "the fan-out now goes up to the cap, and a stopping invocation starts its own follow-up.",
    )
    table = Table(
        f"a burst of {settings.emails} e-mails at once, Resend limited to {RESEND_RATE_LIMIT} requests a second",
        ["arm", "drain s", "minimum s", "minimum / drain", "API requests", "429s answered", "attempts spent on 429",
         "throttled releases", "busiest second", "peak in flight (cap)", "worker POSTs queued"],
    )  # fmt: skip
    results: dict[str, Drain] = {}
    with connect() as admin, vault_secrets(admin):
        flow.clean_up(admin)
        try:
            for label, (enabled, cap) in ARMS.items():
                results[label] = d = drain(admin, settings, enabled, cap)
                flow.clean_up(admin)
                table.add(label, fmt(d.seconds, 1), fmt(d.minimum_s, 1), fmt_ratio(ratio(d.minimum_s, d.seconds)),
                          d.requests, d.refused, d.attempts_on_429, d.throttled_releases, d.busiest_second,
                          f"{d.peak_in_flight} ({d.cap})", d.posts)  # fmt: skip
                if set(d.statuses) != {"completed"}:
                    table.notes.append(f"{label}: jobs ended {d.statuses}")
        finally:
            reset_limiter(admin, True, None)
            flow.clean_up(admin)
    on, off, cap8 = results["limiter on"], results["limiter off"], results["limiter on, cap 8"]
    table.notes.append(
        f"downloads that Resend's limit would have refused, had downloads counted toward it: {on.downloads_over_limit} "
        f"with the limiter on, {off.downloads_over_limit} off (the download host is not limited)"
    )
    section.figures |= {
        "emails": settings.emails, "on_s": on.seconds, "off_s": off.seconds, "minimum_s": on.minimum_s,
        "on_ratio": ratio(on.minimum_s, on.seconds), "off_ratio": ratio(off.minimum_s, off.seconds),
        "on_refused": on.refused, "off_refused": off.refused, "on_attempts_on_429": on.attempts_on_429,
        "off_attempts_on_429": off.attempts_on_429, "on_peak": on.peak_in_flight, "off_peak": off.peak_in_flight,
        "cap": on.cap, "on_posts": on.posts, "off_posts": off.posts, "on_busiest": on.busiest_second,
        "off_busiest": off.busiest_second, "off_releases": off.throttled_releases, "cap8_s": cap8.seconds,
        "cap8_ratio": ratio(cap8.minimum_s, cap8.seconds), "cap8_peak": cap8.peak_in_flight,
    }  # fmt: skip
    section.tables.append(table)
    return section


if __name__ == "__main__":
    run_alone(run, __doc__)

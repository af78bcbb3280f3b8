"""The "What the figures show" section: the measured figures put in words, with the causes found.

The causes were found on a running local stack (EXPLAIN, auto_explain, pgbench variants); the
figures quoted are this run's, so the text stays true to the tables below it.
"""

from __future__ import annotations

from bench.common import Section, fmt, fmt_ratio


class Figures:
    def __init__(self, sections: dict[str, Section]) -> None:
        self.sections = sections

    def has(self, section: str, *keys: str) -> bool:
        return section in self.sections and all(self.sections[section].figures.get(key) is not None for key in keys)

    def get(self, section: str, key: str) -> float:
        value = self.sections[section].figures[key]
        assert value is not None
        return value

    def ms(self, section: str, key: str, digits: int = 2) -> str:
        return f"{fmt(self.get(section, key), digits)} ms"

    def x(self, section: str, key: str) -> str:
        return fmt_ratio(self.get(section, key))


def claim_cost(f: Figures) -> str | None:
    keys = ("this_p50_100_0", "this_p50_50000_0", "this_p50_50000_1000000", "original_p50_50000_0",
            "original_p50_50000_1000000", "original_p50_100_0")  # fmt: skip
    if not f.has("claim_cost", *keys):
        return None
    s = "claim_cost"
    return (
        "**Claim cost stays flat; the original design's grows with the backlog.** A claim and its completion take "
        f"{f.ms(s, 'this_p50_100_0')} (p50) with 100 jobs queued, {f.ms(s, 'this_p50_50000_0')} with 50,000 and "
        f"{f.ms(s, 'this_p50_50000_1000000')} with 50,000 queued and 1,000,000 finished; the original design takes "
        f"{f.ms(s, 'original_p50_100_0')}, {f.ms(s, 'original_p50_50000_0')} and "
        f"{f.ms(s, 'original_p50_50000_1000000')}: {f.x(s, 'ratio_p50_50000_0')} and "
        f"{f.x(s, 'ratio_p50_50000_1000000')} this schema's at the two large sizes (p99: "
        f"{f.x(s, 'ratio_p99_50000_0')} and {f.x(s, 'ratio_p99_50000_1000000')}). Cause (index): the original "
        "has no index that yields queued rows in `run_after, created_at` order, so each claim reads and sorts "
        "the whole backlog; the partial claim index hands the claim the head of the backlog, and finished rows "
        "are not in it at all. "
        + (
            f"With 100 jobs the original is a little faster ({f.x(s, 'ratio_p50_100_0')} this schema's p50): "
            if f.get(s, "ratio_p50_100_0") < 1
            else f"With 100 jobs the two are close ({f.x(s, 'ratio_p50_100_0')}): "
        )
        + "this claim function also runs the expired-lease sweep and three argument checks (next paragraph)."
    )


def throughput(f: Figures) -> str | None:
    s = "throughput"
    needed = [f"{name}_{n}" for name in ("ceiling", "ours", "worker", "sql", "deployed", "before", "bare")
              for n in (1, 4, 8)]  # fmt: skip
    if not f.has(s, *needed):
        return None

    def trio(name: str) -> str:
        return ", ".join(f"{fmt(f.get(s, f'{name}_{n}'))}" for n in (1, 4, 8))

    def ratios(name: str) -> str:
        return ", ".join(f.x(s, f"{name}_ratio_{n}") for n in (1, 4, 8))

    gain = (f.get(s, "deployed_8") / f.get(s, "before_8") - 1) * 100
    lost = (1 - f.get(s, "deployed_8") / f.get(s, "bare_8")) * 100
    return (
        "**Throughput: the function layer, not the table design, keeps this queue from the ceiling; the "
        "bench found and fixed half of that cost.** With "
        f"Python clients this queue does {trio('ours')} jobs/s at 1, 4 and 8 connections ({ratios('ours')} of the "
        f"ceiling); Procrastinate's own SQL calls driven the same way do {trio('sql')} ({ratios('sql')}), and "
        f"Procrastinate's real worker {trio('worker')} ({ratios('worker')}): its worker is one asyncio process "
        "whose per-job Python (job context, events, logging) is the limit, not its SQL. Driving this queue with "
        "pgbench instead (the ceiling's own C client) separates the client from the database: the deployed "
        f"functions do {trio('deployed')} jobs/s ({ratios('deployed')}); the very same two statements sent bare "
        f"do {trio('bare')} ({ratios('bare')}). What the first runs of this bench showed, and what was changed "
        "(the second table keeps the functions as they were, in a schema of the bench's own, so the change is "
        "measured before and after in one run): (1) *query shape and the plan cache*: `claim_document_jobs` "
        "picked with `limit p_limit` in a materialized CTE joined back to the table; the generic plan of that "
        "shape, with an unknown limit, is a hash join over a sequential scan of the whole table (about 15 ms a "
        "claim at 50,000 jobs when forced), so PL/pgSQL planned the statement again on every call. The claim is "
        "now `update ... where j.id = any(array(select ... limit p_limit for update skip locked))`, whose generic "
        "plan is the claim index then the primary key, pinned with `set plan_cache_mode = force_generic_plan`; "
        "(2) `fail_expired_document_jobs` was a `language sql` function with `security definer` and `set "
        "search_path`, which PostgreSQL never inlines and (before 18) plans on every call, about 0.1 ms a claim "
        "for a sweep that finds nothing in 0.01 ms; it is PL/pgSQL now, with a cached plan. Before the fix: "
        f"{trio('before')} jobs/s ({ratios('before')}); after: {gain:+.0f} % at 8 connections. The rest of the "
        f"gap to the bare statements ({lost:.0f} % at 8 connections) is the calls themselves: security definer "
        "and `set search_path` on each, and the argument checks (`document_jobs_internal.require_kind` reads "
        "`document_job_kinds` on every claim), left as they are: clear errors are worth a few hundredths of a "
        "millisecond. For the deployed worker none of this is the bottleneck: every queue call is an HTTP round "
        "trip through PostgREST (see the webhook and drain figures)."
    )


def idle_cost(f: Figures) -> str | None:
    s = "idle_cost"
    if not f.has(s, "idle_ms_history", "idle_ms_backoff"):
        return None
    history_pages = f.sections[s].figures.get("count_pages_history")
    backoff_pages = f.sections[s].figures.get("count_pages_backoff")
    return (
        "**Idle cost is negligible, history or not.** With 1,000,000 finished jobs and nothing claimable, "
        f"`invoke_document_jobs()` takes {f.ms(s, 'idle_ms_history', 3)} a call (a round trip included): its "
        f"count query touches {fmt(history_pages, 0)} page(s) and so does the sweep, since the partial indexes "
        "leave finished jobs out. With 50,000 jobs also waiting out a backoff it takes "
        f"{f.ms(s, 'idle_ms_backoff', 3)}, and the count query touches {fmt(backoff_pages, 0)} pages (see its "
        "plan): `run_after <= now()` is checked against every entry of the claim index, because the index "
        "leads with `kind`, which the count does not name, so the scan cannot start at the right place; it "
        "reads only index pages, about one per thousand waiting jobs, and no table page. Once a minute that is "
        "nothing, so no change is proposed; should millions ever wait in backoff, naming the kind in the count "
        "would bound the scan."
    )


def import_time(f: Figures) -> str | None:
    s = "import_time"
    worker = "worker module (api/internal/document_jobs.py)"
    worker_sb = "worker module + supabase (its first authorized call)"
    hook = "webhook module (api/webhooks/resend.py)"
    base = "import supabase"
    if not f.has(s, worker, worker_sb, hook, base):
        return None
    children = sorted(
        ((key.removeprefix("supabase_child_"), value) for key, value in f.sections[s].figures.items()
         if key.startswith("supabase_child_") and value),
        key=lambda item: -item[1],
    )  # fmt: skip
    total = f.get(s, base)
    parts = ", ".join(f"{name} {100 * value / total:.0f} %" for name, value in children[:4])
    return (
        f"**Imports: supabase is the cold start.** The worker module imports in {f.ms(s, worker, 0)} and the "
        f"webhook module in {f.ms(s, hook, 0)}, against {f.ms(s, base, 0)} for a bare `import supabase`; both "
        "defer supabase until a request is authenticated (lib/supabase_client.py), after which the worker "
        f"has paid {f.ms(s, worker_sb, 0)}. Of `import supabase`, by the package it imports first: {parts} "
        "(postgrest's share includes httpx and pydantic, which it is first to import). `create_client` imports "
        "the auth, realtime and functions clients although the functions use only `rpc`, tables and storage; the "
        "specification asks for `create_client`, so the deferral is the remedy, and it is in place."
    )


def cold_start(f: Figures) -> str | None:
    s = "cold_start"
    base = "bare `import supabase` in the worker's bundle"
    refused = "worker, no token (401)"
    worked = "worker, authorized, empty queue (imports supabase, one claim)"
    hook = "webhook, signed event of another type (verified, parsed, ignored)"
    cached = "worker, authorized, with the local stack's bytecode cache"
    if not f.has(s, base, refused, worked, hook):
        return None
    sizes = ", ".join(
        f"{key.removeprefix('bundle_zipped_bytes ')} {fmt(value / 1e6, 1)} MB"
        for key, value in f.sections[s].figures.items()
        if key.startswith("bundle_zipped_bytes ") and value
    )
    return (
        "**Cold starts, through Vercel's own runtime.** A new runtime process answers a refused worker call in "
        f"{f.ms(s, refused, 0)} and a verified webhook in {f.ms(s, hook, 0)}; an authorized worker call, which "
        f"imports supabase and asks the database once, takes {f.ms(s, worked, 0)}, against "
        f"{f.ms(s, base, 0)} for a bare `import supabase` in a fresh interpreter inside the same bundle. Deployed "
        "bundles carry no bytecode, so a cold instance compiles all it imports"
        + (
            f": with bytecode compiled ahead (the local stack's cache) the same authorized call takes "
            f"{f.ms(s, cached, 0)}. "
            if f.has(s, cached)
            else ". "
        )
        + f"The zipped bundles: {sizes}. The latencies in the next section include such a cold start "
        "(with the cache) per invocation."
    )


def webhook_latency(f: Figures) -> str | None:
    s = "webhook_latency"
    if not f.has(s, "kick_p50", "kick_p95", "webhook_answer_p50"):
        return None
    text = (
        f"**Webhook to stored: the kick makes it sub-second.** With the pg_net kick an e-mail's attachments are "
        f"stored {f.ms(s, 'kick_p50', 0)} (p50, p95 {f.ms(s, 'kick_p95', 0)}) after its webhook is sent; the "
        f"webhook's own answer takes {f.ms(s, 'webhook_answer_p50', 0)} of that. "
        + (
            f"The worker's invocation runs {f.ms(s, 'worker_p50', 0)} (p50 of its own elapsed time), longer "
            "than what is left after the answer, because it goes on after the last attachment row: it completes "
            "the job and claims once more, finding nothing. "
            if f.has(s, "worker_p50")
            else ""
        )
    )
    if f.has(s, "cron_p50", "cron_p95", "cron_emails", "cron_over_kick_p50"):
        text += (
            f"Through the cron job alone it is {fmt(f.get(s, 'cron_p50') / 1000, 1)} s (p50; the slowest of the "
            f"{fmt(f.get(s, 'cron_emails'), 0)} e-mails {fmt(f.get(s, 'cron_p95') / 1000, 1)} s), "
            f"{f.x(s, 'cron_over_kick_p50')} the kick path: on "
            "average half a minute, at worst a minute plus the job, as designed for a safety net. "
        )
    text += (
        "The first runs of this bench put most of the kick path's time in the local stack: each call through "
        "the PostgREST/Storage stand-in cost ~44 ms on a kept-alive connection although the gateway served it in "
        "~3 ms. That was Nagle's algorithm meeting delayed ACKs: `BaseHTTPRequestHandler` writes the headers and "
        "the body in two sends, and the socket lacked TCP_NODELAY. The local servers (the gateway, the sample "
        "provider, the functions' shared handler) now set it (`disable_nagle_algorithm`), which took a call from "
        "44 ms to 2 ms; real PostgREST and Storage set it too."
    )
    return text


def backlog_drain(f: Figures) -> str | None:
    s = "backlog_drain"
    if not f.has(s, "fanout_s", "single_s", "fanout_ticks", "single_ticks", "speedup"):
        return None
    return (
        f"**Backlog drain: the fan-out is worth {f.x(s, 'speedup')}.** 300 queued jobs drain in "
        f"{fmt(f.get(s, 'fanout_s'), 0)} s with the fan-out against {fmt(f.get(s, 'single_s'), 0)} s with one "
        f"invocation per tick ({fmt(f.get(s, 'fanout_ticks'), 0)} against {fmt(f.get(s, 'single_ticks'), 0)} "
        "ticks of 2 s); with pg_cron's real minute that is 25 minutes against 100. The limit is arithmetic, not "
        "the database: at most 4 invocations a tick times 3 jobs an invocation, 12 jobs a minute when every kick "
        "is lost. Kicks normally start one invocation per received e-mail, so a burst is drained by the kicks, "
        "not by the cron job; raising `p_max_invocations` is the knob if lost kicks in bulk ever matter."
    )


def markdown(sections: dict[str, Section], *, quick: bool) -> str:
    if quick:
        return "A quick run (tiny sizes, one repetition) shows nothing: run `make bench` for real figures."
    f = Figures(sections)
    paragraphs = [p for p in (claim_cost(f), throughput(f), idle_cost(f), import_time(f), cold_start(f),
                              webhook_latency(f), backlog_drain(f)) if p]  # fmt: skip
    return "\n\n".join(paragraphs) or "No section ran."

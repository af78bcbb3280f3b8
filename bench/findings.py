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
            f"With 100 jobs the original is {'a little ' if f.get(s, 'ratio_p50_100_0') >= 0.8 else ''}faster "
            f"({f.x(s, 'ratio_p50_100_0')} this schema's p50): "
            if f.get(s, "ratio_p50_100_0") < 1
            else f"With 100 jobs the two are close ({f.x(s, 'ratio_p50_100_0')}): "
        )
        + "this claim function also runs the expired-lease sweep and checks its arguments (next paragraph)."
    )


def throughput(f: Figures) -> str | None:
    s = "throughput"
    names = ("ceiling", "worker_calls_pgbench", "deployed", "before", "bare", "worker_calls", "ours", "worker", "sql")
    needed = [f"{mode}_{name}_{n}" for mode in ("off", "on") for name in names for n in (1, 4, 8)]
    if not f.has(s, *needed):
        return None

    def trio(mode: str, name: str) -> str:
        return ", ".join(f"{fmt(f.get(s, f'{mode}_{name}_{n}'))}" for n in (1, 4, 8))

    def ratios(mode: str, name: str) -> str:
        return ", ".join(f.x(s, f"{mode}_{name}_ratio_{n}") for n in (1, 4, 8))

    def times(mode: str, name: str, to: str, n: int = 4) -> str:
        return fmt_ratio(f.get(s, f"{mode}_{name}_{n}") / f.get(s, f"{mode}_{to}_{n}"))

    def gain(mode: str, n: int) -> str:
        return f"{(f.get(s, f'{mode}_deployed_{n}') / f.get(s, f'{mode}_before_{n}') - 1) * 100:+.0f} %"

    goal = f.get(s, "on_worker_calls_pgbench_ratio_4")
    return (
        "**Throughput with durability on, as hosted Supabase runs: one transaction a job.** With fsync, "
        "synchronous_commit and full_page_writes on, the "
        f"ceiling (pgbench's one-row update, halved) is {trio('on', 'ceiling')} jobs/s at 1, 4 and 8 connections, "
        f"against {trio('off', 'ceiling')} with them off. Driven by pgbench, the ceiling's own client, so that the "
        "ratio is the database's alone, and called as the worker calls it "
        "(`complete_document_job_and_claim_next_v2`: the completion of one job and the claim of the next in one "
        f"transaction), this queue does {trio('on', 'worker_calls_pgbench')} jobs/s with durability on "
        f"({ratios('on', 'worker_calls_pgbench')} of the ceiling) and {trio('off', 'worker_calls_pgbench')} with "
        f"it off ({ratios('off', 'worker_calls_pgbench')}): at 4 connections with durability on it "
        + ("meets" if goal >= 0.7 else "misses")
        + f" the goal of 0.7x ({fmt_ratio(goal)}). As two calls a job (claim, then complete: two transactions) it "
        f"does {trio('on', 'deployed')} ({ratios('on', 'deployed')}) on and {trio('off', 'deployed')} "
        f"({ratios('off', 'deployed')}) off; the very same statements sent bare, without any function, do "
        f"{trio('on', 'bare')} ({ratios('on', 'bare')}) on and {trio('off', 'bare')} ({ratios('off', 'bare')}) "
        "off. From Python, one process per connection as deployed workers are, the worker's calls do "
        f"{trio('on', 'worker_calls')} jobs/s with durability on ({ratios('on', 'worker_calls')}; "
        f"{times('on', 'worker_calls', 'worker')} Procrastinate's worker at 4 connections) and "
        f"{trio('off', 'worker_calls')} off ({ratios('off', 'worker_calls')}), the two calls "
        f"{trio('on', 'ours')} ({ratios('on', 'ours')}) and {trio('off', 'ours')} ({ratios('off', 'ours')}): "
        "the client's own work (a Python interpreter per connection) shares the two cores with the server. "
        f"Procrastinate's real worker does {trio('on', 'worker')} ({ratios('on', 'worker')}) with durability on "
        f"and {trio('off', 'worker')} ({ratios('off', 'worker')}) off: one asyncio process whose per-job Python "
        "(job context, events, logging) is its limit, not its SQL, which driven like ours does "
        f"{trio('on', 'sql')} ({ratios('on', 'sql')}) and {trio('off', 'sql')} ({ratios('off', 'sql')}). "
        "With durability on, a commit waits for its WAL to reach the disk, so the number of commits a job needs "
        "counts for more than the work in them; the combined call halves them. Its WAL is still heavier than the "
        "ceiling's: a claim and a completion change the row's status, so neither is a HOT update (the partial "
        "indexes follow the status), the end of an attempt writes its history row, and with full_page_writes on "
        "the first change to each page after a checkpoint writes the whole page. "
        "The per-call work, measured on a running stack with perf and the database's CPU time per job, found the "
        "cost in three places: each argument check went through a `document_jobs_internal.require_*` helper, a "
        "PL/pgSQL call with its own `set search_path` (four a claim); every claim read `document_job_kinds`; and "
        "the claim's note of its attempt was a BEFORE trigger, whose WHEN clause PostgreSQL prepares again in "
        "every UPDATE of a job, 5 to 7 % of the database's time a job for a fact that only a claim changes. The "
        "checks are now plain `if` statements with the same errors, the claim checks the kind only when it found "
        "no job (a found job's kind is known), and the claim sets the two columns itself. The two calls on the "
        "queue as it was before that work (its migrations at an older commit, bench/throughput/before.py, on a "
        f"cluster of its own, same run) do {trio('off', 'before')} jobs/s off and {trio('on', 'before')} on: "
        f"today's two calls differ by {gain('off', 1)}, {gain('off', 4)}, {gain('off', 8)} at 1, 4, 8 connections "
        f"with durability off and {gain('on', 1)}, {gain('on', 4)}, {gain('on', 8)} with it on, which counts "
        "everything added since as well (the admin screen's indexes on document_jobs among it). "
        "What is left between the functions and the bare statements is `security definer` with `set "
        "search_path` on each call, which the security of the API requires, and the expired-lease sweep that "
        "every claim runs (the bare statements skip it). For the deployed worker the database is not the "
        "bottleneck either way: every queue call is an HTTP round trip through PostgREST, which is why the "
        "worker now makes n + 2 of them for a job with n attachments instead of 2n + 3 (see the webhook section)."
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
        "defer supabase until a request is authenticated (lib/supabase/client.py), after which the worker "
        f"has paid {f.ms(s, worker_sb, 0)}. Of `import supabase`, by the package it imports first: {parts} "
        "(postgrest's share includes httpx and pydantic, which it is first to import). `create_client` imports "
        "the auth, realtime and functions clients although the functions use only `rpc`, tables and storage; the "
        "functions are built on `create_client`, the client Supabase documents for Python, so the deferral is the "
        "remedy, and it is in place."
    )


def cold_start(f: Figures) -> str | None:
    s = "cold_start"
    base = "bare `import supabase` in the worker's bundle"
    refused = "worker, no token (401)"
    worked = "worker, authorized, empty queue (imports supabase, one claim)"
    hook = "webhook, signed event of another type (verified, parsed, ignored)"
    keys = [
        f"{label} ({variant} bytecode)" for label in (base, refused, worked, hook) for variant in ("with", "without")
    ]
    if not f.has(s, *keys):
        return None

    def both(label: str) -> str:
        return f"{f.ms(s, f'{label} (with bytecode)', 0)} (without: {f.ms(s, f'{label} (without bytecode)', 0)})"

    sizes = ", ".join(
        f"{key.removeprefix('bundle_zipped_bytes ').removesuffix(' (with bytecode)')} {fmt(value / 1e6, 1)} MB"
        for key, value in f.sections[s].figures.items()
        if key.startswith("bundle_zipped_bytes ") and key.endswith("(with bytecode)") and value
    )
    speedup = f.get(s, f"{worked} (without bytecode)") / f.get(s, f"{worked} (with bytecode)")
    return (
        "**Cold starts, through Vercel's own runtime, with the bytecode the deploy ships.** With the project's "
        "VERCEL_PYTHON_COMPILEALL=1 the builder compiles bytecode into each bundle; a new runtime process then "
        f"answers a refused worker call in {both(refused)} and a verified webhook in {both(hook)}; an authorized "
        f"worker call, which imports supabase and asks the database once, takes {both(worked)}, {speedup:.1f} "
        f"times faster; a bare `import supabase` in a fresh interpreter inside the bundle {both(base)}. Without "
        "it the runtime's read-only bundle (PYTHONDONTWRITEBYTECODE=1) compiles all a cold start imports. The "
        f"zipped bundles with bytecode: {sizes}. The latencies in the next section include a cold start per new "
        "instance; warm Fluid instances serve the rest."
    )


def instance_memory(f: Figures) -> str | None:
    s = "instance_memory"
    keys = ("warm_mib", "peak_mib", "per_job_mib", "concurrency", "attachment_mib", "jobs_in_half", "small_mib",
            "small_per_job_mib", "per_job_spread", "goal_mib", "before_peak_mib", "before_per_job_mib",
            "before_jobs_in_half")  # fmt: skip
    if not f.has(s, *keys):
        return None
    peak, limit, goal = f.get(s, "peak_mib"), 2048, f.get(s, "goal_mib")
    n = fmt(f.get(s, "concurrency"), 0)
    spread = f.get(s, "per_job_spread")
    return (
        f"**Fluid memory: streamed, {n} jobs of 40 MiB take {fmt(peak, 0)} MiB, where they took "
        f"{fmt(f.get(s, 'before_peak_mib'), 0)} MiB.** Each attachment now streams from its download to Storage in "
        "chunks of at most 64 KiB, hashed on the way, so a job no longer holds it whole. One worker instance "
        f"holding {n} jobs at once, each storing an attachment of {fmt(f.get(s, 'attachment_mib'), 0)} MiB (the "
        f"cap, ATTACHMENT_MAX_BYTES), peaked at {fmt(peak, 0)} MiB ({peak / limit:.0%} of the default 2 GB; "
        f"{fmt(f.get(s, 'warm_mib'), 0)} MiB idle, after its first call): "
        f"{fmt(f.get(s, 'per_job_mib'), 1)} MiB a job, against {fmt(f.get(s, 'small_per_job_mib'), 1)} MiB a job "
        f"with {fmt(f.get(s, 'small_mib'), 0)} MiB attachments ({fmt_ratio(spread)} apart: the goal was within 2x, "
        f"{'met' if spread <= 2 else 'NOT met'}) and against the goal of idle + {n} x 8 MiB = {fmt(goal, 0)} MiB "
        f"({'met' if peak <= goal else 'NOT met'}). Before, the same wave peaked at "
        f"{fmt(f.get(s, 'before_peak_mib'), 0)} MiB, {fmt(f.get(s, 'before_per_job_mib'), 0)} MiB a job (the report "
        "of 2026-12-01). This supersedes that report's decision against streaming, which rested on 8 such jobs "
        "fitting in half of 2 GB: under Fluid an instance is billed for its provisioned memory while it serves, so "
        "the memory a job takes decides how many jobs an instance carries and how many instances a burst needs. "
        f"Within half of 2 GB one instance would carry about {fmt(f.get(s, 'jobs_in_half'), 0)} such jobs at once, "
        f"where it carried about {fmt(f.get(s, 'before_jobs_in_half'), 0)}."
    )


def cost(f: Figures) -> str | None:
    s = "cost"
    sizes = [("100kib", "100 KiB"), ("1mib", "1 MiB"), ("40mib", "40 MiB")]
    months = (100, 1_000, 10_000)
    bill = [f"bill_{k}_{n}" for n in months for k in ("total_usd", "vercel_usd", "supabase_usd", "vercel_usage_usd",
                                                      "vercel_usage_warm_usd", "storage_gb", "months_within_storage",
                                                      "storage_usd_added")]  # fmt: skip
    if not f.has(
        s, *(f"usd_per_1000_{k}_{m}" for k, _ in sizes for m in ("single", "burst")), "idle_cron_s", "idle_usd",
        *bill, "bill_fax_cpu_ms_cold", "bill_fax_cpu_ms_warm", "bill_fax_instance_s_cold", "bill_fax_instance_s_warm",
        "bill_reconcile_cpu_ms_cold", "bill_reconcile_cpu_ms_warm", "bill_fax_mib",
    ):  # fmt: skip
        return None

    def usd(key: str) -> str:
        return f"${f.get(s, key):.4f}"

    def dollars(key: str) -> str:
        return f"${f.get(s, key):.2f}"

    totals = {dollars(f"bill_total_usd_{n}") for n in months}
    paid = (
        f"{totals.pop()} a month at 100, 1,000 and 10,000 faxes alike"
        if len(totals) == 1
        else ", ".join(f"{dollars(f'bill_total_usd_{n}')} at {n:,} faxes" for n in months)
    )
    within = all(f.get(s, f"bill_vercel_usd_{n}") == f.get(s, f"bill_vercel_usd_{months[0]}") for n in months)
    per_size = "; ".join(
        f"{label}: {usd(f'usd_per_1000_{k}_single')} one at a time, {usd(f'usd_per_1000_{k}_burst')} in a burst "
        f"({fmt(f.get(s, f'cpu_ms_{k}_burst'), 0)} ms of CPU and {fmt(f.get(s, f'instance_s_{k}_burst'), 2)} "
        "instance-seconds a fax; worker invocations a fax in the burst: "
        f"{fmt(f.get(s, f'kick_per_fax_{k}_burst'), 2)} kick, {fmt(f.get(s, f'follow_up_per_fax_{k}_burst'), 2)} "
        f"follow-ups, {fmt(f.get(s, f'cron_per_fax_{k}_burst'), 2)} from the cron)"
        for k, label in sizes
    )
    top = months[-1]
    return (
        f"**What the office pays: {paid}, the two plans' fees"
        + (": the functions' usage stays within the credit Vercel's fee includes.** " if within else ".** ")
        + "The bill (*the office's monthly bill*, under *What a fax costs*) prices Vercel at hnd1, where the "
        "functions run next to the office's database, and counts every fax and every scheduled reconciliation as "
        "meeting cold instances, as in a quiet office whose faxes come an hour apart (an upper bound: Vercel does "
        f"not publish how long it keeps a paused instance). A fax of {fmt(f.get(s, 'bill_fax_mib'), 0)} MiB then "
        f"costs {fmt(f.get(s, 'bill_fax_cpu_ms_cold'), 0)} ms of active CPU and "
        f"{fmt(f.get(s, 'bill_fax_instance_s_cold'), 2)} instance-seconds (warm: "
        f"{fmt(f.get(s, 'bill_fax_cpu_ms_warm'), 0)} ms and {fmt(f.get(s, 'bill_fax_instance_s_warm'), 2)}), a "
        f"reconciliation {fmt(f.get(s, 'bill_reconcile_cpu_ms_cold'), 0)} ms (warm: "
        f"{fmt(f.get(s, 'bill_reconcile_cpu_ms_warm'), 0)} ms), and Vercel's usage comes to "
        + ", ".join(f"{dollars(f'bill_vercel_usage_usd_{n}')}" for n in months)
        + " a month at 100, 1,000 and 10,000 faxes ("
        + ", ".join(f"{dollars(f'bill_vercel_usage_warm_usd_{n}')}" for n in months)
        + " if every instance were warm), against the $20 of usage credit in Vercel Pro's $20 fee: Vercel bills "
        f"{dollars(f'bill_vercel_usd_{top}')} and Supabase {dollars(f'bill_supabase_usd_{top}')} (the Pro plan, "
        "its Micro compute within its compute credits). The faxes are kept for good, so Storage grows: "
        f"{fmt(f.get(s, f'bill_storage_gb_{top}'), 1)} GB a month at {top:,} faxes, which the plan's 100 GB hold "
        f"for {fmt(f.get(s, f'bill_months_within_storage_{top}'), 0)} months; after that each month of faxes adds "
        f"{dollars(f'bill_storage_usd_added_{top}')} to every later month. Per 1,000 faxes, Vercel's three units "
        f"(active CPU, provisioned memory for the instance-seconds, invocations) at hnd1's prices, warm: {per_size}. "
        "Instance-seconds are those of the local host's concurrency of 8; in a burst the worker's instance spends "
        "most of them, at the small sizes, waiting for its slot of Resend's rate limit (wall time: memory is "
        "billed, CPU is not). A day with no fax costs the cron's "
        f"{fmt(f.get(s, 'idle_cron_s'), 1)} s of database time, no worker invocation from the every-minute jobs, "
        f"and {fmt(f.get(s, 'idle_reconcile_invocations_a_day'), 0)} worker invocations of reconciliation "
        f"({fmt(f.get(s, 'idle_reconcile_listings'), 0)} listing request a run): ${f.get(s, 'idle_usd'):.4f} of "
        "Vercel usage, warm. The prices are inputs in one place (bench/cost.py PRICES), each with the page it "
        "was read on and when; Vercel's hnd1 prices and the Pro plan's fee were read in copies of Vercel's pages, "
        "which the table says."
        + (
            " The bill counts the prepare job of every fax as one of its steps, at the eFax-style 3-page G4 TIFF's "
            f"{fmt(f.get(s, 'prepare_cpu_s_tiff') * 1000, 0)} ms of CPU and "
            f"{fmt(f.get(s, 'prepare_wall_s_tiff'), 2)} s of wall time a fax (the PDF invoice's "
            f"{fmt(f.get(s, 'prepare_cpu_s_pdf') * 1000, 0)} ms and {fmt(f.get(s, 'prepare_wall_s_pdf'), 2)} s): "
            f"{usd('prepare_usd_per_1000_tiff')} and {usd('prepare_usd_per_1000_pdf')} per 1,000 faxes at these "
            "prices, in the invocation that fetched the fax (no invocation of its own; *the prepare job per 1,000 "
            "faxes*)."
            if f.has(
                s,
                "prepare_cpu_s_tiff",
                "prepare_wall_s_tiff",
                "prepare_cpu_s_pdf",
                "prepare_wall_s_pdf",
                "prepare_usd_per_1000_tiff",
                "prepare_usd_per_1000_pdf",
            )
            else ""
        )
    )


def webhook_latency(f: Figures) -> str | None:
    s = "webhook_latency"
    if not f.has(s, "kick_p50", "kick_p95", "webhook_answer_p50"):
        return None
    text = (
        "**Webhook to stored: the kick makes it "
        + ("sub-second" if f.get(s, "kick_p50") < 1000 else "a matter of a second or so, cold starts included")
        + f".** With the pg_net kick an e-mail's attachments are "
        f"stored {f.ms(s, 'kick_p50', 0)} (p50, p95 {f.ms(s, 'kick_p95', 0)}) after its webhook is sent; the "
        f"webhook's own answer takes {f.ms(s, 'webhook_answer_p50', 0)} of that. "
        + (
            f"The worker's invocation runs {f.ms(s, 'worker_p50', 0)} (p50 of its own elapsed time), longer "
            "than what is left after the answer, because it goes on after the last attachment row: it completes "
            "the job, and the same call looks for the next one, finding nothing. "
            if f.has(s, "worker_p50")
            else ""
        )
    )
    if f.has(s, "trips_queue_per_job", "trips_reads_per_job", "trips_attachments"):
        n = round(f.get(s, "trips_attachments"))
        text += (
            f"Round trips, counted by the gateway: a job with {n} attachment(s) made "
            f"{fmt(f.get(s, 'trips_queue_per_job'), 2)} queue calls (n + 3 = {n + 3}) and "
            f"{fmt(f.get(s, 'trips_reads_per_job'), 2)} table reads: the claim, `start_fetch_email_v2` (the e-mail "
            "row, the attachments already stored and the listing's slot of the shared Resend limiter, which were "
            "two table reads before the limiter), a record per attachment and the completion: n + 3 database "
            f"calls in all, where it was n + 4 = {n + 4}, and 2n + 5 = {2 * n + 5} before an extension before each "
            "attachment and a claim after the completion were folded in. Recording an attachment renews the "
            "lease, so the worker extends it only when a tenth of it has passed since the last renewal; "
            "completing a job claims the next in the same call when the invocation may take another. Every "
            "write is still fenced by (job id, generation) and status running. "
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


def burst_drain(f: Figures) -> str | None:
    s = "burst_drain"
    keys = ("emails", "on_s", "off_s", "minimum_s", "on_ratio", "off_ratio", "on_refused", "off_refused",
            "on_attempts_on_429", "off_attempts_on_429", "on_peak", "off_peak", "cap", "on_posts", "off_posts",
            "on_busiest", "off_busiest", "off_releases", "cap8_s", "cap8_ratio", "cap8_peak")  # fmt: skip
    if not f.has(s, *keys):
        return None
    goal = (
        f.get(s, "on_ratio") >= 0.8 and f.get(s, "on_attempts_on_429") == 0 and f.get(s, "on_peak") <= f.get(s, "cap")
    )
    return (
        f"**Bursts drain at the provider's rate limit{'' if goal else ' (short of the goal, see the table)'}.** "
        f"{fmt(f.get(s, 'emails'), 0)} e-mails recorded at once drain in {fmt(f.get(s, 'on_s'), 1)} s with the "
        f"shared limiter, against a rate-limited minimum of {fmt(f.get(s, 'minimum_s'), 1)} s (one listing a job, "
        f"at 5 requests a second less the fifth left to other applications): {f.x(s, 'on_ratio')} of the fastest "
        f"drain that keeps to the limit (the goal is 0.8x), with {fmt(f.get(s, 'on_refused'), 0)} 429s, "
        f"{fmt(f.get(s, 'on_attempts_on_429'), 0)} attempts spent on them, the busiest second at the stand-in "
        f"{fmt(f.get(s, 'on_busiest'), 0)} requests, at most {fmt(f.get(s, 'on_peak'), 0)} invocations in flight "
        f"(the cap is {fmt(f.get(s, 'cap'), 0)}) and {fmt(f.get(s, 'on_posts'), 0)} worker POSTs for the "
        "whole burst, where every e-mail used to start an invocation of its own. The reservations are a queue in "
        "the database (a GCRA schedule, one row lock), so the slots go out in order at the limiter's spacing "
        "and no worker retries into a full window; an invocation that stops at its 3 jobs starts its follow-up "
        "in its last write, so the drain never waits for the cron's minute. Without the limiter the same burst "
        f"takes {fmt(f.get(s, 'off_s'), 1)} s ({f.x(s, 'off_ratio')}): the workers ask Resend as fast as they "
        f"run, the busiest second sees {fmt(f.get(s, 'off_busiest'), 0)} requests, and "
        f"{fmt(f.get(s, 'off_refused'), 0)} are answered 429 ({fmt(f.get(s, 'off_releases'), 0)} releases, "
        f"{fmt(f.get(s, 'off_attempts_on_429'), 0)} attempts spent: a 429 releases the job either way), each a "
        "claim, a listing and a release spent for nothing. The default cap is three invocations per slot a "
        f"second: with two (8) the same burst takes {fmt(f.get(s, 'cap8_s'), 1)} s ({f.x(s, 'cap8_ratio')}, at "
        f"most {fmt(f.get(s, 'cap8_peak'), 0)} in flight). "
        + cap_comparison(f.get(s, "on_ratio"), f.get(s, "cap8_ratio"))
    )


def cap_comparison(default_ratio: float, cap8_ratio: float) -> str:
    """What the two caps' drains say about the default, by a margin larger than one run's noise."""
    if cap8_ratio < default_ratio - 0.05:
        return ("With fewer in flight the limiter's schedule stood idle while follow-ups started: the third "
                "invocation per slot a second bought the difference.")  # fmt: skip
    if cap8_ratio > default_ratio + 0.05:
        return ("Fewer in flight drained faster in this run: the default's third invocation per slot a second "
                "is not borne out here.")  # fmt: skip
    return ("The two drain alike: once the schedule is kept busy, more invocations in flight only wait longer for "
            "their slots. The third per slot a second is a margin for follow-ups that start cold (a new instance on "
            "Vercel), which the warm Fluid instances of the local host mostly spare.")  # fmt: skip


def admin_views(f: Figures) -> str | None:
    s = "admin_views"
    section = f.sections.get(s)
    if section is None or not f.has(s, "load_start", "load_end"):
        return None
    views = [key.removesuffix(":p95") for key in section.figures if key.endswith(":p95")]
    slow = [view for view in views if f.get(s, f"{view}:p95") > 100]

    def figure(view: str) -> str:
        return f"{view} {fmt(f.get(s, f'{view}:p50'), 0)} / {fmt(f.get(s, f'{view}:p95'), 0)} ms"

    verdict = ("every view within 100 ms at p95" if not slow
               else f"{len(views) - len(slow)} of {len(views)} views within 100 ms at p95")  # fmt: skip
    inbox = [view for view in views if view.startswith(("inbox", "law"))]
    inbox_slow = [view for view in slow if view in inbox]
    return (
        f"**Admin screen on 1,000,000 finished and 50,000 queued jobs and their 1,050,000 faxes: {verdict}.** "
        "Server time (p50 / p95, from the function receiving the request to its answer, token verification and "
        "the database included): "
        + "; ".join(figure(view) for view in views)
        + ". "
        + (f"Over the budget: {', '.join(slow)}. " if slow else "")
        + (
            f"The inbox and the law's search are {len(inbox)} of these views, in the same rounds as the jobs' "
            f"views: {len(inbox) - len(inbox_slow)} of them within 100 ms at p95. Two planner traps of the inbox were "
            "found at this size with EXPLAIN ANALYZE and fixed (20261207220000): *mine only* checked the newest "
            "2,000 e-mails with an EXISTS over fax_handling, which PostgreSQL made a hash join that read every fax "
            "the operator had ever taken (124,278 rows, 18,000 pages: 0.4 to 0.6 s on the loaded machine) to keep "
            "the 80 among them "
            "(the partial expression index's estimate of one clerk's faxes is the default 0.5 %); it is now a "
            "scalar subquery of the e-mail's row, one primary key probe per e-mail walked. And a fax number went "
            "to the digits' trigram index first, which for a frequent sender's number (the busiest sends a tenth "
            "of the faxes) rechecked 5,001 e-mails through fax_number_digits' regular expressions before it gave "
            "up and walked anyway (0.65 to 0.75 s). A number was then walked first, and one of middling frequency "
            "(0.1 % to 1 % of the faxes) still went to that index after the walk, rechecking each candidate three "
            "times (the candidates, the page, the count: 120 to 250 ms). A fax's digits now also stand as their "
            "runs (fax_number_runs, indexed as an array: exact, no recheck), the runs that hold the number are "
            "found among the distinct ones, and a number's candidates are counted from that index first: 5,000 or "
            "fewer give the page and its count in one read; more, the walk, where so frequent a number fills its "
            "page (20261208003000). The law's search read, for the counterparty, the posting lists of grams every "
            "counterparty shares (商事, the digits) twice a search, and fetched and sorted all of a frequent "
            "counterparty's faxes: it now finds the folded names that match among the distinct ones and reads "
            "their faxes through a b-tree by name in received order (20261208001000); type, amount and dates "
            "together counted through the amount's index, 150,000 rows from the heap, and now count index-only "
            "from the type's faxes of those dates (20261208001100). The overview's open problems probed each "
            "failed job's handling twice (the subquery's column named twice) from the heap: once now, index-only "
            "(20261208002000). "
            if inbox
            else ""
        )
        + "In the jobs' views two planner traps were found earlier, with EXPLAIN and auto_explain on this data: "
        "PostgreSQL 15 "
        "planned the union of one range scan per state (the list's newest-first page) as a scan and a sort of "
        "all one million completed jobs (about half a second when found) instead of merging the ordered index "
        "scans, so each state's branch now carries its own ORDER BY and LIMIT and the planner merges them (Merge "
        "Append, a page of index entries); and a misestimate (a table of one row that was never analyzed, "
        "guessed at 880 rows) pushed a search's plan over JIT's cost threshold, which then spent about 300 ms "
        "compiling it, so the views' functions run with JIT off. The admin function itself made a TLS context "
        "per request (loading the CA bundle: tens of milliseconds); it makes one per process now. A sender's "
        "name was the slowest search (about 100 ms at p50): one trigram index over sender and subject read the "
        "posting lists of the trigrams every bench sender shares (株式会, 式会社: one entry per e-mail) to find its "
        "thousand e-mails. The sender is now looked up among the distinct senders (a table of its own with its "
        "own trigram index, where 株式会 has one entry per sender) and its e-mails through a hash index on the "
        "sender; the subject has a trigram index of its own. A term of three characters or more first walks "
        "the newest 200 jobs, and the 1,000 that a shorter term walks only when it is common among those 200. "
        "A p95 of 109 ms for the second keyset page, once, was the machine's load and not the page's: its plan "
        "is the first page's Merge Append of per-state index-only scans, with the keyset condition in their "
        "index condition (15 buffers, a tenth of a millisecond), and the operator's session and user are read "
        "by their primary keys (4 buffers); measured one view after another, a spell of load fell on whichever "
        "view was measured then. The views are now measured in rounds, each once a round, so all of them meet "
        "the same load. The machine is shared with other work: "
        f"its load average was {fmt(f.get(s, 'load_start'), 1)} when the measurements began and "
        f"{fmt(f.get(s, 'load_end'), 1)} when they ended, on 2 cores."
    )


def prepare_job(f: Figures) -> str | None:
    s = "prepare_job"
    counts = sorted({int(key.rsplit("_", 1)[1]) for key in f.sections[s].figures if key.startswith("wall_s_pdf_")}
                    ) if s in f.sections else []  # fmt: skip
    kinds = {"pdf": "PDF", "tiff": "G4 TIFF"}
    keys = [f"{name}_{kind}_{n}" for name in ("wall_s", "cpu_s", "job_mib", "peak_mib") for kind in kinds
            for n in counts]  # fmt: skip
    if len(counts) < 2 or not f.has(s, *keys, "job_mib_growth_pdf", "job_mib_growth_tiff"):
        return None
    first, last = counts[0], counts[-1]

    def series(name: str, kind: str, digits: int = 2) -> str:
        return ", ".join(fmt(f.get(s, f"{name}_{kind}_{n}"), digits) for n in counts)

    # Memory that does not grow with the pages: the job's own from the first to the last is within a
    # page's bitmap (1728 x 2290 dots, 8 bits: 3.8 MiB) of each other.
    flat = all(f.get(s, f"job_mib_growth_{kind}") < 4 for kind in kinds)
    return (
        f"**The prepare job: {'its memory does not grow with the pages' if flat else 'its memory grows with the pages'}"
        ".** Alone in a fresh process as a worker invocation runs it, a fine-mode fax of "
        f"{', '.join(str(n) for n in counts)} pages takes "
        + "; ".join(f"{series('wall_s', kind)} s as a {label} ({series('cpu_s', kind)} s of CPU)"
                    for kind, label in kinds.items())
        + ". The job's own memory (the process's peak less what the worker and its libraries hold when idle) is "
        + "; ".join(f"{series('job_mib', kind, 1)} MiB for the {label}" for kind, label in kinds.items())
        + f", and the process's peak {series('peak_mib', 'pdf', 0)} and {series('peak_mib', 'tiff', 0)} MiB: from "
        f"{first} to {last} pages the job's own memory grows by {fmt(f.get(s, 'job_mib_growth_pdf'), 1)} MiB (PDF) "
        f"and {fmt(f.get(s, 'job_mib_growth_tiff'), 1)} MiB (TIFF), "
        + ("less than one page's bitmap: the pages are checked and drawn one at a time, each closed before the next, "
           "and a TIFF's pages go into its viewing PDF as their compressed G4 data, so only the files' sizes and the "
           "time grow with the pages."
           if flat else "more than one page's bitmap: pages are held together somewhere on the job's path.")
    )  # fmt: skip


def viewer(f: Figures) -> str | None:
    s = "viewer"
    keys = ("median_ms_tiff_inbox", "median_ms_tiff_tab", "median_ms_pdf_inbox", "median_ms_pdf_tab")
    if not f.has(s, *keys):
        return None
    return (
        "**The viewer on a phone: a fax's first page is drawn "
        f"{fmt(f.get(s, 'median_ms_tiff_inbox'), 0)} ms after it is opened from the inbox.** In headless Chromium at "
        "390 px (a phone's density of 3), on the local stack, opening the eFax-style 3-page G4 TIFF from the inbox "
        f"draws its first page in {fmt(f.get(s, 'median_ms_tiff_inbox'), 0)} ms (the median), the PDF invoice's in "
        f"{fmt(f.get(s, 'median_ms_pdf_inbox'), 0)} ms: the fax's API call, the signed URLs, PDF.js's document and "
        "its first page. A fax's link opened in a new tab, which loads the page, checks the session and starts "
        f"PDF.js and its worker first, draws it {fmt(f.get(s, 'median_ms_tiff_tab'), 0)} ms (TIFF) and "
        f"{fmt(f.get(s, 'median_ms_pdf_tab'), 0)} ms (PDF) after the navigation began. A bench figure: the browser, "
        "the functions, Storage and the database share the machine's two cores, and headless Chromium draws "
        "without a GPU."
    )


def markdown(sections: dict[str, Section], *, quick: bool) -> str:
    if quick:
        return "A quick run (tiny sizes, one repetition) shows nothing: run `make bench` for real figures."
    f = Figures(sections)
    sections_in_order = (claim_cost, throughput, idle_cost, import_time, cold_start, instance_memory, prepare_job,
                         webhook_latency, burst_drain, cost, admin_views, viewer)  # fmt: skip
    paragraphs = [p for p in (section(f) for section in sections_in_order) if p]
    return "\n\n".join(paragraphs) or "No section ran."

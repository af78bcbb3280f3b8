"""One chaos run on a stack of its own: webhooks delivered while a simulated cron ticks and faults
are injected, then the checks, the phases, and the figures (printed; written to
docs/RELIABILITY.md with --write-docs)."""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import psycopg
from psycopg.rows import dict_row

from chaos import phases
from chaos.audit import AUDIT, check, executions, instances
from chaos.faults import LEASE_S, Chaos, Faults, configure_faults
from devstack import lifecycle, stack
from devstack.tools import inbound

DOCS = Path(__file__).resolve().parents[1] / "docs" / "RELIABILITY.md"
FIGURES_START, FIGURES_END = "<!-- chaos figures: start -->", "<!-- chaos figures: end -->"


def run(email_count: int, seed: int, time_limit_s: float, write_docs: bool) -> int:
    rng = random.Random(seed)
    faults = Faults()
    started_at = time.monotonic()
    print(f"chaos: {email_count} e-mails, seed {seed}, lease {LEASE_S} s, backoff base 1 s")
    # The stack's function host runs Fluid compute, as Vercel does: concurrent invocations share
    # warm instances, so a kill or a freeze hits every invocation of its instance at once.
    # Its faults go in front of the stand-ins through chaos/layer/, installed whatever the caller's
    # environment says.
    running = stack.start(
        {"JOB_LEASE_SECONDS": str(LEASE_S), "RESEND_TIMEOUT_SECONDS": "1.5", "DEVSTACK_FAULT_LAYER": "chaos.layer"}
    )
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
            dropped = httpx.get(f"{env['SUPABASE_URL']}/_control/faults", timeout=10).json()["by_job"]
            where = instances(Path(env["DEVSTACK_FOLDER"]) / "function_host.log")
            problems, figures = check(conn, env, emails, faults, runs, dropped, where)
            # Then the phases of failures that are not the job's own, on the same stack.
            phase_problems, figures["phases"] = phases.run_all(conn, env, max(4, email_count // 20))
            problems += phase_problems
        provider_faults = httpx.get(f"{env['RESEND_API_URL']}/_control/faults", timeout=10).json()
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
        **{f"provider {k.rstrip(':')}": v for k, v in provider_faults.items()},
        **{f"dropped connection: {k}": v for k, v in gateway_faults["drops"].items()},
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
    parser = argparse.ArgumentParser(
        prog="python -m chaos", description="the queue under crashes, stale workers and faults"
    )
    parser.add_argument("--emails", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=1200)
    parser.add_argument("--write-docs", action="store_true", help=f"put the figures into {DOCS.name}")
    args = parser.parse_args()
    with lifecycle.guarded(stack.stop_record):
        code = run(args.emails, args.seed, args.time_limit, args.write_docs)
    sys.exit(code)

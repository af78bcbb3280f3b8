"""docs/BENCHMARKS.md: the machine, the settings, every section's tables, and what the figures show."""

from __future__ import annotations

from datetime import UTC, datetime

from bench import findings
from bench.common import Section


def markdown(sections: list[Section], host: dict[str, str], *, quick: bool, elapsed_s: float) -> str:
    lines = [
        "# Benchmarks",
        "",
        "Written by `make bench` (`python -m devstack run -- .venv/bin/python -m bench`) on a throwaway local stack "
        f"(devstack), {datetime.now(UTC):%Y-%m-%d}, in {elapsed_s / 60:.1f} minutes"
        + (" — a **quick** run (tiny sizes, one repetition): its figures mean nothing." if quick else ".")
        + " Every figure is a median of repeated runs unless its section says otherwise, and every comparison is a "
        "ratio of figures measured in the same run. Run it again to refresh this file.",
        "",
        "## Machine and settings",
        "",
        f"- **Cores:** {host['cores']}; **memory:** {host['memory']}; **CPU:** {host['cpu']}",
        f"- **PostgreSQL:** {host['postgres']} ({host['postgres_settings']})",
        f"- **Python:** {host['python']}",
        "- **Stack:** devstack's PostgreSQL cluster on a Unix socket (Supabase's roles, real pg_cron, the pg_net "
        "and Vault stand-ins), the PostgREST and Storage stand-ins, the function host (a real `vercel build` with the "
        "project's build environment, bytecode included, served by Vercel's own Python runtime in its bundle under "
        "Fluid compute: concurrent invocations share a warm instance; the cold-start section starts a process per "
        "request) and the Resend sample provider, all on this machine. The benchmark's clients "
        "share its cores with the server. **Durability:** fsync, synchronous_commit and full_page_writes are off "
        "in this throwaway cluster, so commits cost less here than on a hosted database; the throughput section "
        "also runs with all three on, as hosted Supabase runs. Every table names the setting it ran with.",
        "- **Sizes and repetitions:** in each section below.",
        "",
        "## What the figures show",
        "",
        findings.markdown({section.key: section for section in sections}, quick=quick),
        "",
    ]
    for number, section in enumerate(sections, 1):
        lines += [f"## {number}. {section.heading}", "", section.method, ""]
        for table in section.tables:
            title = table.title if "durability" in table.title else f"{table.title} (durability off)"
            lines += [f"**{title}**", "", table.markdown(), ""]
        for title, body in section.blocks:
            lines += [f"**{title}**", "", "```", body, "```", ""]
    return "\n".join(lines).rstrip() + "\n"

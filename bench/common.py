"""What every benchmark shares: the stack's settings, statistics, result tables, the machine's description."""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import statistics
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from devstack import stack

ROOT = Path(__file__).resolve().parent.parent
# Every table the tests write (tests/support/database.py reset()): a run leaves them as empty as it
# found them. The record of received faxes among them refuses TRUNCATE but through a test cluster's
# reset_tables (devstack/bootstrap.sql): a bench runs on the local stack only.
SHARED_TABLES = (
    "public.document_job_attempts", "document_jobs_internal.worker_requests", "public.document_jobs",
    "public.fax_attachment_views", "public.fax_received_email_attachments", "public.fax_received_email_raw_messages",
    "public.fax_view_rotations", "public.fax_lines", "public.fax_index", "public.fax_index_history",
    "public.fax_received_emails", "public.fax_deletions", "public.fax_object_removals", "public.fax_handling",
    "public.fax_handling_history",
    "net.http_request_queue", "net._http_response", "public.document_jobs_audit", "document_jobs_internal.bulk_actions",
    "document_jobs_internal.bulk_action_jobs", "document_jobs_internal.hourly_outcomes",
    "document_jobs_internal.fax_announcements", "document_jobs_internal.fax_senders", "public.fax_export_files",
    "document_jobs_internal.fax_counterparties",
    "public.fax_export_parts", "public.fax_exports",
)  # fmt: skip


def env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise SystemExit(f"bench: {name} is unset; run inside the local stack: python -m devstack run -- ...")
    return value


def admin_conninfo() -> str:
    """The cluster's superuser: for setting up and inspecting (the queue's own calls go as postgres)."""
    return env("DEVSTACK_ADMIN_DATABASE_URL")


def connect(conninfo: str | None = None) -> psycopg.Connection:
    return psycopg.connect(conninfo or admin_conninfo(), autocommit=True)


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile: p99 of 100 samples is the 99th smallest."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))]


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def fmt(value: float | None, digits: int = 2) -> str:
    if value is None:
        return "n/a"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


def ratio(value: float | None, to: float | None) -> float | None:
    return value / to if value is not None and to else None


def fmt_ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}x" if value < 10 else f"{value:.0f}x"


@dataclass
class Table:
    """One result table: printed as text, written as Markdown."""

    title: str
    headers: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, *cells: object) -> None:
        self.rows.append([str(cell) for cell in cells])

    def text(self) -> str:
        widths = [max(len(row[i]) for row in [self.headers, *self.rows]) for i in range(len(self.headers))]
        lines = [self.title, "  " + "  ".join(h.ljust(w) for h, w in zip(self.headers, widths, strict=True))]
        lines += ["  " + "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths,
                                                                                               strict=True)))
                  for row in self.rows]  # fmt: skip
        lines += [f"  ({note})" for note in self.notes]
        return "\n".join(lines)

    def markdown(self) -> str:
        lines = [f"| {' | '.join(self.headers)} |", f"|{'|'.join(['---'] + ['--:'] * (len(self.headers) - 1))}|"]
        lines += [f"| {' | '.join(row)} |" for row in self.rows]
        return "\n".join(lines) + "".join(f"\n\n{note[0].upper()}{note[1:]}." for note in self.notes)


@dataclass
class Section:
    """One figure of the issue: its tables, the numbers later prose refers to, and how it was measured."""

    key: str
    heading: str
    method: str
    tables: list[Table] = field(default_factory=list)
    figures: dict[str, float | None] = field(default_factory=dict)
    blocks: list[tuple[str, str]] = field(default_factory=list)  # (title, preformatted text), e.g. plans

    def text(self) -> str:
        parts = [f"== {self.heading} ==", *(table.text() for table in self.tables)]
        parts += [f"{title}\n" + "\n".join(f"  {line}" for line in body.splitlines()) for title, body in self.blocks]
        return "\n\n".join(parts)


def machine() -> dict[str, str]:
    """Cores, memory, CPU model, the server's version and settings, Python's version."""
    cpu = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    memory = "unknown"
    with contextlib.suppress(OSError, ValueError, IndexError):
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
    with connect() as conn:
        version = conn.execute("select version()").fetchone()[0]
        names = (
            "shared_buffers", "work_mem", "max_connections", "fsync", "synchronous_commit", "full_page_writes",
            "autovacuum", "jit",
        )  # fmt: skip
        rows = conn.execute("select name, setting, unit from pg_settings where name = any(%s)", (list(names),))
        settings = {name: f"{setting}{' x ' + unit if unit and unit not in {'ms', 's'} else unit or ''}"
                    for name, setting, unit in rows}  # fmt: skip
        if "shared_buffers" in settings:
            settings["shared_buffers"] = conn.execute("show shared_buffers").fetchone()[0]
        if "work_mem" in settings:
            settings["work_mem"] = conn.execute("show work_mem").fetchone()[0]
    return {
        "cores": str(os.cpu_count()),
        "memory": memory,
        "cpu": cpu,
        "postgres": version.split(" on ")[0],
        "postgres_settings": ", ".join(f"{k} = {settings[k]}" for k in names if k in settings),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
    }


@contextlib.contextmanager
def vault_secrets(conn: psycopg.Connection) -> Iterator[None]:
    """The two Vault secrets an operator stores (devstack/tools/demo.py), removed afterwards if we added them."""
    worker_url = env("FUNCTIONS_URL") + stack.WORKER_PATH
    wanted = {stack.WORKER_URL_SECRET: worker_url, stack.WORKER_SECRET_SECRET: env("INTERNAL_FUNCTION_SECRET")}
    existing = {name for (name,) in conn.execute("select name from vault.secrets where name = any(%s)",
                                                  (list(wanted),))}  # fmt: skip
    added = [name for name in wanted if name not in existing]
    for name in added:
        stack.store_vault_secret(conn, name, wanted[name])
    try:
        yield
    finally:
        if added:
            conn.execute("delete from vault.secrets where name = any(%s)", (added,))


def run_alone(run: Callable[[bool], Any], description: str) -> None:
    """`python -m bench.<section> [--quick]`: one section on its own, printed."""
    parser = argparse.ArgumentParser(description=description.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one run")
    print(run(parser.parse_args().quick).text())


def empty_shared_tables(conn: psycopg.Connection) -> None:
    conn.execute("select document_jobs_test_cluster.reset_tables(%s::regclass[])", (list(SHARED_TABLES),))

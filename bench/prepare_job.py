"""The prepare job: its time and peak memory for a 1, 10 and 50-page fax as a PDF and as a CCITT G4
TIFF, and what it costs per 1,000 faxes.

Each job runs alone in a fresh Python process, as a worker invocation runs it
(lib/worker/endpoint.py handle: the claim, the original read back from the stack's Storage, the
pages counted and checked, a TIFF converted, the thumbnail drawn, the derived files uploaded, the
view recorded, the completion). The process first imports the worker and the rendering libraries
(what a worker instance that has prepared a fax before holds: its "idle" peak); then the job runs,
and its peak resident set (VmHWM) is read again. Memory must not grow with the page count: pages
are checked and drawn one at a time, each closed before the next, and the TIFF's pages go into the
viewing PDF as their compressed data (img2pdf), so only the file sizes grow with the pages. Time is
the job's wall time in the process; CPU its user + system time.

The faxes are in fine mode (204 x 196 dpi, an A4 page 1728 x 2290 dots, what business faxes
mostly use), the lines of a filled-in order sheet on every page; the PDF is that TIFF as a PDF
delivery has it (one G4 image a page).

For the bill: a typical fax, the eFax-style 3-page G4 TIFF at standard resolution and the one-page
PDF invoice (devstack/standins/sample_faxes.py), priced with bench/cost.py PRICES (cost_table).

python -m devstack run -- .venv/bin/python -m bench.prepare_job [--quick]
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import img2pdf
import psycopg

from bench import flow
from bench.common import ROOT, Section, Table, connect, env, fmt, median, run_alone
from devstack.standins.sample_faxes import fax_tiff, invoice_pdf

FINE = {"dpi": (204, 196), "size": (1728, 2290)}
PAGES_FULL, PAGES_QUICK = (1, 10, 50), (1, 3)
BUCKET = "fax-attachments"

# Runs in the fresh process: the imports first (the idle peak), then one invocation of the worker.
_JOB = """
import json, resource, sys, time
from pathlib import Path
def peak_mib():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
import supabase, lib.worker.endpoint as endpoint, lib.worker.fax_pages  # the worker, its client, what it renders with
idle = peak_mib()
usage = resource.getrusage(resource.RUSAGE_SELF)
started = time.perf_counter()
status, summary = endpoint.handle("Bearer " + sys.argv[1])
wall = time.perf_counter() - started
after = resource.getrusage(resource.RUSAGE_SELF)
cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
print(json.dumps({"status": status, "summary": summary, "idle_mib": idle, "peak_mib": peak_mib(),
                  "wall_s": wall, "cpu_s": cpu}))
"""


@dataclass(frozen=True)
class Run:
    wall_s: float
    cpu_s: float
    idle_mib: float
    peak_mib: float
    original_bytes: int
    derived_bytes: int
    pages: int

    @property
    def job_mib(self) -> float:
        return self.peak_mib - self.idle_mib


def tiff_fax(pages: int) -> bytes:
    return fax_tiff(pages=pages, **FINE)


def pdf_fax(pages: int) -> bytes:
    return bytes(img2pdf.convert(tiff_fax(pages)))


def stored_fax(admin: psycopg.Connection, content: bytes, content_type: str, **email: str) -> str:
    """A fax of one attachment `content` as fetch_email leaves it: its e-mail row (with the columns
    given), the original in the stack's Storage and recorded, its prepare_fax job enqueued (no kick).
    Its e-mail's id."""
    columns = {"provider_email_id": f"bench-prepare-{uuid.uuid4().hex[:12]}", **email}
    email_id = str(admin.execute(
        f"insert into public.fax_received_emails ({', '.join(columns)}, data)"
        f" values ({', '.join(['%s'] * len(columns))}, '{{}}') returning id",
        list(columns.values()),
    ).fetchone()[0])  # fmt: skip
    key = f"fax_received_emails/{email_id}/att_1.{'tif' if content_type == 'image/tiff' else 'pdf'}"
    stored = httpx.post(
        f"{env('SUPABASE_URL')}/storage/v1/object/{BUCKET}/{key}",
        content=content,
        headers={"apikey": env("SUPABASE_SECRET_KEY"), "Content-Type": content_type, "x-upsert": "true"},
        timeout=60,
    )
    stored.raise_for_status()
    admin.execute(
        """insert into public.fax_received_email_attachments (fax_received_email_id, provider_attachment_id,
                  filename, content_type, size_bytes, sha256, bucket, storage_path)
           values (%s, 'att_1', 'fax', %s, %s, %s, %s, %s)""",
        (email_id, content_type, len(content), hashlib.sha256(content).hexdigest(), BUCKET, key),
    )
    admin.execute("select public.enqueue_document_job('prepare_fax', %s)", (email_id,))  # no kick
    return email_id


def prepare() -> dict[str, Any]:
    """One invocation of the worker, alone in a fresh process: the prepare_fax job enqueued is its
    job. What _JOB prints."""
    result = subprocess.run(
        [sys.executable, "-c", _JOB, env("INTERNAL_FUNCTION_SECRET")],
        cwd=ROOT, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    answer: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    if answer["status"] != 200 or answer["summary"]["completed"] != 1:
        raise RuntimeError(f"the prepare job did not complete: {answer}\n{result.stderr[-2000:]}")
    return answer


def run_job(admin: psycopg.Connection, content: bytes, content_type: str) -> Run:
    """One prepare_fax job for a fax of one attachment `content`, run alone in a fresh process."""
    email_id = stored_fax(admin, content, content_type)
    answer = prepare()
    view = admin.execute(
        """select v.page_count, v.view_path, v.thumbnail_path from public.fax_attachment_views v
             join public.fax_received_email_attachments a on a.id = v.attachment_id
            where a.fax_received_email_id = %s""",
        (email_id,),
    ).fetchone()
    root = Path(env("DEVSTACK_STORAGE_DIR")) / BUCKET
    derived = sum((root / path).stat().st_size for path in view[1:] if path)
    return Run(answer["wall_s"], answer["cpu_s"], answer["idle_mib"], answer["peak_mib"], len(content), derived,
               view[0])  # fmt: skip


def measure(admin: psycopg.Connection, make: Any, pages: int, content_type: str, runs: int) -> Run:
    """The median of `runs` jobs for one fax (its memory figures: the highest)."""
    content = make(pages)
    done = [run_job(admin, content, content_type) for _ in range(runs)]
    if {r.pages for r in done} != {pages}:
        raise RuntimeError(f"page counts {[r.pages for r in done]}, expected {pages}")
    return Run(
        median([r.wall_s for r in done]),
        median([r.cpu_s for r in done]),
        max(r.idle_mib for r in done),
        max(r.peak_mib for r in done),
        len(content),
        done[0].derived_bytes,
        pages,
    )


def run(quick: bool = False) -> Section:
    pages, runs = (PAGES_QUICK, 1) if quick else (PAGES_FULL, 3)
    section = Section(
        "prepare_job",
        "The prepare job: time and memory by page count",
        " ".join(__doc__.split("\n\n", 1)[1].split("\n\npython -m", 1)[0].split()) + f" {runs} job(s) per row.",
    )
    table = Table(
        "one prepare_fax job, alone in a fresh process (fine mode, one attachment)",
        ["fax", "pages", "original KiB", "derived KiB (view + thumbnail)", "wall s", "CPU s", "idle MiB",
         "peak MiB", "the job's own MiB (peak - idle)"],
    )  # fmt: skip
    with connect() as admin, flow.cron_paused(admin):
        flow.clean_up(admin)
        try:
            for label, make, content_type in (("PDF", pdf_fax, "application/pdf"),
                                              ("G4 TIFF", tiff_fax, "image/tiff")):  # fmt: skip
                for count in pages:
                    r = measure(admin, make, count, content_type, runs)
                    table.add(label, count, fmt(r.original_bytes / 1024, 0), fmt(r.derived_bytes / 1024, 0),
                              fmt(r.wall_s, 2), fmt(r.cpu_s, 2), fmt(r.idle_mib, 0), fmt(r.peak_mib, 0),
                              fmt(r.job_mib, 1))  # fmt: skip
                    key = f"{label.split()[-1].lower()}_{count}"
                    section.figures |= {f"wall_s_{key}": r.wall_s, f"cpu_s_{key}": r.cpu_s,
                                        f"job_mib_{key}": r.job_mib, f"peak_mib_{key}": r.peak_mib}  # fmt: skip
        finally:
            flow.clean_up(admin)
    first, last = pages[0], pages[-1]
    growth = {}
    for kind in ("pdf", "tiff"):
        own = [section.figures[f"job_mib_{kind}_{count}"] or 0.0 for count in (first, last)]
        growth[kind] = section.figures[f"job_mib_growth_{kind}"] = own[1] - own[0]
    table.notes.append(
        f"from {first} to {last} pages the job's own memory grows by {fmt(growth['pdf'], 1)} MiB (PDF) and "
        f"{fmt(growth['tiff'], 1)} MiB (TIFF): the compressed pages it holds, not the pages drawn"
    )
    section.tables.append(table)
    return section


# The fax the office's bill counts the prepare job for (bench/cost.py fax_steps): the heavier of the
# two samples, a TIFF that is converted to its viewing PDF.
TYPICAL = "3-page G4 TIFF (eFax-style, standard mode)"


def typical_fax(admin: psycopg.Connection, runs: int) -> dict[str, Run]:
    """The two faxes of the samples, each prepared `runs` times (medians)."""
    with flow.cron_paused(admin):
        flow.clean_up(admin)
        try:
            return {
                TYPICAL: measure(admin, lambda n: fax_tiff(pages=n), 3,
                                                                      "image/tiff", runs),
                "1-page PDF invoice": measure(admin, lambda _: invoice_pdf(), 1, "application/pdf", runs),
            }  # fmt: skip
        finally:
            flow.clean_up(admin)


def cost_table(prices: dict[str, Any], memory_gb: float, measured: dict[str, Run]) -> Table:
    """The prepare job per 1,000 faxes, in US dollars at bench/cost.py's prices, for the faxes of
    typical_fax."""
    table = Table(
        "the prepare job per 1,000 faxes (bench/prepare_job.py: one job each, alone in a fresh process)",
        ["fax", "CPU s a job", "wall s a job", "active CPU $", f"provisioned memory $ ({memory_gb:g} GB)",
         "Storage $ a month (derived files)", "total $"],
    )  # fmt: skip
    for label, r in measured.items():
        cpu = r.cpu_s * 1000 / 3600 * prices["vercel_active_cpu"].usd
        memory = r.wall_s * 1000 / 3600 * memory_gb * prices["vercel_provisioned_memory"].usd
        storage = r.derived_bytes * 1000 / 1024**3 * prices["supabase_storage"].usd
        table.add(label, fmt(r.cpu_s, 3), fmt(r.wall_s, 3), f"{cpu:.4f}", f"{memory:.4f}", f"{storage:.6f}",
                  f"{cpu + memory:.4f}")  # fmt: skip
    table.notes.append(
        "the job runs in the invocation that fetched its fax (the fetch's completion claims it): no invocation of "
        "its own, unless that invocation stopped at its 3 jobs or its time budget (then a follow-up's third); "
        "its round trips: one start, one record per attachment, one completion, and per attachment a Storage read "
        "and one or two uploads. The total is Vercel's (CPU and memory); Storage is a month's storing of the "
        "derived files, beyond the plan's 100 GB"
    )
    return table


if __name__ == "__main__":
    run_alone(run, __doc__)

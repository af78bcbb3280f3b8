"""Cold import time of each Vercel function module next to a bare `import supabase`.

Each figure is the median over fresh interpreters of the cumulative time `python -X importtime`
reports; all are measured in the same run, interleaved, so the machine's noise hits them alike.
A function imports supabase only once a request gets past authentication (lib/supabase/client.py),
so "+ supabase" is what the first authorized call of a cold instance pays; the worker imports
PDFium, Pillow and img2pdf only when it first prepares a fax (lib/worker/prepare_fax.py), so the
webhook's and a fetch's cold start do not include them. The breakdown splits a
bare `import supabase` by the packages it imports directly.

.venv/bin/python -m bench.import_time [--runs N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass

from bench.common import ROOT, Section, Table, fmt, fmt_ratio, median, ratio

BASELINE = "import supabase"
MODULES = {
    BASELINE: "supabase",
    "worker module (api/internal/document_jobs.py)": "api.internal.document_jobs",
    "worker module + supabase (its first authorized call)": "api.internal.document_jobs, supabase",
    # What the prepare_fax job imports on its path alone (lib/worker/prepare_fax.py): paid by a worker
    # instance once, when it first prepares a fax (its first preparation); the lines above stay without it.
    "worker + supabase + the prepare job's libraries": "api.internal.document_jobs, supabase, lib.worker.fax_pages",
    "webhook module (api/webhooks/resend.py)": "api.webhooks.resend",
    "webhook module + supabase (its first signed delivery)": "api.webhooks.resend, supabase",
}


@dataclass(frozen=True)
class Imported:
    total_ms: float  # the sum of the top-level entries: everything `statement` imported
    children_ms: dict[str, float]  # direct children of a top-level `supabase` entry, by name


def measure(statement: str) -> Imported:
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {statement}"],
        capture_output=True, text=True, check=True, cwd=ROOT,
    )  # fmt: skip
    total_us = 0
    children: dict[str, float] = {}
    pending: dict[str, float] = {}  # depth-1 entries since the last top-level one (children print first)
    for line in result.stderr.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if len(fields) != 3 or not fields[1].strip().isdigit():
            continue
        name = fields[2].rstrip()
        depth = (len(name) - len(name.lstrip(" ")) - 1) // 2
        cumulative_us = int(fields[1])
        if depth == 0:
            total_us += cumulative_us  # a top-level import: its cumulative time includes its children
            if name.strip() == "supabase":
                children = {child: us / 1000 for child, us in pending.items()}
            pending = {}
        elif depth == 1:
            pending[name.strip().split(".")[0]] = pending.get(name.strip().split(".")[0], 0) + cumulative_us
    return Imported(total_us / 1000, children)


def run(quick: bool = False, runs: int | None = None) -> Section:
    runs = runs or (1 if quick else 9)
    samples: dict[str, list[Imported]] = {label: [] for label in MODULES}
    for _ in range(runs):
        for label, statement in MODULES.items():
            samples[label].append(measure(statement))
    section = Section(
        "import_time",
        "Cold import time",
        f"`python -X importtime -c 'import ...'` in {runs} fresh interpreter(s) per line, interleaved; the figure "
        "is the median of the summed top-level cumulative times (interpreter start-up itself not included).",
    )
    baseline = median([s.total_ms for s in samples[BASELINE]])
    table = Table("cold import, ms", ["import", "median ms", "ratio to import supabase"])
    for label, values in samples.items():
        value = median([s.total_ms for s in values])
        table.add(label, fmt(value, 1), fmt_ratio(ratio(value, baseline)))
        section.figures[label] = value
    section.tables.append(table)
    by_child: dict[str, list[float]] = defaultdict(list)
    for imported in samples[BASELINE]:
        for child, value in imported.children_ms.items():
            by_child[child].append(value)
    breakdown = Table("what `import supabase` spends, by the package it imports directly",
                      ["package", "median ms", "share"])  # fmt: skip
    for child, values in sorted(by_child.items(), key=lambda item: -median(item[1])):
        value = median(values)
        if value >= 1:
            breakdown.add(child, fmt(value, 1), f"{100 * value / baseline:.0f} %")
            section.figures[f"supabase_child_{child}"] = value
    section.tables.append(breakdown)
    return section


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--quick", action="store_true", help="one interpreter per line")
    args = parser.parse_args()
    print(run(args.quick, args.runs).text())


if __name__ == "__main__":
    main()

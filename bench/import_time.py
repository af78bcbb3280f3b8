"""Cold import time of each Vercel function module next to a bare `import supabase`.

Each figure is the median over fresh interpreters of the cumulative time `python -X importtime`
reports; all are measured in the same run, interleaved, so the machine's noise hits them alike.

.venv/bin/python -m bench.import_time [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys

MODULES = {
    "import supabase": "supabase",
    "worker module (api/internal/document_jobs.py)": "api.internal.document_jobs",
    "worker module + supabase (an authorized call)": "api.internal.document_jobs, supabase",
}


def measure(statement: str) -> float:
    """Milliseconds until every module of `statement` is imported: the sum of the top-level entries."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {statement}"], capture_output=True, text=True, check=True
    )
    total_us = 0
    for line in result.stderr.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if len(fields) == 3 and fields[1].strip().isdigit() and not fields[2].startswith("  "):
            total_us += int(fields[1])  # a top-level import: its cumulative time includes its children
    return total_us / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    samples: dict[str, list[float]] = {label: [] for label in MODULES}
    for _ in range(args.runs):
        for label, statement in MODULES.items():
            samples[label].append(measure(statement))
    baseline = statistics.median(samples["import supabase"])
    print(f"cold import, median of {args.runs} fresh interpreters")
    for label, values in samples.items():
        median = statistics.median(values)
        print(f"  {label:<48} {median:7.1f} ms   {median / baseline:4.2f}x import supabase")


if __name__ == "__main__":
    main()

"""make bench: every benchmark on the local stack, printed, and written to docs/BENCHMARKS.md.

python -m devstack run -- .venv/bin/python -m bench [--quick] [--output FILE] [--only SECTION ...]

--quick  tiny sizes and one repetition (the smoke test in `make test`); writes to a temporary
         file unless --output says otherwise, never to docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench import (
    admin_views,
    burst_drain,
    claim_cost,
    cold_start,
    cost,
    history_cost,
    idle_cost,
    import_time,
    instance_memory,
    prepare_job,
    report,
    throughput,
    viewer,
    webhook_latency,
)
from bench.common import ROOT, Section, machine

SECTIONS: dict[str, Callable[[bool], Section]] = {
    "claim_cost": claim_cost.run,
    "history_cost": history_cost.run,
    "throughput": throughput.run,
    "idle_cost": idle_cost.run,
    "import_time": import_time.run,
    "cold_start": cold_start.run,
    "instance_memory": instance_memory.run,
    "prepare_job": prepare_job.run,
    "webhook_latency": webhook_latency.run,
    "burst_drain": burst_drain.run,
    "cost": cost.run,
    "admin_views": admin_views.run,
    "viewer": viewer.run,
}
DOCS = ROOT / "docs" / "BENCHMARKS.md"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one repetition, no docs write")
    parser.add_argument("--output", type=Path, help="where the Markdown report goes")
    parser.add_argument("--only", nargs="+", choices=list(SECTIONS), help="run these sections only")
    args = parser.parse_args(argv)
    output: Path = args.output or (
        Path(tempfile.mkstemp(prefix="benchmarks-", suffix=".md")[1]) if args.quick else DOCS
    )
    host = machine()
    print(f"bench: {'quick' if args.quick else 'full'} run on {host['cores']} cores, {host['memory']}, {host['cpu']}; "
          f"{host['postgres']}; {host['python']}", flush=True)  # fmt: skip
    started = time.monotonic()
    sections: list[Section] = []
    for name, run in SECTIONS.items():
        if args.only and name not in args.only:
            continue
        section_started = time.monotonic()
        section = run(args.quick)
        sections.append(section)
        print(f"\n{section.text()}\n  [{time.monotonic() - section_started:.0f} s]", flush=True)
    elapsed = time.monotonic() - started
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(report.markdown(sections, host, quick=args.quick, elapsed_s=elapsed))
    shown = output.relative_to(ROOT) if output.is_relative_to(ROOT) else output
    print(f"\nbench: done in {elapsed:.0f} s; report written to {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Cold starts through Vercel's own Python runtime, with and without bytecode in the bundle, and
the size of what a deploy ships.

Two real `vercel build`s of the same working tree in the same run: one with the project's build
environment (VERCEL_PYTHON_COMPILEALL=1, as docs/DEPLOY.md's deploy steps set it: the pinned builder
compiles bytecode into each bundle), one without it. Each request goes to a new runtime process
(`python -c 'import vc__handler__python'` in the function's bundle, as the platform starts a cold
instance; devstack/standins/function_host/ in cold mode), so a figure is process start to first answer:
interpreter start, Vercel's shim, the function's imports, the handler. Next to it, interleaved, a
bare `import supabase` in a fresh interpreter inside the same bundle (process start to exit).
PYTHONDONTWRITEBYTECODE=1 is set in both, as deployed: without bytecode in the bundle, every cold
start compiles all it imports.

.venv/bin/python -m bench.cold_start [--quick]   (on the local stack: python -m devstack run -- ...)
"""

from __future__ import annotations

import io
import os
import subprocess
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import httpx

from bench.common import Section, Table, env, fmt, fmt_ratio, median, ratio, run_alone
from devstack import vercel_build
from devstack.standins.function_host import FunctionHost, base_interpreter
from devstack.tools import inbound
from devstack.vercel_build import Build, Bundle

BASELINE = "bare `import supabase` in the worker's bundle"
WORKER = "/api/internal/document_jobs"
VARIANTS = ("without", "with")  # bytecode in the bundle


def import_supabase(bundle: Bundle) -> float:
    started = time.perf_counter()
    subprocess.run(
        [base_interpreter(bundle.config["runtime"]), "-c", "import supabase"],
        cwd=bundle.folder,
        env={"PATH": os.environ["PATH"], **bundle.config["environment"]},
        check=True,
    )
    return (time.perf_counter() - started) * 1000


def timed(request: Callable[[], httpx.Response], expected: int) -> float:
    started = time.perf_counter()
    answer = request()
    elapsed = (time.perf_counter() - started) * 1000
    if answer.status_code != expected:
        raise RuntimeError(f"expected {expected}, got {answer.status_code}: {answer.text[:200]}")
    return elapsed


def zipped_bytes(bundle: Bundle) -> int:
    """About what the deploy uploads for the function: its bundle, deflated."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in bundle.files():
            archive.write(path, path.relative_to(bundle.folder).as_posix())
    return buffer.tell()


def bytecode_files(bundle: Bundle) -> int:
    return sum(1 for path in bundle.files() if path.suffix == ".pyc")


def cases(build: Build, url: str) -> dict[str, Callable[[], float]]:
    """What is timed in one build: a bare import, and each function refusing and serving a call."""
    secret = env("INTERNAL_FUNCTION_SECRET")
    ignored = inbound.event({"email_id": "bench-cold-start"}, event_type="email.sent")
    worker = url + "/api/internal/document-jobs"
    return {
        BASELINE: lambda: import_supabase(build.bundles()[WORKER]),
        "worker, no token (401)": lambda: timed(lambda: httpx.post(worker, timeout=60), 401),
        "worker, authorized, empty queue (imports supabase, one claim)": lambda: timed(
            lambda: httpx.post(worker, headers={"Authorization": f"Bearer {secret}"}, timeout=60), 200
        ),
        "webhook, unsigned (401)": lambda: timed(
            lambda: httpx.post(url + "/api/webhooks/resend", content=ignored, timeout=60), 401
        ),
        "webhook, signed event of another type (verified, parsed, ignored)": lambda: timed(
            lambda: httpx.post(
                url + "/api/webhooks/resend",
                content=ignored,
                headers=inbound.signed_headers(env("RESEND_WEBHOOK_SECRET"), ignored),
                timeout=60,
            ),
            200,
        ),
    }


def run(quick: bool = False, runs: int | None = None) -> Section:
    runs = runs or (1 if quick else 7)
    builds = {
        "with": Build(Path(env("DEVSTACK_VERCEL_BUILD"))),  # the stack's: the project's build environment
        "without": vercel_build.build_working_tree(bytecode=False),
    }
    samples: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as state, open(os.devnull, "wb") as quiet:
        hosts = {
            variant: FunctionHost(build, dict(os.environ), Path(state) / variant, mode="cold", log=quiet)
            for variant, build in builds.items()
        }
        for host in hosts.values():
            threading.Thread(target=host.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        timed_cases = {
            variant: cases(builds[variant], f"http://127.0.0.1:{host.server_address[1]}")
            for variant, host in hosts.items()
        }
        try:
            for _ in range(runs):
                for label in timed_cases["with"]:
                    for variant in VARIANTS:
                        samples.setdefault((label, variant), []).append(timed_cases[variant][label]())
        finally:
            for host in hosts.values():
                host.shutdown()
                host.stop_instances()
    section = Section(
        "cold_start",
        "Cold start through Vercel's runtime",
        f"Process start to first answer, a new runtime process per request, {runs} run(s) per line, the two "
        "builds interleaved; medians. Both builds are `vercel build`s of the same tree in this run, one with the "
        "project's VERCEL_PYTHON_COMPILEALL=1 (bytecode in the bundle), one without.",
    )
    table = Table("cold start, ms", ["what", "without bytecode", "with bytecode", "with / without"])
    for label in timed_cases["with"]:
        without, with_ = (median(samples[(label, variant)]) for variant in VARIANTS)
        table.add(label, fmt(without, 0), fmt(with_, 0), fmt_ratio(ratio(with_, without)))
        section.figures[f"{label} (without bytecode)"] = without
        section.figures[f"{label} (with bytecode)"] = with_
    section.tables.append(table)
    sizes = Table(
        "what a deploy ships, per function",
        ["function", "bytecode", "files", ".pyc files", "unpacked MB", "zipped MB"],
    )
    for variant in VARIANTS:
        for route, bundle in builds[variant].bundles().items():
            unpacked, packed = bundle.size_bytes(), zipped_bytes(bundle)
            sizes.add(route, variant, str(len(bundle.files())), str(bytecode_files(bundle)), fmt(unpacked / 1e6, 1),
                      fmt(packed / 1e6, 1))  # fmt: skip
            section.figures[f"bundle_bytes {route} ({variant} bytecode)"] = unpacked
            section.figures[f"bundle_zipped_bytes {route} ({variant} bytecode)"] = packed
    section.tables.append(sizes)
    return section


def main() -> None:
    run_alone(run, "cold start")


if __name__ == "__main__":
    main()

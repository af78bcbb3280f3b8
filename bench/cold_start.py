"""Cold starts through Vercel's own Python runtime, and the size of what a deploy ships.

Each request goes to a new runtime process (`python -c 'import vc__handler__python'` in the
function's bundle, as the platform starts a cold instance; devstack/function_host.py), so the
figure is process start to first answer: interpreter start, Vercel's shim, the function's
imports, the handler. Next to it, in the same run and interleaved, a bare `import supabase` in
a fresh interpreter inside the same bundle (process start to exit). The bundles carry no
bytecode (PYTHONDONTWRITEBYTECODE=1, as deployed), so every cold start compiles what it imports.

.venv/bin/python -m bench.cold_start [--quick]   (on the local stack: python -m devstack run -- ...)
"""

from __future__ import annotations

import argparse
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
from devstack import inbound
from devstack.function_host import FunctionHost, base_interpreter
from devstack.vercel_build import Build, Bundle

BASELINE = "bare `import supabase` in the worker's bundle"
CACHED = "worker, authorized, with the local stack's bytecode cache"


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


def run(quick: bool = False, runs: int | None = None) -> Section:
    runs = runs or (1 if quick else 9)
    build = Build(Path(env("DEVSTACK_VERCEL_BUILD")))
    bundles = build.bundles()
    worker_bundle = bundles["/api/internal/document_jobs"]
    with tempfile.TemporaryDirectory(prefix="bench-cold-") as state, open(os.devnull, "wb") as quiet:
        host = FunctionHost(build, dict(os.environ), Path(state) / "cold", log=quiet)
        cached_host = FunctionHost(build, dict(os.environ), Path(state) / "cached", log=quiet,
                                   bytecode_cache=build.bytecode_cache)  # fmt: skip
        for server in (host, cached_host):
            threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        url = f"http://127.0.0.1:{host.server_address[1]}"
        cached_url = f"http://127.0.0.1:{cached_host.server_address[1]}"
        secret = env("INTERNAL_FUNCTION_SECRET")
        ignored = inbound.event({"email_id": "bench-cold-start"}, event_type="email.sent")
        cases: dict[str, Callable[[], float]] = {
            BASELINE: lambda: import_supabase(worker_bundle),
            "worker, no token (401)": lambda: timed(
                lambda: httpx.post(url + "/api/internal/document-jobs", timeout=60), 401
            ),
            "worker, authorized, empty queue (imports supabase, one claim)": lambda: timed(
                lambda: httpx.post(
                    url + "/api/internal/document-jobs", headers={"Authorization": f"Bearer {secret}"}, timeout=60
                ),
                200,
            ),
            CACHED: lambda: timed(
                lambda: httpx.post(
                    cached_url + "/api/internal/document-jobs",
                    headers={"Authorization": f"Bearer {secret}"},
                    timeout=60,
                ),
                200,
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
        samples: dict[str, list[float]] = {label: [] for label in cases}
        try:
            for _ in range(runs):
                for label, case in cases.items():
                    samples[label].append(case())
        finally:
            for server in (host, cached_host):
                server.shutdown()
                server.stop_instances()
    section = Section(
        "cold_start",
        "Cold start through Vercel's runtime",
        f"Process start to first answer, a new runtime process per request, {runs} run(s) per line, "
        "interleaved; medians. The baseline is a fresh interpreter importing supabase inside the same bundle.",
    )
    baseline = median(samples[BASELINE])
    table = Table("cold start, ms", ["what", "median ms", "ratio to bare import supabase"])
    for label, values in samples.items():
        value = median(values)
        table.add(label, fmt(value, 0), fmt_ratio(ratio(value, baseline)))
        section.figures[label] = value
    section.tables.append(table)
    sizes = Table("what a deploy ships, per function", ["function", "files", "unpacked MB", "zipped MB"])
    for route, bundle in bundles.items():
        unpacked, packed = bundle.size_bytes(), zipped_bytes(bundle)
        sizes.add(route, str(len(bundle.files())), fmt(unpacked / 1e6, 1), fmt(packed / 1e6, 1))
        section.figures[f"bundle_bytes {route}"] = unpacked
        section.figures[f"bundle_zipped_bytes {route}"] = packed
    section.tables.append(sizes)
    return section


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    run_alone(lambda quick: run(args.quick), "cold start")


if __name__ == "__main__":
    main()

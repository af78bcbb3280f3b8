"""Fluid compute with the real functions: concurrent worker and webhook requests served as threads
of one instance per function (Vercel's runtime, the bundles a deploy ships, the local stack's
database, Storage and sample provider). Every answer, every job run exactly once, and every log
line tagged (by Vercel's runtime, per request) with the request that wrote it."""

from __future__ import annotations

import json
import os
import re
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from devstack.stack import WORKER_PATH
from devstack.standins.function_host import FunctionHost, FunctionLog, vercel_id
from devstack.tools import inbound
from devstack.vercel_build import Build

pytestmark = pytest.mark.slow  # Vercel runtimes of its own

WORKER, WEBHOOK = "/api/internal/document_jobs", "/api/webhooks/resend"
EMAILS = 12  # two waves of 6: more requests at once than the machine has cores, fewer than the limit
CONCURRENCY = 16
RUNTIME_ACCESS_LINE = re.compile(r'127\.0\.0\.1 - - \[[^]]+\] "POST (?P<path>/\S+) HTTP/1\.1" 200 -')


@pytest.fixture
def fluid(stack_env, tmp_path) -> Iterator[tuple[str, FunctionHost, list[FunctionLog]]]:
    lines: list[FunctionLog] = []
    lock = threading.Lock()

    def drain(line: FunctionLog) -> None:
        with lock:
            lines.append(line)

    with open(os.devnull, "wb") as quiet:
        host = FunctionHost(Build(Path(stack_env["DEVSTACK_VERCEL_BUILD"])), stack_env, tmp_path, mode="fluid",
                            concurrency=CONCURRENCY, log=quiet, log_drain=drain)  # fmt: skip
        threading.Thread(target=host.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        yield f"http://127.0.0.1:{host.server_address[1]}", host, lines
        host.shutdown()
        host.stop_instances()


def at_once(calls: list[Callable[[], Any]]) -> list[Any]:
    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(lambda call: call(), calls))


def test_concurrent_worker_and_webhook_requests_share_one_instance_each(fluid, stack_env, db, admin) -> None:
    url, host, lines = fluid  # no Vault secrets (the db fixture): nothing but this test calls the worker
    emails = [inbound.add_email(stack_env["RESEND_API_URL"], attachments=2) for _ in range(EMAILS)]
    sent: dict[str, str] = {}  # x-vercel-id of a webhook request -> the e-mail it delivered

    def webhook(data: dict[str, Any]) -> Callable[[], httpx.Response]:
        def call() -> httpx.Response:
            body = inbound.event(data)
            answer = inbound.deliver(url, body, inbound.signed_headers(stack_env["RESEND_WEBHOOK_SECRET"], body))
            sent[answer.headers["x-vercel-id"]] = data["email_id"]
            return answer

        return call

    def worker() -> httpx.Response:
        secret = {"Authorization": f"Bearer {stack_env['INTERNAL_FUNCTION_SECRET']}"}
        return httpx.post(url + WORKER_PATH, headers=secret, timeout=120)

    first, second = emails[: EMAILS // 2], emails[EMAILS // 2 :]
    answers = at_once([webhook(data) for data in first])
    # The second wave's webhooks arrive while workers fetch the first wave's attachments.
    answers += at_once([webhook(data) for data in second] + [worker] * (EMAILS // 2))
    answers += at_once([worker] * (EMAILS // 2))  # what the second wave's workers did not find yet
    # Each fetch's completion enqueued its fax's prepare_fax job: the workers drain those too.
    for _ in range(2 * EMAILS):
        if not admin.execute("select count(*) as n from document_jobs where status in ('queued', 'running')"
                             ).fetchone()["n"]:  # fmt: skip
            break
        answers += at_once([worker])

    assert [(a.status_code, a.json().get("error")) for a in answers] == [(200, None)] * len(answers)
    summaries = [a.json() for a in answers if "claimed" in a.json()]
    jobs_run = 2 * EMAILS  # a fetch and a preparation a fax
    assert sum(s["completed"] for s in summaries) == sum(s["claimed"] for s in summaries) == jobs_run

    # Every job ran exactly once: one claim, one attempt, completed; every attachment stored once.
    jobs = admin.execute("select id::text, kind, status, attempts, generation from document_jobs").fetchall()
    assert Counter((j["kind"], j["status"], j["attempts"], j["generation"]) for j in jobs) == {
        ("fetch_email", "completed", 1, 1): EMAILS, ("prepare_fax", "completed", 1, 1): EMAILS}  # fmt: skip
    attempts = {(a["job_id"], a["generation"]): a["invocation_id"] for a in admin.execute(
        "select job_id::text, generation, invocation_id, outcome from document_job_attempts")}  # fmt: skip
    assert len(attempts) == jobs_run
    stored = admin.execute("select count(*) as n, count(distinct storage_path) as paths "
                           "from fax_received_email_attachments").fetchone()  # fmt: skip
    assert stored == {"n": 2 * EMAILS, "paths": 2 * EMAILS}

    # One instance per function served them all, several requests at a time.
    for route in (WORKER, WEBHOOK):
        [instance] = host.warm_instances(route)
        assert instance.peak > 1, route
    pids = {route: host.warm_instances(route)[0].process.pid for route in (WORKER, WEBHOOK)}

    # Each line carries its own request's ids (Vercel's runtime tags it from a context variable).
    by_request: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in lines:
        assert line.request_id != 0, f"a line outside any request: {line.text}"
        assert line.pid == pids[line.route]
        # Ours are JSON (lib/log.py); the runtime's own log_message writes one access line per request.
        access = RUNTIME_ACCESS_LINE.fullmatch(line.text)
        event = {"event": "runtime_access", "path": access["path"]} if access else json.loads(line.text)
        by_request[vercel_id(line.invocation_id)].append(event)
    assert set(by_request) == {a.headers["x-vercel-id"] for a in answers}
    for request, events in by_request.items():
        assert [e["event"] for e in events].count("request") == 1, request
        assert [e["path"] for e in events if e["event"] == "runtime_access"] == [
            e["path"] for e in events if e["event"] == "request"]  # fmt: skip
        for event in events:
            if event["event"] == "email_recorded":
                assert event["email_id"] == sent[request]
            elif event["event"] in ("job_started", "job_finished"):
                assert attempts[(event["job_id"], event["generation"])] == request
            elif event["event"] == "invocation_finished":
                assert event["invocation_id"] == request
    recorded = [e for events in by_request.values() for e in events if e["event"] == "email_recorded"]
    finished = [e for events in by_request.values() for e in events if e["event"] == "job_finished"]
    assert (len(recorded), len(finished)) == (EMAILS, jobs_run)

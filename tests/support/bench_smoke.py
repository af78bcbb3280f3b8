"""`python -m bench --quick` on the stack of the `devstack run` this runs under, with the scheduled
reconciliation paused as during the tests, then what the bench left in that stack's database, as
the last line of stdout (`leftovers: {...}`). tests/tooling/test_bench.py runs it on a stack of its
own: the bench's minutes stay out of the shared stack's lane (tests/support/lanes.py).

python -m tests.support.bench_smoke REPORT
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import psycopg

from tests.support.database import connect, reconcile_cron_paused


def leftovers(admin: psycopg.Connection[dict]) -> dict[str, int]:
    schemas = admin.execute("select count(*) as n from pg_namespace where nspname like 'bench\\_%'").fetchone()["n"]
    cron = admin.execute("select count(*) as n from cron.job where jobname = 'document-jobs' and not active")
    durable = admin.execute(
        "select count(*) as n from pg_settings where name in ('fsync', 'synchronous_commit', 'full_page_writes')"
        " and setting <> 'off'"
    ).fetchone()["n"]
    jobs = admin.execute("select count(*) as n from public.document_jobs").fetchone()["n"]
    return {"bench schemas": schemas, "paused cron jobs": cron.fetchone()["n"], "durability settings left on": durable,
            "jobs": jobs}  # fmt: skip


def main(report: str) -> int:
    database = os.environ["DEVSTACK_ADMIN_DATABASE_URL"]
    with reconcile_cron_paused(database):
        status = subprocess.run([sys.executable, "-m", "bench", "--quick", "--output", report]).returncode
        with connect(database) as admin:
            left = leftovers(admin)
    print("leftovers: " + json.dumps(left), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

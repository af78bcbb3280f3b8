"""Stand-in for pg_net's background worker, local stack only.

Like the real worker it takes requests from net.http_request_queue (deleting them as it takes
them: pg_net delivers at most once), sends them, and records each answer in net._http_response
under the request's id. It can only ever see committed rows, so a request queued by a
transaction that rolled back is never sent, as with pg_net. It wakes on the notification the
stand-in's net.http_post sends at commit, and polls once a second in case one was missed.

python -m devstack.standins.pg_net --ready-file FILE   (DEVSTACK_ADMIN_DATABASE_URL)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

BATCH = 200
POLL_S = 1.0
RESPONSE_TTL = "6 hours"  # pg_net's default pg_net.ttl
MAX_CONCURRENT_REQUESTS = 64
RECONNECT_S = 0.5


def take_batch(conn: psycopg.Connection[dict]) -> list[dict]:
    return conn.execute(
        """
        delete from net.http_request_queue
         where id in (select id from net.http_request_queue order by id limit %s for update skip locked)
        returning id, method, url, headers, body, timeout_milliseconds
        """,
        (BATCH,),
    ).fetchall()


def send(client: httpx.Client, request: dict) -> dict:
    """One request, answered the way pg_net records it: a status, or timed_out / error_msg."""
    row = {
        "id": request["id"],
        "status_code": None,
        "content_type": None,
        "headers": None,
        "content": None,
        "timed_out": False,
        "error_msg": None,
    }
    try:
        response = client.request(
            request["method"],
            request["url"],
            headers=request["headers"],
            content=request["body"],
            timeout=request["timeout_milliseconds"] / 1000,
        )
    except httpx.TimeoutException:
        row["timed_out"] = True
        row["error_msg"] = f"Timeout of {request['timeout_milliseconds']} ms reached"
    except httpx.HTTPError as error:
        row["error_msg"] = str(error) or type(error).__name__
    else:
        row.update(
            status_code=response.status_code,
            content_type=response.headers.get("content-type"),
            headers=dict(response.headers),
            content=response.text,
        )
    return row


def record(conninfo: str, row: dict) -> None:
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(
            """
            insert into net._http_response (id, status_code, content_type, headers, content, timed_out, error_msg)
            values (%(id)s, %(status_code)s, %(content_type)s, %(headers)s, %(content)s, %(timed_out)s, %(error_msg)s)
            """,
            {**row, "headers": Jsonb(row["headers"]) if row["headers"] is not None else None},
        )


def dispatch(conninfo: str, client: httpx.Client, request: dict) -> None:
    request["headers"] = request["headers"] if isinstance(request["headers"], dict) else json.loads(request["headers"])
    row = send(client, request)
    try:
        record(conninfo, row)
    except psycopg.Error as error:  # the database went away: the answer is lost, as with pg_net
        print(f"pg_net dispatcher: could not record response {row['id']}: {error}", file=sys.stderr)


def run(conninfo: str, ready_file: Path | None) -> None:
    """Runs until killed; requests in flight then are lost, as when pg_net's worker restarts."""
    pool = ThreadPoolExecutor(MAX_CONCURRENT_REQUESTS)
    with httpx.Client() as client:
        while True:
            try:
                serve(conninfo, client, pool, ready_file)
            except psycopg.OperationalError as error:  # the database restarted: connect again
                print(f"pg_net dispatcher: {error}; reconnecting", file=sys.stderr)
                time.sleep(RECONNECT_S)


def serve(conninfo: str, client: httpx.Client, pool: ThreadPoolExecutor, ready_file: Path | None) -> None:
    with psycopg.connect(conninfo, autocommit=True, row_factory=dict_row) as conn:
        conn.execute("listen pg_net_standin")
        if ready_file and not ready_file.exists():
            ready_file.write_text(str(os.getpid()))
        while True:
            conn.execute("delete from net._http_response where created < now() - %s::interval", (RESPONSE_TTL,))
            while batch := take_batch(conn):
                for request in batch:
                    pool.submit(dispatch, conninfo, client, request)
            for _ in conn.notifies(timeout=POLL_S, stop_after=1):
                pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ready-file", type=Path)
    args = parser.parse_args()
    run(os.environ["DEVSTACK_ADMIN_DATABASE_URL"], args.ready_file)


if __name__ == "__main__":
    main()

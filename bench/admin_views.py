"""Admin screen: server time of its views on a big table, and the queries' plans.

1,000,000 finished jobs (1 % failed, across a dozen error codes; 3 % of the completed ones retried
once on the way; received over 30 days, from 1,000 senders of Zipf-like shares (the busiest about a
tenth of the faxes, the 418th one in 2,900), Japanese subjects, a quarter of the senders writing
their number in the subject as an eFax-style service does) and 50,000 queued, each with its e-mail
and attempt history; the e-mails sent to two lines, half each, and 1 in 500 to a third. The inbox's
views read the same e-mails (1,050,000 faxes): each fetched one with its stored file (two for 1 in
10) and that file's prepared view (page count, thumbnail); who is dealing with it (older than two
days: done but 1 in 50 in progress; the last two days: a third in progress, a sixth done, the rest
new), taken by one of 8 clerks, the bench's operator among them (its "mine only"); the index
fields of the law's search on six in seven of those older than two days and a third of the
newer ones. The view's last column but one is how many faxes it matched, as the inbox's answer
counts them (up to 10,000; a view that fills its page from the newest faxes does not count).
The admin function runs in a warm instance of Vercel's
Python runtime (devstack's function host, the real `vercel build`), reached with an operator's
access token from the Auth stand-in. The figure is the function's own Server-Timing ("app": from
the function receiving the request to its answer, token verification and the database included).
The views are requested in rounds, each view once a round (the order turned by one view each
round), `requests` rounds after a warm-up: the machine is shared, and a spell of load then falls
on every view alike instead of on the one being measured at the time. The plans are those of the
statements the database runs for each view (auto_explain, nested statements, ANALYZE and BUFFERS),
made through the operator's function as the admin function calls it (the check of the operator's
session and user in Auth's tables included), recorded once the caches are warm.

python -m devstack run -- .venv/bin/python -m bench.admin_views [--quick]
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import urlencode

import httpx
import jwt
import psycopg

from bench.common import Section, Table, connect, empty_shared_tables, env, fmt, median, percentile, run_alone
from devstack import vercel_build
from devstack.standins.function_host import FunctionHost

ERROR_CODES = ("resend_not_found", "resend_rejected", "resend_malformed_response", "attachment_too_large",
               "storage_too_large", "storage_invalid_key", "storage_rejected", "download_expired", "download_failed",
               "email_not_found", "lease_expired", "cancelled")  # fmt: skip
SENDERS = 1000
BUDGET_MS = 100


@dataclass(frozen=True)
class Settings:
    finished: int
    queued: int
    requests: int
    warmup: int


FULL = Settings(finished=1_000_000, queued=50_000, requests=100, warmup=5)
QUICK = Settings(finished=20_000, queued=1_000, requests=3, warmup=1)


# A sender's rank (0 the busiest) for e-mail i, log-uniform over SENDERS ranks: rank r sends a share
# ln((r + 2) / (r + 1)) / ln(SENDERS + 1) of the faxes (Zipf's law: the first about a tenth, the
# 418th one in 2,900), as an office's main suppliers send most of its faxes. A multiplicative
# hash of i stands in for chance, so every table the fill writes agrees on an e-mail's sender.
SENDER_RANK = f"(floor(power({SENDERS + 1}, ((%s::bigint * 2654435761) %% 4294967296) / 4294967296.0)) - 1)::int"
# The office's clerks: who takes and closes faxes; the bench's operator among them (its "mine only").
CLERKS = 8


def fill(conn: psycopg.Connection, settings: Settings) -> float:
    """The big table; seconds it took."""
    started = time.monotonic()
    total = settings.finished + settings.queued
    rank = SENDER_RANK % "i"
    # Each sender has its number; a quarter of them send through an eFax-style service, which writes
    # the number in the subject.
    conn.execute(f"""
        insert into public.fax_received_emails (provider_email_id, from_address, to_addresses, subject, data,
                                                created_at, received_at)
        select 'bench-' || i,
               format('取引先%s株式会社 <fax%s@example.jp>', lpad(s.r::text, 4, '0'), s.r),
               case when i % 500 = 0 then '{{shiten@office.example.jp}}'
                    when i % 2 = 0 then '{{honsha@office.example.jp}}' else '{{eigyo@office.example.jp}}' end::text[],
               format('FAX受信: %s (%s枚)%s', (array['注文書', '請求書', '見積書', '納品書', '発注書'])[1 + i % 5],
                      1 + i % 9,
                      case when s.r % 4 = 0
                           then format(' 送信元 0%s-%s-%s', 3 + s.r % 7, lpad((s.r * 7 % 9000 + 1000)::text, 4, '0'),
                                       lpad((s.r * 7919 % 10000)::text, 4, '0')) else '' end),
               '{{}}', r.at, r.at
          from generate_series(1, {total}) i
         cross join lateral (select {rank} as r) s
         cross join lateral (
               select case when i <= {settings.finished}
                           then now() - interval '30 days' * ((i::float8 / {settings.finished}) ^ 0.8)
                           else now() - interval '3 hours' * random() end as at) r""")
    conn.execute(f"""
        insert into public.document_jobs (kind, fax_received_email_id, status, attempts, run_after, created_at,
                                          started_at, finished_at, last_error_code, last_error_message)
        select 'fetch_email', e.id, s.status,
               case when s.status = 'queued' then 0 when s.status = 'failed' then 5 when s.code is not null then 2
                    else 1 end,
               e.created_at, e.created_at,
               case when s.status <> 'queued' then e.created_at + interval '1 second' end,
               case when s.status <> 'queued' then e.created_at + interval '1 second' * (2 + 40 * random()) end,
               s.code, case when s.code is not null then 'bench: ' || s.code end
          from (select e.*, substr(e.provider_email_id, 7)::int as i from public.fax_received_emails e
                 where e.provider_email_id like 'bench-%') e
         cross join lateral (
               select case when e.i > {settings.finished} then 'queued'
                           when e.i % 100 = 0 then 'failed' else 'completed' end as status,
                      case when e.i > {settings.finished} then null
                           when e.i % 100 = 0 then (array{list(ERROR_CODES)})[1 + (e.i / 100) % {len(ERROR_CODES)}]
                           when e.i % 33 = 0 then 'resend_unavailable' end as code) s""")
    # One attempt per finished job; a retried one first for the completed jobs that carry an error code.
    conn.execute("""
        insert into public.document_job_attempts (job_id, generation, attempt, started_at, finished_at, outcome,
                                                  error_code, error_message, invocation_id)
        select j.id, 1, 1, j.started_at, j.started_at + interval '1 second', 'retried', j.last_error_code,
               j.last_error_message, 'bench'
          from public.document_jobs j where j.status = 'completed' and j.last_error_code is not null
        union all
        select j.id, j.attempts, j.attempts, j.started_at, j.finished_at,
               case when j.status = 'failed' then 'failed' else 'completed' end,
               case when j.status = 'failed' then j.last_error_code end,
               case when j.status = 'failed' then j.last_error_message end, 'bench'
          from public.document_jobs j where j.status in ('completed', 'failed')""")
    # The stored files of every fetched fax (one attachment, two for 1 in 10: a cover sheet), each
    # prepared (its page count and page-1 thumbnail; a TIFF's viewing PDF), as the inbox's rows read
    # them; written as the table's owner, a setup as the jobs are.
    conn.execute("""
        insert into public.fax_received_email_attachments (fax_received_email_id, provider_attachment_id, filename,
                                                           content_type, size_bytes, sha256, bucket, storage_path,
                                                           created_at, updated_at)
        select e.id, 'att_' || n, case when e.i % 3 = 0 then 'fax.tif' else 'fax.pdf' end,
               case when e.i % 3 = 0 then 'image/tiff' else 'application/pdf' end, 40000 + e.i % 200000,
               encode(sha256(convert_to(e.id::text || n, 'UTF8')), 'hex'), 'fax-attachments',
               format('fax_received_emails/%s/att_%s.%s', e.id, n, case when e.i % 3 = 0 then 'tif' else 'pdf' end),
               e.created_at + interval '2 seconds', e.created_at + interval '2 seconds'
          from (select e.*, substr(e.provider_email_id, 7)::int as i from public.fax_received_emails e
                 where e.provider_email_id like 'bench-%') e
         cross join generate_series(1, case when e.i % 10 = 0 then 2 else 1 end) n
         where exists (select 1 from public.document_jobs j where j.fax_received_email_id = e.id
                         and j.status = 'completed')""")
    conn.execute("""
        insert into public.fax_attachment_views (attachment_id, source_sha256, page_count, view_path, thumbnail_path)
        select a.id, a.sha256, 1 + (a.size_bytes % 9)::int,
               case when a.content_type = 'image/tiff' then format('fax_views/%s/view.pdf', a.id) end,
               format('fax_views/%s/page1.webp', a.id)
          from public.fax_received_email_attachments a""")
    for address, name in (
        ("honsha@office.example.jp", "本社"),
        ("eigyo@office.example.jp", "営業部"),
        ("shiten@office.example.jp", "支店"),
    ):
        conn.execute("select public.set_fax_line(%s, %s)", (address, name))
    # Who deals with the faxes: all but one in 50 of those older than two days done, the rest in
    # progress; of the last two days a third in progress, a sixth done, the rest never marked (new:
    # no row). Each taken by one of the office's clerks, the bench's operator among them.
    conn.execute("select set_config('bench.operator', id::text, false),"
                 " set_config('bench.operator_email', email, false) from auth.users where email = %s",
                 (env("DEVSTACK_OPERATOR_EMAIL"),))  # fmt: skip
    conn.execute(f"""
        insert into public.fax_handling (fax_received_email_id, state, assignee_id, assignee_email, note, updated_at,
                                         updated_by, updated_by_email)
        select e.id, m.state, c.id, c.email, case when m.state = 'done' and e.i % 40 = 0 then '対応済み' end,
               e.created_at + interval '1 hour', c.id, c.email
          from (select e.*, substr(e.provider_email_id, 7)::int as i from public.fax_received_emails e
                 where e.provider_email_id like 'bench-%') e
         cross join lateral (
               select case when e.created_at < now() - interval '2 days'
                           then case when e.i % 50 = 7 then 'in_progress' else 'done' end
                           when e.i % 6 in (1, 2) then 'in_progress' when e.i % 6 = 3 then 'done' end as state) m
         cross join lateral (
               select case when e.i % {CLERKS} = 0 then current_setting('bench.operator')::uuid
                           else ('00000000-0000-4000-8000-00000000000' || (e.i % {CLERKS}))::uuid end as id,
                      case when e.i % {CLERKS} = 0 then current_setting('bench.operator_email')
                           else format('clerk%s@office.example.jp', e.i % {CLERKS}) end as email) c
         where m.state is not null""")
    # The index fields (取引年月日 up to 10 days before the fax came, an amount for 6 in 7 of each type:
    # a cycle of its own, not the types', so that no type is the faxes without an amount; the sender's
    # counterparty in katakana, the seven types in turn) on the faxes a clerk has entered: six in seven
    # of those older than two days (the rest are no transaction: advertisements, notices), a third of
    # the last two days'. Written as the table's owner: set_fax_index and its history are pgTAP's and
    # the tests'.
    conn.execute("""
        insert into public.fax_index (fax_received_email_id, received, transaction_date, amount, counterparty,
                                      doc_type, updated_by)
        select e.id, coalesce(e.received_at, e.created_at),
               (coalesce(e.received_at, e.created_at) at time zone document_jobs_internal.office_time_zone())::date
                   - e.i % 10,
               case when (e.i / 7) % 7 <> 0 then (e.i::bigint * 7919) % 5000000 end,
               format('%s商事%s', (array['ヤマダ', 'カワグチ', 'サトウ', 'スズキ', 'タナカ'])[1 + e.r % 5],
                      lpad(e.r::text, 4, '0')),
               (document_jobs_internal.fax_document_types())[1 + e.i % 7], gen_random_uuid()
          from (select e.*, substr(e.provider_email_id, 7)::int as i,
                       substring(e.from_address from '取引先([0-9]+)')::int as r
                  from public.fax_received_emails e where e.provider_email_id like 'bench-%') e
         where case when e.created_at < now() - interval '2 days' then e.i % 7 <> 3 else e.i % 3 = 0 end""")
    conn.execute(
        "vacuum analyze public.document_jobs, public.fax_received_emails, public.document_job_attempts,"
        " public.fax_index, public.fax_handling, public.fax_received_email_attachments, public.fax_attachment_views"
    )
    return time.monotonic() - started


def sign_in() -> str:
    answer = httpx.post(
        f"{env('SUPABASE_URL')}/auth/v1/token?grant_type=password",
        headers={"apikey": env("SUPABASE_PUBLISHABLE_KEY")},
        json={"email": env("DEVSTACK_OPERATOR_EMAIL"), "password": env("DEVSTACK_OPERATOR_PASSWORD")},
        timeout=10,
    )
    answer.raise_for_status()
    return str(answer.json()["access_token"])


def server_ms(response: httpx.Response) -> tuple[float, float]:
    timing = dict(re.findall(r"(\w+);dur=([\d.]+)", response.headers["Server-Timing"]))
    return float(timing["app"]), float(timing["db"])


# Two senders of the fill (SENDER_RANK): the fourth busiest (about 3.2 % of the faxes) and the 418th
# (about 1 in 2,900).
FREQUENT_SENDER, RARE_SENDER = "取引先0003株式会社", "取引先0417株式会社"


def views(conn: psycopg.Connection, settings: Settings) -> dict[str, str]:
    """Each view as the page asks for it: name -> path and query of /api/admin."""
    page1 = conn.execute("""select created_at, id from public.document_jobs
                             order by created_at desc, id desc offset 49 limit 1""").fetchone()  # fmt: skip
    day = conn.execute("select date_trunc('day', now() - interval '10 days')").fetchone()[0]
    provider = conn.execute("select provider_email_id from public.fax_received_emails"
                            " where provider_email_id like 'bench-%%' order by created_at desc offset %s limit 1",
                            ((settings.finished + settings.queued) // 15,)).fetchone()[0]  # fmt: skip
    second_page = {"after_time": page1[0].isoformat(), "after_id": str(page1[1])}
    one_day = {"state": "failed", "from": day.isoformat(), "to": (day + timedelta(days=1)).isoformat()}
    queries = {
        "overview": None,
        "jobs, default (all states, newest first)": {},
        "jobs, default, second page (keyset)": second_page,
        "jobs, failed with one error code": {"state": "failed", "code": "storage_rejected"},
        "jobs, one error code, any state": {"code": "resend_unavailable"},
        "jobs, failed, received in one day": one_day,
        "jobs, a rare sender (its filter)": {"sender": RARE_SENDER},
        "search: a rare sender": {"q": RARE_SENDER},
        "search: a common subject word": {"q": "請求書"},
        "search: the provider's e-mail id": {"q": provider},
        "search: two characters (searched in steps)": {"q": "見積"},
    }
    paths = {name: "overview" if query is None else f"jobs?{urlencode(query)}" for name, query in queries.items()}
    return paths | inbox_views(conn)


def office_days(conn: psycopg.Connection) -> tuple[datetime, datetime, datetime]:
    """The start of today, of yesterday and of this week (Monday) in the office's time zone, as the
    screen's shortcuts ask for them (public/admin/inbox.js receivedRange)."""
    found = conn.execute("""
        select d at time zone z, (d - interval '1 day') at time zone z,
               (d - interval '1 day' * ((extract(isodow from d)::int) - 1)) at time zone z
          from (select document_jobs_internal.office_time_zone() as z) s
         cross join lateral (select date_trunc('day', now() at time zone s.z) as d) t""").fetchone()
    assert found is not None
    return found[0], found[1], found[2]


def inbox_views(conn: psycopg.Connection) -> dict[str, str]:
    """The inbox's views as the page asks for them (public/admin/inbox.js apiQuery): its first page,
    the next, each filter, and the search; then the law's search (the index fields)."""
    newest = conn.execute("""select coalesce(received_at, created_at), id from public.fax_received_emails
                              order by coalesce(received_at, created_at) desc, id desc offset 49 limit 1""").fetchone()
    today, yesterday, monday = office_days(conn)
    tomorrow = today + timedelta(days=1)
    day = today - timedelta(days=10)
    # A number that is there: that of an e-mail of some hours ago, typed in full-width characters.
    found = conn.execute("""select substring(subject from '送信元 ([0-9-]+)') from public.fax_received_emails
                             where subject like '%%送信元%%' order by created_at desc offset 100 limit 1""").fetchone()
    number = found[0]
    full_width = number.translate(str.maketrans("0123456789-", "０１２３４５６７８９－"))
    queries: dict[str, dict[str, str]] = {
        "inbox, first page (newest first)": {},
        "inbox, second page (keyset)": {"after_time": newest[0].isoformat(), "after_id": str(newest[1])},
        "inbox, today": {"from": today.isoformat(), "to": tomorrow.isoformat()},
        "inbox, yesterday": {"from": yesterday.isoformat(), "to": today.isoformat()},
        "inbox, this week": {"from": monday.isoformat(), "to": tomorrow.isoformat()},
        "inbox, one day 10 days ago": {"from": day.isoformat(), "to": (day + timedelta(days=1)).isoformat()},
        "inbox, a frequent sender's name": {"sender": FREQUENT_SENDER},
        "inbox, a rare sender's name": {"sender": RARE_SENDER},
        "inbox, a fax number typed in full-width": {"sender": full_width},
        "inbox, the start of a number (6 digits)": {"sender": number.replace("-", "")[:6]},
        "inbox, a line (half the faxes)": {"line": "honsha@office.example.jp"},
        "inbox, a rare line (1 in 500; walked)": {"line": "shiten@office.example.jp"},
        "inbox, not done yet (new or in progress)": {"handling": "open"},
        "inbox, in progress": {"handling": "in_progress"},
        "inbox, done": {"handling": "done"},
        "inbox, mine only": {"assignee": "me"},
        "inbox, mine only, not done yet": {"assignee": "me", "handling": "open"},
        "inbox, search: a common subject word": {"q": "請求書"},
        "inbox, search: a rare sender": {"q": RARE_SENDER},
        "inbox, search: two characters (walked)": {"q": "見積"},
        "inbox, one day and a line": {"from": day.isoformat(), "to": (day + timedelta(days=1)).isoformat(),
                                      "line": "eigyo@office.example.jp"},
        "inbox, this week, not done yet": {"from": monday.isoformat(), "to": tomorrow.isoformat(),
                                           "handling": "open"},
    }  # fmt: skip
    # The law's search (電子帳簿保存法): transaction date and amount ranges, the counterparty in part, the type.
    week_from = (today - timedelta(days=17)).date().isoformat()
    week_to = (today - timedelta(days=11)).date().isoformat()
    queries |= {
        "law, transaction dates of one week": {"date_from": week_from, "date_to": week_to},
        "law, an amount range (1 in 100)": {"amount_min": "1000000", "amount_max": "1050000"},
        "law, a counterparty in hiragana (a rare one)": {"counterparty": "やまだ商事0415"},
        "law, a counterparty in katakana (a frequent one)": {"counterparty": "スズキ商事0003"},
        "law, two kana of a counterparty (a fifth of the senders)": {"counterparty": "すず"},
        "law, a type (1 in 7)": {"type": "請求書"},
        "law, type, amount range and week combined": {"type": "請求書", "amount_min": "1000000",
                                                      "amount_max": "2000000", "date_from": week_from,
                                                      "date_to": week_to},
        "law, counterparty and week combined": {"counterparty": "カワグチ商事0416", "date_from": week_from,
                                                "date_to": week_to},
        "law, counterparty and amount range combined": {"counterparty": "すずき", "amount_min": "100000",
                                                        "amount_max": "200000"},
    }  # fmt: skip
    return {name: f"faxes?{urlencode(query)}" for name, query in queries.items()}


def measure(
    client: httpx.Client, paths: dict[str, str], settings: Settings
) -> dict[str, tuple[float, float, float, float, int, str]]:
    """Per view: p50, p95 and max of the server time, the database's p50, and the rows answered.
    Every view is warmed up, then requested once per round, the rounds' order turning by one view."""
    for path in paths.values():
        for _ in range(settings.warmup):
            client.get(path).raise_for_status()
    names = list(paths)
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
    rows: dict[str, int] = {}
    counts: dict[str, str] = {}
    for round_ in range(settings.requests):
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            response = client.get(paths[name])
            response.raise_for_status()
            samples[name].append(server_ms(response))
            body = response.json()
            rows[name] = len(body["jobs"]) if "jobs" in body else len(body["faxes"]) if "faxes" in body else len(
                body["hours"])  # fmt: skip
            counts[name] = matched(body)
    measured = {}
    for name in names:
        app = [sample[0] for sample in samples[name]]
        measured[name] = (median(app), percentile(app, 0.95), max(app),
                          median([sample[1] for sample in samples[name]]), rows[name], counts[name])  # fmt: skip
    return measured


def matched(body: dict[str, object]) -> str:
    """How many faxes an inbox view matched, as its answer says: its count, "> 10,000" past the cap,
    "partial" for a walk that ended short of a page; "" for the other views, which count none."""
    if "faxes" not in body:
        return ""
    if body.get("count") is not None:
        return f"{body['count']:,}"
    return "> 10,000" if body.get("count_capped") else "partial" if body.get("partial") else "not counted"


def planned(conn: psycopg.Connection, token: str) -> dict[str, tuple[str, tuple[object, ...]]]:
    """The statements the admin function runs for some of the views: the operator's function with
    the user and session of the bench's token, as the admin function calls it."""
    claims = jwt.decode(token, options={"verify_signature": False})
    viewer = (claims["sub"], claims["session_id"])
    page1 = conn.execute("""select created_at, id from public.document_jobs
                             order by created_at desc, id desc offset 49 limit 1""").fetchone()  # fmt: skip
    jobs = "select public.document_jobs_operator_jobs(%s, %s, %s, %s, %s, 50)"
    faxes = "select public.document_jobs_operator_faxes(%s, %s, %s, null, null, 50)"
    failed_one_code = '{"states": ["failed"], "error_code": "storage_rejected"}'
    today = office_days(conn)[0]
    week_from = (today - timedelta(days=17)).date().isoformat()
    week_to = (today - timedelta(days=11)).date().isoformat()
    return {
        "overview": ("select public.document_jobs_operator_overview(%s, %s)", viewer),
        "jobs, default (all states, newest first)": (jobs, (*viewer, "{}", None, None)),
        "jobs, default, second page (keyset)": (jobs, (*viewer, "{}", page1[0], page1[1])),
        "jobs, failed with one error code": (jobs, (*viewer, failed_one_code, None, None)),
        "jobs, a rare sender (its filter)": (jobs, (*viewer, json.dumps({"sender": RARE_SENDER}), None, None)),
        "search: a rare sender": (jobs, (*viewer, json.dumps({"q": RARE_SENDER}), None, None)),
        "search: two characters (searched in steps)": (jobs, (*viewer, '{"q": "見積"}', None, None)),
        "inbox, first page (newest first)": (faxes, (*viewer, "{}")),
        "inbox, a fax number": (faxes, (*viewer, '{"number": "0612345"}')),
        "inbox, a rare line (walked)": (faxes, (*viewer, '{"line": "shiten@office.example.jp"}')),
        "inbox, mine only": (faxes, (*viewer, json.dumps({"assignee": env("DEVSTACK_OPERATOR_EMAIL")}))),
        "inbox, done": (faxes, (*viewer, '{"handling": ["done"]}')),
        "law, counterparty and week combined": (
            faxes,
            (*viewer, json.dumps({"counterparty": "カワグチ商事0416", "date_from": week_from, "date_to": week_to})),
        ),
    }


_ID_LIST = re.compile(r"'\{[0-9a-f,-]{80,}\}'")
_READS = re.compile(r"(Seq|Index|Index Only|Bitmap Heap) Scan (using \S+ )?on (?!pg_)")


def readable(message: str) -> str:
    """One of auto_explain's messages: its duration, the statement shortened to a line, the plan
    (from its first node, the first line with a cost), with long lists of ids counted instead."""
    head, _, rest = message.partition("\n")
    lines = rest.splitlines()
    first = next(i for i, line in enumerate(lines) if "(cost=" in line)
    text = " ".join(" ".join(lines[:first]).removeprefix("Query Text:").split())
    text = text if len(text) <= 240 else text[:240] + " ..."
    plan = _ID_LIST.sub(lambda found: f"'{{{found.group().count(',') + 1} ids}}'", "\n".join(lines[first:]))
    return f"{head.removesuffix('plan:').strip()} {text}\n{plan.rstrip()}"


def plans(statements: dict[str, tuple[str, tuple[object, ...]]]) -> list[tuple[str, str]]:
    """auto_explain's plans of the statements each view runs that read a table, made by calling the
    view's function as the admin function does (as service_role), in a session of the superuser with
    auto_explain loaded; the second call's, with the caches warm."""
    found = []
    for name, (statement, params) in statements.items():
        messages: list[str] = []
        with psycopg.connect(env("DEVSTACK_ADMIN_DATABASE_URL"), autocommit=True) as explain:
            explain.add_notice_handler(lambda notice, kept=messages: kept.append(notice.message_primary or ""))
            for setting in ("load 'auto_explain'", "set auto_explain.log_min_duration = 0",
                            "set auto_explain.log_analyze = on", "set auto_explain.log_buffers = on",
                            "set auto_explain.log_timing = on", "set auto_explain.log_nested_statements = on",
                            "set client_min_messages = log", "set role service_role"):  # fmt: skip
                explain.execute(setting)
            explain.execute(statement, params)
            messages.clear()
            explain.execute(statement, params)
        # Those that read a table or an index (not the ones over a JSON value alone); the last is the call.
        nested = [m for m in messages[:-1] if m.startswith("duration") and _READS.search(m)]
        found.append((f"Plans: {name}", once_each([readable(m) for m in nested])))
    return found


def once_each(plans: list[str]) -> str:
    """The plans, each statement's first only: a page of the inbox runs the same statements for each
    of its 50 faxes (fax_summary's), whose plans differ in their ids and timings alone; the first
    says how many times its statement ran."""

    def statement(plan: str) -> str:
        return re.sub(r"^duration: [\d.]+ ms ", "", plan.partition("\n")[0])

    counts: dict[str, int] = {}
    for plan in plans:
        counts[statement(plan)] = counts.get(statement(plan), 0) + 1
    kept, seen = [], set()
    for plan in plans:
        key = statement(plan)
        if key in seen:
            continue
        seen.add(key)
        head, _, rest = plan.partition("\n")
        kept.append(f"{head} (ran {counts[key]} times: the first shown)\n{rest}" if counts[key] > 1 else plan)
    return "\n\n".join(kept)


def run(quick: bool) -> Section:
    settings = QUICK if quick else FULL
    section = Section(
        key="admin_views",
        heading="Admin screen: server time of its views on a big table",
        method=__doc__.split("\n\n", 1)[1].split("\n\npython -m")[0].replace("\n", " "),
    )
    with connect() as conn:
        empty_shared_tables(conn)
        try:
            filled_s = fill(conn, settings)
            build = vercel_build.build_working_tree()
            with tempfile.TemporaryDirectory(prefix="bench-admin-") as state, open(os.devnull, "wb") as quiet:
                host = FunctionHost(build, dict(os.environ), Path(state), log=quiet)
                threading.Thread(target=host.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
                try:
                    url = f"http://127.0.0.1:{host.server_address[1]}"
                    token = sign_in()
                    headers = {"Authorization": f"Bearer {token}"}
                    with httpx.Client(base_url=f"{url}/api/admin/", headers=headers, timeout=120) as client:
                        first = client.get("overview")
                        first_ms = server_ms(first)[0]
                        table = Table(
                            f"Server time per view ({settings.finished:,} finished + {settings.queued:,} queued jobs, "
                            f"{settings.requests} requests each, in rounds of every view, warm instance)",
                            [
                                "view",
                                "p50 ms",
                                "p95 ms",
                                "max ms",
                                "of which database calls, p50 ms",
                                "rows",
                                "faxes matched",
                                f"p95 ≤ {BUDGET_MS} ms",
                            ],
                        )
                        load = [os.getloadavg()[0]]
                        for name, (p50, p95, peak, database, rows, count) in measure(
                            client, views(conn, settings), settings
                        ).items():
                            meets = "yes" if p95 <= BUDGET_MS else "NO"
                            table.add(
                                name, fmt(p50, 1), fmt(p95, 1), fmt(peak, 1), fmt(database, 1), rows, count, meets
                            )
                            section.figures[f"{name}:p50"] = p50
                            section.figures[f"{name}:p95"] = p95
                        table.notes.append(
                            f"the first overview after the data was loaded took {fmt(first_ms, 0)} ms: it computed "
                            "and cached the 168 hourly rows of the last 7 days once (later calls compute only the last "
                            "hour or two)"
                        )
                        load.append(os.getloadavg()[0])
                        section.figures["load_start"], section.figures["load_end"] = load
                        table.notes.append(
                            f"the machine is shared: its load average (1 minute, {os.cpu_count()} cores) was "
                            f"{load[0]:.1f} when the measurements began and {load[1]:.1f} when they ended"
                        )
                        table.notes.append(f"loading the data took {filled_s:.0f} s (not timed above)")
                        section.tables.append(table)
                        section.blocks.extend(plans(planned(conn, token)))
                finally:
                    host.shutdown()
                    host.stop_instances()
        finally:
            empty_shared_tables(conn)
    return section


if __name__ == "__main__":
    run_alone(run, __doc__)

"""`document-jobs-admin faxes`: the inbox, and the search the Electronic Bookkeeping Act asks for
(transaction date and amount ranges, counterparty, document type, combined freely), as the screen's
inbox reads it (document_jobs_admin_faxes through lib/screen/calls.py): the count, then the faxes
newest first with their index fields. Sender text and the index fields go through
lib/admin/display.py, which prints a sender's control sequences as escapes."""

from __future__ import annotations

import argparse
from datetime import date
from typing import Any

from lib.admin import display
from lib.admin.commands import MAX_PAGE, SHORT_ID, Context, Row, positive, rpc_of, since_or_until
from lib.screen import calls

# The database's parameter names in its messages, as the flags the operator typed.
FLAGS = {
    "p_filter.date_from": "--date-from", "p_filter.date_to": "--date-to", "p_filter.amount_min": "--amount-min",
    "p_filter.amount_max": "--amount-max", "p_filter.counterparty": "--counterparty", "p_filter.doc_type": "--type",
    "p_filter.received_from": "--received-from", "p_filter.received_to": "--received-to",
    "p_filter.sender": "--sender", "p_filter.q": "--search", "p_limit": "--limit",
}  # fmt: skip
LIMITS = {"counterparty": 24, "sender": 24}


def a_date(value: str) -> str:
    """A transaction date as the database takes it (YYYY-MM-DD)."""
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {value!r}") from None


def yen(value: str) -> int:
    """An amount in whole yen; 1,000 and ¥1000 are taken as a clerk writes them."""
    digits = value.replace(",", "").replace("¥", "").replace("円", "").strip()
    if not (digits.isascii() and digits.isdigit() and len(digits) <= 12):
        raise argparse.ArgumentTypeError(f"not whole yen (0 to 999,999,999,999): {value!r}")
    return int(digits)


def add_options(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--date-from", type=a_date, metavar="DATE", help="transaction date (取引年月日) on or after")
    sub.add_argument("--date-to", type=a_date, metavar="DATE", help="transaction date on or before")
    sub.add_argument("--amount-min", type=yen, metavar="YEN", help="amount (取引金額) at least")
    sub.add_argument("--amount-max", type=yen, metavar="YEN", help="amount at most")
    sub.add_argument(
        "--counterparty", metavar="TEXT",
        help="part of the counterparty (取引先); katakana, hiragana and full or half width alike",
    )  # fmt: skip
    sub.add_argument(
        "--type", dest="doc_type", metavar="TYPE",
        help="document type (書類の種類): 請求書, 注文書, 納品書, 見積書, 契約書, 領収書 or その他",
    )  # fmt: skip
    sub.add_argument("--received-from", type=since_or_until, metavar="TIME", help="received at or after")
    sub.add_argument("--received-to", type=since_or_until, metavar="TIME", help="received before")
    sub.add_argument("--sender", help="part of the sender's name, or their number")
    sub.add_argument("--search", help="the inbox's search: an id, or text of the sender or subject")
    sub.add_argument("--limit", type=positive, default=50, help="at most this many rows (default 50)")


def search(context: Context, args: argparse.Namespace) -> tuple[Any, str]:
    """The inbox's read, page after page up to --limit, with its count."""
    found = calls.fax_filter({
        "date_from": args.date_from, "date_to": args.date_to, "amount_min": args.amount_min,
        "amount_max": args.amount_max, "counterparty": args.counterparty, "doc_type": args.doc_type,
        "received_from": args.received_from.isoformat() if args.received_from else None,
        "received_to": args.received_to.isoformat() if args.received_to else None,
        "sender": args.sender, "q": args.search,
    })  # fmt: skip
    rpc = rpc_of(context, FLAGS)
    limit = max(1, args.limit)
    rows: list[Row] = []
    first: Row | None = None
    after: Row | None = None
    while True:
        after_time, after_id = (str(after["received_at"]), str(after["id"])) if after else (None, None)
        page = calls.faxes(rpc, found, after_time, after_id, min(MAX_PAGE, limit - len(rows)))
        first = first or page
        rows += page["faxes"]
        after = page["next"]
        if after is None or len(rows) >= limit:
            break
    assert first is not None
    total, capped = first.get("count"), first.get("count_capped")
    data = {"faxes": rows, "count": total, "count_capped": capped, "more": after is not None, "filter": first["filter"]}
    counted = (f"more than {display.count(10000)}" if capped else display.count(total)) if total is not None else None
    head = f"{counted} faxes match" if counted is not None else "faxes found so far (no count for this filter)"
    if not rows:
        return data, f"{head}\n" if counted is not None else "no faxes found"
    listed = []
    for fax in rows:
        index = fax.get("index") or {}
        sender = fax.get("sender") or {}
        amount = index.get("amount")
        listed.append({
            "id": str(fax["id"])[:SHORT_ID],
            "received": display.local_time(fax["received_at"], context.now),
            "date": index.get("transaction_date") or "",
            "amount": f"{amount:,}" if isinstance(amount, int) else "",
            "counterparty": index.get("counterparty") or "",
            "type": index.get("doc_type") or "",
            "sender": sender.get("name") or sender.get("number_display") or fax.get("from") or "",
        })  # fmt: skip
    shown = display.table(listed, ["id", "received", "date", "amount", "counterparty", "type", "sender"], LIMITS)
    footer = f"showing {display.count(len(rows))}, newest first" + (" (--limit for more)" if after else "")
    return data, f"{head}\n\n{shown}\n\n{footer}"

"""`document-jobs-admin faxes`: the law's search on the command line, as the inbox reads it: the
count and the rows (short id, received, transaction date, amount, counterparty, type, sender) for
a date range, an amount range, a counterparty in part (kana and width alike) and a type, combined;
a bad value is named by its flag; a sender's control characters are printed inert."""

from __future__ import annotations

import json


def fax(db, provider_id: str, subject: str, minute: int, values: dict, clerk: str) -> str:
    db.execute(
        "insert into fax_received_emails (provider_email_id, data, from_address, subject, received_at)"
        " values (%s, '{}', 'fax@example.jp', %s, timestamptz '2026-12-01 09:00+09' + %s * interval '1 minute')",
        (provider_id, subject, minute),
    )
    fax_id = str(db.execute("select id from fax_received_emails where provider_email_id = %s", (provider_id,))
                 .fetchone()["id"])  # fmt: skip
    db.execute("select set_fax_index(%s, null, %s, %s)", (clerk, fax_id, json.dumps(values)))
    return fax_id


def test_faxes_searches_by_the_index_and_prints_the_count_and_rows(cli, db, admin, stack_env) -> None:
    clerk = str(admin.execute("select id from auth.users where email = %s",
                           (stack_env["DEVSTACK_OPERATOR_EMAIL"],)).fetchone()["id"])  # fmt: skip
    invoice = fax(db, "em_cli_1", "FAX \x1b[31mヤマダ商事", 1, {"transaction_date": "2026-11-01", "amount": 10000,
                  "counterparty": "株式会社ヤマダ商事", "doc_type": "請求書"}, clerk)  # fmt: skip
    fax(db, "em_cli_2", "FAX 2", 2, {"transaction_date": "2026-11-20", "amount": 250000,
        "counterparty": "ｶﾜｸﾞﾁ工業", "doc_type": "注文書"}, clerk)  # fmt: skip
    later = fax(db, "em_cli_3", "FAX 3", 3, {"transaction_date": "2026-11-30", "amount": 90000,
                "counterparty": "やまだ商事", "doc_type": "請求書"}, clerk)  # fmt: skip

    status, out, err = cli("faxes", "--date-from", "2026-11-01", "--date-to", "2026-11-30", "--amount-max", "100,000",
                           "--counterparty", "ヤマダ", "--type", "請求書")  # fmt: skip
    assert status == 0, err
    assert out.startswith("2 faxes match\n"), out
    lines = out.splitlines()
    assert lines[2].split()[:2] == ["id", "received"]
    rows = [line for line in lines if line[:8] in (later[:8], invoice[:8])]
    assert [row[:8] for row in rows] == [later[:8], invoice[:8]], out  # newest first
    assert "90,000" in rows[0] and "やまだ商事" in rows[0] and "2026-11-30" in rows[0]
    assert "10,000" in rows[1] and "株式会社ヤマダ商事" in rows[1]
    assert "\x1b" not in out

    data = json.loads(cli("faxes", "--counterparty", "かわぐち", "--json")[1])
    assert data["count"] == 1 and data["faxes"][0]["index"]["doc_type"] == "注文書"
    assert cli("faxes", "--amount-min", "300000")[1].startswith("0 faxes match")

    status, _, err = cli("faxes", "--type", "請求")
    assert status != 0 and "--type" in err
    status, _, err = cli("faxes", "--date-from", "2026-13-01")
    assert status != 0 and "--date-from" in err

"""Send sample faxes to the stack that `make up` started, as Resend would: each e-mail is added
to the Resend sample provider and its signed email.received webhook is delivered to the webhook
function; the kick and the worker then store its attachments. A fault or two on request:

  not_found     Resend no longer knows the e-mail: the job fails at once (resend_not_found)
  unavailable   Resend answers 503 twice: the job is retried with backoff, then completes
  unauthorized  Resend refuses the key: the job is released every 10 minutes, no attempt spent

What the e-mails carry: sample PDFs (--attachments N), or given files (--file, repeatable: a real
TIFF or PDF, typed by its suffix as a mail client would), or one of the faxes Japanese offices
really get (--sample efax: a 3-page CCITT G4 TIFF at 204 x 98 dpi, the sender's number only in the
subject, as eFax-style services deliver it; --sample invoice: a PDF invoice from 株式会社山田商事
whose Japanese font is not embedded); --from and --subject set the sender and the subject.

.venv/bin/python -m devstack.tools.send_faxes [--count N] [--fault not_found|unavailable|unauthorized]
    [--file PATH ... | --sample efax|invoice | --attachments N] [--from SENDER] [--subject TEXT]
(make faxes [COUNT=N] [FAULT=...] [FILE=fax.tif] [SAMPLE=efax] [FROM='...'] [SUBJECT='...']); then
`document-jobs-admin list` shows them.
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from pathlib import Path

import httpx

from devstack import stack
from devstack.tools import inbound
from lib.admin import command_line

FAULTS = {
    "not_found": {"kind": "status", "status": 404, "name": "not_found", "target": "list"},
    "unavailable": {"kind": "status", "status": 503, "name": "application_error", "target": "list", "count": 2},
    "unauthorized": {"kind": "status", "status": 401, "name": "missing_api_key", "target": "list"},
}


def stack_env() -> dict[str, str]:
    """The settings of the stack `make up` started (its .devstack/env), or of the environment."""
    if "FUNCTIONS_URL" in os.environ:
        return dict(os.environ)
    running = stack.up_stacks()
    if not running:
        raise SystemExit("devstack: no stack is up; run 'make up' first")
    return running[0].env


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devstack.tools.send_faxes", description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1, help="how many e-mails (default 1)")
    parser.add_argument("--fault", choices=sorted(FAULTS), help="what Resend does wrong for these e-mails")
    carried = parser.add_mutually_exclusive_group()
    carried.add_argument("--attachments", type=int, default=2, help="sample PDFs per e-mail (default 2)")
    carried.add_argument("--file", type=Path, action="append", help="a file each e-mail carries (repeatable)")
    carried.add_argument("--sample", choices=("efax", "invoice"), help="a fax as Japanese offices receive it")
    parser.add_argument("--from", dest="sender", help="the sender (default: the sample's)")
    parser.add_argument("--subject", help="the subject (default: the sample's)")
    args = parser.parse_args(argv)
    for path in args.file or []:
        if not path.is_file():
            parser.error(f"--file {path}: no such file")
    env = stack_env()
    for _ in range(args.count):
        email_id = str(uuid.uuid4())
        if args.fault:
            fault = FAULTS[args.fault] | {"email_id": email_id}
            httpx.post(f"{env['RESEND_API_URL']}/_control/faults", json=fault, timeout=10).raise_for_status()
        data = inbound.add_email(env["RESEND_API_URL"], attachments=args.file or args.attachments, email_id=email_id,
                                 sender=args.sender, subject=args.subject, sample=args.sample)  # fmt: skip
        body = inbound.event(data)
        answer = inbound.deliver(env["FUNCTIONS_URL"], body, inbound.signed_headers(env["RESEND_WEBHOOK_SECRET"], body))
        fault_note = f", Resend fault: {args.fault}" if args.fault else ""
        print(f"e-mail {email_id}: webhook answered {answer.status_code}{fault_note}")
        if answer.status_code != 200:
            print(answer.text, file=sys.stderr)
            return 1
    print(f"then: {command_line('list')}   (after make cli, and: source .devstack/env)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

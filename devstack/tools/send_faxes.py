"""Send sample faxes to the stack that `make up` started, as Resend would: each e-mail is added
to the Resend sample provider and its signed email.received webhook is delivered to the webhook
function; the kick and the worker then store its attachments. A fault or two on request:

  not_found     Resend no longer knows the e-mail: the job fails at once (resend_not_found)
  unavailable   Resend answers 503 twice: the job is retried with backoff, then completes
  unauthorized  Resend refuses the key: the job is released every 10 minutes, no attempt spent

.venv/bin/python -m devstack.tools.send_faxes [--count N] [--fault not_found|unavailable|unauthorized]
(make faxes [COUNT=N] [FAULT=...]); then `document-jobs-admin list` shows them.
"""

from __future__ import annotations

import argparse
import os
import sys
import uuid

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
    parser.add_argument("--attachments", type=int, default=2, help="sample PDFs per e-mail (default 2)")
    args = parser.parse_args(argv)
    env = stack_env()
    for _ in range(args.count):
        email_id = str(uuid.uuid4())
        if args.fault:
            fault = FAULTS[args.fault] | {"email_id": email_id}
            httpx.post(f"{env['RESEND_API_URL']}/_control/faults", json=fault, timeout=10).raise_for_status()
        data = inbound.add_email(env["RESEND_API_URL"], attachments=args.attachments, email_id=email_id)
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

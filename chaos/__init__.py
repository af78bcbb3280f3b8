"""make chaos: the queue under crashes, frozen workers, provider faults and dropped database calls.

On a stack of its own, with short leases and backoffs (settings, not code changes):
- delivers signed webhooks for N e-mails with 2-5 attachments each; every webhook kicks the
  worker, and a simulated cron tick calls invoke_document_jobs every 2 s (the real pg_cron
  ticks too, once a minute), so invocations overlap;
- the Resend sample provider enforces Resend's team rate limit (5 requests a second) throughout,
  so the workers' shared limiter, the cap on invocations in flight and the follow-ups are part
  of every run;
- on a seed: SIGKILLs worker instances mid-job; SIGSTOPs one past its leases and SIGCONTs it
  after its jobs were claimed again (the function host runs Fluid compute, devstack/standins/function_host/:
  an instance serves several invocations at once, and a kill or a freeze takes all of them); the
  fault layer in front of the Resend stand-in answers 5xx, 429 with retry-after, slowly, not at
  all (timeouts) and with expired download URLs; the one in front of the local gateway drops the
  connection of complete/fail calls before or after they commit; a few e-mails get a permanent
  404;
- then checks, and prints: every job completed (or failed only where a permanent fault was
  injected); every attachment stored exactly once, in Storage and in the table, with the
  provider's bytes; no write by a stale generation accepted; no two live lease holders ever
  working on one job at once; no attempt spent on throttling (a 429 of the rate limit, or a wait
  for the limiter, ends its attempt as a release); no lease passed that a fault of the run does
  not explain: a kill or a freeze of the instance the attempt ran in (the attempt records its
  invocation, the function host's log names the invocation's instance) or a dropped write of
  that attempt, never another instance's kill;
- then runs the phases of chaos/phases.py on the same stack: a deleted Resend key (the
  jobs wait, the outage alert fires once, a key fix drains them) and lying Content-Lengths
  (nothing wrong stored).

.venv/bin/python -m chaos [--emails 500] [--seed 1] [--write-docs]

faults.py chooses the faults and the victims, layer/ puts the faults in front of the stand-ins
(the run installs it; so does every local stack, for the tests, the demo and `make faxes`),
audit.py records and checks what must hold, run.py drives a run and writes its figures.
"""

"""Serves the output of a real `vercel build` the way Vercel's platform does, local stack only.

Stand-in for Vercel's router and function instances; the handler invocation itself is Vercel's:
each function runs in its bundle (devstack/vercel_build.py lays it out as a deploy does) under
Vercel's own Python runtime shim, `vc__handler__python` from the `vercel-runtime` package that the
build vendors, started in IPC mode as the platform starts it:

- `python -c 'import vc__handler__python'` in the bundle's root, with the `.vc-config.json`
  environment (PYTHONPATH=_vendor), the project's variables and VERCEL_IPC_PATH naming a Unix
  socket. The runtime imports the function, serves it on a loopback port (a ThreadingHTTPServer:
  a thread per request) and announces the port with a `server-started` message; its logs arrive
  as `log` messages tagged with the request they belong to (the runtime keeps the request's ids in
  a context variable) and go to this host's log, and to a log drain if one is given.
- The router applies `.vercel/output/config.json`'s routes (filesystem first, then rewrites and
  statuses, then the error phase) and serves `.vercel/output/static` for everything else, with
  the Content-Type of the file's extension and the headers of the routes vercel.json's "headers"
  made (applied here to static files and to the router's own answers, not to functions').
- Fluid compute, the default for new Vercel projects (docs: functions/fluid-compute, "Optimized
  concurrency"): a request goes to a running instance of its function that serves fewer than
  `concurrency` requests, else to a new instance; so concurrent requests run as threads of one
  process, and an instance stays up after its requests. Vercel publishes no per-instance limit
  for Python; the setting here is this host's (DEVSTACK_FUNCTIONS_CONCURRENCY). `--mode cold`
  starts a process per request instead, as a cold start (the cold-start benchmark).
- The request is passed on byte for byte, with Vercel's x-vercel-internal-* headers added; the
  original URL is kept, as a rewrite keeps it. The answer gets Vercel's `x-vercel-id` header.
- maxDuration from `.vc-config.json` is enforced from each request's arrival. Vercel "will
  terminate" a function that runs longer (docs: functions/configuring-functions/duration); under
  Fluid its requests share one process (functions/fluid-compute, "isolation boundary": "a global
  state/process"), and the pages do not say that only the late request ends. So, the strictest
  reading: the instance is killed, the late request gets 504 FUNCTION_INVOCATION_TIMEOUT, and every
  other request it had not answered yet 500 FUNCTION_INVOCATION_FAILED, as does any request of an
  instance that dies (a crash, a SIGKILL): everything in flight on an instance ends with it.

What it leaves out: regions, the network between router and instance, request/response size
limits, scaling down idle instances, the "miss" route phase (which only maps `*.py` URLs).

python -m devstack.standins.function_host --port-file FILE [--build DIR] [--mode fluid|cold] [--concurrency N]

While an instance works on at least one request, the file invocations/<pid> beside FILE names its
function (for the chaos run to pick its victims); and the log names the instance of every
invocation (a `function_host_invocation` line: its x-vercel-id and the pid), for the chaos run's
audit to place each attempt in the instance it killed or froze.
"""

from devstack.standins.function_host.host import DEFAULT_CONCURRENCY, FunctionHost, vercel_id
from devstack.standins.function_host.instance import FunctionLog, base_interpreter

__all__ = ["DEFAULT_CONCURRENCY", "FunctionHost", "FunctionLog", "base_interpreter", "vercel_id"]

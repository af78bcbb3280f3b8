"""python -m devstack.standins.function_host: the host as the local stack runs it (devstack/stack.py)."""

from __future__ import annotations

import argparse
import os
import signal
from pathlib import Path

from devstack import vercel_build
from devstack.standins.function_host.host import DEFAULT_CONCURRENCY, FunctionHost, Mode
from devstack.vercel_build import Build


def serve(build: Build, port_file: Path, mode: Mode, concurrency: int) -> None:
    host = FunctionHost(build, dict(os.environ), port_file.parent, mode=mode, concurrency=concurrency)

    def stop(*_: object) -> None:
        host.stop_instances()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    shape = f"up to {concurrency} concurrent requests per instance" if mode == "fluid" else "a process per request"
    for route, bundle in host.routes.functions.items():
        host.write_log(f"function_host: serving {route} from {bundle.folder} (maxDuration {bundle.max_duration_s} s, "
                       f"{mode}: {shape})\n")  # fmt: skip
    temporary = port_file.with_suffix(".tmp")
    temporary.write_text(str(host.server_address[1]))
    temporary.replace(port_file)
    host.serve_forever(poll_interval=0.05)


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m devstack.standins.function_host",
        description="Vercel router and function instances (local stack only)",
    )
    parser.add_argument("--port-file", type=Path, required=True)
    parser.add_argument(
        "--build",
        type=Path,
        default=os.environ.get("DEVSTACK_VERCEL_BUILD"),
        help="a build folder (default: $DEVSTACK_VERCEL_BUILD, else build the working tree)",
    )
    parser.add_argument(
        "--mode",
        choices=["fluid", "cold"],
        default=os.environ.get("DEVSTACK_FUNCTIONS_MODE", "fluid"),
        help="fluid: concurrent requests share warm instances; cold: a process per request ($DEVSTACK_FUNCTIONS_MODE)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=int(os.environ.get("DEVSTACK_FUNCTIONS_CONCURRENCY", DEFAULT_CONCURRENCY)),
        help=f"requests one instance serves at once in fluid mode (default {DEFAULT_CONCURRENCY}; "
        "$DEVSTACK_FUNCTIONS_CONCURRENCY)",
    )
    args = parser.parse_args()
    build = Build(args.build) if args.build else vercel_build.build_working_tree()
    serve(build, args.port_file, args.mode, args.concurrency)


if __name__ == "__main__":
    main()

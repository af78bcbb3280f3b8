"""python -m bench.throughput [--quick]: the section on its own (see bench/throughput/__init__.py)."""

from bench.common import run_alone
from bench.throughput import __doc__, run

run_alone(run, __doc__ or "")

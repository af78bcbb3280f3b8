"""The one seam between a stand-in and a harness. When DEVSTACK_FAULT_LAYER names a package, a
stand-in's start imports the module of its own name from it (e.g. chaos.layer.resend) and lets
it wrap the request handler once, before serving: the harness sits in front of the handler and
may answer instead of it, but never reaches inside. Without the variable a stand-in answers as
its product does, nothing else. The local stack names the chaos run's layer (devstack/stack.py)."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

VARIABLE = "DEVSTACK_FAULT_LAYER"


def fault_layer(standin: str) -> ModuleType | None:
    package = os.environ.get(VARIABLE)
    return importlib.import_module(f"{package}.{standin}") if package else None

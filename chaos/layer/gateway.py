"""Dropped connections in front of the API gateway (devstack/standins/gateway.py): chosen RPCs'
connections closed without an answer, before the call runs (nothing happens) or after it
committed (the caller never learns it did), as a network failure would. Set with
POST /_control/faults {"rpcs": [...], "probability": 0.05, "seed": 1}; GET counts the drops."""

from __future__ import annotations

import json
import random
import threading
from collections import Counter
from email.message import Message
from typing import Any

from devstack.standins.gateway import REST_PREFIX, Answer
from devstack.standins.messages import Response


class ConnectionFaults:
    def __init__(self) -> None:
        self.rpcs: frozenset[str] = frozenset()
        self.probability = 0.0
        self.rng = random.Random(0)
        self.dropped: Counter[str] = Counter()
        self.lock = threading.Lock()

    def configure(self, settings: dict[str, Any]) -> None:
        with self.lock:
            self.rpcs = frozenset(settings.get("rpcs", []))
            self.probability = float(settings.get("probability", 0.0))
            self.rng = random.Random(settings.get("seed", 0))

    def draw(self, path: str) -> str | None:
        """ "before", "after" or None for this request."""
        name = path.removeprefix(REST_PREFIX + "/rpc/")
        with self.lock:
            if name == path or name not in self.rpcs or self.rng.random() >= self.probability:
                return None
            when = self.rng.choice(("before", "after"))
            self.dropped[f"{name}:{when}"] += 1
            return when

    def wrap(self, answer: Answer) -> Answer:
        def faulty(method: str, path: str, query: str, headers: Message, body: bytes) -> Response | None:
            if path == "/_control/faults":
                if method == "POST":
                    self.configure(json.loads(body or b"{}"))
                with self.lock:
                    return Response.json(200, dict(self.dropped))
            fault = self.draw(path)
            if fault == "before":
                return None  # no answer at all: the call never ran
            response = answer(method, path, query, headers, body)
            return None if fault == "after" else response  # "after": it ran and committed; the answer is lost

        return faulty


def wrap(answer: Answer) -> Answer:
    """What the gateway's start calls when the stack names this layer."""
    return ConnectionFaults().wrap(answer)

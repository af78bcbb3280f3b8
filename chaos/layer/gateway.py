"""Dropped connections in front of the API gateway (devstack/standins/gateway.py): chosen RPCs'
connections closed without an answer, before the call runs (nothing happens) or after it
committed (the caller never learns it did), as a network failure would. Set with
POST /_control/faults {"rpcs": [...], "probability": 0.05, "seed": 1}; GET counts the drops, and
names the jobs each drop cost an attempt (the chaos run's budget counts them as the job's faults).

A drop costs a job an attempt when the job's outcome is not recorded and its lease has to pass:
a completion dropped before it ran (the work is done, the row still says running), and the job a
"complete and claim the next" claimed when its answer was dropped after the commit (the worker
never learns it holds it). A failure dropped before it ran costs nothing more: that attempt was
the fault's already. Each job is given at most one drop, so that one job meets few enough faults."""

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
        self.charged: dict[str, list[str]] = {}  # job id -> the drops that cost it an attempt
        self.lock = threading.Lock()

    def configure(self, settings: dict[str, Any]) -> None:
        with self.lock:
            self.rpcs = frozenset(settings.get("rpcs", []))
            self.probability = float(settings.get("probability", 0.0))
            self.rng = random.Random(settings.get("seed", 0))

    def draw(self, path: str, body: bytes) -> str | None:
        """ "before", "after" or None for this request."""
        name = path.removeprefix(REST_PREFIX + "/rpc/")
        if name == path or name not in self.rpcs:
            return None
        job_id = json.loads(body or b"{}").get("p_job_id")
        with self.lock:
            if job_id in self.charged or self.rng.random() >= self.probability:
                return None
            when = self.rng.choice(("before", "after"))
            self.dropped[f"{name}:{when}"] += 1
            if job_id is not None:
                self.charged[job_id] = []  # given its one drop, whether or not it costs an attempt
                if when == "before" and name.startswith("complete_"):
                    self.charged[job_id].append(f"{name}:{when}")
            return when

    def charge_claimed(self, name: str, response: Response) -> None:
        """The job a dropped "complete and claim the next" answer held: its lease must pass."""
        try:
            next_job = json.loads(response.body).get("next_job")
        except (ValueError, AttributeError):
            return
        if next_job:
            with self.lock:
                self.charged.setdefault(str(next_job["id"]), []).append(f"{name}:after (claimed next)")

    def report(self) -> dict[str, Any]:
        with self.lock:
            return {"drops": dict(self.dropped), "attempts_by_job": {k: v for k, v in self.charged.items() if v}}

    def wrap(self, answer: Answer) -> Answer:
        def faulty(method: str, path: str, query: str, headers: Message, body: bytes) -> Response | None:
            if path == "/_control/faults":
                if method == "POST":
                    self.configure(json.loads(body or b"{}"))
                return Response.json(200, self.report())
            fault = self.draw(path, body)
            if fault == "before":
                return None  # no answer at all: the call never ran
            response = answer(method, path, query, headers, body)
            if fault == "after" and response is not None:
                self.charge_claimed(path.removeprefix(REST_PREFIX + "/rpc/"), response)
            return None if fault == "after" else response  # "after": it ran and committed; the answer is lost

        return faulty


def wrap(answer: Answer) -> Answer:
    """What the gateway's start calls when the stack names this layer."""
    return ConnectionFaults().wrap(answer)

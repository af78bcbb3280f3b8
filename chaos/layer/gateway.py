"""Dropped connections in front of the API gateway (devstack/standins/gateway.py): chosen RPCs'
connections closed without an answer, before the call runs (nothing happens) or after it
committed (the caller never learns it did), as a network failure would. Set with
POST /_control/faults {"rpcs": [...], "probability": 0.05, "seed": 1}; GET counts the drops, and
names for each job the drops of its writes, each with the generation (the attempt) it hit and
whether it cost that attempt (the chaos run's audit excuses that attempt's expired lease by it).

A drop costs a job an attempt when the job's outcome is not recorded and its lease has to pass:
a completion dropped before it ran (the work is done, the row still says running), and the job a
"complete and claim the next" claimed when its answer was dropped after the commit (the worker
never learns it holds it). A failure dropped before it ran costs nothing more: that attempt was
the fault's already (its lease passes all the same). Each job is given at most one drop, so that
one job meets few enough faults."""

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
        # job id -> its drops: {"write": "<rpc>:<before|after>", "generation": n, "costs_attempt": bool}
        self.by_job: dict[str, list[dict[str, Any]]] = {}
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
        arguments = json.loads(body or b"{}")
        job_id = arguments.get("p_job_id")
        with self.lock:
            if job_id in self.by_job or self.rng.random() >= self.probability:
                return None
            when = self.rng.choice(("before", "after"))
            self.dropped[f"{name}:{when}"] += 1
            if job_id is not None:  # given its one drop, whether or not it costs an attempt
                costs = when == "before" and name.startswith("complete_")
                drop = {"write": f"{name}:{when}", "generation": arguments.get("p_generation"), "costs_attempt": costs}
                self.by_job[job_id] = [drop]
            return when

    def charge_claimed(self, name: str, response: Response) -> None:
        """The job a dropped "complete and claim the next" answer held: its lease must pass."""
        try:
            next_job = json.loads(response.body).get("next_job")
        except (ValueError, AttributeError):
            return
        if next_job:
            write = f"{name}:after (claimed next)"
            drop = {"write": write, "generation": next_job["generation"], "costs_attempt": True}
            with self.lock:
                self.by_job.setdefault(str(next_job["id"]), []).append(drop)

    def report(self) -> dict[str, Any]:
        with self.lock:
            return {"drops": dict(self.dropped), "by_job": {job: list(drops) for job, drops in self.by_job.items()}}

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

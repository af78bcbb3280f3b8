"""The fault layer (chaos/layer/) in front of the stand-ins: the Resend stand-in's faults fire as
asked, checked through the worker's own Resend client over loopback HTTP; the gateway's dropped
connections, on the stack; and a stand-in started without the layer has none of it."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest

from chaos.layer.resend import Fault, ListingEdit, ResendFaults
from devstack.standins.resend import ResendProvider, sample_email
from lib.worker.resend import USER_AGENT, DownloadError, LengthMismatch, ResendClient, ResendError, ResendTimeout

KEY = "re_fault_layer_test"
PROBE = "fault_layer_probe"  # no such function: PostgREST answers 404, and nothing runs either way


@pytest.fixture
def faults() -> ResendFaults:
    return ResendFaults(seed=3)


@pytest.fixture
def provider(faults) -> Iterator[ResendProvider]:
    provider = ResendProvider(KEY)
    with provider.serve(faults.wrap):
        yield provider


@pytest.fixture
def client(provider) -> Iterator[ResendClient]:
    with httpx.Client() as http:
        yield ResendClient(http, provider.url, KEY)


@pytest.mark.parametrize(
    ("fault", "status", "name", "retry_after"),
    [(Fault(kind="status", status=503, name="application_error"), 503, "application_error", None),
     (Fault(kind="status", status=429, name="rate_limit_exceeded", retry_after=30), 429, "rate_limit_exceeded",
      timedelta(seconds=30)),
     (Fault(kind="status", status=401, name="restricted_api_key"), 401, "restricted_api_key", None),
     (Fault(kind="status", status=404, name="not_found"), 404, "not_found", None)],
)  # fmt: skip
def test_injected_error_answers(provider, faults, client, fault, status, name, retry_after) -> None:
    provider.add_email(sample_email("em_1"))
    faults.add(fault.model_copy(update={"email_id": "em_1", "count": 1}))
    with pytest.raises(ResendError) as raised:
        client.list_attachments("em_1")
    assert (raised.value.status, raised.value.name, raised.value.retry_after) == (status, name, retry_after)
    assert len(client.list_attachments("em_1").attachments) == 2, "count=1: the next call is answered normally"


def test_faults_can_target_one_email(provider, faults, client) -> None:
    provider.add_email(sample_email("em_1"))
    provider.add_email(sample_email("em_2"))
    faults.add(Fault(kind="status", status=500, email_id="em_1"))
    assert len(client.list_attachments("em_2").attachments) == 2
    with pytest.raises(ResendError):
        client.list_attachments("em_1")


def test_random_faults_follow_the_seed() -> None:
    def outcomes(seed: int) -> list[bool]:
        provider = ResendProvider(KEY, rate_limit=None)  # 40 requests at once
        provider.add_email(sample_email("em_1"))
        faults = ResendFaults(seed=seed)
        faults.add(Fault(kind="status", status=500, probability=0.5))
        api = faults.wrap(provider.hosts()).api
        headers = {"authorization": f"Bearer {KEY}", "user-agent": "t"}
        return [api("GET", "/emails/receiving/em_1/attachments", headers, b"")[0] == 500 for _ in range(40)]

    assert outcomes(11) == outcomes(11)
    assert 5 < sum(outcomes(11)) < 35


def test_slow_answers_and_timeouts(provider, faults, client) -> None:
    provider.add_email(sample_email("em_1"))
    faults.add(Fault(kind="slow", delay_s=0.3, count=1))
    started = time.monotonic()
    assert len(client.list_attachments("em_1").attachments) == 2
    assert time.monotonic() - started >= 0.3
    faults.add(Fault(kind="timeout", delay_s=0.1, count=1))
    with pytest.raises(ResendError) as raised:  # the connection is dropped without an answer
        client.list_attachments("em_1")
    assert raised.value.status is None or isinstance(raised.value, ResendTimeout)


def test_expired_download_urls_answer_403(provider, faults, client) -> None:
    provider.add_email(sample_email("em_1"))
    [first, _] = client.list_attachments("em_1").attachments
    faults.add(Fault(kind="expired_url", target="download", count=1))
    with pytest.raises(DownloadError) as raised:
        client.download(first.download_url, 1_000_000)
    assert raised.value.status == 403
    assert client.download(first.download_url, 1_000_000).startswith(b"%PDF")


def test_a_lying_content_length_is_served_as_asked(provider, faults, client) -> None:
    email = provider.add_email(sample_email("em_1"))
    [first, _] = client.list_attachments("em_1").attachments
    faults.add(Fault(kind="short_body", target="download", length=20, count=1))
    assert client.download(first.download_url, 1_000_000) == email.attachments[0].content[:20], (
        "shorter: the body ends where the length says, and the client cannot tell")  # fmt: skip
    with pytest.raises(LengthMismatch):
        faults.add(Fault(kind="short_body", target="download", length=20, count=1))
        client.download(first.download_url, 1_000_000, expected_size=first.size)
    faults.add(Fault(kind="long_length", target="download", length=100, count=1))
    with pytest.raises(DownloadError):  # longer: the connection closes before the length is reached
        client.download(first.download_url, 1_000_000)
    assert client.download(first.download_url, 1_000_000) == email.attachments[0].content


def test_a_listing_can_be_edited_item_by_item(provider, faults, client) -> None:
    provider.add_email(sample_email("em_1"))
    faults.add(Fault(kind="edit_listing", target="list", count=1, edits=[
        ListingEdit(index=0, unset=["size"]), ListingEdit(index=1, set={"size": 12.5}),
        ListingEdit(index=0, duplicate=True)]))  # fmt: skip
    listing = client.list_attachments("em_1")
    assert [a.size for a in listing.attachments] == [None, None, None]
    assert listing.attachments[0].id == listing.attachments[2].id
    assert len(listing.unknown_sizes) == 3


def test_a_page_past_limit_is_gathered_and_a_refused_part_is_the_answer_not_a_dropped_connection(faults) -> None:
    # One listing request whose page of 101 items the layer gathers from two of the stand-in's
    # pages; at one request a second the second is over the team's limit, and the client's request
    # is answered with Resend's 429, as a request over the limit is, not a closed connection.
    for limit, answered in ((5, 101), (1, None)):
        provider = ResendProvider(KEY, rate_limit=limit)
        for n in range(101):
            provider.add_email(sample_email(f"em_{n}", attachment_count=0))
        faults.clear()
        faults.add(Fault(kind="edit_listing", target="received", page_size=101))
        with provider.serve(faults.wrap), httpx.Client() as http:
            client = ResendClient(http, provider.url, KEY)
            if answered is not None:
                assert len(client.list_received(None).emails) == answered
                continue
            with pytest.raises(ResendError) as refused:
                client.list_received(None)
        assert (refused.value.status, refused.value.name) == (429, "rate_limit_exceeded")
        assert refused.value.retry_after is not None


def test_the_layer_counts_what_fired_and_is_set_over_http(provider, client) -> None:
    provider.add_email(sample_email("em_1"))
    fault = {"kind": "status", "status": 503, "target": "list", "email_id": "em_1", "count": 1}
    assert httpx.post(f"{provider.url}/_control/faults", json=fault).status_code == 201
    with pytest.raises(ResendError):
        client.list_attachments("em_1")
    assert httpx.get(f"{provider.url}/_control/faults").json() == {"status:503": 1}
    httpx.post(f"{provider.url}/_control/faults", json=fault | {"count": None}).raise_for_status()
    httpx.delete(f"{provider.url}/_control/faults").raise_for_status()
    assert len(client.list_attachments("em_1").attachments) == 2, "cleared"


def test_a_stand_in_started_without_the_layer_has_no_faults_endpoint() -> None:
    provider = ResendProvider(KEY)
    with provider.serve():
        answer = httpx.post(f"{provider.url}/_control/faults", json={"kind": "status"})
    assert answer.status_code == 404


def test_the_gateway_layer_drops_a_chosen_rpcs_connection_before_or_after_the_call(stack_env) -> None:
    gateway = stack_env["SUPABASE_URL"]
    headers = {"apikey": stack_env["SUPABASE_SECRET_KEY"], "User-Agent": USER_AGENT}
    call = f"{gateway}/rest/v1/rpc/{PROBE}"
    assert httpx.post(call, headers=headers, json={}).status_code == 404
    httpx.post(f"{gateway}/_control/faults", json={"rpcs": [PROBE], "probability": 1, "seed": 5}).raise_for_status()
    try:
        for _ in range(6):
            with pytest.raises(httpx.RemoteProtocolError):  # closed without an answer
                httpx.post(call, headers=headers, json={})
        dropped = httpx.get(f"{gateway}/_control/faults").json()["drops"]
    finally:
        httpx.post(f"{gateway}/_control/faults", json={"rpcs": [], "probability": 0}).raise_for_status()
    assert set(dropped) == {f"{PROBE}:before", f"{PROBE}:after"} and sum(dropped.values()) >= 6
    assert httpx.post(call, headers=headers, json={}).status_code == 404, "unset: answered again"


def test_the_gateway_layer_names_the_attempt_each_drop_hit_and_whether_it_cost_it(stack_env) -> None:
    """The chaos run's audit excuses the expired lease of the attempt (the job and its generation) whose
    completion was dropped before it ran, and gives each job one drop at most."""
    gateway = stack_env["SUPABASE_URL"]
    headers = {"apikey": stack_env["SUPABASE_SECRET_KEY"], "User-Agent": USER_AGENT}
    call = f"{gateway}/rest/v1/rpc/complete_document_job_v2"
    jobs = [str(uuid.uuid4()) for _ in range(8)]
    httpx.post(f"{gateway}/_control/faults", json={"rpcs": ["complete_document_job_v2"], "probability": 1,
                                                   "seed": 3}).raise_for_status()  # fmt: skip
    try:
        for generation, job in enumerate(jobs, start=1):
            with pytest.raises(httpx.RemoteProtocolError):
                httpx.post(call, headers=headers, json={"p_job_id": job, "p_generation": generation})
            again = httpx.post(call, headers=headers, json={"p_job_id": job, "p_generation": generation})
            assert again.status_code == 200 and again.json()["held"] is False, "one drop a job"
        report = httpx.get(f"{gateway}/_control/faults").json()
    finally:
        httpx.post(f"{gateway}/_control/faults", json={"rpcs": [], "probability": 0}).raise_for_status()
    before = report["drops"].get("complete_document_job_v2:before", 0)
    assert 0 < before < len(jobs), report  # the seed gives both kinds
    assert set(report["by_job"]) == set(jobs)  # each its one drop, before or after the call
    for generation, job in enumerate(jobs, start=1):
        [drop] = report["by_job"][job]
        assert drop["generation"] == generation and drop["write"].startswith("complete_document_job_v2:")
        assert drop["costs_attempt"] == drop["write"].endswith(":before"), "dropped after it committed: no cost"
    assert sum(drop["costs_attempt"] for drops in report["by_job"].values() for drop in drops) == before

"""Preview counts ask every provider at once under one overall deadline, keep what came back,
and say "more than N" when counting by listing stopped at its cap."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from memadmin.gdpr.services import subject_request_preview
from memadmin.gdpr.transitions import subject_request_create
from memadmin.providers.http import clear_capabilities_cache
from memadmin.providers.services import provider_config_create
from tests.gdpr.conftest import SUBJECT, SYSTEM
from tests.gdpr.unsupported_provider import ProtocolServer

pytestmark = pytest.mark.django_db


@pytest.fixture
def servers() -> Iterator[list[ProtocolServer]]:
    started = [ProtocolServer.start() for _ in range(4)]
    yield started
    for server in started:
        server.stop()


def configs(workspace, servers: list[ProtocolServer], deadline_ms: int = 3000) -> None:
    clear_capabilities_cache()
    for n, server in enumerate(servers):
        provider_config_create(actor=SYSTEM, workspace=workspace, slug=f"remote-{n}",
                               name=f"Remote {n}", kind="http", url=server.url,
                               credential="remote-token", probed=True,
                               request_deadline_ms=deadline_ms)


def test_every_provider_is_asked_at_once(actor, workspace, put, servers) -> None:
    # Each server answers only once all four were asked: asked one after another, none would.
    barrier = threading.Barrier(len(servers))
    for n, server in enumerate(servers):
        server.gated(barrier, items=n + 1)
    configs(workspace, servers, deadline_ms=10_000)
    put("likes tea")
    sr = subject_request_create(actor=actor("carl"), workspace=workspace, kind="erasure",
                                subject_id=SUBJECT, reason="Letter")
    steps = subject_request_preview(actor=actor("carl"), subject_request=sr)
    assert {s.provider_label: s.found for s in steps} == {
        "Built-in": 1, "Remote 0": 1, "Remote 1": 2, "Remote 2": 3, "Remote 3": 4}


def test_a_hanging_provider_costs_one_deadline_and_the_rest_is_saved(
        actor, workspace, put, servers) -> None:
    barrier = threading.Barrier(len(servers) - 1)
    for n, server in enumerate(servers[:-1]):
        server.gated(barrier, items=n + 1)
    servers[-1].gated(None, items=0)  # never answers
    configs(workspace, servers, deadline_ms=2000)
    sr = subject_request_create(actor=actor("carl"), workspace=workspace, kind="erasure",
                                subject_id=SUBJECT, reason="Letter")
    subject_request_preview(actor=actor("carl"), subject_request=sr)
    found = {s.provider_label: (s.found, s.error) for s in sr.steps.order_by("pk")}
    assert found["Remote 0"] == (1, "") and found["Remote 2"] == (3, "")
    hung, why = found["Remote 3"]
    assert hung is None and ("no answer" in why or why.startswith("timeout")), why


def test_counting_by_listing_says_more_than_n_at_its_cap(actor, workspace, servers) -> None:
    servers[0].endless()
    configs(workspace, servers[:1])
    sr = subject_request_create(actor=actor("carl"), workspace=workspace, kind="erasure",
                                subject_id=SUBJECT, reason="Letter")
    subject_request_preview(actor=actor("carl"), subject_request=sr)
    step = sr.steps.get(provider_label="Remote 0")
    assert step.found_more and step.found is not None and step.found > 0
    assert step.error.startswith(f"more than {step.found}")
    assert "neither count nor list" not in step.error

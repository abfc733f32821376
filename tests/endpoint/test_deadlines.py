"""The endpoint's deadline comes from ``deadlineAt`` before anything else runs: authentication
and the partition lookup take from it too, so a write cannot be applied after the caller gave
up (two slow steps, each shorter than the deadline, before the store is even reached)."""

from __future__ import annotations

import time

import pytest

from memadmin.memory.models import MemoryItem
from tests.endpoint.conftest import Api, envelope
from tests.providers.test_parity_deadlines import Locks

pytestmark = pytest.mark.django_db(transaction=True)
BUDGET = 1.0


def test_a_forget_slowed_in_authentication_and_lookup_is_refused_not_applied(api: Api) -> None:
    item = api.retain("Bob prefers email.", tier="peers", key="bob")
    body = envelope("forget", partitions=[api.tokens.partition], id=item["id"],
                    deadline_in=BUDGET)

    with Locks("workspaces_namespace", first="workspaces_admincredential"):
        started = time.monotonic()
        api.wire.refused(body, api.tokens.admin, 504, "timeout")
        seconds = time.monotonic() - started

    assert seconds < 5 * BUDGET
    assert MemoryItem.objects.filter(pk=item["id"]).exists()


def test_an_agent_write_slowed_in_authentication_and_lookup_is_refused_not_applied(
        api: Api) -> None:
    body = envelope("tool", partition=api.tokens.partition, tool="remember",
                    arguments={"fact": "written too late"}, deadline_in=BUDGET)

    with Locks("workspaces_namespace", first="memory_agenttoken"):
        started = time.monotonic()
        api.wire.refused(body, api.tokens.rw, 504, "timeout")
        seconds = time.monotonic() - started

    assert seconds < 5 * BUDGET
    assert not MemoryItem.objects.filter(content="written too late").exists()


def test_a_request_in_time_still_succeeds_after_short_waits(api: Api) -> None:
    with Locks("workspaces_namespace", first="workspaces_admincredential", first_for=0.1,
               second_until=0.2):
        answer = api.retain("In time.", tier="peers", key="carol")

    assert MemoryItem.objects.get(pk=answer["id"]).content == "In time."

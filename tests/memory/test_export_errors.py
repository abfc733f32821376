"""The streamed JSON Lines export (``memory:export``) against a remote provider that fails: the
first page is fetched before anything is audited or sent, so a provider that hangs, errs or
answers garbage gets a clear error page (504, 502, or 400 for a refused filter), never a 500
or a broken 200 download, and no ``memory.export`` event.

The provider is a real loopback server (``tests/providers/fake_provider.py``) behind an
``http`` provider config, as in ``tests/quarantine/test_rescan.py``.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from memadmin.audit.models import AuditEvent
from memadmin.providers import contract as c
from memadmin.providers import wire
from memadmin.providers.services import provider_config_create
from memadmin.workspaces.services import namespace_create, resource_create
from tests.conftest import SYSTEM
from tests.providers.fake_provider import FakeProvider

pytestmark = pytest.mark.django_db

DEADLINE_MS = 500
PARTITION = "vendor:team"
URL = reverse("memory:export", args=["acme", "vendor-kb", "team"])


@pytest.fixture
def store() -> Iterator[FakeProvider]:
    server = FakeProvider.start()
    yield server
    server.stop()


@pytest.fixture
def remote(workspace, users, store):
    """acme/vendor-kb/team on an ``http`` provider that talks to the fake store."""
    config = provider_config_create(actor=SYSTEM, workspace=workspace, slug="vendor",
                                    name="Vendor store", kind="http", url=store.url,
                                    credential="s3cret-credential", probed=True,
                                    request_deadline_ms=DEADLINE_MS)
    res = resource_create(actor=SYSTEM, workspace=workspace, provider=config, slug="vendor-kb")
    return namespace_create(actor=SYSTEM, resource=res, slug="team", partition_key=PARTITION)


def item(content: str, quarantine: str = "clear") -> dict[str, Any]:
    now = timezone.now()
    return wire.item_to_wire(c.Item(
        id=str(uuid.uuid4()), partition=PARTITION, tier="facts", key="", source="facts.md",
        content=content, bytes=len(content.encode()), revision=1, data_subject_id=None,
        quarantine=quarantine, frozen=False, created_at=now, updated_at=now))


def exports() -> int:
    return AuditEvent.objects.filter(action="memory.export").count()


def export_requests(store: FakeProvider) -> list[dict[str, Any]]:
    return [r.json() for r in store.requests if r.json().get("operation") == "export"]


def assert_error_page(response: Any, status: int, says: str) -> None:
    assert response.status_code == status
    assert not response.streaming
    assert response["Content-Type"].startswith("text/html")
    assert "Content-Disposition" not in response
    assert response["Cache-Control"] == "no-store"
    page = response.content.decode()
    assert "The export did not start (nothing was downloaded)." in page
    assert says in page
    # The page offers the way on: stream again, or export as a background job.
    assert URL in page and "Start the export" in page


def test_a_provider_that_hangs_is_a_504_page_within_the_deadline(client_for, remote,
                                                                 store) -> None:
    store.hang()

    started = time.monotonic()
    response = client_for("alice").get(URL)
    elapsed = time.monotonic() - started

    assert_error_page(response, 504, "did not answer in time")
    assert elapsed < 5 * DEADLINE_MS / 1000
    assert store.request_count >= 1  # it was asked, and never answered
    assert exports() == 0


@pytest.mark.parametrize(("fail", "status", "says"), [
    (lambda s: s.status(503), 502, "fake failure"),
    (lambda s: s.status(500), 502, "fake failure"),
    (lambda s: s.garbage(), 502, "invalid response"),
    (lambda s: s.refuse(), 502, ""),
    (lambda s: s.status(400), 400, "fake failure"),
], ids=["503", "500", "not-json", "refused", "400-invalid-request"])
def test_a_provider_error_at_the_start_is_a_clear_error_page(client_for, remote, store,
                                                             fail, status: int,
                                                             says: str) -> None:
    fail(store)

    response = client_for("alice").get(URL, {"q": "<script>alert(1)</script>"})

    assert_error_page(response, status, says)
    assert exports() == 0
    page = response.content.decode()
    assert "<script>alert(1)" not in page  # the filter travels on, escaped
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_a_healthy_remote_streams_every_page_and_is_audited_once(client_for, remote,
                                                                 store) -> None:
    pages = {None: ([item("first"), item("flagged", "pending")], "page-2"),
             "page-2": ([item("second")], None)}

    def answer(body: Any) -> tuple[int, Any]:
        if body and body.get("operation") == "export":
            items, cursor = pages[body.get("cursor")]
            return 200, {"items": items, "nextCursor": cursor}
        if body and body.get("operation") == "capabilities":
            return 200, wire.capabilities_to_wire({"export"}, idempotent_writes=False)
        return 501, {"error": {"code": "unsupported", "message": "no", "details": {}}}

    store.scripted(answer)

    response = client_for("alice").get(URL)

    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="acme-vendor-kb-team.jsonl"'
    assert exports() == 1  # audited once the first page had arrived
    lines = b"".join(response.streaming_content).decode().splitlines()
    assert [json.loads(line)["content"]
            for line in lines] == ["first", "second"]  # the pending item stays out
    assert [r.get("cursor") for r in export_requests(store)] == [None, "page-2"]
    assert exports() == 1


def test_an_empty_export_is_still_an_audited_200(client_for, remote, store) -> None:
    store.scripted(lambda body: (200, {"items": [], "nextCursor": None}))

    response = client_for("alice").get(URL)

    assert response.status_code == 200
    assert b"".join(response.streaming_content) == b""
    assert exports() == 1


def test_an_error_after_the_first_page_ends_the_file_with_an_error_line_and_breaks_it(
        client_for, remote, store) -> None:
    # Once the download has started its status cannot change: the stream must fail (the
    # server drops the connection, the client sees an incomplete transfer), never end as if
    # the file were complete.
    def answer(body: Any) -> tuple[int, Any]:
        if body and body.get("cursor") is None:
            return 200, {"items": [item("first")], "nextCursor": "page-2"}
        return 503, {"error": {"code": "unavailable", "message": "gone", "details": {}}}

    store.scripted(answer)
    response = client_for("alice").get(URL)
    assert response.status_code == 200
    assert exports() == 1  # the export did start

    received = []
    with pytest.raises(c.Unavailable):
        for chunk in response.streaming_content:
            received.append(chunk)
    lines = b"".join(received).decode().splitlines()
    assert len(lines) == 2 and "first" in lines[0]
    # The last line says the file is incomplete, for a client that missed the broken transfer.
    assert json.loads(lines[-1]) == {"error": {"code": "unavailable", "message": "gone"},
                                     "complete": False}

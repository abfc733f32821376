"""Signed checkpoints of the audit chains: written by the scheduler to storage and the log,
POSTed to a configured URL, only for chains that grew and verify."""

from __future__ import annotations

import http.server
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from memadmin.audit import anchors
from memadmin.audit.anchors import anchor_all
from memadmin.audit.models import AuditEvent
from memadmin.audit.services import Actor, audit_event_create
from memadmin.jobs import scheduler
from tests.audit.conftest import tamper
from tests.lib.recorder import QuietHandler, serve_in_thread

pytestmark = pytest.mark.django_db
BOT = Actor.system("bot")


class Collector(QuietHandler):
    received: list[bytes] = []
    status = 204

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers["Content-Length"])
        type(self).received.append(self.rfile.read(length))
        self.send_response(type(self).status)
        if type(self).status == 302:
            self.send_header("Location", "/elsewhere")
        self.end_headers()


@pytest.fixture
def collector() -> Iterator[tuple[str, type[Collector]]]:
    handler = type("Handler", (Collector,), {"received": [], "status": 204})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    serve_in_thread(server)
    yield f"http://127.0.0.1:{server.server_address[1]}/anchors", handler
    server.shutdown()
    server.server_close()


def test_the_scheduler_anchors_the_chains(settings) -> None:
    settings.MEMADMIN_AUDIT_ANCHOR_SECONDS = 600
    duty = next(d for d in scheduler.default_duties() if d.name == "anchor audit chains")
    assert duty.every == 600 and duty.run is anchor_all


def test_a_checkpoint_goes_to_storage_the_log_and_the_url(workspace, anchor_storage: Path,
                                                          settings, collector,
                                                          caplog) -> None:
    url, handler = collector
    settings.MEMADMIN_AUDIT_ANCHOR_URL = url
    audit_event_create(workspace=workspace, actor=BOT, action="x")

    with caplog.at_level("INFO", logger="memadmin.audit.anchors"):
        assert anchor_all() == 1

    chain = str(workspace.pk)
    stored = json.loads((anchor_storage / "audit-anchors" / chain / "latest.json").read_text())
    assert stored["count"] == 2 and stored["workspace"] == chain
    assert stored["head_hash"] == AuditEvent.objects.get(chain=chain, seq=2).hash
    assert len(list((anchor_storage / "audit-anchors" / chain).glob("*.json"))) == 2
    assert anchors.Checkpoint.parse(stored).signature_holds()
    logged = [r.getMessage() for r in caplog.records if "audit checkpoint" in r.getMessage()]
    assert json.loads(logged[0].removeprefix("audit checkpoint ")) == stored
    assert [json.loads(body) for body in handler.received] == [stored]


def test_an_unchanged_chain_is_not_anchored_again(workspace, anchor_storage: Path) -> None:
    assert anchors.anchor_chain(str(workspace.pk)) is not None
    assert anchors.anchor_chain(str(workspace.pk)) is None
    audit_event_create(workspace=workspace, actor=BOT, action="x")
    later = anchors.anchor_chain(str(workspace.pk))
    assert later is not None and later.count == 2


def test_a_chain_that_does_not_verify_is_not_anchored(workspace, anchor_storage: Path,
                                                      caplog) -> None:
    anchors.anchor_chain(str(workspace.pk))
    event = audit_event_create(workspace=workspace, actor=BOT, action="x")
    tamper(("UPDATE audit_auditevent SET actor_label = 'mallory' WHERE id = %s", [event.pk]))

    with caplog.at_level("ERROR", logger="memadmin.audit.anchors"):
        assert anchors.anchor_chain(str(workspace.pk)) is None
    assert "does not verify" in caplog.text
    checkpoint = anchors.latest_checkpoint(str(workspace.pk))
    assert checkpoint is not None and checkpoint.count == 1


@pytest.mark.parametrize("status", [500, 302])
def test_a_failed_post_or_a_redirect_is_logged_and_the_checkpoint_still_kept(
        workspace, anchor_storage: Path, settings, collector, caplog, status: int) -> None:
    url, handler = collector
    handler.status = status
    settings.MEMADMIN_AUDIT_ANCHOR_URL = url

    with caplog.at_level("WARNING", logger="memadmin.audit.anchors"):
        assert anchors.anchor_chain(str(workspace.pk)) is not None

    assert len(handler.received) == 1  # not followed to /elsewhere
    assert "POST of chain" in caplog.text
    assert anchors.latest_checkpoint(str(workspace.pk)) is not None

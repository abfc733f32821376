"""Each way someone with database access could rewrite the audit trail is caught, both by the
page's "Verify chain" (a job) and by ``manage.py verify_audit_chain``."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from memadmin.audit import anchors
from memadmin.audit.models import AuditChainHead, AuditEvent
from memadmin.audit.services import Actor, audit_event_create, verify_chain
from memadmin.jobs import runner
from memadmin.jobs.models import Job
from memadmin.lib.keys import canonical_json
from tests.audit.conftest import as_owner, tamper

pytestmark = pytest.mark.django_db

LIST = "/w/acme/audit/"
BOT = Actor.system("bot")


def command_output(capsys, *args: str) -> str:
    """Run verify_audit_chain, which must fail; its output."""
    capsys.readouterr()
    with pytest.raises(CommandError):
        call_command("verify_audit_chain", *args)
    return capsys.readouterr().out


def page_verdict(client) -> str:
    """Press "Verify chain", let a worker run the job, read the result page."""
    response = client.post(LIST + "verify/")
    assert response.status_code == 302
    job = Job.objects.filter(kind="audit_verify_chain").latest("created_at")
    assert runner.run_job(str(job.pk)) == "succeeded"
    html = client.get(response["Location"]).content.decode()
    return html.split('id="verify-result"')[1].split(">", 1)[1].split("</p>")[0]


def acme_line(output: str) -> str:
    return next(line for line in output.splitlines() if line.startswith("acme:"))


def rehash_from(event: AuditEvent, key: bytes) -> list[tuple[str, list[object]]]:
    """SQL that recomputes the hashes from ``event`` on under the attacker's own key and
    re-links the rest of the chain and its head, as an attacker who knows the algorithm
    (but not the audit key) would."""
    statements: list[tuple[str, list[object]]] = []
    prev = event.prev_hash
    for later in AuditEvent.objects.filter(chain=event.chain, seq__gte=event.seq).order_by("seq"):
        later.prev_hash = prev
        body = {"chain": later.chain, "seq": later.seq, "workspace": str(later.workspace_id),
                "actor": later.actor_id, "actor_label": later.actor_label,
                "action": later.action, "target_type": later.target_type,
                "target_id": later.target_id,
                "data": {"n": 99} if later.pk == event.pk else later.data,
                "created_at": later.created_at.isoformat(), "prev_hash": prev,
                "key_id": later.key_id}
        digest = hmac.new(key, canonical_json(body), hashlib.sha256).hexdigest()
        statements.append(("UPDATE audit_auditevent SET data = %s, prev_hash = %s, hash = %s "
                           "WHERE id = %s", [json.dumps(body["data"]), prev, digest, later.pk]))
        prev = digest
    statements.append(("UPDATE audit_auditchainhead SET hash = %s WHERE chain = %s",
                       [prev, event.chain]))
    return statements


def edit(events: list[AuditEvent], other: AuditEvent) -> None:
    tamper(("UPDATE audit_auditevent SET data = '{\"n\": 99}' WHERE id = %s", [events[3].pk]))


def rehash(events: list[AuditEvent], other: AuditEvent) -> None:
    tamper(*rehash_from(events[3], b"an attacker's guess at the key"), replica=True)


def reorder(events: list[AuditEvent], other: AuditEvent) -> None:
    a, b = events[3], events[4]
    tamper(("UPDATE audit_auditevent SET seq = -1 WHERE id = %s", [a.pk]),
           ("UPDATE audit_auditevent SET seq = %s WHERE id = %s", [a.seq, b.pk]),
           ("UPDATE audit_auditevent SET seq = %s WHERE id = %s", [b.seq, a.pk]))


def delete_one_as_replica(events: list[AuditEvent], other: AuditEvent) -> None:
    tamper(("DELETE FROM audit_auditevent WHERE id = %s", [events[3].pk]), replica=True)


def delete_tail_and_move_head_back(events: list[AuditEvent], other: AuditEvent) -> None:
    """The review's finding: the last five deleted, the head moved back; the chain itself is
    consistent afterwards, so only the checkpoint outside the database can tell."""
    keep = events[-6]
    tamper(("DELETE FROM audit_auditevent WHERE chain = %s AND seq > %s",
            [keep.chain, keep.seq]),
           ("UPDATE audit_auditchainhead SET seq = %s, hash = %s WHERE chain = %s",
            [keep.seq, keep.hash, keep.chain]), replica=True)


def foreign_row_from_another_chain(events: list[AuditEvent], other: AuditEvent) -> None:
    """A genuine event of another workspace, copied with this workspace's id: it shows in
    this workspace's list but sits on the other chain."""
    tamper(("INSERT INTO audit_auditevent (chain, seq, workspace_id, actor_id, actor_label, "
            "action, target_type, target_id, data, created_at, prev_hash, hash, key_id) "
            "SELECT chain, seq + 1000, %s, actor_id, actor_label, 'memory.delete', target_type, "
            "target_id, data, created_at, prev_hash, hash, key_id FROM audit_auditevent "
            "WHERE id = %s", [events[0].workspace_id, other.pk]))


def foreign_row_on_no_chain(events: list[AuditEvent], other: AuditEvent) -> None:
    tamper(("INSERT INTO audit_auditevent (chain, seq, workspace_id, actor_label, action, "
            "target_type, target_id, data, created_at, prev_hash, hash, key_id) "
            "VALUES ('', 1, %s, 'mallory', 'memory.delete', '', '', '{}', now(), %s, %s, '')",
            [events[0].workspace_id, "0" * 64, "0" * 64]))


def truncate_past_the_row_trigger(events: list[AuditEvent], other: AuditEvent) -> None:
    # TRUNCATE does not fire the row trigger that refuses DELETE.
    with as_owner(), connection.cursor() as cursor:
        cursor.execute("TRUNCATE audit_auditevent")


def truncate_events_and_heads(events: list[AuditEvent], other: AuditEvent) -> None:
    with as_owner(), connection.cursor() as cursor:
        cursor.execute("TRUNCATE audit_auditevent, audit_auditchainhead")


def delete_everything_without_the_trigger(events: list[AuditEvent],
                                          other: AuditEvent) -> None:
    tamper("DELETE FROM audit_auditevent", "DELETE FROM audit_auditchainhead", replica=True)


# (tampering, what the command says, what the page says): the page's job writes its own start
# event first, so after a truncation it may see a new event 1 where the command sees none.
TAMPERING: list[tuple[Callable[[list[AuditEvent], AuditEvent], None], str, str]] = [
    (edit, "contents were changed", "contents were changed"),
    (rehash, "contents were changed", "contents were changed"),
    (reorder, "does not link", "does not link"),
    (delete_one_as_replica, "is missing", "is missing"),
    (delete_tail_and_move_head_back, "were removed", "were removed"),
    (foreign_row_from_another_chain, "on another chain", "on another chain"),
    (foreign_row_on_no_chain, "on no chain", "on no chain"),
    (truncate_past_the_row_trigger, "were removed", "is missing"),
    (truncate_events_and_heads, "were removed", "were removed"),
    (delete_everything_without_the_trigger, "were removed", "were removed"),
]


@pytest.fixture
def anchored_chain(workspace, other_workspace, anchor_storage, client_for):
    client_for("carl")  # the users exist, and their role grants are on the chain
    events = [audit_event_create(workspace=workspace, actor=BOT, action="bulk.event",
                                 data={"n": n}) for n in range(10)]
    other = audit_event_create(workspace=other_workspace, actor=BOT, action="globex.event")
    assert anchors.anchor_all() >= 2
    events = list(AuditEvent.objects.filter(chain=str(workspace.pk)).order_by("seq"))
    return events, other


class TestBeforeTampering:
    def test_the_command_and_the_page_say_ok(self, anchored_chain, client_for,
                                             capsys) -> None:
        call_command("verify_audit_chain", "--workspace", "acme")  # its own chain only
        line = acme_line(capsys.readouterr().out)
        assert line.startswith(f"acme: ok, {len(anchored_chain[0])} events, checkpoint of ")
        assert page_verdict(client_for("carl")).startswith("OK: all ")
        job = Job.objects.filter(kind="audit_verify_chain").latest("created_at")
        page = client_for("carl").get(f"{LIST}verify/{job.pk}/").content.decode()
        # The checkpoint vouches for the events up to the anchoring, not the job's own start.
        assert f"The last checkpoint ({len(anchored_chain[0])} events) holds." in page

    def test_without_a_checkpoint_the_page_says_what_it_cannot_tell(self, workspace,
                                                                    anchor_storage,
                                                                    client_for) -> None:
        assert page_verdict(client_for("carl")).startswith("OK: all ")
        job = Job.objects.filter(kind="audit_verify_chain").latest("created_at")
        page = client_for("carl").get(f"{LIST}verify/{job.pk}/").content.decode()
        assert "No checkpoint of this chain yet" in page


@pytest.mark.parametrize(("how", "command_says", "page_says"), TAMPERING,
                         ids=[t[0].__name__ for t in TAMPERING])
def test_it_is_caught_by_the_command_and_the_page(how, command_says: str, page_says: str,
                                                  anchored_chain, client_for, capsys) -> None:
    events, other = anchored_chain
    how(events, other)

    line = acme_line(command_output(capsys))
    assert "BROKEN" in line and command_says in line, line

    verdict = page_verdict(client_for("carl"))
    assert "BROKEN at event #" in verdict and page_says in verdict, verdict


class TestCheckpointFile:
    def test_it_compares_with_a_checkpoint_file_taken_from_the_log(
            self, anchored_chain, workspace, caplog, capsys, tmp_path: Path) -> None:
        audit_event_create(workspace=workspace, actor=BOT, action="bulk.event")
        with caplog.at_level("INFO", logger="memadmin.audit.anchors"):
            assert anchors.anchor_chain(str(workspace.pk)) is not None
        logged = [r.getMessage().removeprefix("audit checkpoint ") for r in caplog.records
                  if r.getMessage().startswith("audit checkpoint ")]
        kept = tmp_path / "kept.jsonl"
        kept.write_text("\n".join(logged) + "\n")
        # The storage copy is lost along with the tail: only the kept file can tell.
        (Path(anchors.default_storage.path("audit-anchors")) / str(workspace.pk)
         / "latest.json").unlink()
        delete_tail_and_move_head_back(list(
            AuditEvent.objects.filter(chain=str(workspace.pk)).order_by("seq")), events_other(
            anchored_chain))

        call_command("verify_audit_chain", "--workspace", "acme")  # storage alone: no anchor
        assert "acme: ok" in capsys.readouterr().out
        line = acme_line(command_output(capsys, "--workspace", "acme", "--checkpoint",
                                        str(kept)))
        assert "were removed" in line

    def test_a_forged_checkpoint_is_refused(self, anchored_chain, workspace, capsys,
                                            tmp_path: Path) -> None:
        real = anchors.latest_checkpoint(str(workspace.pk))
        assert real is not None
        forged = {**real.as_json(), "count": real.count - 5}
        path = tmp_path / "forged.json"
        path.write_text(json.dumps(forged))

        with pytest.raises(CommandError, match="not signed by a configured audit key"):
            call_command("verify_audit_chain", "--checkpoint", str(path))

    def test_a_tampered_stored_checkpoint_breaks_verification(self, anchored_chain,
                                                              workspace, client_for,
                                                              capsys) -> None:
        name = anchors.default_storage.path(f"audit-anchors/{workspace.pk}/latest.json")
        stored = json.loads(Path(name).read_text())
        Path(name).write_text(json.dumps({**stored, "count": 1}))

        assert "not signed" in acme_line(command_output(capsys))
        assert "not signed" in page_verdict(client_for("carl"))

    def test_an_unreadable_file_is_a_clear_error(self, db, tmp_path: Path) -> None:
        with pytest.raises(CommandError, match="cannot read"):
            call_command("verify_audit_chain", "--checkpoint", str(tmp_path / "absent.json"))
        (tmp_path / "junk").write_text("not json\n")
        with pytest.raises(CommandError, match="neither JSON"):
            call_command("verify_audit_chain", "--checkpoint", str(tmp_path / "junk"))


def events_other(anchored: tuple[list[AuditEvent], AuditEvent]) -> AuditEvent:
    return anchored[1]


class TestCoverage:
    def test_the_command_walks_a_workspace_whose_chain_has_no_head(
            self, workspace, capsys) -> None:
        tamper(("DELETE FROM audit_auditchainhead WHERE chain = %s", [str(workspace.pk)]),
               replica=True)
        tamper(("UPDATE audit_auditevent SET actor_label = 'mallory' WHERE chain = %s",
                [str(workspace.pk)]))
        assert not AuditChainHead.objects.filter(chain=str(workspace.pk)).exists()

        assert "contents were changed" in acme_line(command_output(capsys))

    def test_a_chain_known_only_to_storage_is_still_checked(self, db, anchor_storage,
                                                            capsys) -> None:
        import uuid

        from django.core.files.base import ContentFile

        from memadmin.audit.services import active_audit_key_id

        # A workspace whose events, head and row are all gone: only its checkpoint remains.
        chain = str(uuid.uuid4())
        checkpoint = anchors.Checkpoint(chain=chain, workspace=chain, count=7,
                                        head_hash="ab" * 32, at="2026-11-30T10:00:00+00:00",
                                        key_id=active_audit_key_id()).signed()
        anchors.default_storage.save(f"audit-anchors/{chain}/latest.json",
                                     ContentFile(json.dumps(checkpoint.as_json())))

        output = command_output(capsys)
        line = next(line for line in output.splitlines() if line.startswith(f"chain {chain}"))
        assert "BROKEN at event 1" in line and "vouches for 7 events" in line

    def test_verify_chain_reports_the_foreign_event_id(self, workspace, other_workspace) -> None:
        other = audit_event_create(workspace=other_workspace, actor=BOT, action="x")
        mine = audit_event_create(workspace=workspace, actor=BOT, action="y")
        foreign_row_from_another_chain([mine], other)
        planted = AuditEvent.objects.get(workspace=workspace, chain=str(other_workspace.pk))

        report = verify_chain(str(workspace.pk))
        assert report.event_id == planted.pk
        assert "foreign" in report.problem

    def test_the_list_shows_what_the_verifier_walks(self, workspace, other_workspace,
                                                    client_for) -> None:
        other = audit_event_create(workspace=other_workspace, actor=BOT, action="x")
        foreign_row_from_another_chain([audit_event_create(
            workspace=workspace, actor=BOT, action="y")], other)
        html = client_for("carl").get(LIST).content.decode()
        # The planted row shows (it carries the workspace) and so the verifier fails on it.
        assert "memory.delete" in html or "deleted" in html
        assert not verify_chain(str(workspace.pk)).ok

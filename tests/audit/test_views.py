"""The audit trail pages: filters, keyset pages, streamed exports (CSV and JSON Lines), chain
verification as a job, and who may see them."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json

import pytest
import time_machine
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from memadmin.audit.models import AuditEvent
from memadmin.audit.services import Actor, audit_event_create, verify_chain
from memadmin.jobs import runner
from memadmin.jobs.models import Job
from tests.audit.conftest import as_owner

pytestmark = pytest.mark.django_db

LIST = "/w/acme/audit/"
T0 = dt.datetime(2026, 3, 2, 9, 0, tzinfo=dt.UTC)


@pytest.fixture
def record(workspace):
    def record(action: str = "x.test", *, actor: str = "bot", target_type: str = "item",
               target_id: str = "", data: dict | None = None) -> AuditEvent:
        return audit_event_create(workspace=workspace, actor=Actor.system(actor), action=action,
                                  target_type=target_type, target_id=target_id,
                                  data=data or {})
    return record


def rows(response) -> list[str]:
    """The action column of the table, top to bottom."""
    html = response.content.decode()
    return [cell.split("</code>")[0] for cell in html.split("<td><code>")[1:]]


def events_in(response) -> list[int]:
    html = response.content.decode()
    return [int(part.split("</td>")[0]) for part in html.split('<td class="num">')[1:]]


class TestAccess:
    @pytest.mark.parametrize(("who", "status"), [
        ("carl", 200), ("ada", 200), ("root", 200), ("vic", 403), ("olga", 403), ("alice", 403),
        ("nora", 403), ("mallory", 404),
    ])
    def test_only_compliance_admins_and_superusers_see_it(self, client_for, who: str,
                                                          status: int) -> None:
        assert client_for(who).get(LIST).status_code == status
        assert client_for(who).get(LIST + "export.csv").status_code == status
        assert client_for(who).post(LIST + "verify/").status_code == (
            302 if status == 200 else status)

    def test_anonymous_visitors_are_sent_to_log_in(self, client_for) -> None:
        response = client_for(None).get(LIST)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))

    def test_the_tab_shows_only_to_those_who_may_use_it(self, client_for) -> None:
        assert 'href="/w/acme/audit/"' in client_for("carl").get("/w/acme/").content.decode()
        assert 'href="/w/acme/audit/"' not in client_for("vic").get("/w/acme/").content.decode()

    def test_another_workspace_trail_is_not_shown(self, client_for, other_workspace,
                                                  record) -> None:
        audit_event_create(workspace=other_workspace, actor=Actor.system("x"),
                           action="globex.secret")
        record("acme.thing")
        response = client_for("carl").get(LIST)
        assert "acme.thing" in rows(response)
        assert "globex.secret" not in response.content.decode()
        assert client_for("carl").get("/w/globex/audit/").status_code == 404


class TestTable:
    def test_newest_first_with_data_escaped(self, client_for, record) -> None:
        record("first.thing")
        record("second.thing", data={"label": "<script>alert(1)</script>"})

        response = client_for("carl").get(LIST)

        assert rows(response)[:2] == ["second.thing", "first.thing"]
        html = response.content.decode()
        assert "<script>alert(1)" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html

    def test_filters_by_actor_action_target_and_time(self, client_for, record) -> None:
        with time_machine.travel(T0, tick=False) as clock:
            record("memory.update", actor="ada", target_type="item", target_id="item-123")
            clock.move_to(T0 + dt.timedelta(hours=1))
            record("memory.delete", actor="ada", target_type="item", target_id="item-456")
            clock.move_to(T0 + dt.timedelta(hours=2))
            record("memory.update", actor="olga", target_type="namespace", target_id="ns-9")
        carl = client_for("carl")

        def actions(**params: str) -> list[str]:
            response = carl.get(LIST, params)
            assert response.status_code == 200, response.content
            return [a for a in rows(response) if a.startswith("memory.")]

        assert actions(actor="ada") == ["memory.delete", "memory.update"]
        assert actions(action="memory.update") == ["memory.update", "memory.update"]
        assert actions(action="memory.update", actor="olga") == ["memory.update"]
        assert actions(target_type="namespace") == ["memory.update"]
        assert actions(target_id="45") == ["memory.delete"]
        assert actions(since="2026-03-02T09:30", until="2026-03-02T10:30") == ["memory.delete"]
        assert actions(since="2026-03-02T10:30") == ["memory.update"]
        assert actions(until="2026-03-02T09:30") == ["memory.update"]

    def test_the_action_choices_are_the_recorded_actions(self, client_for, record) -> None:
        record("zeta.action")
        record("alpha.action")
        html = client_for("carl").get(LIST).content.decode()
        assert '<option value="alpha.action">' in html
        assert '<option value="zeta.action">' in html
        # An action that was never recorded is not a valid choice.
        assert client_for("carl").get(LIST, {"action": "made.up"}).status_code == 400

    def test_keyset_pages_cover_every_event_once(self, client_for, record) -> None:
        for n in range(120):
            record("bulk.event", target_id=str(n))
        total = AuditEvent.objects.filter(workspace__slug="acme").count()
        carl = client_for("carl")

        seen: list[int] = []
        response = carl.get(LIST)
        pages = 0
        while True:
            pages += 1
            seen += events_in(response)
            html = response.content.decode()
            if "cursor=" not in html:
                break
            cursor = html.split("cursor=")[1].split('"')[0]
            response = carl.get(LIST, {"cursor": cursor})
            assert response.status_code == 200

        assert pages == -(-total // 50)
        assert len(seen) == total == len(set(seen))
        assert seen == sorted(seen, reverse=True)

    def test_htmx_gets_only_the_rows(self, client_for, record) -> None:
        for _ in range(60):
            record("bulk.event")
        first = client_for("carl").get(LIST).content.decode()
        cursor = first.split("cursor=")[1].split('"')[0]

        response = client_for("carl").get(LIST, {"cursor": cursor}, HTTP_HX_REQUEST="true")

        html = response.content.decode()
        assert "<tr>" in html
        assert "<html" not in html and "audit-filters" not in html

    def test_a_page_costs_the_same_queries_whatever_its_length(self, client_for,
                                                              record) -> None:
        carl = client_for("carl")
        carl.get(LIST)  # warm up (first-request work is not what is measured)
        with CaptureQueriesContext(connection) as few:
            carl.get(LIST)
        for n in range(80):
            record("bulk.event", actor=f"actor-{n}")
        with CaptureQueriesContext(connection) as many:
            response = carl.get(LIST)

        assert len(events_in(response)) == 50
        assert len(many) == len(few)


class TestHostileFilters:
    @pytest.mark.parametrize("params", [
        {"actor": "nul\x00byte"},
        {"target_id": "\x00"},
        {"target_type": "x" * 10_000},
        {"target_id": "y" * 10_000},
        {"actor": "🙂" * 5000},
        {"action": "\x00"},
        {"since": "not a date"},
        {"since": "2026-02-30T10:00"},
        {"until": "99999-01-01T00:00"},
        {"since": "2026-03-02T10:00", "until": "2026-03-02T09:00"},
        {"cursor": "garbage"},
        {"cursor": "1.2.3"},
        {"cursor": "9" * 30 + ".1"},
        {"cursor": "-99999999999999999.5"},
    ])
    def test_bad_values_are_a_form_error_never_a_500(self, client_for, params) -> None:
        carl = client_for("carl")
        response = carl.get(LIST, params)

        assert response.status_code == 400
        assert 'id="filter-errors"' in response.content.decode()
        assert carl.get(LIST + "export.csv", params).status_code == 400

    @pytest.mark.parametrize("value", ["'; DROP TABLE audit_auditevent; --", '"double"', "<b>",
                                       "100%", "a_b", "\\"])
    def test_odd_but_valid_values_just_match_nothing(self, client_for, value: str) -> None:
        response = client_for("carl").get(LIST, {"actor": value, "target_id": value})
        assert response.status_code == 200
        assert "No events match." in response.content.decode()


class TestExport:
    def test_csv_has_every_filtered_event_and_defuses_formulas(self, client_for,
                                                               record) -> None:
        record("memory.update", target_id="=HYPERLINK(\"http://evil\")")
        record("memory.update", target_id="+1+2", actor="@admin")
        record("memory.update", target_id="-3", data={"n": 1})
        record("other.action", target_id="plain")

        response = client_for("carl").get(LIST + "export.csv", {"action": "memory.update"})

        assert response.status_code == 200
        assert response.streaming
        assert response["Content-Type"].startswith("text/csv")
        assert response["Cache-Control"] == "no-store"
        assert 'filename="acme-audit.csv"' in response["Content-Disposition"]
        table = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
        assert [r["target_id"] for r in table] == ["'-3", "'+1+2", "'=HYPERLINK(\"http://evil\")"]
        assert table[1]["actor"] == "'@admin"
        assert json.loads(table[0]["data"]) == {"n": 1}
        assert {r["action"] for r in table} == {"memory.update"}
        for r in table:
            assert not r["target_id"].startswith(("=", "+", "-", "@"))

    def test_json_lines_round_trip_and_the_export_is_audited(self, client_for,
                                                             record) -> None:
        for n in range(5):
            record("bulk.event", data={"n": n})

        response = client_for("carl").get(LIST + "export.jsonl", {"action": "bulk.event"})

        lines = b"".join(response.streaming_content).decode().splitlines()
        events = [json.loads(line) for line in lines]
        assert [e["data"]["n"] for e in events] == [4, 3, 2, 1, 0]
        assert set(events[0]) >= {"id", "seq", "created_at", "actor", "action", "hash"}
        audited = AuditEvent.objects.filter(action="audit.export").get()
        assert audited.actor_label == "carl"
        assert audited.data == {"format": "jsonl", "filters": {"action": "bulk.event"}}

    def test_a_large_export_reads_in_keyset_batches(self, record, workspace) -> None:
        from memadmin.audit import selectors

        for n in range(25):
            record("bulk.event", target_id=str(n))

        with CaptureQueriesContext(connection) as queries:
            out = list(selectors.audit_export_rows(
                workspace=workspace, filters=selectors.AuditFilters(action="bulk.event"),
                batch=10))

        assert [int(e.target_id) for e in out] == list(range(24, -1, -1))
        assert len([q for q in queries.captured_queries if "audit_auditevent" in q["sql"]]) == 3

    def test_an_unknown_format_is_not_found(self, client_for) -> None:
        assert client_for("carl").get(LIST + "export.xlsx").status_code == 404


class TestVerify:
    def start(self, client, slug: str = "acme") -> Job:
        response = client.post(f"/w/{slug}/audit/verify/")
        assert response.status_code == 302
        job = Job.objects.get(kind="audit_verify_chain")
        assert response["Location"] == f"/w/{slug}/audit/verify/{job.pk}/"
        return job

    def test_verify_needs_post(self, client_for) -> None:
        assert client_for("carl").get(LIST + "verify/").status_code == 405

    def test_an_intact_chain_is_reported_ok_with_its_count(self, client_for, record,
                                                           workspace) -> None:
        for n in range(7):
            record("bulk.event", data={"n": n})
        carl = client_for("carl")
        job = self.start(carl)
        expected = verify_chain(str(workspace.pk)).checked
        pending = carl.get(f"{LIST}verify/{job.pk}/").content.decode()
        assert "events checked" in pending and "hx-get" in pending

        assert runner.run_job(str(job.pk)) == "succeeded"

        page = carl.get(f"{LIST}verify/{job.pk}/").content.decode()
        assert f"OK: all {expected} events link up." in page
        assert "hx-get" not in page  # finished: it stops polling
        assert AuditEvent.objects.filter(action="audit.verify", data__ok=True).exists()

    def test_a_tampered_event_is_named_with_its_number_id_and_problem(self, client_for,
                                                                      record) -> None:
        events = [record("bulk.event", data={"n": n}) for n in range(6)]
        tampered = events[3]
        with as_owner(), connection.cursor() as cursor:
            cursor.execute("ALTER TABLE audit_auditevent DISABLE TRIGGER USER")
            cursor.execute("UPDATE audit_auditevent SET data = '{\"n\": 99}' WHERE id = %s",
                           [tampered.pk])
            cursor.execute("ALTER TABLE audit_auditevent ENABLE TRIGGER USER")
        carl = client_for("carl")
        job = self.start(carl)
        job.params = {**job.params, "batch_size": 2}  # several batches before the break
        job.save(update_fields=["params"])

        runner.run_job(str(job.pk))

        job.refresh_from_db()
        assert job.result["broken_seq"] == tampered.seq
        assert job.result["event_id"] == tampered.pk
        page = carl.get(f"{LIST}verify/{job.pk}/").content.decode()
        assert f"BROKEN at event #{tampered.seq} (event id {tampered.pk})" in page
        assert "contents were changed" in page

    @staticmethod
    def delete_event(pk: int) -> None:
        with as_owner(), connection.cursor() as cursor:
            cursor.execute("ALTER TABLE audit_auditevent DISABLE TRIGGER USER")
            cursor.execute("DELETE FROM audit_auditevent WHERE id = %s", [pk])
            cursor.execute("ALTER TABLE audit_auditevent ENABLE TRIGGER USER")

    def test_a_removed_event_is_found(self, client_for, record, workspace) -> None:
        events = [record("bulk.event") for _ in range(5)]
        self.delete_event(events[1].pk)
        carl = client_for("carl")
        job = self.start(carl)

        runner.run_job(str(job.pk))

        job.refresh_from_db()
        assert job.result["broken_seq"] == events[1].seq
        assert "missing" in job.result["problem"]
        assert "missing" in carl.get(f"{LIST}verify/{job.pk}/").content.decode()

    def test_a_removed_tail_is_found(self, client_for, record, workspace) -> None:
        for _ in range(3):
            record("bulk.event")
        job = self.start(client_for("carl"))
        # The newest event is the job's own start record: remove it, as a tail.
        newest = AuditEvent.objects.filter(workspace=workspace).latest("seq")
        self.delete_event(newest.pk)

        runner.run_job(str(job.pk))

        job.refresh_from_db()
        assert job.result["broken_seq"] == newest.seq
        assert "removed" in job.result["problem"]
        assert job.result["checked"] == newest.seq - 1

    def test_another_workspace_job_is_not_shown_here(self, client_for, other_workspace,
                                                     users) -> None:
        from memadmin.workspaces.services import role_grant

        role_grant(actor=Actor.system("t"), workspace=other_workspace, user=users["carl"],
                   role="compliance")
        job = self.start(client_for("carl"), slug="globex")
        assert client_for("carl").get(f"{LIST}verify/{job.pk}/").status_code == 404


def sentences(response) -> list[str]:
    """The Event column as text, top to bottom."""
    import re

    html = response.content.decode()
    cells = [cell.split("</td>")[0] for cell in html.split('<td class="event-sentence">')[1:]]
    return [" ".join(re.sub(r"<[^>]+>", "", cell).split()) for cell in cells]


class TestSentences:
    def test_each_event_reads_as_a_sentence_with_actor_and_target_linked(
            self, client_for, users, workspace) -> None:
        request_id = "23e46d2e-5a1b-4c3d-9e8f-0123456789ab"
        audit_event_create(workspace=workspace, actor=Actor.of(users["carl"]),
                           action="subject_request.approve", target_type="subject_request",
                           target_id=request_id,
                           data={"kind": "erasure", "subject_hash": "ab" * 32})

        response = client_for("ada").get(LIST)

        assert sentences(response)[0] == "carl approved erasure request 23e46d2e"
        html = response.content.decode()
        assert f'<a class="target" href="/w/acme/requests/{request_id}/">23e46d2e</a>' in html
        assert '<a class="actor" href="/w/acme/audit/?actor=carl">carl</a>' in html

    def test_namespaces_resources_and_items_link_to_their_pages(self, client_for, namespace,
                                                                workspace) -> None:
        audit_event_create(workspace=workspace, actor=Actor.system("nora"), action="memory.edit",
                           target_type="item", target_id="item-7",
                           data={"namespace": str(namespace.pk), "mode": "replace"})

        response = client_for("carl").get(LIST)

        said = sentences(response)
        assert said[0] == "nora edited item item-7"
        assert "test created namespace alice" in said
        assert "test created resource knowledge" in said
        html = response.content.decode()
        assert 'href="/w/acme/r/knowledge/n/alice/items/item-7/">item-7</a>' in html
        assert 'href="/w/acme/r/knowledge/n/alice/">alice</a>' in html
        assert 'href="/w/acme/r/knowledge/">knowledge</a>' in html

    def test_an_id_its_page_cannot_take_is_shown_without_a_link(self, client_for, namespace,
                                                                 workspace) -> None:
        audit_event_create(workspace=workspace, actor=Actor.system("bot"), action="memory.edit",
                           target_type="item", target_id="remote/item?x=1",
                           data={"namespace": str(namespace.pk)})
        audit_event_create(workspace=workspace, actor=Actor.system("bot"),
                           action="subject_request.approve", target_type="subject_request",
                           target_id="not-a-uuid", data={"kind": "erasure"})

        response = client_for("carl").get(LIST)

        assert response.status_code == 200
        assert sentences(response)[:2] == ["bot approved erasure request not-a-uuid",
                                           "bot edited item remote/item?x=1"]
        assert '<span class="target">remote/item?x=1</span>' in response.content.decode()

    def test_an_action_without_its_own_sentence_still_reads(self, client_for, record) -> None:
        record("x.unknown", actor="bot", target_type="thing", target_id="42")
        assert sentences(client_for("carl").get(LIST))[0] == "bot did x.unknown on thing 42"
        record("api.list", actor="agent-sync", target_type="scope", target_id="alice,bob")
        assert sentences(client_for("carl").get(LIST))[0] == (
            "agent-sync called list on the admin API for alice,bob")

    def test_the_data_is_behind_a_disclosure_and_escaped(self, client_for, record) -> None:
        record("x.test", data={"label": "<img src=x onerror=alert(1)>", "n": 3})
        html = client_for("carl").get(LIST).content.decode()
        row = html.split('<td class="event-sentence">')[1].split("</tr>")[0]
        assert "<details><summary>Data</summary><pre class=\"content\">" in row
        assert "&lt;img src=x onerror=alert(1)&gt;" in row and "<img" not in row
        # An actor label is escaped in the sentence and in its link.
        record("x.test", actor='<b>"evil"</b>')
        html = client_for("carl").get(LIST).content.decode()
        assert "<b>" not in html.split('id="audit-rows"')[1]

    def test_the_actor_link_filters_the_trail_by_that_actor(self, client_for, record) -> None:
        record("a.one", actor="ada")
        record("b.two", actor="olga")
        html = client_for("carl").get(LIST).content.decode()
        link = html.split('<a class="actor" href="')[1].split('"')[0]
        assert link == "/w/acme/audit/?actor=olga"
        assert rows(client_for("carl").get(link)) == ["b.two"]

"""Subject-request pages: the queue, a new request, the detail with its actions, downloads."""

from __future__ import annotations

import json
import zipfile
from io import BytesIO

import pytest
from django.urls import reverse

from memadmin.audit.models import AuditEvent
from memadmin.gdpr.models import SubjectRequest
from memadmin.gdpr.receipts import receipt_verify
from memadmin.gdpr.transitions import subject_request_create
from memadmin.memory.models import MemoryItem
from tests.gdpr.helpers import username

from .conftest import SUBJECT, run_job

pytestmark = pytest.mark.django_db
LIST = reverse("gdpr:list", args=["acme"])
NEW = reverse("gdpr:new", args=["acme"])


def detail(req: SubjectRequest) -> str:
    return reverse("gdpr:detail", args=["acme", req.pk])


def act(req: SubjectRequest, action: str) -> str:
    return reverse(f"gdpr:{action}", args=["acme", req.pk])


@pytest.fixture
def erasure(actor, workspace, put) -> SubjectRequest:
    put("Customer asked about <script>alert(1)</script> invoices.")
    return subject_request_create(actor=actor("carl"), workspace=workspace, kind="erasure",
                                  subject_id=SUBJECT, reason="Art. 17 request by e-mail")


class TestCreate:
    def test_compliance_creates_a_request_and_lands_on_it(self, client_for, local_config) -> None:
        response = client_for("carl").post(NEW, {"kind": "erasure", "subject_id": SUBJECT,
                                                 "reason": "ticket 4411"})
        req = SubjectRequest.objects.get()
        assert response.url == detail(req)
        assert (req.state, req.subject_id, username(req.requested_by)) == ("new", SUBJECT, "carl")
        assert AuditEvent.objects.filter(action="subject_request.create").exists()
        assert SUBJECT not in str(AuditEvent.objects.values_list("data", flat=True))

    @pytest.mark.parametrize("data", [
        {"kind": "erasure", "subject_id": SUBJECT, "reason": ""},
        {"kind": "erasure", "subject_id": "", "reason": "x"},
        {"kind": "obliterate", "subject_id": SUBJECT, "reason": "x"},
        {"kind": "erasure", "subject_id": "a\x00b", "reason": "x"},
        {"kind": "erasure", "subject_id": "x" * 257, "reason": "x"},
        {"kind": "erasure", "subject_id": SUBJECT, "reason": "r" * 10_000},
        {"kind": "erasure", "subject_id": "   ", "reason": "x"},
        {"kind": "erasure", "subject_id": "line\x1bbreak", "reason": "x"},
        {},
    ])
    def test_bad_input_gets_a_clear_error_and_creates_nothing(self, client_for, local_config,
                                                              data) -> None:
        response = client_for("carl").post(NEW, data)
        assert response.status_code == 400
        assert not SubjectRequest.objects.exists()
        assert 'role="alert"' in response.content.decode() or "errorlist" in \
            response.content.decode()

    @pytest.mark.parametrize("user,status", [("carl", 200), ("ada", 200), ("vic", 403),
                                             ("alice", 403), ("olga", 403), ("mallory", 404)])
    def test_only_compliance_and_admins(self, client_for, local_config, user, status) -> None:
        assert client_for(user).get(NEW).status_code == status
        assert client_for(user).get(LIST).status_code == status


class TestListAndDetail:
    def test_the_search_form_posts_so_no_subject_id_reaches_a_url(self, client_for,
                                                                   erasure) -> None:
        page = client_for("carl").get(LIST).content.decode()
        form = page.split('class="filters card"', 1)[0].rsplit("<form", 1)[1]
        assert 'method="post"' in form

    def test_the_list_flags_duplicates_and_shows_days_left(self, client_for, erasure, actor,
                                                           workspace) -> None:
        subject_request_create(actor=actor("carl"), workspace=workspace, kind="access",
                               subject_id=SUBJECT, reason="Art. 15")
        page = client_for("carl").get(LIST).content.decode()
        assert page.count(">duplicate</span>") == 2
        assert "days left" in page
        assert SUBJECT not in page  # the list shows the keyed hash only

    def test_filters_and_hostile_values(self, client_for, erasure) -> None:
        carl = client_for("carl")
        # The search travels by POST (it may be a clear subject id); GET ignores it.
        assert len(carl.post(LIST, {"q": SUBJECT}).context["rows"]) == 1
        assert len(carl.post(LIST, {"q": "nobody@example.com"}).context["rows"]) == 0
        assert len(carl.get(LIST, {"q": "nobody@example.com"}).context["rows"]) == 1
        assert len(carl.get(LIST, {"kind": "access"}).context["rows"]) == 0
        for bad in ({"state": "exploded"}, {"overdue": "maybe"}):
            assert carl.get(LIST, bad).status_code == 400
        assert carl.post(LIST, {"q": "x" * 10_000}).status_code == 400
        for odd in ({"q": "'; DROP TABLE x; --"}, {"q": "<script>"}, {"q": "a\x00b"}):
            response = carl.post(LIST, odd)
            assert response.status_code in (200, 400)
            assert "<script>" not in response.content.decode().split("<main", 1)[1]

    def test_the_approver_finds_the_work_in_the_navigation_and_a_filter(
            self, client_for, erasure, actor, carol, workspace) -> None:
        from memadmin.gdpr.transitions import subject_request_submit

        subject_request_create(actor=actor("carl"), workspace=workspace, kind="access",
                               subject_id="someone", reason="Art. 15 by post")
        subject_request_submit(actor=actor("carl"), subject_request=erasure)
        carol_page = client_for("carol").get(LIST)
        assert 'id="approvals-waiting"' in carol_page.content.decode()
        assert ">1 to approve<" in carol_page.content.decode()
        assert 'href="?approval=mine" id="waiting-link">1 waiting' in carol_page.content.decode()
        assert 'id="approvals-waiting"' not in client_for("carl").get(LIST).content.decode()
        rows = client_for("carol").get(LIST, {"approval": "mine"}).context["rows"]
        assert [r.pk for r in rows] == [erasure.pk]
        assert client_for("carl").get(LIST, {"approval": "mine"}).context["rows"] == []
        page = carol_page.content.decode()
        assert "Art. 17 request by e-mail" in page and "Art. 15 by post" in page
        assert "Erasure (Art. 17)" in page and "Access (Art. 15/20)" in page

    def test_the_detail_shows_steps_and_escapes(self, client_for, erasure) -> None:
        page = client_for("carl").get(detail(erasure)).content.decode()
        assert 'id="step-' in page and "Built-in" in page
        assert SUBJECT in page  # open: the clear id is still needed to act on it
        assert "<script>alert" not in page

    def test_the_query_count_is_flat(self, client_for, erasure, django_assert_max_num_queries,
                                     actor, workspace) -> None:
        carl = client_for("carl")
        carl.get(LIST)
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as few:
            carl.get(LIST)
        for n in range(8):
            subject_request_create(actor=actor("carl"), workspace=workspace, kind="access",
                                   subject_id=f"s-{n}", reason="r")
        with CaptureQueriesContext(connection) as many:
            carl.get(LIST)
        assert len(many) == len(few)

    def test_another_workspaces_request_is_not_found(self, client_for, erasure,
                                                     other_workspace) -> None:
        url = reverse("gdpr:detail", args=["globex", erasure.pk])
        assert client_for("carl").get(url).status_code == 404
        assert client_for("root").get(url).status_code == 404


class TestActions:
    def test_four_eyes_erasure_end_to_end_with_receipt(self, client_for, erasure, carol,
                                                       actor) -> None:
        carl, second = client_for("carl"), client_for("carol")
        carl.post(act(erasure, "preview"))
        erasure.refresh_from_db()
        assert run_job(erasure.preview_job) == "succeeded"
        assert erasure.steps.get().found == 1
        carl.post(act(erasure, "submit"))
        erasure.refresh_from_db()
        assert erasure.state == "awaiting_approval"
        # The requester cannot approve their own erasure.
        page = carl.post(act(erasure, "approve"), follow=True).content.decode()
        assert "Not done" in page
        erasure.refresh_from_db()
        assert erasure.state == "awaiting_approval"
        second.post(act(erasure, "approve"))
        erasure.refresh_from_db()
        assert erasure.state == "approved"
        assert run_job(erasure.job) == "succeeded"
        erasure.refresh_from_db()
        assert (erasure.state, erasure.subject_id) == ("completed", None)
        assert not MemoryItem.objects.filter(data_subject_id=SUBJECT).exists()
        page = carl.get(detail(erasure)).content.decode()
        assert SUBJECT not in page and "no residue found" in page
        response = carl.get(reverse("gdpr:receipt", args=["acme", erasure.pk]))
        assert response["Content-Disposition"].startswith("attachment")
        document = json.loads(response.content)
        assert receipt_verify(document) == erasure.receipt_key_id
        assert SUBJECT not in response.content.decode()
        assert AuditEvent.objects.filter(action="subject_request.receipt_download").count() == 1

    def test_deny_needs_a_reason_and_another_user(self, client_for, erasure, carol) -> None:
        client_for("carl").post(act(erasure, "submit"))
        second = client_for("carol")
        second.post(act(erasure, "deny"), {"reason": ""})
        erasure.refresh_from_db()
        assert erasure.state == "awaiting_approval"
        second.post(act(erasure, "deny"), {"reason": "identity not verified"})
        erasure.refresh_from_db()
        assert (erasure.state, erasure.decision_reason, erasure.subject_id) == (
            "denied", "identity not verified", None)

    def test_an_access_request_gives_an_audited_zip(self, client_for, actor, workspace,
                                                    put) -> None:
        put("Prefers <b>email</b> contact.")
        req = subject_request_create(actor=actor("carl"), workspace=workspace, kind="access",
                                     subject_id=SUBJECT, reason="Art. 15")
        carl = client_for("carl")
        carl.post(act(req, "submit"))
        req.refresh_from_db()
        assert run_job(req.job) == "succeeded"
        response = carl.get(reverse("gdpr:access_download", args=["acme", req.pk]))
        archive = zipfile.ZipFile(BytesIO(b"".join(response.streaming_content)))
        assert "manifest.json" in archive.namelist()
        assert AuditEvent.objects.filter(action="subject_request.access_download").count() == 1
        assert client_for("vic").get(
            reverse("gdpr:access_download", args=["acme", req.pk])).status_code == 403

    def test_unknown_actions_and_bad_reasons(self, client_for, erasure) -> None:
        carl = client_for("carl")
        assert carl.post(detail(erasure) + "explode/").status_code == 404
        carl.post(act(erasure, "override"), {"reason": "n\x00ul"})
        erasure.refresh_from_db()
        assert not erasure.override_hold
        assert client_for("vic").post(act(erasure, "submit")).status_code == 403
        assert carl.get(act(erasure, "submit")).status_code == 405

    def test_no_receipt_yet_is_not_found(self, client_for, erasure) -> None:
        assert client_for("carl").get(
            reverse("gdpr:receipt", args=["acme", erasure.pk])).status_code == 404
        assert client_for("carl").get(
            reverse("gdpr:access_download", args=["acme", erasure.pk])).status_code == 404

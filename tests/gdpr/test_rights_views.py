"""The pages of rectification, restriction and the preview job: the editor lists the
subject's items and takes corrections (bad input is a clear 400 that saves nothing), a
restriction's page names what it froze and what could not be, "Lift restriction" starts the
later decision, and "Preview counts" runs as a job whose progress the live partial shows."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memadmin.gdpr.models import SubjectRequest, SubjectRequestItem
from memadmin.gdpr.transitions import (
    subject_request_approve,
    subject_request_create,
    subject_request_submit,
)
from memadmin.jobs.models import Job
from memadmin.memory.models import MemoryItem
from tests.gdpr.helpers import refresh

from .conftest import OTHER_SUBJECT, SUBJECT, run_job

pytestmark = pytest.mark.django_db
CANARY = "Zqcanary lives in Lyon 8812"


def url(req: SubjectRequest, name: str = "detail") -> str:
    return reverse(f"gdpr:{name}", args=["acme", req.pk])



@pytest.fixture
def rect(actor, workspace, put):
    item_id = put(CANARY)
    put("Zqstranger text", subject=OTHER_SUBJECT)
    sr = subject_request_create(actor=actor("carl"), workspace=workspace,
                                kind="rectification", subject_id=SUBJECT, reason="Art. 16")
    return sr, item_id


def _form(sr: SubjectRequest, item_id: str, content: str) -> dict[str, str]:
    item = MemoryItem.objects.select_related("namespace").get(pk=item_id)
    return {"step_id": str(sr.steps.get().pk), "partition": item.namespace.partition_key,
            "item_id": item_id, "content": content}


class TestEditor:
    def test_it_shows_the_subjects_items_to_compliance_only(self, client_for, rect) -> None:
        sr, _ = rect
        page = client_for("carl").get(url(sr, "items"))
        assert page.status_code == 200
        body = page.content.decode()
        assert CANARY in body and "Zqstranger" not in body
        for who, status in (("vic", 403), ("alice", 403), ("mallory", 404), ("ada", 200)):
            response = client_for(who).get(url(sr, "items"))
            assert response.status_code == status, who
            assert (CANARY in response.content.decode()) is (status == 200), who

    def test_a_correction_is_proposed_and_listed_by_hash_on_the_request(
            self, client_for, rect) -> None:
        sr, item_id = rect
        carl = client_for("carl")
        response = carl.post(url(sr, "items"), _form(sr, item_id, "Lives in Lille"))
        assert response.status_code == 302
        row = SubjectRequestItem.objects.get(request=sr)
        assert (row.state, row.content, row.from_revision) == ("proposed", "Lives in Lille", 1)
        page = carl.get(url(sr)).content.decode()
        assert row.new_hash[:10] in page and "correction proposed" in page
        assert "Lives in Lille" not in page and CANARY not in page

    @pytest.mark.parametrize("change", [
        {"content": "bad\x00text"}, {"content": ""}, {"content": "x" * 20_000},
        {"step_id": "abc"}, {"step_id": "999999"}, {"item_id": "not-an-item"},
        {"partition": "ocmem_v1_nope"}, {"content": CANARY},
    ])
    def test_bad_input_is_a_clear_400_that_saves_nothing(self, client_for, rect,
                                                          change) -> None:
        sr, item_id = rect
        response = client_for("carl").post(url(sr, "items"),
                                           {**_form(sr, item_id, "Lives in Lille"), **change})
        assert response.status_code == 400
        assert 'id="correction-error"' in response.content.decode()
        assert not SubjectRequestItem.objects.exists()

    def test_an_item_of_another_subject_is_refused(self, client_for, rect) -> None:
        sr, _ = rect
        stranger = MemoryItem.objects.get(data_subject_id=OTHER_SUBJECT)
        response = client_for("carl").post(url(sr, "items"),
                                           _form(sr, str(stranger.pk), "rewritten"))
        assert response.status_code == 400
        assert "does not belong" in response.content.decode()

    def test_other_kinds_have_no_editor_and_it_rejects_other_workspaces(
            self, client_for, actor, workspace, rect) -> None:
        sr, _ = rect
        access = subject_request_create(actor=actor("carl"), workspace=workspace,
                                        kind="access", subject_id=SUBJECT, reason="Art. 15")
        assert client_for("carl").get(url(access, "items")).status_code == 404
        other = reverse("gdpr:items", args=["globex", sr.pk])
        assert client_for("root").get(other).status_code == 404


class TestRestrictionPage:
    def test_it_names_the_frozen_items_and_the_providers_that_cannot_freeze(
            self, client_for, actor, workspace, put, carol, legacy_config) -> None:
        item_id = put(CANARY)
        sr = subject_request_create(actor=actor("carl"), workspace=workspace,
                                    kind="restriction", subject_id=SUBJECT, reason="Art. 18")
        subject_request_submit(actor=actor("carl"), subject_request=sr)
        subject_request_approve(actor=actor("carol"), subject_request=sr)
        run_job(refresh(sr).job)
        page = client_for("carl").get(url(sr)).content.decode()
        assert 'id="cannot-freeze"' in page and "Legacy store" in page
        assert f'data-item="{item_id}"' in page
        assert CANARY not in page  # ids, revisions and hashes only

    def test_lift_restriction_starts_a_lift_waiting_for_another_approver(
            self, client_for, actor, workspace, put, carol) -> None:
        put(CANARY)
        sr = subject_request_create(actor=actor("carl"), workspace=workspace,
                                    kind="restriction", subject_id=SUBJECT, reason="Art. 18")
        subject_request_submit(actor=actor("carl"), subject_request=sr)
        subject_request_approve(actor=actor("carol"), subject_request=sr)
        run_job(refresh(sr).job)
        carl = client_for("carl")
        assert 'id="lift-form"' in carl.get(url(sr)).content.decode()
        assert carl.get(url(sr, "lift")).status_code == 405
        response = carl.post(url(sr, "lift"), {"reason": "accuracy verified"})
        lift = SubjectRequest.objects.get(kind="lift")
        assert response.url == url(lift)
        assert (lift.state, lift.lifts_id) == ("awaiting_approval", sr.pk)
        assert 'id="lift-form"' not in carl.get(url(sr)).content.decode()
        # Without a reason: a message, nothing made.
        again = carl.post(url(sr, "lift"), {"reason": ""}, follow=True).content.decode()
        assert "Not done" in again
        assert SubjectRequest.objects.filter(kind="lift").count() == 1


class TestPreviewJob:
    def test_preview_runs_as_a_job_and_the_page_shows_its_progress(
            self, client_for, actor, workspace, put) -> None:
        put("likes tea")
        sr = subject_request_create(actor=actor("carl"), workspace=workspace, kind="erasure",
                                    subject_id=SUBJECT, reason="Art. 17")
        carl = client_for("carl")
        assert carl.post(url(sr, "preview")).status_code == 302
        sr = refresh(sr)
        job = sr.preview_job
        assert job is not None and job.kind == "subject_request_preview"
        assert job.params == {"request": str(sr.pk)}
        fragment = carl.get(url(sr), headers={"HX-Request": "true"}).content.decode()
        assert "data-poll" in fragment and "asking…" in fragment
        assert "0 of 1 providers answered" in fragment
        # A second click while it runs starts no second job.
        carl.post(url(sr, "preview"))
        assert Job.objects.filter(kind="subject_request_preview").count() == 1
        assert run_job(job) == "succeeded"
        fragment = carl.get(url(sr), headers={"HX-Request": "true"}).content.decode()
        assert "data-poll" not in fragment and "asking…" not in fragment
        assert "Preview finished" in fragment
        step = sr.steps.get()
        assert (step.found, step.previewed_at is not None) == (1, True)
        assert Job.objects.get(pk=job.pk).progress_done == 1

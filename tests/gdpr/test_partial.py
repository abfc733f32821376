"""No dead ends: a partial access request delivers what was gathered, naming what is missing;
a step can be resolved by hand with a written justification (audited, on the receipt); a
partial request can be closed as completed with exceptions, or cancelled; retry leaves
disabled providers alone."""

from __future__ import annotations

import json
import zipfile

import pytest
from django.urls import reverse

from memadmin.audit.models import AuditEvent
from memadmin.gdpr.access_output import access_file_open
from memadmin.gdpr.models import SubjectRequest
from memadmin.gdpr.transitions import (
    SubjectRequestError,
    subject_request_cancel,
    subject_request_close_with_exceptions,
    subject_request_create,
    subject_request_retry,
    subject_request_step_resolve,
    subject_request_submit,
)
from memadmin.providers.services import provider_config_update
from tests.gdpr.conftest import SUBJECT, SYSTEM, run_job
from tests.gdpr.helpers import receipt_of, refresh

pytestmark = pytest.mark.django_db



@pytest.fixture
def partial_access(actor, workspace, put, legacy_config):
    """An access request whose second provider was disabled before it ran: ``partial``."""
    put("likes tea")
    sr = subject_request_create(actor=actor("carl"), workspace=workspace, kind="access",
                                subject_id=SUBJECT, reason="Art. 15 letter")
    provider_config_update(actor=SYSTEM, config=legacy_config, enabled=False)
    subject_request_submit(actor=actor("carl"), subject_request=sr)
    assert run_job(refresh(sr).job) == "succeeded"
    sr = refresh(sr)
    assert sr.state == "partial"
    assert sr.steps.get(provider_label="Legacy store").state == "failed"
    return sr


def bundle(sr: SubjectRequest, user) -> tuple[dict, str]:
    handle, _ = access_file_open(sr, user)
    with handle, zipfile.ZipFile(handle) as archive:
        return (json.loads(archive.read("manifest.json")),
                archive.read("summary.html").decode())


def test_a_partial_access_request_delivers_what_was_gathered_naming_what_is_missing(
        partial_access, users) -> None:
    manifest, summary = bundle(partial_access, users["carl"])
    assert manifest["complete"] is False and manifest["total_items"] == 1
    assert [m["system"] for m in manifest["not_included"]] == ["Legacy store"]
    assert "likes tea" in summary and "Not included yet" in summary


def test_retry_leaves_disabled_providers_alone(partial_access, actor) -> None:
    with pytest.raises(SubjectRequestError, match="resolve them by hand"):
        subject_request_retry(actor=actor("carl"), subject_request=partial_access)
    assert refresh(partial_access).state == "partial"


def test_a_step_is_resolved_by_hand_then_the_request_closed_with_exceptions(
        partial_access, actor, users) -> None:
    sr = partial_access
    step = sr.steps.get(provider_label="Legacy store")
    with pytest.raises(SubjectRequestError, match="justification"):
        subject_request_step_resolve(actor=actor("carl"), subject_request=sr, step_id=step.pk,
                                     justification="  ")
    with pytest.raises(SubjectRequestError, match="not done"):
        subject_request_step_resolve(actor=actor("carl"), subject_request=sr,
                                     step_id=sr.steps.get(provider_label="Built-in").pk,
                                     justification="x")
    subject_request_step_resolve(
        actor=actor("carl"), subject_request=sr, step_id=step.pk,
        justification=f"Legacy store retired in May; its export for {SUBJECT} sent by post")
    step.refresh_from_db()
    assert (step.state, step.resolved_by.username) == ("resolved", "carl")
    assert SUBJECT not in step.resolution  # the keyed-hash label stands in for the id
    event = AuditEvent.objects.get(action="subject_request.step_resolved")
    assert event.data["was"] == "failed" and SUBJECT not in json.dumps(event.data)
    receipt_step = receipt_of(refresh(sr))["steps"][1]
    assert receipt_step["resolution"]["by"] == "carl"
    assert "sent by post" in receipt_step["resolution"]["justification"]

    with pytest.raises(SubjectRequestError, match="reason"):
        subject_request_close_with_exceptions(actor=actor("carl"), subject_request=sr,
                                              reason="")
    subject_request_close_with_exceptions(actor=actor("carl"), subject_request=refresh(sr),
                                          reason="Everything else was sent")
    sr = refresh(sr)
    assert (sr.state, sr.subject_id) == ("completed_with_exceptions", None)
    assert receipt_of(sr)["state"] == "completed_with_exceptions"
    assert receipt_of(sr)["decision_reason"] == "Everything else was sent"
    manifest, summary = bundle(sr, users["carl"])
    assert manifest["not_included"] == [{"system": "Legacy store",
                                         "why": "handled by hand by our staff"}]
    assert "likes tea" in summary
    with pytest.raises(SubjectRequestError):
        subject_request_retry(actor=actor("carl"), subject_request=sr)


def test_a_partial_request_can_be_cancelled(partial_access, actor, storage) -> None:
    with pytest.raises(SubjectRequestError):
        subject_request_cancel(actor=actor("alice"), subject_request=partial_access)
    assert [p for p in storage.rglob("*") if p.is_file()]  # the bundle and its parts
    subject_request_cancel(actor=actor("carl"), subject_request=partial_access)
    sr = refresh(partial_access)
    assert (sr.state, sr.subject_id, receipt_of(sr)["state"]) == ("cancelled", None, "cancelled")
    # What it had gathered (which quotes the clear id) went with it.
    assert sr.access_file == ""
    assert [p for p in storage.rglob("*") if p.is_file()] == []


def test_the_pages_offer_resolution_and_closing_and_they_work(partial_access,
                                                              client_for) -> None:
    carl = client_for("carl")
    url = reverse("gdpr:detail", args=["acme", partial_access.pk])
    page = carl.get(url).content.decode()
    assert 'id="resolve-form"' in page and 'id="close-form"' in page
    assert "Retry the steps not done" not in page  # the only open step's provider is disabled
    assert "Partly done: needs attention" in page
    assert carl.get(reverse("gdpr:access_download",
                            args=["acme", partial_access.pk])).status_code == 200
    step = partial_access.steps.get(provider_label="Legacy store")
    resolve = reverse("gdpr:resolve_step", args=["acme", partial_access.pk])
    assert carl.post(resolve, {"step": "x", "justification": "y"}).status_code == 302
    assert partial_access.steps.get(pk=step.pk).state == "failed"
    carl.post(resolve, {"step": step.pk, "justification": "Sent by post"})
    assert partial_access.steps.get(pk=step.pk).state == "resolved"
    carl.post(reverse("gdpr:close", args=["acme", partial_access.pk]), {"reason": "Done"})
    assert refresh(partial_access).state == "completed_with_exceptions"
    assert "Completed with exceptions" in carl.get(url).content.decode()


def test_the_due_date_is_extended_by_up_to_two_months_with_a_reason(actor, workspace,
                                                                   client_for) -> None:
    from memadmin.gdpr.transitions import subject_request_extend

    sr = subject_request_create(actor=actor("carl"), workspace=workspace, kind="access",
                                subject_id=SUBJECT, reason="Art. 15 letter")
    due = sr.due_at
    with pytest.raises(SubjectRequestError, match="reason"):
        subject_request_extend(actor=actor("carl"), subject_request=sr, months=1, reason="")
    with pytest.raises(SubjectRequestError):
        subject_request_extend(actor=actor("vic"), subject_request=sr, months=1, reason="x")
    subject_request_extend(actor=actor("carl"), subject_request=sr, months=1,
                           reason=f"{SUBJECT} named three more systems")
    sr = refresh(sr)
    assert sr.extension_months == 1 and 28 <= (sr.due_at - due).days <= 31
    assert SUBJECT not in sr.extension_reason
    assert AuditEvent.objects.get(action="subject_request.extend").data["months"] == 1
    with pytest.raises(SubjectRequestError, match="2 months in all"):
        subject_request_extend(actor=actor("carl"), subject_request=sr, months=2, reason="x")
    carl = client_for("carl")
    carl.post(reverse("gdpr:extend", args=["acme", sr.pk]), {"months": "1", "reason": "more"})
    assert refresh(sr).extension_months == 2
    assert 'id="extend-form"' not in carl.get(
        reverse("gdpr:detail", args=["acme", sr.pk])).content.decode()
    assert ">extended<" in carl.get(reverse("gdpr:list", args=["acme"])).content.decode()
    subject_request_cancel(actor=actor("carl"), subject_request=sr)
    extension = receipt_of(refresh(sr))["extension"]
    assert (extension["months"], extension["by"]) == (2, "carl")
    assert SUBJECT not in json.dumps(refresh(sr).receipt)

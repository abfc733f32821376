"""Four eyes that hold: an approval covers a digest of what was approved (kind, subject hash,
override and its reason, the providers); an override after a run, or any change, sends the
request back to ``awaiting_approval`` for an approver who is neither the requester nor the one
who asked for the change; an override is refused while the approved erasure waits or runs."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User

from memadmin.audit.models import AuditEvent
from memadmin.gdpr.models import SubjectRequest, SubjectRequestStep
from memadmin.gdpr.transitions import (
    SubjectRequestError,
    approval_digest,
    subject_request_approve,
    subject_request_create,
    subject_request_retry,
    subject_request_set_override,
    subject_request_submit,
)
from memadmin.memory.models import MemoryItem
from memadmin.memory.services import FreezeSubject, memory_freeze_place
from tests.gdpr.conftest import SUBJECT, SYSTEM, run_job
from tests.gdpr.helpers import receipt_of, refresh, username

pytestmark = pytest.mark.django_db



@pytest.fixture
def held_partial(actor, workspace, resource, namespace, other_namespace, put, carol):
    """carl asked, carol approved, the run ended ``partial``: one item under legal hold."""
    put("likes tea")
    put("lives in Lyon", ns=other_namespace)
    memory_freeze_place(actor=actor("carl"), subject=FreezeSubject(resource, namespace),
                        kind="legal_hold", reason="Litigation 2026-17")
    sr = subject_request_create(actor=actor("carl"), workspace=workspace, kind="erasure",
                                subject_id=SUBJECT, reason="Art. 17 letter")
    subject_request_submit(actor=actor("carl"), subject_request=sr)
    subject_request_approve(actor=actor("carol"), subject_request=sr)
    run_job(refresh(sr).job)
    sr = refresh(sr)
    assert (sr.state, sr.steps.get().held) == ("partial", 1)
    return sr


@pytest.fixture
def dave(users, workspace):
    """A third compliance user."""
    from memadmin.workspaces.services import role_grant

    user = User.objects.create_user("dave", "dave@example.com", "x")
    role_grant(actor=SYSTEM, workspace=workspace, user=user, role="compliance")
    users["dave"] = user
    return user


def test_it_records_the_digest_of_what_was_approved(actor, held_partial) -> None:
    sr = held_partial
    assert sr.approval_digest == approval_digest(sr)
    assert receipt_of(sr)["approval_digest"] == sr.approval_digest
    assert AuditEvent.objects.get(action="subject_request.approve").data["digest"] == \
        sr.approval_digest


def test_the_requester_alone_cannot_override_a_partial_erasure_and_retry(
        actor, held_partial) -> None:
    sr = held_partial
    subject_request_set_override(actor=actor("carl"), subject_request=sr,
                                 reason="Court order 17")
    sr = refresh(sr)
    assert (sr.state, sr.decided_by, sr.approval_digest) == ("awaiting_approval", None, "")
    assert AuditEvent.objects.filter(action="subject_request.approval_void").count() == 1
    with pytest.raises(SubjectRequestError, match="cannot retry"):
        subject_request_retry(actor=actor("carl"), subject_request=sr)
    with pytest.raises(SubjectRequestError, match="requester"):
        subject_request_approve(actor=actor("carl"), subject_request=sr)
    assert MemoryItem.objects.filter(data_subject_id=SUBJECT).count() == 1

    subject_request_approve(actor=actor("carol"), subject_request=sr)
    run_job(refresh(sr).job)
    sr = refresh(sr)
    assert sr.state == "completed"
    assert not MemoryItem.objects.filter(data_subject_id=SUBJECT).exists()
    assert (receipt_of(sr)["actors"]["decided_by"], receipt_of(sr)["actors"]["override_by"]) == \
        ("carol", "carl")
    assert receipt_of(sr)["override_hold"] is True


def test_whoever_asked_for_the_override_cannot_approve_it(actor, held_partial, dave) -> None:
    sr = held_partial
    subject_request_set_override(actor=actor("carol"), subject_request=sr,
                                 reason="Court order 17")
    for name in ("carol", "carl"):  # the override's author, then the requester
        with pytest.raises(SubjectRequestError):
            subject_request_approve(actor=actor(name), subject_request=refresh(sr))
    subject_request_approve(actor=actor("dave"), subject_request=refresh(sr))
    assert username(refresh(sr).decided_by) == "dave"


@pytest.mark.parametrize("state", ["approved", "running"])
def test_an_override_is_refused_while_the_approved_erasure_waits_or_runs(
        actor, workspace, put, carol, state) -> None:
    put("likes tea")
    sr = subject_request_create(actor=actor("carl"), workspace=workspace, kind="erasure",
                                subject_id=SUBJECT, reason="Art. 17 letter")
    subject_request_submit(actor=actor("carl"), subject_request=sr)
    subject_request_approve(actor=actor("carol"), subject_request=sr)
    SubjectRequest.objects.filter(pk=sr.pk).update(state=state)
    for name in ("carl", "carol"):
        with pytest.raises(SubjectRequestError, match="under way"):
            subject_request_set_override(actor=actor(name), subject_request=refresh(sr),
                                         reason="Court order 17")
    assert not refresh(sr).override_hold


CHANGES: dict[str, Callable[[SubjectRequest], object]] = {
    "override": lambda sr: SubjectRequest.objects.filter(pk=sr.pk).update(
        override_hold=True, override_reason="slipped in"),
    "override reason": lambda sr: SubjectRequest.objects.filter(pk=sr.pk).update(
        override_reason="another reason"),
    "subject": lambda sr: SubjectRequest.objects.filter(pk=sr.pk).update(
        subject_hash="0" * 64),
    "providers": lambda sr: SubjectRequestStep.objects.filter(request=sr).update(
        provider=None),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_change_to_what_was_approved_voids_the_approval_before_the_run(
        actor, workspace, put, carol, change) -> None:
    put("likes tea")
    sr = subject_request_create(actor=actor("carl"), workspace=workspace, kind="erasure",
                                subject_id=SUBJECT, reason="Art. 17 letter",
                                override_hold=change == "override reason",
                                override_reason="first reason")
    subject_request_submit(actor=actor("carl"), subject_request=sr)
    subject_request_approve(actor=actor("carol"), subject_request=sr)
    CHANGES[change](sr)

    run_job(refresh(sr).job)
    sr = refresh(sr)
    assert (sr.state, sr.approval_digest, sr.decided_by) == ("awaiting_approval", "", None)
    assert MemoryItem.objects.filter(data_subject_id=SUBJECT).count() == 1
    assert AuditEvent.objects.filter(action="subject_request.approval_void").exists()


@pytest.mark.parametrize("change", ["override reason", "providers"])
def test_a_change_to_what_was_approved_voids_the_approval_before_a_retry(
        actor, held_partial, change) -> None:
    sr = held_partial
    if change == "override reason":
        SubjectRequest.objects.filter(pk=sr.pk).update(override_hold=True,
                                                       override_reason="slipped in")
    else:
        CHANGES[change](sr)
    subject_request_retry(actor=actor("carl"), subject_request=refresh(sr))
    assert refresh(sr).state == "awaiting_approval"
    assert MemoryItem.objects.filter(data_subject_id=SUBJECT).count() == 1


def test_without_four_eyes_an_override_on_a_partial_erasure_is_retried_at_once(
        actor, workspace, resource, namespace, put) -> None:
    workspace.four_eyes_erasure = False
    workspace.save(update_fields=["four_eyes_erasure"])
    put("likes tea")
    memory_freeze_place(actor=actor("carl"), subject=FreezeSubject(resource, namespace),
                        kind="legal_hold", reason="Litigation 2026-17")
    sr = subject_request_create(actor=actor("carl"), workspace=workspace, kind="erasure",
                                subject_id=SUBJECT, reason="Art. 17 letter")
    subject_request_submit(actor=actor("carl"), subject_request=sr)
    run_job(refresh(sr).job)
    assert refresh(sr).state == "partial"
    subject_request_set_override(actor=actor("carl"), subject_request=refresh(sr),
                                 reason="Court order 17")
    assert refresh(sr).state == "partial"
    subject_request_retry(actor=actor("carl"), subject_request=refresh(sr))
    run_job(refresh(sr).job)
    assert refresh(sr).state == "completed"

"""Restriction of processing (GDPR Art. 18): every item of the subject frozen (legal hold) on
every provider that can freeze, with four eyes where the workspace asks for them, a receipt
naming the providers that cannot, and a later decision (a ``lift`` request, four eyes too) that
lifts only what the restriction froze."""

from __future__ import annotations

import json

import pytest

from memadmin.audit.models import AuditEvent
from memadmin.gdpr.models import SubjectRequestItem
from memadmin.gdpr.transitions import (
    SubjectRequestError,
    approval_digest,
    subject_request_approve,
    subject_request_create,
    subject_request_lift,
    subject_request_submit,
)
from memadmin.memory.models import Freeze, MemoryItem
from memadmin.memory.services import FreezeSubject, memory_freeze_place
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for
from tests.gdpr.conftest import OTHER_SUBJECT, SUBJECT, run_job
from tests.gdpr.helpers import receipt_of, refresh

pytestmark = pytest.mark.django_db



def _frozen(item_id: str) -> bool:
    return Freeze.objects.filter(level="item", item_ref=item_id, kind="legal_hold",
                                 lifted_at__isnull=True).exists()


def _edit(local_config, namespace, item_id: str, text: str) -> None:
    provider = provider_for(local_config)
    revision = MemoryItem.objects.get(pk=item_id).revision
    provider.update_item(item_id, text, "replace", expected_revision=revision,
                         operation_id=f"edit-{item_id}-{text}",
                         scope=c.Scope.of(namespace.partition_key), deadline=5)


@pytest.fixture
def restricted(actor, workspace, namespace, other_namespace, put, carol):
    """carl asked, carol approved, the job ran: the subject's two items are frozen."""
    ids = [put("likes tea"), put("lives in Lyon", ns=other_namespace)]
    stranger = put("another person", subject=OTHER_SUBJECT)
    sr = subject_request_create(actor=actor("carl"), workspace=workspace, kind="restriction",
                                subject_id=SUBJECT, reason="Art. 18(1)(a): accuracy contested")
    subject_request_submit(actor=actor("carl"), subject_request=sr)
    assert refresh(sr).state == "awaiting_approval"
    subject_request_approve(actor=actor("carol"), subject_request=sr)
    run_job(refresh(sr).job)
    return refresh(sr), ids, stranger


def test_it_freezes_every_item_of_the_subject_and_nothing_else(
        restricted, local_config, namespace) -> None:
    sr, ids, stranger = restricted
    assert sr.state == "completed"
    assert sr.subject_id is None
    assert all(_frozen(i) for i in ids)
    assert not _frozen(stranger)
    rows = SubjectRequestItem.objects.filter(request=sr)
    assert sorted(r.item_id for r in rows) == sorted(ids)
    assert {r.state for r in rows} == {"frozen"}
    with pytest.raises(c.Frozen):
        _edit(local_config, namespace, ids[0], "changed while restricted")
    placed = AuditEvent.objects.filter(action="legal_hold.place")
    assert sorted(e.target_id for e in placed) == sorted(ids)
    assert all(e.data["subject_request"] == str(sr.pk) for e in placed)


def test_it_needs_a_second_compliance_user_where_the_workspace_asks(
        actor, workspace, put, carol) -> None:
    put("likes tea")
    sr = subject_request_create(actor=actor("carl"), workspace=workspace, kind="restriction",
                                subject_id=SUBJECT, reason="Art. 18")
    subject_request_submit(actor=actor("carl"), subject_request=sr)
    with pytest.raises(SubjectRequestError, match="four eyes"):
        subject_request_approve(actor=actor("carl"), subject_request=sr)
    assert refresh(sr).state == "awaiting_approval"
    assert not Freeze.objects.filter(kind="legal_hold").exists()


def test_the_receipt_lists_the_frozen_items_and_never_the_clear_id(restricted) -> None:
    sr, ids, _ = restricted
    receipt = sr.receipt
    body = json.dumps(receipt)
    assert SUBJECT not in body
    step = receipt["steps"][0]
    assert sorted(i["item"] for i in step["items"]) == sorted(ids)
    assert {i["state"] for i in step["items"]} == {"frozen"}
    assert receipt["cannot_freeze"] == []


def test_a_provider_that_cannot_freeze_is_named_and_the_request_stays_partial(
        actor, workspace, put, carol, legacy_config) -> None:
    ids = [put("likes tea")]
    sr = subject_request_create(actor=actor("carl"), workspace=workspace, kind="restriction",
                                subject_id=SUBJECT, reason="Art. 18")
    subject_request_submit(actor=actor("carl"), subject_request=sr)
    subject_request_approve(actor=actor("carol"), subject_request=sr)
    run_job(refresh(sr).job)
    sr = refresh(sr)
    assert sr.state == "partial"
    states = {s.provider_label: s.state for s in sr.steps.all()}
    assert states == {"Built-in": "done", "Legacy store": "unsupported"}
    assert _frozen(ids[0])
    assert receipt_of(sr)["cannot_freeze"] == ["Legacy store"]


def test_a_later_decision_lifts_only_what_the_restriction_froze(
        actor, restricted, resource, namespace, workspace) -> None:
    sr, ids, _ = restricted
    # An item of the subject was already on hold before? Put one on hold now, then lift:
    # lifting must not take off someone else's hold placed on the same item.
    lift = subject_request_lift(actor=actor("carl"), restriction=sr,
                                reason="Accuracy verified (Art. 18(3))")
    assert (lift.kind, lift.state, lift.lifts_id) == ("lift", "awaiting_approval", sr.pk)
    with pytest.raises(SubjectRequestError, match="four eyes"):
        subject_request_approve(actor=actor("carl"), subject_request=lift)
    assert all(_frozen(i) for i in ids)
    subject_request_approve(actor=actor("carol"), subject_request=lift)
    run_job(refresh(lift).job)
    lift = refresh(lift)
    assert lift.state == "completed"
    assert not any(_frozen(i) for i in ids)
    assert set(SubjectRequestItem.objects.filter(request=sr).values_list("state", flat=True)) \
        == {"lifted"}
    assert sorted(i["item"] for i in receipt_of(lift)["steps"][0]["items"]) == sorted(ids)
    assert AuditEvent.objects.filter(action="legal_hold.lift").count() == 2
    assert AuditEvent.objects.filter(action="subject_request.lift_requested",
                                     target_id=str(sr.pk)).count() == 1
    with pytest.raises(SubjectRequestError, match="already"):
        subject_request_lift(actor=actor("carl"), restriction=sr, reason="again")


def test_an_earlier_legal_hold_stays_after_the_lift(
        actor, workspace, resource, namespace, put, carol) -> None:
    held = put("under litigation")
    memory_freeze_place(actor=actor("carl"), subject=FreezeSubject(resource, namespace, held),
                        kind="legal_hold", reason="Litigation 2026-17")
    free = put("likes tea")
    sr = subject_request_create(actor=actor("carl"), workspace=workspace, kind="restriction",
                                subject_id=SUBJECT, reason="Art. 18")
    subject_request_submit(actor=actor("carl"), subject_request=sr)
    subject_request_approve(actor=actor("carol"), subject_request=sr)
    run_job(refresh(sr).job)
    states = dict(SubjectRequestItem.objects.filter(request=sr).values_list("item_id", "state"))
    assert states == {held: "already_frozen", free: "frozen"}
    lift = subject_request_lift(actor=actor("carol"), restriction=refresh(sr), reason="done")
    subject_request_approve(actor=actor("carl"), subject_request=lift)
    run_job(refresh(lift).job)
    assert _frozen(held)
    assert not _frozen(free)


def test_a_changed_lift_voids_its_approval(actor, restricted) -> None:
    sr, _, _ = restricted
    lift = subject_request_lift(actor=actor("carl"), restriction=sr, reason="verified")
    subject_request_approve(actor=actor("carol"), subject_request=lift)
    lift = refresh(lift)
    assert lift.approval_digest == approval_digest(lift)
    # What was approved changes before the job runs: one of its providers is dropped.
    lift.steps.all().delete()
    run_job(lift.job)
    lift = refresh(lift)
    assert (lift.state, lift.approval_digest, lift.decided_by) == ("awaiting_approval", "", None)
    assert AuditEvent.objects.filter(action="subject_request.approval_void",
                                     target_id=str(lift.pk)).exists()


def test_only_a_completed_restriction_can_be_lifted(actor, workspace, put) -> None:
    put("likes tea")
    sr = subject_request_create(actor=actor("carl"), workspace=workspace, kind="restriction",
                                subject_id=SUBJECT, reason="Art. 18")
    with pytest.raises(SubjectRequestError, match="once it has completed"):
        subject_request_lift(actor=actor("carl"), restriction=sr, reason="too early")
    access = subject_request_create(actor=actor("carl"), workspace=workspace, kind="access",
                                    subject_id=SUBJECT, reason="Art. 15")
    with pytest.raises(SubjectRequestError, match="only a restriction"):
        subject_request_lift(actor=actor("carl"), restriction=access, reason="no")

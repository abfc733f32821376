"""Rectification (GDPR Art. 16): the subject's items listed across providers, corrections
proposed against the revision shown, approved by a second compliance user where the workspace
asks for it (the approval covers the corrected text: changing it voids the approval), applied
through the editor's path (``update_item``: a new revision, the old one kept), and a receipt
that lists what changed by item id, revisions and hashes, never the text nor the clear id."""

from __future__ import annotations

import hashlib
import json

import pytest

from memadmin.audit.models import AuditEvent
from memadmin.gdpr.models import SubjectRequestItem
from memadmin.gdpr.selectors import subject_items
from memadmin.gdpr.transitions import (
    SubjectRequestError,
    subject_request_approve,
    subject_request_correction_propose,
    subject_request_create,
    subject_request_submit,
)
from memadmin.memory.models import MemoryItem, MemoryRevision
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for
from tests.gdpr.conftest import OTHER_SUBJECT, SUBJECT, run_job
from tests.gdpr.helpers import receipt_of, refresh

pytestmark = pytest.mark.django_db

OLD = "Lives in Lyon, works as a baker"
NEW = "Lives in Lille, works as a nurse"



def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def rect(actor, workspace, put):
    item_id = put(OLD)
    sr = subject_request_create(actor=actor("carl"), workspace=workspace,
                                kind="rectification", subject_id=SUBJECT,
                                reason="Art. 16: the subject moved")
    return sr, item_id


def _propose(actor, sr, item_id, text=NEW, who="carl", namespace=None):
    step = sr.steps.get()
    partition = MemoryItem.objects.get(pk=item_id).namespace.partition_key
    return subject_request_correction_propose(
        actor=actor(who), subject_request=sr, step_id=step.pk, partition=partition,
        item_id=item_id, content=text)


@pytest.mark.django_db(transaction=True)
def test_it_lists_the_subjects_items_across_providers(
        actor, workspace, put, http_config) -> None:
    mine = put(OLD)
    put("someone else", subject=OTHER_SUBJECT)
    sr = subject_request_create(actor=actor("carl"), workspace=workspace,
                                kind="rectification", subject_id=SUBJECT, reason="Art. 16")
    found = {row.step.provider_label: row for row in subject_items(sr)}
    assert set(found) == {"Across HTTP", "Built-in"}
    for row in found.values():
        assert [i.id for i in row.items] == [mine]
        assert row.items[0].content == OLD
        assert not row.more


def test_a_correction_is_applied_as_a_new_revision_after_a_second_approval(
        actor, rect, carol) -> None:
    sr, item_id = rect
    row = _propose(actor, sr, item_id)
    assert (row.state, row.from_revision, row.old_hash, row.new_hash) == \
        ("proposed", 1, sha(OLD), sha(NEW))
    subject_request_submit(actor=actor("carl"), subject_request=sr)
    assert refresh(sr).state == "awaiting_approval"
    with pytest.raises(SubjectRequestError, match="four eyes"):
        subject_request_approve(actor=actor("carl"), subject_request=refresh(sr))
    assert MemoryItem.objects.get(pk=item_id).content == OLD
    subject_request_approve(actor=actor("carol"), subject_request=refresh(sr))
    run_job(refresh(sr).job)
    sr = refresh(sr)
    assert sr.state == "completed"
    item = MemoryItem.objects.get(pk=item_id)
    assert (item.content, item.revision) == (NEW, 2)
    assert MemoryRevision.objects.filter(item=item, content=OLD).exists()
    row.refresh_from_db()
    assert (row.state, row.to_revision, row.content) == ("applied", 2, "")
    edit = AuditEvent.objects.get(action="memory.edit", target_id=item_id)
    assert edit.data["subject_request"] == str(sr.pk)
    assert (edit.data["from_revision"], edit.data["to_revision"]) == (1, 2)


def test_the_receipt_lists_ids_revisions_and_hashes_not_the_text(actor, rect, carol) -> None:
    sr, item_id = rect
    _propose(actor, sr, item_id)
    subject_request_submit(actor=actor("carl"), subject_request=sr)
    subject_request_approve(actor=actor("carol"), subject_request=refresh(sr))
    run_job(refresh(sr).job)
    receipt = receipt_of(refresh(sr))
    body = json.dumps(receipt)
    for clear in (SUBJECT, OLD, NEW):
        assert clear not in body
    [changed] = receipt["steps"][0]["items"]
    assert changed == {"item": item_id, "tier": "facts", "state": "applied",
                       "from_revision": 1, "to_revision": 2, "old_sha256": sha(OLD),
                       "new_sha256": sha(NEW), "note": ""}


def test_changing_the_approved_text_voids_the_approval(actor, rect, carol) -> None:
    sr, item_id = rect
    _propose(actor, sr, item_id)
    subject_request_submit(actor=actor("carl"), subject_request=sr)
    subject_request_approve(actor=actor("carol"), subject_request=refresh(sr))
    # Someone changes the corrected text after the approval, before the job runs.
    SubjectRequestItem.objects.filter(request=sr).update(content="Lives on the moon")
    run_job(refresh(sr).job)
    sr = refresh(sr)
    assert (sr.state, sr.approval_digest, sr.decided_by) == ("awaiting_approval", "", None)
    assert MemoryItem.objects.get(pk=item_id).content == OLD
    assert AuditEvent.objects.filter(action="subject_request.approval_void",
                                     target_id=str(sr.pk)).exists()


def test_an_item_changed_meanwhile_is_not_overwritten_and_a_new_proposal_needs_approval(
        actor, rect, carol, local_config, namespace) -> None:
    sr, item_id = rect
    _propose(actor, sr, item_id)
    subject_request_submit(actor=actor("carl"), subject_request=sr)
    subject_request_approve(actor=actor("carol"), subject_request=refresh(sr))
    provider_for(local_config).update_item(
        item_id, "An agent rewrote this", "replace", expected_revision=1,
        operation_id="agent-edit", scope=c.Scope.of(namespace.partition_key), deadline=5)
    run_job(refresh(sr).job)
    sr = refresh(sr)
    assert sr.state == "partial"
    row = SubjectRequestItem.objects.get(request=sr)
    assert row.state == "failed" and "changed after" in row.note
    assert MemoryItem.objects.get(pk=item_id).content == "An agent rewrote this"
    # Proposed again against the current text: the approval is void, another approves.
    _propose(actor, sr, item_id)
    sr = refresh(sr)
    assert sr.state == "awaiting_approval"
    subject_request_approve(actor=actor("carol"), subject_request=sr)
    run_job(refresh(sr).job)
    assert refresh(sr).state == "completed"
    assert MemoryItem.objects.get(pk=item_id).content == NEW


def test_it_refuses_an_item_of_another_subject_and_an_empty_request(
        actor, rect, put) -> None:
    sr, _ = rect
    stranger = put("another person", subject=OTHER_SUBJECT)
    with pytest.raises(SubjectRequestError, match="does not belong"):
        _propose(actor, sr, stranger)
    with pytest.raises(SubjectRequestError, match="at least one correction"):
        subject_request_submit(actor=actor("carl"), subject_request=sr)
    assert refresh(sr).state == "new"


def test_it_refuses_bad_text_with_a_clear_error(actor, rect) -> None:
    sr, item_id = rect
    for bad, why in (("bad\x00text", "NUL"), ("   ", "empty"), (OLD, "same"),
                     ("x" * 20_000, "the limit is")):
        with pytest.raises(SubjectRequestError, match=why):
            _propose(actor, sr, item_id, text=bad)
    assert not SubjectRequestItem.objects.exists()


def test_a_quarantined_item_cannot_be_corrected_here(actor, rect, local_config,
                                                      namespace) -> None:
    sr, item_id = rect
    provider_for(local_config).set_quarantine(
        item_id, "pending", scope=c.Scope.of(namespace.partition_key), deadline=5)
    with pytest.raises(SubjectRequestError, match="quarantined"):
        _propose(actor, sr, item_id)
    rows = {r.step.provider_label: r for r in subject_items(refresh(sr))}
    [listed] = rows["Built-in"].items
    assert (listed.id, listed.quarantine, listed.content) == (item_id, "pending", "")


def test_a_cancelled_rectification_keeps_no_proposed_text(actor, rect) -> None:
    from memadmin.gdpr.transitions import subject_request_cancel

    sr, item_id = rect
    _propose(actor, sr, item_id)
    subject_request_cancel(actor=actor("carl"), subject_request=refresh(sr))
    assert SubjectRequestItem.objects.get(request=sr).content == ""

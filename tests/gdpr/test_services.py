"""Subject requests: every transition of the state machine (and the refusal of wrong ones), four
eyes, roles, hostile input, preview, override, cancellation, and the selectors' query counts.
The built-in store only; jobs run in this process."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.http import Http404
from django.utils import timezone

from memadmin.audit.models import AuditEvent
from memadmin.gdpr import selectors
from memadmin.gdpr.models import SubjectRequest, SubjectRequestStep
from memadmin.gdpr.services import subject_request_preview, subject_requests_upkeep
from memadmin.gdpr.transitions import (
    SubjectRequestError,
    subject_request_approve,
    subject_request_cancel,
    subject_request_create,
    subject_request_deny,
    subject_request_retry,
    subject_request_set_override,
    subject_request_submit,
)
from memadmin.jobs.models import Job
from memadmin.lib.keys import subject_hash
from memadmin.memory.models import MemoryItem
from memadmin.memory.services import FreezeSubject, memory_freeze_place
from tests.gdpr.conftest import OTHER_SUBJECT, SUBJECT, run_job
from tests.gdpr.helpers import job_of, receipt_of, refresh, username

pytestmark = pytest.mark.django_db
REASON = "The customer asked us by letter of 2 March"


def listed(workspace: Any, **filters: Any) -> list[Any]:
    """The request list's rows: requests with the list's annotations (days_left, overdue,
    duplicate_open)."""
    return list(selectors.request_list(workspace, **filters))


def create(actor, workspace, kind="erasure", subject=SUBJECT, **options):
    return subject_request_create(actor=actor, workspace=workspace, kind=kind,
                                  subject_id=subject, reason=options.pop("reason", REASON),
                                  **options)



class TestCreate:
    def test_it_creates_a_new_request_with_a_step_per_enabled_provider(
            self, actor, workspace, local_config) -> None:
        request = create(actor("carl"), workspace)

        assert request.state == "new"
        assert request.subject_id == SUBJECT
        assert (request.subject_key_id, request.subject_hash) == subject_hash(workspace.pk,
                                                                              SUBJECT)
        assert abs(request.due_at - request.created_at - dt.timedelta(days=30)) < dt.timedelta(
            seconds=5)
        assert [s.provider_label for s in request.steps.all()] == ["Built-in"]
        event = AuditEvent.objects.get(action="subject_request.create")
        assert SUBJECT not in str(event.data)
        assert event.data["subject_hash"] == request.subject_hash

    @pytest.mark.parametrize("name", ["vic", "alice", "nora", "olga", "mallory"])
    def test_it_refuses_roles_without_subject_requests(self, actor, workspace, name) -> None:
        with pytest.raises(SubjectRequestError):
            create(actor(name), workspace)
        assert not SubjectRequest.objects.exists()

    @pytest.mark.parametrize("subject, reason", [
        ("", REASON), ("   ", REASON), ("x" * 257, REASON), ("nul\x00id", REASON),
        ("bell\x07", REASON), ("lone \ud800 surrogate", REASON), (12345, REASON),
        (SUBJECT, ""), (SUBJECT, "   "), (SUBJECT, "r" * 2001), (SUBJECT, "nul \x00"),
        (SUBJECT, None),
    ])
    def test_it_refuses_hostile_or_missing_input(self, actor, workspace, subject,
                                                 reason) -> None:
        with pytest.raises(SubjectRequestError):
            create(actor("carl"), workspace, subject=subject, reason=reason)

    def test_it_accepts_quotes_emoji_and_the_longest_id(self, actor, workspace) -> None:
        odd = "o'brien \"quoted\" 🦜 " + "x" * 230
        request = create(actor("carl"), workspace, subject=odd[:256],
                         reason="'; DROP TABLE x; -- 🦜")
        assert refresh(request).subject_id == odd[:256]

    def test_it_refuses_a_bad_kind(self, actor, workspace) -> None:
        with pytest.raises(SubjectRequestError):
            create(actor("carl"), workspace, kind="obliteration")
        with pytest.raises(SubjectRequestError):  # a lift starts from its restriction
            create(actor("carl"), workspace, kind="lift")

    def test_a_duplicate_open_request_is_flagged_not_refused(self, actor, workspace) -> None:
        first = create(actor("carl"), workspace)
        second = create(actor("ada"), workspace, kind="access")
        other = create(actor("carl"), workspace, subject=OTHER_SUBJECT)

        assert list(selectors.open_duplicates(first)) == [second]
        assert list(selectors.open_duplicates(other)) == []
        flags = {r.pk: r.duplicate_open for r in listed(workspace)}
        assert flags == {first.pk: True, second.pk: True, other.pk: False}
        assert AuditEvent.objects.filter(action="subject_request.create").latest("seq").data[
            "duplicates_open"] == 0


class TestStateMachine:
    def test_access_goes_new_approved_running_completed(self, actor, workspace, put) -> None:
        put("likes tea")
        request = create(actor("carl"), workspace, kind="access")
        subject_request_submit(actor=actor("carl"), subject_request=request)
        assert refresh(request).state == "approved"

        assert run_job(refresh(request).job) == "succeeded"
        request = refresh(request)
        assert request.state == "completed"
        assert request.subject_id is None
        assert request.access_file
        assert request.started_at is not None and request.completed_at is not None

    def test_erasure_with_four_eyes_waits_for_another_compliance_user(
            self, actor, workspace, put, carol) -> None:
        put("likes tea")
        request = create(actor("carl"), workspace)
        subject_request_submit(actor=actor("carl"), subject_request=request)
        assert refresh(request).state == "awaiting_approval"
        assert refresh(request).job is None

        with pytest.raises(SubjectRequestError, match="four eyes"):
            subject_request_approve(actor=actor("carl"), subject_request=request)
        for name in ("vic", "alice", "nora", "olga"):
            with pytest.raises(SubjectRequestError):
                subject_request_approve(actor=actor(name), subject_request=request)
        subject_request_approve(actor=actor("carol"), subject_request=request)
        request = refresh(request)
        assert (request.state, username(request.decided_by)) == ("approved", "carol")

        assert run_job(request.job) == "succeeded"
        request = refresh(request)
        assert request.state == "completed"
        assert request.subject_id is None
        assert not MemoryItem.objects.filter(data_subject_id=SUBJECT).exists()

    def test_erasure_without_four_eyes_is_approved_on_submit(self, actor, workspace,
                                                             put) -> None:
        workspace.four_eyes_erasure = False
        workspace.save()
        put("likes tea")
        request = create(actor("carl"), workspace)
        subject_request_submit(actor=actor("carl"), subject_request=request)
        assert refresh(request).state == "approved"
        assert job_of(refresh(request)).params == {"request": str(request.pk)}

    def test_deny_needs_another_user_and_a_reason_and_drops_the_id(
            self, actor, workspace, carol) -> None:
        request = create(actor("carl"), workspace)
        subject_request_submit(actor=actor("carl"), subject_request=request)
        with pytest.raises(SubjectRequestError):
            subject_request_deny(actor=actor("carl"), subject_request=request, reason="no")
        with pytest.raises(SubjectRequestError):
            subject_request_deny(actor=actor("carol"), subject_request=request, reason=" ")

        subject_request_deny(actor=actor("carol"), subject_request=request, reason="Not verified")
        request = refresh(request)
        assert (request.state, request.subject_id) == ("denied", None)
        assert receipt_of(request)["state"] == "denied"

    def test_only_the_requester_submits(self, actor, workspace) -> None:
        request = create(actor("carl"), workspace)
        with pytest.raises(SubjectRequestError, match="requester"):
            subject_request_submit(actor=actor("ada"), subject_request=request)

    @pytest.mark.parametrize("action", ["submit", "approve", "deny", "retry"])
    def test_wrong_transitions_are_refused(self, actor, workspace, carol, action) -> None:
        request = create(actor("carl"), workspace)  # ``new``: approve, deny, retry refused
        if action == "submit":  # ``awaiting_approval``: a second submit is refused
            subject_request_submit(actor=actor("carl"), subject_request=request)
        calls = {
            "submit": lambda: subject_request_submit(actor=actor("carl"), subject_request=request),
            "approve": lambda: subject_request_approve(actor=actor("carol"),
                                                       subject_request=request),
            "deny": lambda: subject_request_deny(actor=actor("carol"), subject_request=request,
                                                 reason="x"),
            "retry": lambda: subject_request_retry(actor=actor("carol"), subject_request=request),
        }
        before = refresh(request).state
        with pytest.raises(SubjectRequestError, match="cannot"):
            calls[action]()
        assert refresh(request).state == before

    def test_nothing_moves_a_closed_request(self, actor, workspace, carol) -> None:
        request = create(actor("carl"), workspace)
        subject_request_cancel(actor=actor("carl"), subject_request=request)
        for call in (
            lambda: subject_request_submit(actor=actor("carl"), subject_request=request),
            lambda: subject_request_cancel(actor=actor("ada"), subject_request=request),
            lambda: subject_request_set_override(actor=actor("carl"), subject_request=request,
                                                 reason="x"),
            lambda: subject_request_preview(actor=actor("carl"), subject_request=request),
        ):
            with pytest.raises(SubjectRequestError):
                call()
        assert refresh(request).state == "cancelled"


class TestCancel:
    @pytest.mark.parametrize("stage", ["new", "awaiting_approval", "approved"])
    def test_the_requester_or_an_admin_cancels_before_it_runs(self, actor, workspace, carol,
                                                              stage) -> None:
        request = create(actor("carl"), workspace)
        if stage != "new":
            subject_request_submit(actor=actor("carl"), subject_request=request)
        if stage == "approved":
            subject_request_approve(actor=actor("carol"), subject_request=request)
        with pytest.raises(SubjectRequestError):
            # not the requester
            subject_request_cancel(actor=actor("carol"), subject_request=request)

        subject_request_cancel(actor=actor("ada"), subject_request=request)
        request = refresh(request)
        assert (request.state, request.subject_id, username(request.cancelled_by)) == \
            ("cancelled", None, "ada")
        if stage == "approved":
            assert job_of(request).state == "cancelled"
            assert run_job(request.job) == "not claimed"

    def test_only_an_admin_cancels_a_running_request_after_the_step_in_flight(
            self, actor, workspace, put, carol) -> None:
        put("likes tea")
        request = create(actor("carl"), workspace)
        subject_request_submit(actor=actor("carl"), subject_request=request)
        subject_request_approve(actor=actor("carol"), subject_request=request)
        SubjectRequest.objects.filter(pk=request.pk).update(state="running")
        Job.objects.filter(pk=job_of(refresh(request)).pk).update(
            state="running", worker="w", attempts=1,
            lease_until=timezone.now() + dt.timedelta(minutes=1))
        with pytest.raises(SubjectRequestError, match="admin"):
            subject_request_cancel(actor=actor("carl"), subject_request=request)

        subject_request_cancel(actor=actor("ada"), subject_request=request)
        request = refresh(request)
        assert request.state == "running"  # the job stops it after its current step
        assert job_of(request).cancel_requested

    def test_a_running_request_whose_job_died_cancelled_is_closed_by_the_upkeep(
            self, actor, workspace, carol) -> None:
        request = create(actor("carl"), workspace)
        subject_request_submit(actor=actor("carl"), subject_request=request)
        subject_request_approve(actor=actor("carol"), subject_request=request)
        SubjectRequest.objects.filter(pk=request.pk).update(state="running")
        Job.objects.filter(pk=job_of(refresh(request)).pk).update(state="cancelled")

        assert subject_requests_upkeep()["closed"] == 1
        assert (refresh(request).state, refresh(request).subject_id) == ("cancelled", None)


class TestHoldAndOverride:
    def test_frozen_items_are_held_then_removed_after_an_override(
            self, actor, workspace, resource, namespace, other_namespace, put, carol) -> None:
        put("likes tea")
        put("lives in Lyon", ns=other_namespace)
        memory_freeze_place(actor=actor("carl"), subject=FreezeSubject(resource, namespace),
                            kind="legal_hold", reason="Litigation 2026-17")
        request = create(actor("carl"), workspace)
        subject_request_submit(actor=actor("carl"), subject_request=request)
        subject_request_approve(actor=actor("carol"), subject_request=request)
        run_job(refresh(request).job)

        request = refresh(request)
        step = request.steps.get()
        assert (request.state, step.state, step.removed, step.held) == ("partial", "held", 1, 1)
        assert request.subject_id == SUBJECT  # kept while the request can still run
        assert MemoryItem.objects.filter(data_subject_id=SUBJECT).count() == 1

        with pytest.raises(SubjectRequestError):
            subject_request_set_override(actor=actor("carl"), subject_request=request, reason="")
        with pytest.raises(SubjectRequestError):
            subject_request_set_override(actor=actor("vic"), subject_request=request, reason="x")
        subject_request_set_override(actor=actor("carl"), subject_request=request,
                                     reason="Court order 17 allows erasure")
        event = AuditEvent.objects.get(action="subject_request.override_hold")
        assert event.actor_label == "carl" and event.data["reason_chars"] == 29

        # Four eyes: the override voids carol's approval; she approves again, then it runs.
        assert refresh(request).state == "awaiting_approval"
        subject_request_approve(actor=actor("carol"), subject_request=request)
        assert refresh(request).state == "approved"
        run_job(refresh(request).job)
        request = refresh(request)
        step = request.steps.get()
        assert (request.state, step.state, step.removed, step.held) == \
            ("completed", "done", 2, 0)
        assert not MemoryItem.objects.filter(data_subject_id=SUBJECT).exists()

    def test_access_cannot_override(self, actor, workspace) -> None:
        request = create(actor("carl"), workspace, kind="access")
        with pytest.raises(SubjectRequestError):
            subject_request_set_override(actor=actor("carl"), subject_request=request, reason="x")


class TestPreview:
    def test_it_counts_per_provider_and_changes_nothing(self, actor, workspace, put,
                                                        other_namespace) -> None:
        put("likes tea")
        put("lives in Lyon", ns=other_namespace)
        put("not them", subject=OTHER_SUBJECT)
        request = create(actor("carl"), workspace)

        steps = subject_request_preview(actor=actor("carl"), subject_request=request)
        assert [(s.provider_label, s.found, s.error) for s in steps] == [("Built-in", 2, "")]
        assert MemoryItem.objects.count() == 3
        event = AuditEvent.objects.get(action="subject_request.preview")
        assert SUBJECT not in str(event.data) and list(event.data["found"].values()) == [2]

    def test_a_deleted_provider_cannot_tell(self, actor, workspace) -> None:
        request = create(actor("carl"), workspace)
        SubjectRequestStep.objects.filter(request=request).update(provider=None)
        steps = subject_request_preview(actor=actor("carl"), subject_request=request)
        assert (steps[0].found, steps[0].error) == (None, "the provider was deleted")


class TestSelectors:
    def make_many(self, actor, workspace, n: int) -> None:
        for i in range(n):
            create(actor("carl"), workspace, subject=f"subject-{i % 3}",
                   kind="access" if i % 2 else "erasure")

    def test_the_list_is_one_query_however_many_requests(
            self, actor, workspace, django_assert_num_queries) -> None:
        self.make_many(actor, workspace, 3)
        with django_assert_num_queries(1):
            small = [(r.days_left, r.overdue, r.duplicate_open, username(r.requested_by))
                     for r in listed(workspace)]
        self.make_many(actor, workspace, 12)
        with django_assert_num_queries(1):
            large = [(r.days_left, r.overdue, r.duplicate_open, username(r.requested_by))
                     for r in listed(workspace)]
        assert len(small) == 3 and len(large) == 15
        assert all(days in (29, 30) and not overdue for days, overdue, _, _ in large)

    def test_a_request_with_its_steps_and_their_items_is_three_queries(
            self, actor, workspace, local_config, django_assert_num_queries) -> None:
        from memadmin.providers.services import provider_config_create

        for i in range(4):
            provider_config_create(actor=actor("ada"), workspace=workspace, slug=f"p{i}",
                                   name=f"P{i}", kind="local")
        request = create(actor("carl"), workspace)
        with django_assert_num_queries(3):
            found: Any = selectors.request_with_steps(workspace, str(request.pk))
            labels = [(s.provider_label, s.provider.slug) for s in found.step_list]
            assert found.job is None and username(found.requested_by) == "carl"
        assert len(labels) == 5

    def test_filters_and_overdue(self, actor, workspace) -> None:
        late = create(actor("carl"), workspace, reason="Letter from the Lyon office")
        SubjectRequest.objects.filter(pk=late.pk).update(
            due_at=timezone.now() - dt.timedelta(days=2, hours=1))
        fresh = create(actor("carl"), workspace, kind="access", subject=OTHER_SUBJECT)

        def ids(**filters):
            return {r.pk for r in selectors.request_list(workspace, **filters)}

        assert ids(overdue=True) == {late.pk}
        assert ids(overdue=False) == {fresh.pk}
        late_one: Any = selectors.request_list(workspace, overdue=True).get()
        assert late_one.days_left == -3
        assert ids(kind="access") == {fresh.pk}
        assert ids(state="open") == {late.pk, fresh.pk}
        assert ids(state="completed") == set()
        assert ids(state="bogus") == set() and ids(kind="bogus") == set()
        assert ids(q="lyon") == {late.pk}
        assert ids(q=OTHER_SUBJECT) == {fresh.pk}  # by keyed hash
        assert ids(q=str(fresh.pk)) == {fresh.pk}
        assert ids(q="'\x00%_ 🦜" + "x" * 5000) == set()

    def test_another_workspaces_request_is_404(self, actor, workspace,
                                               other_workspace) -> None:
        request = create(actor("carl"), workspace)
        with pytest.raises(Http404):
            selectors.request_with_steps(other_workspace, request.pk)
        for bad in ("not-a-uuid", "", "\x00", "1' OR '1'='1"):
            with pytest.raises(Http404):
                selectors.request_with_steps(workspace, bad)

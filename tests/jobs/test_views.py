"""Job pages follow the rules of the job's owner (issue 14 finding 5).

A job that belongs to a subject request is seen and cancelled by that request's rules (only an
admin cancels a running erasure); any other job by the rules of what it works on; a starter
who lost every role in the workspace loses its pages.
"""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone

from memadmin.audit.services import Actor
from memadmin.gdpr.models import SubjectRequest
from memadmin.gdpr.transitions import (
    subject_request_approve,
    subject_request_create,
    subject_request_submit,
)
from memadmin.jobs.models import Job
from memadmin.memory.services import memory_bulk_delete_start
from memadmin.providers import contract as c
from memadmin.workspaces.services import role_grant, role_revoke

pytestmark = pytest.mark.django_db
SYSTEM = Actor.system("test")


@pytest.fixture
def carol(users, workspace):
    """A second compliance user (she approves carl's erasure, so she starts its job)."""
    user = User.objects.create_user("carol", "carol@example.com", "x")
    role_grant(actor=SYSTEM, workspace=workspace, user=user, role="compliance")
    users["carol"] = user
    return user


@pytest.fixture
def erasure(users, workspace, carol, local_config):
    request = subject_request_create(actor=Actor.of(users["carl"]), workspace=workspace,
                                     kind="erasure", subject_id="jane@example.com",
                                     reason="by letter")
    subject_request_submit(actor=Actor.of(users["carl"]), subject_request=request)
    subject_request_approve(actor=Actor.of(carol), subject_request=request)
    request.refresh_from_db()
    assert request.job is not None and request.job.created_by == carol
    return request


def running(request: SubjectRequest) -> Job:
    assert request.job_id is not None
    SubjectRequest.objects.filter(pk=request.pk).update(state="running")
    Job.objects.filter(pk=request.job_id).update(
        state="running", worker="w", attempts=1,
        lease_until=timezone.now() + dt.timedelta(minutes=1))
    return Job.objects.get(pk=request.job_id)


def cancel_url(job: Job) -> str:
    return reverse("jobs:cancel", args=[job.pk])


@pytest.mark.parametrize("who", ["carol", "carl"])
def test_a_running_erasure_is_not_cancelled_by_compliance_through_the_job_page(
        client_for, erasure, who: str) -> None:
    job = running(erasure)
    assert client_for(who).post(cancel_url(job)).status_code == 403
    job.refresh_from_db()
    erasure.refresh_from_db()
    assert not job.cancel_requested and erasure.state == "running"
    assert erasure.cancelled_by is None


def test_an_admin_cancels_a_running_erasure_by_the_requests_rules(client_for, erasure) -> None:
    from memadmin.audit.models import AuditEvent

    job = running(erasure)
    assert client_for("ada").post(cancel_url(job)).status_code == 302
    job.refresh_from_db()
    erasure.refresh_from_db()
    assert job.cancel_requested and erasure.cancelled_by.username == "ada"
    assert AuditEvent.objects.filter(action="subject_request.cancel").exists()


def test_before_it_runs_the_requester_cancels_and_the_approver_does_not(client_for,
                                                                        erasure) -> None:
    job = erasure.job
    assert client_for("carol").post(cancel_url(job)).status_code == 403  # not the requester
    assert client_for("carl").post(cancel_url(job)).status_code == 302
    erasure.refresh_from_db()
    assert erasure.state == "cancelled" and erasure.cancelled_by.username == "carl"


def test_a_request_job_page_is_for_those_who_see_requests(client_for, erasure) -> None:
    url = reverse("jobs:detail", args=[erasure.job_id])
    for who in ("carl", "carol", "ada", "root"):
        assert client_for(who).get(url).status_code == 200, who
    for who in ("vic", "olga", "alice", "nora", "mallory"):
        assert client_for(who).get(url).status_code == 404, who
        assert client_for(who).post(cancel_url(erasure.job)).status_code == 404, who


def test_a_starter_who_lost_every_role_loses_the_pages(client_for, users, workspace,
                                                       namespace) -> None:
    job = memory_bulk_delete_start(actor=Actor.of(users["nora"]), namespace=namespace,
                                   filters=c.ItemFilters(), exclude_ids=[], count=0)
    detail = reverse("jobs:detail", args=[job.pk])
    assert client_for("nora").get(detail).status_code == 200
    role_revoke(actor=SYSTEM, workspace=workspace, user=users["nora"], role="owner",
                namespace=namespace)
    assert client_for("nora").get(detail).status_code == 404
    assert client_for("nora").post(cancel_url(job)).status_code == 404
    job.refresh_from_db()
    assert not job.cancel_requested


def test_a_starter_who_lost_the_namespace_but_kept_a_role_loses_them_too(
        client_for, users, workspace, namespace) -> None:
    job = memory_bulk_delete_start(actor=Actor.of(users["nora"]), namespace=namespace,
                                   filters=c.ItemFilters(), exclude_ids=[], count=0)
    role_revoke(actor=SYSTEM, workspace=workspace, user=users["nora"], role="owner",
                namespace=namespace)
    role_grant(actor=SYSTEM, workspace=workspace, user=users["nora"], role="viewer")
    assert client_for("nora").get(reverse("jobs:detail", args=[job.pk])).status_code == 404


def test_the_starter_and_admins_see_a_namespace_job(client_for, users, namespace) -> None:
    job = memory_bulk_delete_start(actor=Actor.of(users["nora"]), namespace=namespace,
                                   filters=c.ItemFilters(), exclude_ids=[], count=0)
    detail = reverse("jobs:detail", args=[job.pk])
    for who in ("nora", "ada", "root"):
        assert client_for(who).get(detail).status_code == 200, who
    for who in ("alice", "vic", "carl", "mallory"):
        assert client_for(who).get(detail).status_code == 404, who
    assert client_for("nora").post(cancel_url(job)).status_code == 302
    job.refresh_from_db()
    assert job.cancel_requested or job.state == "cancelled"


def test_cancel_rejects_get_and_detail_rejects_post(client_for, erasure) -> None:
    assert client_for("ada").get(cancel_url(erasure.job)).status_code == 405
    assert client_for("ada").post(reverse("jobs:detail", args=[erasure.job_id])).status_code \
        == 405


def test_every_job_kind_has_an_owner_rule() -> None:
    from memadmin.jobs import runner, views

    ruled = views.REQUEST_KINDS | set(views.KIND_CAPABILITY) | views.ADMIN_KINDS
    assert set(runner.HANDLERS) <= ruled, sorted(set(runner.HANDLERS) - ruled)
    assert len(runner.HANDLERS) >= 9

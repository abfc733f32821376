"""What the subject-request tests share: a request read afresh, and the parts a request has
once it has run, asserted present (a test then fails on a missing receipt or job by name, not
on ``None``)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User

from memadmin.gdpr.models import SubjectRequest
from memadmin.jobs.models import Job


def refresh(sr: SubjectRequest) -> SubjectRequest:
    return SubjectRequest.objects.get(pk=sr.pk)


def receipt_of(sr: SubjectRequest) -> dict[str, Any]:
    assert sr.receipt is not None, "the request has no receipt yet"
    receipt: dict[str, Any] = sr.receipt
    return receipt


def job_of(sr: SubjectRequest) -> Job:
    assert sr.job is not None, "the request has no job"
    return sr.job


def username(user: User | None) -> str | None:
    return user.username if user is not None else None

"""Reads of subject requests for the pages: the queue, one request with its steps, duplicates.

Every request comes annotated with ``days_left`` (whole days until ``due_at``, negative when
late), ``overdue`` (open and past due) and ``duplicate_open`` (another open request of the same
workspace carries the same subject hash). Query counts are flat: the list is one query, a
request with its steps two.
"""

from __future__ import annotations

import contextlib
import uuid
from typing import Any

from django.db.models import (
    BooleanField,
    Case,
    Exists,
    F,
    Func,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Value,
    When,
)
from django.http import Http404
from django.utils import timezone

from memadmin.gdpr.models import (
    REQUEST_OPEN_STATES,
    REQUEST_STATES,
    SubjectRequest,
    SubjectRequestStep,
)
from memadmin.lib.keys import subject_hashes_all_keys
from memadmin.workspaces.models import Workspace

#: Longest search text looked at (a subject id is at most 256 characters).
Q_MAX_CHARS = 256


class _DaysLeft(Func):
    """floor((due_at - now) in days), as an integer."""

    template = "FLOOR(EXTRACT(EPOCH FROM (%(expressions)s)) / 86400)::integer"
    output_field = IntegerField()


def _annotated(workspace: Workspace) -> QuerySet[SubjectRequest]:
    now = timezone.now()
    same_subject_open = SubjectRequest.objects.filter(
        workspace_id=OuterRef("workspace_id"), subject_key_id=OuterRef("subject_key_id"),
        subject_hash=OuterRef("subject_hash"), state__in=REQUEST_OPEN_STATES,
    ).exclude(pk=OuterRef("pk"))
    return (SubjectRequest.objects.filter(workspace=workspace)
            .select_related("requested_by", "decided_by", "cancelled_by", "override_by")
            .annotate(
                days_left=_DaysLeft(F("due_at") - Value(now)),
                overdue=Case(When(Q(state__in=REQUEST_OPEN_STATES, due_at__lt=now),
                                  then=Value(True)),
                             default=Value(False), output_field=BooleanField()),
                duplicate_open=Exists(same_subject_open),
            ))


def request_list(workspace: Workspace, *, state: str | None = None, kind: str | None = None,
                 overdue: bool | None = None, q: str | None = None) -> QuerySet[SubjectRequest]:
    """The workspace's requests, newest first, filtered. ``state`` may also be ``"open"``.
    ``q`` matches a request id, words of the reason, or a data-subject id exactly (compared by
    keyed hash, so the clear id is never searched for in the table). Unknown filter values
    match nothing rather than fail."""
    qs = _annotated(workspace)
    if state:
        if state == "open":
            qs = qs.filter(state__in=REQUEST_OPEN_STATES)
        elif state in REQUEST_STATES:
            qs = qs.filter(state=state)
        else:
            return qs.none()
    if kind:
        qs = qs.filter(kind=kind) if kind in ("access", "erasure") else qs.none()
    if overdue is not None:
        late = Q(state__in=REQUEST_OPEN_STATES, due_at__lt=timezone.now())
        qs = qs.filter(late) if overdue else qs.exclude(late)
    text = (q or "").replace("\x00", "").strip()[:Q_MAX_CHARS]
    if text:
        match = Q(reason__icontains=text)
        for key_id, digest in subject_hashes_all_keys(workspace.pk, text):
            match |= Q(subject_key_id=key_id, subject_hash=digest)
        with contextlib.suppress(ValueError):
            match |= Q(pk=uuid.UUID(text))
        qs = qs.filter(match)
    return qs.order_by("-created_at")


def request_with_steps(workspace: Workspace, request_id: Any) -> SubjectRequest:
    """One request of the workspace with its steps (``request.step_list``, in provider order)
    and its job; ``Http404`` for an unknown or malformed id or another workspace's request."""
    try:
        pk = uuid.UUID(str(request_id))
    except ValueError:
        raise Http404("no such request") from None
    steps = SubjectRequestStep.objects.select_related("provider").order_by("pk")
    request = (_annotated(workspace).select_related("job", "workspace")
               .prefetch_related(Prefetch("steps", queryset=steps, to_attr="step_list"))
               .filter(pk=pk).first())
    if request is None:
        raise Http404("no such request")
    return request


def open_duplicates(request: SubjectRequest) -> QuerySet[SubjectRequest]:
    """Other open requests of the workspace for the same subject (by keyed hash)."""
    return (SubjectRequest.objects
            .filter(workspace_id=request.workspace_id, subject_key_id=request.subject_key_id,
                    subject_hash=request.subject_hash, state__in=REQUEST_OPEN_STATES)
            .exclude(pk=request.pk).select_related("requested_by").order_by("-created_at"))

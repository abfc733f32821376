"""Data-subject requests (access and erasure): the state machine of DESIGN.md "Subject requests".

Every public service is keyword-only, runs in ``transaction.atomic``, writes its audit event in
the same transaction and raises ``SubjectRequestError`` for a refused transition or bad input.
Views only check the ``subject_requests`` capability; the services enforce the rest themselves
(the requester submits, another compliance user approves or denies, the requester or an admin
cancels, an admin alone cancels a running request).

    new --submit--> awaiting_approval (erasure, four eyes) --approve--> approved
    new --submit--> approved (access, or erasure without four eyes)
    awaiting_approval --deny--> denied
    approved --(the job starts)--> running --> completed | partial
    partial --retry--> running
    new | awaiting_approval | approved --cancel (requester, admin)--> cancelled
    running --cancel (admin; after the step in flight)--> cancelled

The clear subject id is kept only while the request can still run; it is dropped (NULL) at
``completed``, ``denied`` and ``cancelled``. Audit events carry the keyed hash, never the id.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memadmin.audit.services import Actor, audit_event_create
from memadmin.gdpr.models import (
    REQUEST_OPEN_STATES,
    SubjectRequest,
    SubjectRequestStep,
    Tombstone,
)
from memadmin.jobs.models import Job
from memadmin.lib.keys import subject_hash, subject_hashes_all_keys
from memadmin.providers import contract as c
from memadmin.providers.models import ProviderConfig
from memadmin.workspaces import access
from memadmin.workspaces.models import Workspace

logger = logging.getLogger(__name__)

KINDS = ("access", "erasure")
TERMINAL_STATES = frozenset({"completed", "denied", "cancelled"})
JOB_KIND = "subject_request_run"
REASON_MAX_CHARS = 2000
ERASED = "(erased)"


class SubjectRequestError(ValidationError):
    """A refused transition or invalid input; ``str(exc)`` / ``exc.message`` says why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return str(self.message)


# -- checks -------------------------------------------------------------------------------------


def _user(actor: Actor) -> Any:
    if actor.user is None:
        raise SubjectRequestError("subject requests are handled by people, not by the system")
    return actor.user


def _require_role(actor: Actor, workspace: Workspace) -> Any:
    user = _user(actor)
    if not access.can(user, "subject_requests", workspace):
        raise SubjectRequestError("your role does not allow subject requests")
    return user


def _is_admin(user: Any, workspace: Workspace) -> bool:
    return access.can(user, "manage_workspace", workspace)


def _clean_text(value: Any, *, field: str, required: bool) -> str:
    if value is None:
        value = ""
    try:
        c.check_text(value, field=field)
    except c.ProviderError as exc:
        raise SubjectRequestError(exc.message) from None
    value = value.strip()
    if required and not value:
        raise SubjectRequestError(f"a {field} is required")
    if len(value) > REASON_MAX_CHARS:
        raise SubjectRequestError(f"the {field} is longer than {REASON_MAX_CHARS} characters")
    return value


def clean_subject_id(value: Any) -> str:
    """A data-subject id as stores keep it: 1-256 characters, no NUL or control characters.
    Surrounding whitespace is kept (ids are compared exactly); whitespace alone is refused."""
    if not isinstance(value, str):
        raise SubjectRequestError("the data subject id must be text")
    try:
        c.check_text(value, field="data subject id")
    except c.ProviderError as exc:
        raise SubjectRequestError(exc.message) from None
    if not value.strip() or len(value) > c.MAX_SUBJECT_ID_CHARS:
        raise SubjectRequestError(
            f"the data subject id must be 1-{c.MAX_SUBJECT_ID_CHARS} characters")
    return value


def _locked(request: SubjectRequest) -> SubjectRequest:
    """The request row, locked for this transaction (transitions never race)."""
    fresh = SubjectRequest.objects.select_for_update().get(pk=request.pk)
    request.__dict__.update({k: v for k, v in fresh.__dict__.items() if not k.startswith("_")})
    return request


def _expect(request: SubjectRequest, *states: str, action: str) -> None:
    if request.state not in states:
        raise SubjectRequestError(
            f"cannot {action} a request that is {request.state.replace('_', ' ')}")


def _audit(actor: Actor, request: SubjectRequest, action: str, **data: Any) -> None:
    audit_event_create(
        workspace=request.workspace, actor=actor, action=f"subject_request.{action}",
        target_type="subject_request", target_id=request.pk,
        data={"kind": request.kind, "subject_hash": request.subject_hash,
              "key_id": request.subject_key_id, "state": request.state, **data},
    )


def _save(request: SubjectRequest, *fields: str) -> None:
    request.save(update_fields=[*fields, "updated_at"])


# -- create and submit --------------------------------------------------------------------------


def subject_request_create(*, actor: Actor, workspace: Workspace, kind: str, subject_id: str,
                           reason: str, override_hold: bool = False,
                           override_reason: str = "") -> SubjectRequest:
    """A new request (state ``new``) with one pending step per enabled provider.

    Another open request for the same subject is not refused, only flagged (see
    ``selectors.open_duplicates``); the audit event records how many there are."""
    _require_role(actor, workspace)
    if kind not in KINDS:
        raise SubjectRequestError("kind must be access or erasure")
    subject = clean_subject_id(subject_id)
    reason = _clean_text(reason, field="reason", required=True)
    override_hold = bool(override_hold)
    override_reason = _clean_text(override_reason, field="override reason",
                                  required=override_hold)
    if override_hold and kind != "erasure":
        raise SubjectRequestError("only an erasure can override a legal hold")
    key_id, digest = subject_hash(workspace.pk, subject)
    now = timezone.now()
    with transaction.atomic():
        request = SubjectRequest.objects.create(
            workspace=workspace, kind=kind, subject_key_id=key_id, subject_hash=digest,
            subject_id=subject, reason=reason, requested_by=actor.user,
            override_hold=override_hold, override_reason=override_reason if override_hold else "",
            override_by=actor.user if override_hold else None,
            due_at=now + dt.timedelta(days=workspace.subject_request_due_days),
        )
        configs = ProviderConfig.objects.filter(workspace=workspace, enabled=True)
        SubjectRequestStep.objects.bulk_create([
            SubjectRequestStep(request=request, provider=config, provider_label=config.name)
            for config in configs.order_by("name", "slug")
        ])
        duplicates = _open_with_hash(request).count()
        _audit(actor, request, "create", steps=len(configs), duplicates_open=duplicates,
               override_hold=override_hold, reason_chars=len(reason))
    return request


def _open_with_hash(request: SubjectRequest) -> Any:
    return (SubjectRequest.objects
            .filter(workspace_id=request.workspace_id, subject_key_id=request.subject_key_id,
                    subject_hash=request.subject_hash, state__in=REQUEST_OPEN_STATES)
            .exclude(pk=request.pk))


def subject_request_submit(*, actor: Actor, request: SubjectRequest) -> SubjectRequest:
    """The requester sends the request on: an erasure in a four-eyes workspace waits for
    approval; anything else is approved at once and its job is started."""
    _require_role(actor, request.workspace)
    with transaction.atomic():
        _locked(request)
        if request.requested_by_id != actor.user.pk:
            raise SubjectRequestError("only the requester can submit the request")
        _expect(request, "new", action="submit")
        request.submitted_at = timezone.now()
        if request.kind == "erasure" and request.workspace.four_eyes_erasure:
            request.state = "awaiting_approval"
            _save(request, "state", "submitted_at")
        else:
            request.state = "approved"
            request.decided_at = request.submitted_at
            _save(request, "state", "submitted_at", "decided_at")
            _start_job(actor, request)
        _audit(actor, request, "submit")
    return request


def _start_job(actor: Actor, request: SubjectRequest) -> Job:
    """Create the cascade job (its params hold the request id only, never the subject)."""
    from memadmin.jobs.services import job_create

    request.run_round += 1
    job = job_create(actor=actor, kind=JOB_KIND, params={"request": str(request.pk)},
                     workspace=request.workspace, total=request.steps.count())
    request.job = job
    _save(request, "job", "run_round")
    return job


# -- four eyes ----------------------------------------------------------------------------------


def _check_second_pair_of_eyes(actor: Actor, request: SubjectRequest, action: str) -> None:
    _require_role(actor, request.workspace)
    if request.requested_by_id == actor.user.pk:
        raise SubjectRequestError(f"the requester cannot {action} their own request "
                                  "(four eyes: another compliance user must)")


def subject_request_approve(*, actor: Actor, request: SubjectRequest) -> SubjectRequest:
    """Another compliance user approves an erasure awaiting approval; its job starts."""
    with transaction.atomic():
        _locked(request)
        _check_second_pair_of_eyes(actor, request, "approve")
        _expect(request, "awaiting_approval", action="approve")
        request.state, request.decided_by, request.decided_at = "approved", actor.user, \
            timezone.now()
        _save(request, "state", "decided_by", "decided_at")
        _start_job(actor, request)
        _audit(actor, request, "approve")
    return request


def subject_request_deny(*, actor: Actor, request: SubjectRequest, reason: str) -> SubjectRequest:
    """Another compliance user denies an erasure awaiting approval, with a reason."""
    reason = _clean_text(reason, field="reason", required=True)
    with transaction.atomic():
        _locked(request)
        _check_second_pair_of_eyes(actor, request, "deny")
        _expect(request, "awaiting_approval", action="deny")
        request.state, request.decided_by, request.decided_at = "denied", actor.user, \
            timezone.now()
        request.decision_reason = reason
        request.completed_at = request.decided_at
        request.subject_id = None
        _save(request, "state", "decided_by", "decided_at", "decision_reason", "completed_at",
              "subject_id")
        _seal(request)
        _audit(actor, request, "deny", reason_chars=len(reason))
    return request


# -- cancel, retry, override --------------------------------------------------------------------


def subject_request_cancel(*, actor: Actor, request: SubjectRequest) -> SubjectRequest:
    """Cancel: the requester or an admin before the job runs; an admin alone while it runs
    (the job finishes the step in flight, then stops and the request becomes ``cancelled``)."""
    from memadmin.jobs.services import job_cancel

    user = _require_role(actor, request.workspace)
    with transaction.atomic():
        _locked(request)
        admin = _is_admin(user, request.workspace)
        if request.state == "running":
            if not admin:
                raise SubjectRequestError("only an admin can cancel a running request")
        else:
            _expect(request, "new", "awaiting_approval", "approved", action="cancel")
            if not admin and request.requested_by_id != user.pk:
                raise SubjectRequestError("only the requester or an admin can cancel")
        request.cancelled_by = user
        _save(request, "cancelled_by")
        job = (Job.objects.select_for_update().filter(pk=request.job_id).first()
               if request.job_id else None)
        if job is not None and not job.finished:
            job_cancel(actor=actor, job=job)
        if request.state != "running" or job is None or job.state != "running":
            # Nothing is in flight: the request stops now. (A running job stops itself after
            # its current step and closes the request then.)
            request_close_cancelled(request)
        _audit(actor, request, "cancel", in_flight=request.state == "running")
    return request


def request_close_cancelled(request: SubjectRequest) -> None:
    """Close a request as ``cancelled`` (its clear id dropped, a receipt sealed). Used by the
    cancel service, by the job when it stops, and by the upkeep for a job that died."""
    request.state, request.completed_at = "cancelled", timezone.now()
    request.subject_id = None
    SubjectRequestStep.objects.filter(request=request,
                                      state__in=["pending", "running", "retrying"]).update(
        next_attempt_at=None)
    _save(request, "state", "completed_at", "subject_id")
    _seal(request)


def subject_request_retry(*, actor: Actor, request: SubjectRequest,
                          step_ids: Sequence[int] | None = None) -> SubjectRequest:
    """Run a partial request again: the steps not ``done`` (or just ``step_ids`` among them)
    go back to ``pending``, a new job runs them, then verification runs again."""
    _require_role(actor, request.workspace)
    with transaction.atomic():
        _locked(request)
        _expect(request, "partial", action="retry")
        steps = SubjectRequestStep.objects.filter(request=request).exclude(state="done")
        if step_ids is not None:
            wanted = {int(x) for x in step_ids}
            if not wanted or not wanted <= set(steps.values_list("pk", flat=True)):
                raise SubjectRequestError("only steps of this request that are not done can "
                                          "be retried")
            steps = steps.filter(pk__in=wanted)
        retried = steps.update(state="pending", error="", next_attempt_at=None, residue=None,
                               finished_at=None)
        SubjectRequestStep.objects.filter(request=request, state="done").update(residue=None)
        request.state, request.verification = "running", {}
        request.receipt, request.receipt_key_id, request.receipt_signature = None, "", ""
        _save(request, "state", "verification", "receipt", "receipt_key_id",
              "receipt_signature")
        _start_job(actor, request)
        _audit(actor, request, "retry", steps=retried, round=request.run_round)
    return request


def subject_request_set_override(*, actor: Actor, request: SubjectRequest,
                                 reason: str) -> SubjectRequest:
    """Let the erasure remove items under freeze or legal hold (``forget(override_hold=True)``
    on the steps that run from now on). Compliance only, with a reason; audited."""
    _require_role(actor, request.workspace)
    reason = _clean_text(reason, field="override reason", required=True)
    with transaction.atomic():
        _locked(request)
        if request.kind != "erasure":
            raise SubjectRequestError("only an erasure can override a legal hold")
        if request.state in TERMINAL_STATES:
            raise SubjectRequestError(f"the request is already {request.state}")
        request.override_hold, request.override_reason = True, reason
        request.override_by = actor.user
        _save(request, "override_hold", "override_reason", "override_by")
        _audit(actor, request, "override_hold", reason_chars=len(reason))
    return request


# -- preview ------------------------------------------------------------------------------------


def subject_request_preview(*, actor: Actor, request: SubjectRequest) -> list[SubjectRequestStep]:
    """Dry run: ask every step's provider how many items carry the subject (within its
    deadline) and store it as ``found``: None means "cannot tell", with the reason in ``error``.
    Changes nothing in any store. Returns the steps."""
    from memadmin.gdpr.jobs import subject_count

    _require_role(actor, request.workspace)
    request.refresh_from_db()
    subject = request.subject_id
    if subject is None or request.state not in REQUEST_OPEN_STATES:
        raise SubjectRequestError("a closed request can no longer be previewed")
    steps = list(SubjectRequestStep.objects.filter(request=request)
                 .select_related("provider").order_by("pk"))
    answers: dict[int, tuple[int | None, str]] = {}
    for step in steps:
        answers[step.pk] = _count_for_preview(step, subject, subject_count)
    with transaction.atomic():
        for step in steps:
            step.found, note = answers[step.pk]
            if step.state == "pending":
                step.error = note
                step.save(update_fields=["found", "error"])
            else:
                step.save(update_fields=["found"])
        _audit(actor, request, "preview",
               found={str(s.pk): s.found for s in steps},
               unknown=sum(1 for s in steps if s.found is None))
    return steps


def _count_for_preview(step: SubjectRequestStep, subject: str,
                       subject_count: Any) -> tuple[int | None, str]:
    if step.provider is None:
        return None, "the provider was deleted"
    return subject_count(step.provider, subject)


def scrub_text(text: str, subject: str | None) -> str:
    """A provider's message as we may store it: the clear subject id never kept."""
    if subject:
        text = text.replace(subject, ERASED)
    return text[:1000]


# -- closing (used by the cascade job) ----------------------------------------------------------


def _seal(request: SubjectRequest) -> None:
    from memadmin.gdpr.receipts import receipt_seal

    receipt_seal(request)


def request_close(*, request: SubjectRequest, state: str, actor: Actor,
                  verification: dict[str, Any] | None = None,
                  access_file: str = "") -> SubjectRequest:
    """The job's last word: ``completed`` or ``partial``, with the receipt sealed and audited.
    A completed erasure writes its tombstone and scrubs the clear id everywhere (in this same
    transaction); a completed access request keeps only its file."""
    from memadmin.gdpr.access_output import ACCESS_TTL

    with transaction.atomic():
        _locked(request)
        subject = request.subject_id
        fields = ["state", "verification", "completed_at"]
        request.state = state
        request.verification = verification or {}
        request.completed_at = timezone.now()
        if access_file:
            request.access_file = access_file
            request.access_file_expires_at = request.completed_at + ACCESS_TTL
            fields += ["access_file", "access_file_expires_at"]
        scrubbed: dict[str, int] = {}
        if state == "completed":
            if request.kind == "erasure":
                _tombstone(request)
                scrubbed = _scrub(request, subject)
            request.subject_id = None
            fields.append("subject_id")
        _save(request, *fields)
        _seal(request)
        _audit(actor, request, "finish", steps={s.provider_label[:60]: s.state
                                                for s in request.steps.order_by("pk")},
               residue=(verification or {}).get("total_residue"), scrubbed=scrubbed)
    return request


def _tombstone(request: SubjectRequest) -> None:
    """1. The tombstone: retain and imports of this subject are refused from now on."""
    exists = Tombstone.objects.filter(workspace_id=request.workspace_id,
                                      key_id=request.subject_key_id,
                                      subject_hash=request.subject_hash,
                                      lifted_at__isnull=True).exists()
    if not exists:
        Tombstone.objects.create(workspace_id=request.workspace_id,
                                 key_id=request.subject_key_id,
                                 subject_hash=request.subject_hash, request=request)


def _scrub(request: SubjectRequest, subject: str | None) -> dict[str, int]:
    """Remove the clear subject id from everything memadmin keeps (the stores were emptied by
    the steps). Returns how many rows and files of each kind were touched."""
    from django_tasks_db.models import DBTaskResult

    from memadmin.memory.services import job_params_erase_subject

    counts = {"steps": 0, "jobs": 0, "files": 0, "task_results": 0, "access_files": 0}
    if not subject:
        return counts
    # 2. The request's steps: provider messages are scrubbed when stored; once more here.
    for step in SubjectRequestStep.objects.filter(request=request, error__contains=subject):
        step.error = scrub_text(step.error, subject)
        step.save(update_fields=["error"])
        counts["steps"] += 1
    # 3. Our job rows: the cascade job (params hold the request id only; its error may quote a
    # provider), and owners' export / bulk-delete jobs that filtered on this subject: their
    # params lose the id and their files (which may hold the erased items) are deleted.
    job_ids: list[Any] = [request.job_id] if request.job_id else []
    cascade_jobs = Job.objects.filter(kind=JOB_KIND, params__request=str(request.pk))
    for job in cascade_jobs:
        if subject in job.error:
            Job.objects.filter(pk=job.pk).update(error=scrub_text(job.error, subject))
        job_ids.append(job.pk)
    for job in Job.objects.filter(workspace_id=request.workspace_id,
                                  params__filters__subject=subject):
        job_params_erase_subject(job)
        counts["jobs"] += 1
        job_ids.append(job.pk)
    # Files this workspace's jobs keep (exports, whatever their filter, and import uploads)
    # that hold an item of the subject are deleted: they would hand the erased data back.
    for job in Job.objects.filter(workspace_id=request.workspace_id).exclude(
            kind=JOB_KIND).only("pk", "kind", "params", "result_file"):
        names = [job.result_file] if job.result_file else []
        upload = job.params.get("upload") if isinstance(job.params, dict) else None
        if isinstance(upload, str) and upload:
            names.append(upload)
        for name in names:
            if _mentions(name, subject):
                counts["files"] += _delete_file(name)
                if name == job.result_file:
                    Job.objects.filter(pk=job.pk).update(result_file="",
                                                         result_expires_at=None)
                job_ids.append(job.pk)
        counts["files"] += _delete_tree(f"exports/{job.pk}") if job.kind == "memory_export" \
            and job.pk in job_ids else 0
    # 4. The task backend's rows for these jobs: arguments are job ids only, but return values
    # and tracebacks are free text.
    if job_ids:
        counts["task_results"] = DBTaskResult.objects.filter(
            args_kwargs__args__0__in=[str(pk) for pk in job_ids]).update(
            return_value=None, traceback="")
    # 5. Earlier access-request files of this subject in this workspace.
    hashes = Q()
    for key_id, digest in subject_hashes_all_keys(request.workspace_id, subject):
        hashes |= Q(subject_key_id=key_id, subject_hash=digest)
    for earlier in SubjectRequest.objects.filter(hashes, workspace_id=request.workspace_id,
                                                 kind="access"):
        # The ZIP, and the parts of one that never completed.
        counts["access_files"] += _delete_file(earlier.access_file)
        counts["files"] += _delete_tree(f"subject-requests/{earlier.pk}")
        if earlier.access_file:
            SubjectRequest.objects.filter(pk=earlier.pk).update(access_file="",
                                                                access_file_expires_at=None)
    # 6. Quarantine entries hold item references, labels, rule ids and spans, never a subject
    # id; the built-in store deleted those of the erased items with them.
    return counts


def _mentions(name: str, subject: str) -> bool:
    """Whether a stored file (JSON Lines, or a ZIP of them) contains the subject id as JSON
    writes it. Streamed in chunks with an overlap, so memory stays constant."""
    import json
    import zipfile

    needles = {json.dumps(subject, ensure_ascii=False)[1:-1].encode(),
               json.dumps(subject)[1:-1].encode()}
    overlap = max(len(n) for n in needles)

    def found_in(stream: Any) -> bool:
        tail = b""
        while chunk := stream.read(64 * 1024):
            window = tail + chunk
            if any(n in window for n in needles):
                return True
            tail = window[-overlap:]
        return False

    if not name or not default_storage.exists(name):
        return False
    with default_storage.open(name, "rb") as handle:
        if zipfile.is_zipfile(handle):
            handle.seek(0)
            with zipfile.ZipFile(handle) as archive:
                for member in archive.namelist():
                    with archive.open(member) as stream:
                        if found_in(stream):
                            return True
            return False
        handle.seek(0)
        return found_in(handle)


def _delete_file(name: str) -> int:
    if name and default_storage.exists(name):
        default_storage.delete(name)
        return 1
    return 0


def _delete_tree(prefix: str) -> int:
    """Delete every file under ``prefix`` in the default storage (parts of a job's output)."""
    try:
        directories, files = default_storage.listdir(prefix)
    except (FileNotFoundError, NotADirectoryError, OSError):
        return 0
    removed = 0
    for name in files:
        default_storage.delete(f"{prefix}/{name}")
        removed += 1
    for directory in directories:
        removed += _delete_tree(f"{prefix}/{directory}")
    return removed


# -- upkeep (a scheduler duty) ------------------------------------------------------------------


def subject_requests_upkeep(now: dt.datetime | None = None) -> dict[str, int]:
    """Delete access files past their expiry, and close running requests whose job stopped
    for good without closing them (cancelled while its worker was dead, or out of attempts)."""
    now = now or timezone.now()
    expired = 0
    for request in SubjectRequest.objects.filter(access_file_expires_at__lt=now).exclude(
            access_file=""):
        _delete_file(request.access_file)
        SubjectRequest.objects.filter(pk=request.pk).update(access_file="",
                                                            access_file_expires_at=None)
        expired += 1
    closed = 0
    stopped = SubjectRequest.objects.filter(
        state="running", job__state__in=["cancelled", "failed"]).select_related("job")
    for request in stopped:
        with transaction.atomic():
            _locked(request)
            if request.state != "running" or request.job is None:
                continue
            actor = Actor.system("subject request upkeep")
            if request.job.state == "cancelled":
                request_close_cancelled(request)
                _audit(actor, request, "cancelled_by_upkeep")
            else:
                SubjectRequestStep.objects.filter(
                    request=request, state__in=["pending", "running", "retrying"]).update(
                    state="failed", error="the job stopped before this step finished",
                    next_attempt_at=None, finished_at=now)
                request.state, request.completed_at = "partial", now
                _save(request, "state", "completed_at")
                _seal(request)
                _audit(actor, request, "finish", reason="the job failed")
        closed += 1
    return {"expired_files": expired, "closed": closed}

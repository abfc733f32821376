"""The subject-request state machine of DESIGN.md "Subject requests": every change of a
request's state lives here, and nowhere else.

Every transition is keyword-only, runs in ``transaction.atomic`` with the request row locked,
writes its audit event in the same transaction and raises ``SubjectRequestError`` for a refused
transition or bad input. Views only check the ``subject_requests`` capability; the transitions
enforce the rest themselves (the requester submits, another compliance user approves or denies,
the requester or an admin cancels, an admin alone cancels a running request).

    new --submit--> awaiting_approval (erasure, four eyes) --approve--> approved
    new --submit--> approved (access, or erasure without four eyes)
    awaiting_approval --deny--> denied
    approved --start (the job)--> running --close--> completed | partial
    partial --retry--> running (if what was approved is unchanged, else --> awaiting_approval)
    partial --override (four eyes)--> awaiting_approval
    partial --resolve a step by hand (justification)--> partial
    partial --close with exceptions (reason)--> completed_with_exceptions
    new | awaiting_approval | approved | partial --cancel (requester, admin)--> cancelled
    running --cancel (admin; after the step in flight)--> cancelled

Four eyes hold: an approval records a digest of what was approved (``approval_digest``: kind,
subject hash, override and its reason, the providers). Where the workspace needs four eyes for
an erasure, nothing runs unless the digest still matches: an override after a run, or any
other change, sends the request back to ``awaiting_approval`` for an approver who is neither
the requester nor the person who made the change. An override is refused while the approved
erasure is waiting to run or running.

The clear subject id is kept only while the request can still run; it is dropped (NULL) at
``completed``, ``denied`` and ``cancelled``. Audit events carry the keyed hash, never the id.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from memadmin.audit.services import Actor, audit_event_create
from memadmin.events import services as events
from memadmin.gdpr import scrub
from memadmin.gdpr.access_output import ACCESS_TTL
from memadmin.gdpr.models import (
    CHANGING_KINDS,
    JOB_KIND,
    REQUEST_OPEN_STATES,
    SubjectRequest,
    SubjectRequestItem,
    SubjectRequestStep,
)
from memadmin.gdpr.receipts import receipt_seal
from memadmin.jobs.models import Job
from memadmin.lib.keys import canonical_json, subject_hash
from memadmin.providers import contract as c
from memadmin.providers.models import ProviderConfig
from memadmin.workspaces import access
from memadmin.workspaces.models import Workspace

#: Kinds a request can be created with (a ``lift`` is made by ``subject_request_lift``).
KINDS = ("access", "erasure", "rectification", "restriction")
TERMINAL_STATES = frozenset({"completed", "completed_with_exceptions", "denied", "cancelled"})
REASON_MAX_CHARS = 2000
#: Step states the job still has to run.
UNFINISHED_STEPS = ("pending", "running", "retrying")


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


def require_role(actor: Actor, workspace: Workspace) -> Any:
    """The acting user, if their role allows subject requests in the workspace."""
    user = _user(actor)
    if not access.can(user, "subject_requests", workspace):
        raise SubjectRequestError("your role does not allow subject requests")
    return user


def _is_admin(user: Any, workspace: Workspace) -> bool:
    return access.can(user, "manage_workspace", workspace)


def clean_text(value: Any, *, field: str, required: bool) -> str:
    """A reason as we keep it: checked text, stripped, at most ``REASON_MAX_CHARS``."""
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


def _locked(sr: SubjectRequest) -> SubjectRequest:
    """The request row, locked for this transaction (transitions never race)."""
    fresh = SubjectRequest.objects.select_for_update().get(pk=sr.pk)
    sr.__dict__.update({k: v for k, v in fresh.__dict__.items() if not k.startswith("_")})
    return sr


def _expect(sr: SubjectRequest, *states: str, action: str) -> None:
    if sr.state not in states:
        raise SubjectRequestError(
            f"cannot {action} a request that is {sr.state.replace('_', ' ')}")


def _audit(actor: Actor, sr: SubjectRequest, action: str, **data: Any) -> None:
    audit_event_create(
        workspace=sr.workspace, actor=actor, action=f"subject_request.{action}",
        target_type="subject_request", target_id=sr.pk,
        data={"kind": sr.kind, "subject_hash": sr.subject_hash,
              "key_id": sr.subject_key_id, "state": sr.state, **data},
    )


def _save(sr: SubjectRequest, *fields: str) -> None:
    sr.save(update_fields=[*fields, "updated_at"])


def approval_digest(sr: SubjectRequest) -> str:
    """SHA-256 over what an approval covers: kind, subject hash, override and its reason, the
    providers the steps will contact (step and provider ids), the restriction a lift lifts, and
    a rectification's corrections (item, revision it was made against, hash of the new text)."""
    steps = SubjectRequestStep.objects.filter(request=sr).order_by("pk")
    corrections = (SubjectRequestItem.objects.filter(request=sr, state="proposed")
                   .order_by("pk").values_list("pk", "step_id", "partition", "item_id",
                                               "from_revision", "content"))
    body = {
        "lifts": str(sr.lifts_id) if sr.lifts_id else None,
        # The text itself is hashed here (not its stored hash): changing it voids the approval.
        "corrections": [[*row[:5], content_hash(row[5])] for row in corrections],
        "kind": sr.kind,
        "subject": [sr.subject_key_id, sr.subject_hash],
        "override_hold": sr.override_hold,
        "override_reason": sr.override_reason if sr.override_hold else "",
        "providers": [[pk, None if provider is None else str(provider)]
                      for pk, provider in steps.values_list("pk", "provider_id")],
    }
    return hashlib.sha256(canonical_json(body)).hexdigest()


def needs_four_eyes(sr: SubjectRequest) -> bool:
    """Whether a second compliance user must approve: every kind that changes memory, where
    the workspace asks for four eyes (its ``four_eyes_erasure`` setting)."""
    return sr.kind in CHANGING_KINDS and sr.workspace.four_eyes_erasure


def approval_holds(sr: SubjectRequest) -> bool:
    """Whether what is about to run is still what was approved. A request approved without a
    recorded digest (from before digests) runs only where no second approval is needed."""
    if sr.approval_digest:
        return sr.approval_digest == approval_digest(sr)
    return not needs_four_eyes(sr)


def _reset_unfinished_steps(sr: SubjectRequest, steps: QuerySet[SubjectRequestStep]) -> int:
    """Steps to run again go back to ``pending``; verification and receipt start over."""
    retried = steps.update(state="pending", error="", next_attempt_at=None, residue=None,
                           finished_at=None)
    SubjectRequestStep.objects.filter(request=sr, state="done").update(residue=None)
    sr.verification = {}
    sr.receipt, sr.receipt_key_id, sr.receipt_signature = None, "", ""
    _save(sr, "verification", "receipt", "receipt_key_id", "receipt_signature")
    return retried


def _send_back(actor: Actor, sr: SubjectRequest, why: str) -> None:
    """The approval is void: the request waits for a new one (row locked by the caller)."""
    sr.state, sr.decided_by, sr.decided_at, sr.approval_digest = \
        "awaiting_approval", None, None, ""
    sr.receipt, sr.receipt_key_id, sr.receipt_signature = None, "", ""
    _save(sr, "state", "decided_by", "decided_at", "approval_digest", "receipt",
          "receipt_key_id", "receipt_signature")
    _audit(actor, sr, "approval_void", why=why)


def audit_request_event(*, actor: Actor, subject_request: SubjectRequest, action: str,
                        **data: Any) -> None:
    """Audit something done to a request that is not a transition (e.g. a preview), in the
    caller's transaction, with the same data every request event carries."""
    _audit(actor, subject_request, action, **data)


# -- create and submit --------------------------------------------------------------------------


def subject_request_create(*, actor: Actor, workspace: Workspace, kind: str, subject_id: str,
                           reason: str, override_hold: bool = False,
                           override_reason: str = "") -> SubjectRequest:
    """A new request (state ``new``) with one pending step per enabled provider.

    Another open request for the same subject is not refused, only flagged (see
    ``selectors.open_duplicates``); the audit event records how many there are."""
    require_role(actor, workspace)
    if kind not in KINDS:
        raise SubjectRequestError("kind must be access, erasure, rectification or restriction")
    subject = clean_subject_id(subject_id)
    reason = clean_text(reason, field="reason", required=True)
    override_hold = bool(override_hold)
    override_reason = clean_text(override_reason, field="override reason",
                                 required=override_hold)
    if override_hold and kind != "erasure":
        raise SubjectRequestError("only an erasure can override a legal hold")
    key_id, digest = subject_hash(workspace.pk, subject)
    now = timezone.now()
    with transaction.atomic():
        sr = SubjectRequest.objects.create(
            workspace=workspace, kind=kind, subject_key_id=key_id, subject_hash=digest,
            subject_id=subject, reason=reason, requested_by=actor.user,
            override_hold=override_hold, override_reason=override_reason if override_hold else "",
            override_by=actor.user if override_hold else None,
            due_at=now + dt.timedelta(days=workspace.subject_request_due_days),
        )
        configs = ProviderConfig.objects.filter(workspace=workspace, enabled=True)
        SubjectRequestStep.objects.bulk_create([
            SubjectRequestStep(request=sr, provider=config, provider_label=config.name)
            for config in configs.order_by("name", "slug")
        ])
        duplicates = _open_with_hash(sr).count()
        _audit(actor, sr, "create", steps=len(configs), duplicates_open=duplicates,
               override_hold=override_hold, reason_chars=len(reason))
    return sr


def _open_with_hash(sr: SubjectRequest) -> QuerySet[SubjectRequest]:
    return (SubjectRequest.objects
            .filter(workspace_id=sr.workspace_id, subject_key_id=sr.subject_key_id,
                    subject_hash=sr.subject_hash, state__in=REQUEST_OPEN_STATES)
            .exclude(pk=sr.pk))


def subject_request_submit(*, actor: Actor, subject_request: SubjectRequest) -> SubjectRequest:
    """The requester sends the request on: an erasure in a four-eyes workspace waits for
    approval; anything else is approved at once and its job is started."""
    sr = subject_request
    require_role(actor, sr.workspace)
    with transaction.atomic():
        _locked(sr)
        if sr.requested_by_id != actor.user.pk:
            raise SubjectRequestError("only the requester can submit the request")
        _expect(sr, "new", action="submit")
        sr.submitted_at = timezone.now()
        if sr.kind == "rectification" and not SubjectRequestItem.objects.filter(
                request=sr, state="proposed").exists():
            raise SubjectRequestError("propose at least one correction before submitting")
        if needs_four_eyes(sr):
            sr.state = "awaiting_approval"
            _save(sr, "state", "submitted_at")
        else:
            sr.state = "approved"
            sr.decided_at = sr.submitted_at
            sr.approval_digest = approval_digest(sr)
            _save(sr, "state", "submitted_at", "decided_at", "approval_digest")
            _start_job(actor, sr)
        _audit(actor, sr, "submit")
    return sr


def _start_job(actor: Actor, sr: SubjectRequest) -> Job:
    """Create the cascade job (its params hold the request id only, never the subject)."""
    from memadmin.jobs.services import job_create

    sr.run_round += 1
    job = job_create(actor=actor, kind=JOB_KIND, params={"request": str(sr.pk)},
                     workspace=sr.workspace, total=sr.steps.count())
    sr.job = job
    _save(sr, "job", "run_round")
    return job


# -- four eyes ----------------------------------------------------------------------------------


def _check_second_pair_of_eyes(actor: Actor, sr: SubjectRequest, action: str) -> None:
    require_role(actor, sr.workspace)
    if sr.requested_by_id == actor.user.pk:
        raise SubjectRequestError(f"the requester cannot {action} their own request "
                                  "(four eyes: another compliance user must)")
    if sr.override_hold and sr.override_by_id == actor.user.pk:
        raise SubjectRequestError(f"whoever asked to override the legal holds cannot {action} "
                                  "it (four eyes: another compliance user must)")
    if SubjectRequestItem.objects.filter(request=sr, state="proposed",
                                         proposed_by_id=actor.user.pk).exists():
        raise SubjectRequestError(f"whoever proposed a correction cannot {action} it (four "
                                  "eyes: another compliance user must)")


def subject_request_approve(*, actor: Actor, subject_request: SubjectRequest) -> SubjectRequest:
    """Another compliance user (neither the requester nor whoever asked for the override or
    proposed a correction) approves a request awaiting approval; the digest of what they
    approved is recorded and its job starts. A request sent back after a run re-runs the steps
    that are not done."""
    sr = subject_request
    with transaction.atomic():
        _locked(sr)
        _check_second_pair_of_eyes(actor, sr, "approve")
        _expect(sr, "awaiting_approval", action="approve")
        rerun = 0
        if sr.run_round:
            rerun = _reset_unfinished_steps(
                sr, SubjectRequestStep.objects.filter(request=sr, provider__enabled=True)
                .exclude(state__in=["done", "resolved"]))
        sr.state, sr.decided_by, sr.decided_at = "approved", actor.user, timezone.now()
        sr.approval_digest = approval_digest(sr)
        _save(sr, "state", "decided_by", "decided_at", "approval_digest")
        _start_job(actor, sr)
        _audit(actor, sr, "approve", digest=sr.approval_digest, steps_rerun=rerun)
    return sr


def subject_request_deny(*, actor: Actor, subject_request: SubjectRequest,
                         reason: str) -> SubjectRequest:
    """Another compliance user denies an erasure awaiting approval, with a reason."""
    sr = subject_request
    reason = clean_text(reason, field="reason", required=True)
    with transaction.atomic():
        _locked(sr)
        _check_second_pair_of_eyes(actor, sr, "deny")
        _expect(sr, "awaiting_approval", action="deny")
        sr.state, sr.decided_by, sr.decided_at = "denied", actor.user, timezone.now()
        sr.decision_reason = reason
        sr.completed_at = sr.decided_at
        redacted = scrub.request_texts_redact(sr, sr.subject_id)
        sr.subject_id = None
        items_forget_content(sr)
        _save(sr, "state", "decided_by", "decided_at", "decision_reason", "completed_at",
              "subject_id", *redacted)
        receipt_seal(sr)
        _audit(actor, sr, "deny", reason_chars=len(reason))
    return sr


# -- cancel, retry, override --------------------------------------------------------------------


def subject_request_cancel(*, actor: Actor, subject_request: SubjectRequest) -> SubjectRequest:
    """Cancel: the requester or an admin before the job runs; an admin alone while it runs
    (the job finishes the step in flight, then stops and the request becomes ``cancelled``)."""
    from memadmin.jobs.services import job_cancel

    sr = subject_request
    user = require_role(actor, sr.workspace)
    with transaction.atomic():
        _locked(sr)
        admin = _is_admin(user, sr.workspace)
        if sr.state == "running":
            if not admin:
                raise SubjectRequestError("only an admin can cancel a running request")
        else:
            _expect(sr, "new", "awaiting_approval", "approved", "partial", action="cancel")
            if not admin and sr.requested_by_id != user.pk:
                raise SubjectRequestError("only the requester or an admin can cancel")
        sr.cancelled_by = user
        _save(sr, "cancelled_by")
        job = (Job.objects.select_for_update().filter(pk=sr.job_id).first()
               if sr.job_id else None)
        if job is not None and not job.finished:
            job_cancel(actor=actor, job=job)
        if sr.state != "running" or job is None or job.state != "running":
            # Nothing is in flight: the request stops now. (A running job stops itself after
            # its current step and closes the request then.)
            _close_cancelled(sr)
        _audit(actor, sr, "cancel", in_flight=sr.state == "running")
    return sr


def _close_cancelled(sr: SubjectRequest) -> None:
    """Close a request as ``cancelled`` (its clear id dropped, a receipt sealed), in the
    caller's transaction with the row locked."""
    from memadmin.gdpr import access_output
    from memadmin.lib.files import delete_file

    sr.state, sr.completed_at = "cancelled", timezone.now()
    redacted = scrub.request_texts_redact(sr, sr.subject_id)
    sr.subject_id = None
    items_forget_content(sr)
    SubjectRequestStep.objects.filter(request=sr, state__in=UNFINISHED_STEPS).update(
        next_attempt_at=None)
    if sr.kind == "access":
        # What a partly done access request gathered goes with it (it quotes the clear id).
        access_output.delete_parts(sr)
        delete_file(sr.access_file)
        sr.access_file, sr.access_file_expires_at = "", None
        redacted += ["access_file", "access_file_expires_at"]
    _save(sr, "state", "completed_at", "subject_id", *redacted)
    receipt_seal(sr)


def subject_request_retry(*, actor: Actor, subject_request: SubjectRequest,
                          step_ids: Sequence[int] | None = None) -> SubjectRequest:
    """Run a partial request again: the steps not ``done`` (or just ``step_ids`` among them)
    go back to ``pending``, a new job runs them, then verification runs again. If what was
    approved has changed since, nothing runs: the request goes back to ``awaiting_approval``
    (returned in that state)."""
    sr = subject_request
    require_role(actor, sr.workspace)
    with transaction.atomic():
        _locked(sr)
        _expect(sr, "partial", action="retry")
        # Disabled or deleted providers are not asked again (resolve them by hand instead).
        steps = (SubjectRequestStep.objects.filter(request=sr, provider__enabled=True)
                 .exclude(state__in=["done", "resolved"]))
        if step_ids is not None:
            wanted = {int(x) for x in step_ids}
            if not wanted or not wanted <= set(steps.values_list("pk", flat=True)):
                raise SubjectRequestError("only steps of this request that are not done can "
                                          "be retried")
            steps = steps.filter(pk__in=wanted)
        if not approval_holds(sr):
            _send_back(actor, sr, "what was approved changed before the retry")
            return sr
        if not steps.exists():
            raise SubjectRequestError(
                "no step can run again (their providers are disabled or deleted): resolve "
                "them by hand, close the request with exceptions, or cancel it")
        retried = _reset_unfinished_steps(sr, steps)
        sr.state = "running"
        _save(sr, "state")
        _start_job(actor, sr)
        _audit(actor, sr, "retry", steps=retried, round=sr.run_round)
    return sr


def subject_request_set_override(*, actor: Actor, subject_request: SubjectRequest,
                                 reason: str) -> SubjectRequest:
    """Let the erasure remove items under freeze or legal hold (``forget(override_hold=True)``
    on the steps that run from now on). Compliance only, with a reason; audited. Refused once
    the erasure is approved and until its run ends; on a ``partial`` erasure that needs four
    eyes, the request goes back to ``awaiting_approval`` for another compliance user."""
    sr = subject_request
    require_role(actor, sr.workspace)
    reason = clean_text(reason, field="override reason", required=True)
    with transaction.atomic():
        _locked(sr)
        if sr.kind != "erasure":
            raise SubjectRequestError("only an erasure can override a legal hold")
        if sr.state in TERMINAL_STATES:
            raise SubjectRequestError(f"the request is already {sr.state}")
        if sr.state in ("approved", "running"):
            raise SubjectRequestError(
                "the approved erasure is under way; an override can be asked for once it has "
                "ended as partial (or cancel it), and needs another approval")
        sr.override_hold, sr.override_reason = True, reason
        sr.override_by = actor.user
        _save(sr, "override_hold", "override_reason", "override_by")
        _audit(actor, sr, "override_hold", reason_chars=len(reason))
        if sr.state == "partial" and needs_four_eyes(sr):
            _send_back(actor, sr, "legal holds to be overridden")
        elif sr.approval_digest:
            # No second approval needed here: the requester's side decides the change alone.
            sr.approval_digest = approval_digest(sr)
            _save(sr, "approval_digest")
    return sr


# -- no dead ends: a step resolved by hand, a partial request closed ---------------------------


def subject_request_step_resolve(*, actor: Actor, subject_request: SubjectRequest,
                                 step_id: int, justification: str) -> SubjectRequestStep:
    """Compliance resolves a step of a ``partial`` request by hand (Fides' manual
    finalisation): the provider's part was handled outside memadmin, or cannot be. A written
    justification is required; it is audited and shown on the receipt. The request stays
    ``partial`` (retry the rest, or close it)."""
    sr = subject_request
    user = require_role(actor, sr.workspace)
    justification = clean_text(justification, field="justification", required=True)
    with transaction.atomic():
        _locked(sr)
        _expect(sr, "partial", action="resolve a step of")
        step = (SubjectRequestStep.objects.select_for_update()
                .filter(request=sr, pk=step_id).exclude(state__in=["done", "resolved"]).first())
        if step is None:
            raise SubjectRequestError("only a step of this request that is not done can be "
                                      "resolved by hand")
        before = step.state
        step.state, step.next_attempt_at = "resolved", None
        step.resolution = scrub.redact(justification, sr.subject_id, scrub.subject_label(sr))
        step.resolved_by, step.resolved_at = user, timezone.now()
        step.finished_at = step.finished_at or step.resolved_at
        step.save(update_fields=["state", "next_attempt_at", "resolution", "resolved_by",
                                 "resolved_at", "finished_at"])
        receipt_seal(sr)  # the partial receipt now shows the resolution
        _audit(actor, sr, "step_resolved", step=step.pk, provider=step.provider_label[:60],
               was=before, justification_chars=len(justification))
    return step


def subject_request_close_with_exceptions(*, actor: Actor, subject_request: SubjectRequest,
                                          reason: str) -> SubjectRequest:
    """Close a ``partial`` request as ``completed_with_exceptions``, with a reason: the steps
    not done stay on the receipt as the exceptions. The clear id is dropped as at completion
    (an erasure also writes its tombstone and scrubs the id from memadmin's rows and files);
    an access request's bundle is assembled one last time."""
    from memadmin.gdpr import access_output

    sr = subject_request
    require_role(actor, sr.workspace)
    reason = clean_text(reason, field="reason", required=True)
    with transaction.atomic():
        _locked(sr)
        _expect(sr, "partial", action="close")
        subject = sr.subject_id
        steps = list(SubjectRequestStep.objects.filter(request=sr).select_related("provider")
                     .order_by("pk"))
        exceptions = [s.provider_label for s in steps if s.state != "done"]
        sr.state, sr.completed_at = "completed_with_exceptions", timezone.now()
        sr.decision_reason = reason
        fields = ["state", "completed_at", "decision_reason", "subject_id"]
        scrubbed: dict[str, int] = {}
        if sr.kind == "access":
            sr.access_file = access_output.assemble(sr, steps, {}, final=True)
            sr.access_file_expires_at = sr.completed_at + ACCESS_TTL
            fields += ["access_file", "access_file_expires_at"]
        fields += scrub.request_texts_redact(sr, subject)
        if sr.kind == "erasure":
            scrub.tombstone_write(sr)
            scrubbed = scrub.scrub_subject(sr, subject)
            events.subject_erased(sr, actor=actor.label)
        sr.subject_id = None
        items_forget_content(sr)
        _save(sr, *fields)
        receipt_seal(sr)
        _audit(actor, sr, "closed_with_exceptions", exceptions=[e[:60] for e in exceptions],
               reason_chars=len(reason), scrubbed=scrubbed)
    return sr


# -- Art. 12(3): a due-date extension -------------------------------------------------------------

#: At most this many months in all (GDPR Art. 12(3): "by two further months").
MAX_EXTENSION_MONTHS = 2


def _add_months(when: dt.datetime, months: int) -> dt.datetime:
    import calendar

    month0 = when.month - 1 + months
    year, month = when.year + month0 // 12, month0 % 12 + 1
    return when.replace(year=year, month=month,
                        day=min(when.day, calendar.monthrange(year, month)[1]))


def subject_request_extend(*, actor: Actor, subject_request: SubjectRequest, months: int,
                           reason: str) -> SubjectRequest:
    """Move an open request's due date on by ``months`` (up to two months in all), with a
    reason (the subject must be told why). Audited; shown in the list and on the receipt."""
    sr = subject_request
    user = require_role(actor, sr.workspace)
    reason = clean_text(reason, field="reason", required=True)
    with transaction.atomic():
        _locked(sr)
        if sr.state not in REQUEST_OPEN_STATES:
            raise SubjectRequestError(f"cannot extend a request that is {sr.state_label.lower()}")
        if not isinstance(months, int) or months < 1 or \
                sr.extension_months + months > MAX_EXTENSION_MONTHS:
            raise SubjectRequestError(
                f"the due date can be extended by {MAX_EXTENSION_MONTHS} months in all "
                f"({sr.extension_months} used)")
        sr.due_at = _add_months(sr.due_at, months)
        sr.extension_months += months
        sr.extension_reason = scrub.redact(reason, sr.subject_id, scrub.subject_label(sr))
        sr.extended_by = user
        _save(sr, "due_at", "extension_months", "extension_reason", "extended_by")
        _audit(actor, sr, "extend", months=months, total_months=sr.extension_months,
               due=sr.due_at.isoformat(), reason_chars=len(reason))
    return sr


# -- the job's transitions ----------------------------------------------------------------------


def subject_request_start(*, actor: Actor, subject_request: SubjectRequest) -> bool:
    """The job begins: ``approved`` becomes ``running``. True if the job should run its steps
    (the request is now running, or already was: a resumed job), False otherwise."""
    sr = subject_request
    with transaction.atomic():
        _locked(sr)
        if sr.state in ("approved", "running") and not approval_holds(sr):
            _send_back(actor, sr, "what was approved changed before the run")
            return False
        if sr.state == "approved":
            sr.state, sr.started_at = "running", timezone.now()
            _save(sr, "state", "started_at")
            _audit(actor, sr, "start", round=sr.run_round)
        return sr.state == "running"


def subject_request_stopped(*, actor: Actor, subject_request: SubjectRequest,
                            after_steps: int) -> None:
    """The job noticed its cancellation after a step: a running request becomes
    ``cancelled``."""
    sr = subject_request
    with transaction.atomic():
        _locked(sr)
        if sr.state == "running":
            _close_cancelled(sr)
            _audit(actor, sr, "cancelled", after_steps=after_steps)


def subject_request_close(*, actor: Actor, subject_request: SubjectRequest, state: str,
                          verification: dict[str, Any] | None = None,
                          access_file: str = "") -> SubjectRequest:
    """The job's last word: ``completed`` or ``partial``, with the receipt sealed and audited.
    A completed erasure writes its tombstone and scrubs the clear id everywhere (in this same
    transaction); a completed access request keeps only its file."""
    sr = subject_request
    with transaction.atomic():
        _locked(sr)
        subject = sr.subject_id
        fields = ["state", "verification", "completed_at"]
        sr.state = state
        sr.verification = verification or {}
        sr.completed_at = timezone.now()
        if access_file:
            sr.access_file = access_file
            sr.access_file_expires_at = sr.completed_at + ACCESS_TTL
            fields += ["access_file", "access_file_expires_at"]
        scrubbed: dict[str, int] = {}
        if state == "completed":
            # The reasons lose the clear id before the receipt is sealed (an erasure's scrub
            # also redacts every other request of the workspace that quotes it).
            fields += scrub.request_texts_redact(sr, subject)
            if sr.kind == "erasure":
                scrub.tombstone_write(sr)
                scrubbed = scrub.scrub_subject(sr, subject)
                events.subject_erased(sr, actor=actor.label)
            sr.subject_id = None
            fields.append("subject_id")
            items_forget_content(sr)
        _save(sr, *fields)
        receipt_seal(sr)
        _audit(actor, sr, "finish", steps={s.provider_label[:60]: s.state
                                           for s in sr.steps.order_by("pk")},
               residue=(verification or {}).get("total_residue"), scrubbed=scrubbed)
    return sr


def subject_request_close_stopped(*, subject_request: SubjectRequest,
                                  now: dt.datetime) -> bool:
    """Upkeep for a running request whose job stopped for good without closing it: a
    cancelled job cancels it; a failed one fails the unfinished steps and leaves it
    ``partial``. False if there was nothing to close."""
    sr = subject_request
    actor = Actor.system("subject request upkeep")
    with transaction.atomic():
        _locked(sr)
        job = Job.objects.filter(pk=sr.job_id).first() if sr.job_id else None
        if sr.state != "running" or job is None:
            return False
        if job.state == "cancelled":
            _close_cancelled(sr)
            _audit(actor, sr, "cancelled_by_upkeep")
        else:
            SubjectRequestStep.objects.filter(request=sr, state__in=UNFINISHED_STEPS).update(
                state="failed", error="the job stopped before this step finished",
                next_attempt_at=None, finished_at=now)
            sr.state, sr.completed_at = "partial", now
            _save(sr, "state", "completed_at")
            receipt_seal(sr)
            _audit(actor, sr, "finish", reason="the job failed")
    return True


# -- Art. 18(3): lifting a restriction --------------------------------------------------------

#: States of a restriction whose freezes can be lifted.
LIFTABLE_STATES = ("completed", "completed_with_exceptions")


def active_lift(restriction: SubjectRequest) -> SubjectRequest | None:
    """The lift of ``restriction`` that is open or completed (denied and cancelled ones do not
    count: the restriction may be lifted again)."""
    return (SubjectRequest.objects.filter(lifts=restriction)
            .exclude(state__in=["denied", "cancelled"]).order_by("-created_at").first())


def subject_request_lift(*, actor: Actor, restriction: SubjectRequest,
                         reason: str) -> SubjectRequest:
    """A later decision lifts a restriction: a new request of kind ``lift`` (its own steps,
    receipt and audit) for the providers where the restriction froze items, submitted at once.
    Where the workspace asks for four eyes it waits for another compliance user's approval;
    its job lifts only the freezes the restriction placed (a legal hold that was there before
    stays). Needs no clear subject id: the restriction recorded the items."""
    require_role(actor, restriction.workspace)
    reason = clean_text(reason, field="reason", required=True)
    with transaction.atomic():
        _locked(restriction)
        if restriction.kind != "restriction":
            raise SubjectRequestError("only a restriction can be lifted")
        if restriction.state not in LIFTABLE_STATES:
            raise SubjectRequestError("a restriction can be lifted once it has completed")
        if active_lift(restriction) is not None:
            raise SubjectRequestError("this restriction is already being lifted, or was lifted")
        frozen_steps = (SubjectRequestStep.objects
                        .filter(request=restriction, provider__isnull=False,
                                items__state="frozen").distinct().order_by("pk"))
        now = timezone.now()
        workspace = restriction.workspace
        lift = SubjectRequest.objects.create(
            workspace=workspace, kind="lift", lifts=restriction,
            subject_key_id=restriction.subject_key_id, subject_hash=restriction.subject_hash,
            subject_id=None, reason=reason, requested_by=actor.user, submitted_at=now,
            due_at=now + dt.timedelta(days=workspace.subject_request_due_days))
        SubjectRequestStep.objects.bulk_create([
            SubjectRequestStep(request=lift, provider_id=step.provider_id,
                               provider_label=step.provider_label,
                               found=step.items.filter(state="frozen").count())
            for step in frozen_steps])
        _audit(actor, lift, "create", lifts=str(restriction.pk), steps=len(frozen_steps),
               reason_chars=len(reason))
        _audit(actor, restriction, "lift_requested", lift=str(lift.pk))
        if needs_four_eyes(lift):
            lift.state = "awaiting_approval"
            _save(lift, "state")
        else:
            lift.state, lift.decided_at = "approved", now
            lift.approval_digest = approval_digest(lift)
            _save(lift, "state", "decided_at", "approval_digest")
            _start_job(actor, lift)
        _audit(actor, lift, "submit")
    return lift


# -- Art. 16: corrections of a rectification ----------------------------------------------------

#: States in which corrections can be proposed (in ``partial`` it voids the approval).
PROPOSE_STATES = ("new", "awaiting_approval", "partial")
CORRECTION_MAX_BYTES = 16_384


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def subject_request_correction_propose(
        *, actor: Actor, subject_request: SubjectRequest, step_id: int, partition: str,
        item_id: str, content: str) -> SubjectRequestItem:
    """Propose the corrected text of one item of the subject (a rectification). The item is
    read from its provider now: it must carry the subject's id, must not be quarantined, and
    its current revision is what the correction is made against (applied later with
    ``update_item(expected_revision=...)``, so an item changed meanwhile is not overwritten).
    A second proposal for the same item replaces the first. In ``partial`` (a correction could
    not be applied) a new proposal voids the approval where four eyes apply."""
    from memadmin.providers.registry import provider_for

    sr = subject_request
    user = require_role(actor, sr.workspace)
    if not isinstance(content, str):
        raise SubjectRequestError("the corrected text must be text")
    try:
        c.check_text(content, field="corrected text", max_bytes=CORRECTION_MAX_BYTES)
    except c.ProviderError as exc:
        raise SubjectRequestError(exc.message) from None
    if not content.strip():
        raise SubjectRequestError("the corrected text is empty (to remove an item, use an "
                                  "erasure)")
    with transaction.atomic():
        _locked(sr)
        if sr.kind != "rectification":
            raise SubjectRequestError("corrections belong to a rectification request")
        _expect(sr, *PROPOSE_STATES, action="propose a correction for")
        step = (SubjectRequestStep.objects.select_related("provider")
                .filter(request=sr, pk=step_id).first())
        if step is None or step.provider is None or not step.provider.enabled:
            raise SubjectRequestError("that provider is not part of this request")
        config = step.provider
        try:
            detail = provider_for(config).get_item(
                item_id, scope=c.Scope.of(partition), deadline=config.request_deadline)
        except c.ProviderError as exc:
            raise SubjectRequestError(
                scrub.scrub_text(f"the item could not be read ({exc.code}: {exc.message})",
                                 sr.subject_id)) from None
        item = detail.item
        if item.data_subject_id != sr.subject_id or item.partition != partition:
            raise SubjectRequestError("that item does not belong to this data subject")
        if item.quarantine == "pending":
            raise SubjectRequestError("that item is quarantined: review it first")
        if item.content == content:
            raise SubjectRequestError("the corrected text is the same as the current text")
        row, _ = SubjectRequestItem.objects.update_or_create(
            request=sr, step=step, partition=partition, item_id=item.id,
            defaults={"tier": item.tier, "state": "proposed", "from_revision": item.revision,
                      "to_revision": None, "old_hash": content_hash(item.content),
                      "new_hash": content_hash(content), "content": content, "note": "",
                      "proposed_by": user})
        _audit(actor, sr, "correction_proposed", item=item.id[:200], step=step.pk,
               from_revision=item.revision, new_hash=row.new_hash)
        if sr.state == "partial":
            if needs_four_eyes(sr):
                _send_back(actor, sr, "a correction was proposed after the run")
            elif sr.approval_digest:
                sr.approval_digest = approval_digest(sr)
                _save(sr, "approval_digest")
    return row


def items_forget_content(sr: SubjectRequest) -> None:
    """A closed request keeps no proposed text (only ids, revisions and hashes)."""
    SubjectRequestItem.objects.filter(request=sr).exclude(content="").update(content="")

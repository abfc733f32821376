"""The cascade job of a subject request (kind ``subject_request_run``, params
``{"request": "<uuid>"}`` only: the clear subject id is read from the request row, never put in
a job or task argument).

The steps are the resume state. For each step not finished:

1. mark it ``running`` (attempts + 1) and commit;
2. call its provider: ``forget(data_subject_id=..., override_hold=..., operation_id=...)`` for
   an erasure, ``export(subject=...)`` into a part file for an access request. The operation id
   is deterministic per (request, step, run round, override), so a call repeated after a crash
   is replayed by the provider, not applied twice;
3. record the answer and the step's new state in one transaction, and save progress (which
   renews the lease and notices a cancellation: the job then stops after this step).

A worker killed anywhere loses nothing: the reaper re-runs the job, finished steps are skipped
and a step left ``running`` is called again with the same operation id. A transport failure
puts the step in ``retrying`` with a backoff (the job waits, keeping its lease, and comes back);
after ``MAX_STEP_ATTEMPTS`` it is ``failed``. Then, for an erasure, verification asks every
provider to count the subject again (residue); the request becomes ``completed`` (tombstone,
clear id scrubbed) or ``partial``. An access request assembles its ZIP.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import time
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from memadmin.audit.services import Actor
from memadmin.events import services as events
from memadmin.gdpr import access_output
from memadmin.gdpr.models import (
    JOB_KIND,
    NOT_ENFORCED_NOTE,
    PREVIEW_JOB_KIND,
    SubjectRequest,
    SubjectRequestItem,
    SubjectRequestStep,
)
from memadmin.gdpr.scrub import scrub_text
from memadmin.gdpr.selectors import provider_scopes, subject_count
from memadmin.gdpr.transitions import (
    UNFINISHED_STEPS,
    subject_request_close,
    subject_request_start,
    subject_request_stopped,
)
from memadmin.jobs.runner import JobCancelled, JobContext, job_handler
from memadmin.lib.failpoints import failpoint
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for

logger = logging.getLogger(__name__)

MAX_STEP_ATTEMPTS = 4
#: Transport trouble worth another attempt later; anything else fails the step at once.
RETRYABLE = (c.Unavailable, c.Timeout, c.RateLimited, c.Uncertain, c.Conflict)
UNFINISHED = UNFINISHED_STEPS


def retry_base_seconds() -> float:
    """The first backoff of a step (doubling after each failure); tests make it short."""
    return float(settings.MEMADMIN_GDPR_RETRY_SECONDS)


def operation_id(sr: SubjectRequest, step: SubjectRequestStep, group: int = 0) -> str:
    """Deterministic per (request, step, run round, override, scope group): a call repeated
    after a crash is replayed by an idempotent provider instead of counted twice."""
    override = ":override" if sr.override_hold else ""
    return f"gdpr:{sr.pk}:{step.pk}:r{sr.run_round}{override}:g{group}"


def _job_actor(ctx: JobContext) -> Actor:
    user = ctx.job.created_by
    label = f"{user.get_username()} (cascade)" if user is not None else "subject request cascade"
    return Actor(label=label, user=user)


@job_handler(JOB_KIND)
def subject_request_run(ctx: JobContext) -> dict[str, Any]:
    sr = SubjectRequest.objects.select_related("workspace").get(pk=ctx.params["request"])
    actor = _job_actor(ctx)
    if not subject_request_start(actor=actor, subject_request=sr):
        return {"skipped": sr.state}
    steps_total = SubjectRequestStep.objects.filter(request=sr).count()
    try:
        ctx.save_progress(done=_finished(sr), total=steps_total)
        _run_steps(ctx, sr)
    except JobCancelled:
        with transaction.atomic():  # the request and its job end together
            subject_request_stopped(actor=actor, subject_request=sr, after_steps=_finished(sr))
            ctx.end_cancelled()
        if sr.kind == "access":
            access_output.delete_parts(sr)
        raise
    steps = list(SubjectRequestStep.objects.filter(request=sr)
                 .select_related("provider").order_by("pk"))
    if sr.kind == "erasure":
        verification = _verify(sr, steps)
        complete = all(s.state == "done" for s in steps) and \
            not verification["unverified"] and verification["total_residue"] == 0
        subject_request_close(actor=actor, subject_request=sr,
                              state="completed" if complete else "partial",
                              verification=verification)
    elif sr.kind in ("rectification", "restriction", "lift"):
        # A provider that cannot freeze (or correct) leaves the request partial: the receipt
        # and the page name it.
        complete = all(s.state == "done" for s in steps)
        subject_request_close(actor=actor, subject_request=sr,
                              state="completed" if complete else "partial")
    else:
        complete = all(s.state in ("done", "unsupported") for s in steps)
        # A partial request delivers what was gathered too, naming what is missing (its parts
        # are kept for the retry's bundle).
        name = access_output.assemble(sr, steps, _withheld(ctx), final=complete)
        subject_request_close(actor=actor, subject_request=sr,
                              state="completed" if complete else "partial", access_file=name)
    return {"state": sr.state,
            "steps": {state: sum(1 for s in steps if s.state == state)
                      for state in sorted({s.state for s in steps})},
            "removed": sum(s.removed for s in steps), "held": sum(s.held for s in steps),
            "exported": sum(s.exported for s in steps),
            "residue": sr.verification.get("total_residue")}


@job_handler(PREVIEW_JOB_KIND)
def subject_request_preview_run(ctx: JobContext) -> dict[str, Any]:
    """"Preview counts": every provider asked at once, each answer saved as it arrives (the
    job's progress: providers answered). Rerun after a crash it simply asks again: a preview
    changes nothing."""
    from memadmin.gdpr.services import subject_request_preview
    from memadmin.gdpr.transitions import SubjectRequestError

    sr = SubjectRequest.objects.select_related("workspace").get(pk=ctx.params["request"])
    total = SubjectRequestStep.objects.filter(request=sr).count()
    ctx.save_progress(done=0, total=total)
    try:
        steps = subject_request_preview(
            actor=_job_actor(ctx), subject_request=sr,
            progress=lambda answered: _keep_progress(ctx, answered))
    except SubjectRequestError as exc:
        return {"skipped": exc.message}
    ctx.save_progress(done=total)
    return {"answered": total, "unknown": sum(1 for s in steps if s.found is None),
            "lower_bounds": sum(1 for s in steps if s.found_more)}


def _keep_progress(ctx: JobContext, done: int) -> None:
    with contextlib.suppress(JobCancelled):
        ctx.save_progress(done=done)


def _finished(sr: SubjectRequest) -> int:
    return SubjectRequestStep.objects.filter(request=sr).exclude(
        state__in=UNFINISHED).count()


def _withheld(ctx: JobContext) -> dict[int, int]:
    return {int(k): int(v) for k, v in (ctx.checkpoint.get("withheld") or {}).items()}


def _run_steps(ctx: JobContext, sr: SubjectRequest) -> None:
    while True:
        todo = list(SubjectRequestStep.objects.filter(request=sr, state__in=UNFINISHED)
                    .select_related("provider").order_by("pk"))
        if not todo:
            return
        now = timezone.now()
        ready = [s for s in todo if s.state != "retrying" or s.next_attempt_at is None
                 or s.next_attempt_at <= now]
        if not ready:
            _wait(ctx, sr, min(s.next_attempt_at for s in todo if s.next_attempt_at))
            continue
        for step in ready:
            sr.refresh_from_db(fields=["override_hold", "run_round", "subject_id"])
            _run_step(ctx, sr, step)
            ctx.save_progress(done=_finished(sr))


def _wait(ctx: JobContext, sr: SubjectRequest, until: dt.datetime) -> None:
    """Wait for a backoff, renewing the lease (and noticing a cancellation) every second."""
    while (left := (until - timezone.now()).total_seconds()) > 0:
        time.sleep(min(left, 1.0))
        ctx.save_progress(done=_finished(sr))


def _keep_lease(ctx: JobContext, sr: SubjectRequest) -> None:
    """Renew the lease during a long step; a cancellation waits for the step's end."""
    with contextlib.suppress(JobCancelled):
        ctx.save_progress(done=_finished(sr))


def _run_step(ctx: JobContext, sr: SubjectRequest, step: SubjectRequestStep) -> None:
    subject = sr.subject_id
    config = step.provider
    now = timezone.now()
    step.state, step.attempts = "running", step.attempts + 1
    step.started_at = step.started_at or now
    step.save(update_fields=["state", "attempts", "started_at"])
    if config is not None and not config.enabled:
        _record(step, "failed", error="the provider is disabled")
        return
    if config is None or (subject is None and sr.kind != "lift"):
        _record(step, "failed", error="the provider was deleted" if config is None
                else "the subject id is no longer available")
        return
    scopes, fallback = provider_scopes(config)
    if not scopes and sr.kind in ("erasure", "access", "restriction"):
        _record(step, "done", error="the workspace has no namespace to ask about")
        return
    label = step.provider_label
    failpoint("gdpr_step", provider=label, request=sr.pk, stage="before_call",
              attempt=ctx.attempt)
    try:
        provider = provider_for(config)
        if sr.kind in CHANGES:
            note = CHANGES[sr.kind](ctx, sr, step, provider, scopes, fallback)
            failpoint("gdpr_step", provider=label, request=sr.pk, stage="after_call",
                      attempt=ctx.attempt)
            failed = step.items.filter(state="failed").count()
            if failed:
                _record(step, "failed", error=f"{failed} item{'s' if failed > 1 else ''} not "
                        f"changed (see below){note}")
            else:
                _record(step, "done", error=note.removeprefix("; "))
        elif sr.kind == "erasure":
            removed, held = _forget(ctx, sr, step, provider, scopes, fallback)
            failpoint("gdpr_step", provider=label, request=sr.pk, stage="after_call",
                      attempt=ctx.attempt, removed=removed)
            _record(step, "held" if held else "done", removed=removed, held=held)
        else:
            assert subject is not None
            items = _exported(provider, subject, scopes, fallback,
                              config.request_deadline)
            written, withheld = access_output.write_part(
                sr, step, items, progress=lambda: _keep_lease(ctx, sr))
            failpoint("gdpr_step", provider=label, request=sr.pk, stage="after_call",
                      attempt=ctx.attempt, exported=written)
            state = {**ctx.checkpoint,
                     "withheld": {**ctx.checkpoint.get("withheld", {}), str(step.pk): withheld}}
            _record(step, "done", exported=written)
            ctx.save_progress(done=_finished(sr), checkpoint=state)
    except c.Unsupported as exc:
        _record(step, "unsupported", error=scrub_text(f"unsupported: {exc.message}", subject))
    except RETRYABLE as exc:
        error = scrub_text(f"{exc.code}: {exc.message}", subject)
        if step.attempts >= MAX_STEP_ATTEMPTS:
            _record(step, "failed", error=f"{error} (after {step.attempts} attempts)")
        else:
            delay = retry_base_seconds() * 2 ** (step.attempts - 1)
            _record(step, "retrying", error=error,
                    next_attempt_at=timezone.now() + dt.timedelta(seconds=delay))
    except c.ProviderError as exc:
        _record(step, "failed", error=scrub_text(f"{exc.code}: {exc.message}", subject))


def _forget(ctx: JobContext, sr: SubjectRequest, step: SubjectRequestStep,
            provider: c.Provider, scopes: list[c.Scope], fallback: bool) -> tuple[int, int]:
    """(removed, held) over the step's scopes."""
    config = step.provider
    assert config is not None and sr.subject_id is not None
    removed = held = 0
    actor = ctx.job.created_by.get_username() if ctx.job.created_by else "system"
    for group, scope in enumerate(scopes):
        try:
            with events.cause("erasure"):
                result = provider.forget(
                    data_subject_id=sr.subject_id, override_hold=sr.override_hold,
                    operation_id=operation_id(sr, step, group), actor=actor, scope=scope,
                    deadline=config.request_deadline)
        except c.NotFound:
            if not fallback:
                raise
            continue
        removed, held = removed + result.removed, held + result.held
    return removed, held


def _exported(provider: c.Provider, subject: str, scopes: list[c.Scope], fallback: bool,
              deadline: float) -> Iterator[c.Item]:
    for scope in scopes:
        try:
            yield from access_output.items_for_subject(provider, subject, scope=scope,
                                                       deadline=deadline)
        except c.NotFound:
            if not fallback:
                raise


def _record(step: SubjectRequestStep, state: str, *, removed: int = 0, held: int | None = None,
            exported: int | None = None, error: str = "",
            next_attempt_at: dt.datetime | None = None) -> None:
    """Store one call's outcome (added to the earlier rounds' removals) in one UPDATE."""
    with transaction.atomic():
        step.state, step.error, step.next_attempt_at = state, error[:1000], next_attempt_at
        step.removed += removed
        fields = ["state", "error", "next_attempt_at", "removed"]
        if held is not None:
            step.held = held
            fields.append("held")
        if exported is not None:
            step.exported = exported
            fields.append("exported")
        if state != "retrying":
            step.finished_at = timezone.now()
            fields.append("finished_at")
        step.save(update_fields=fields)


def _verify(sr: SubjectRequest, steps: list[SubjectRequestStep]) -> dict[str, Any]:
    """Ask every provider again how many items still carry the subject (residue)."""
    subject = sr.subject_id or ""
    residue: dict[str, int | None] = {}
    unverified: list[str] = []
    for step in steps:
        if step.provider is None:
            found, note = None, "the provider was deleted"
        else:
            answer = subject_count(step.provider, subject)
            found, note = answer.found, answer.note
        step.residue = found
        step.save(update_fields=["residue"])
        residue[step.provider_label] = found
        if found is None:
            unverified.append(f"{step.provider_label}: {note}")
    return {"checked_at": timezone.now().isoformat(), "residue": residue,
            "total_residue": sum(n for n in residue.values() if n),
            "unverified": unverified}


# -- restriction, its lift, rectification -------------------------------------------------------

#: Restrictions freeze with the compliance kind: owners cannot lift it, the cascade of an
#: erasure holds the items (unless overridden), every write path refuses them.
RESTRICTION_KIND = "legal_hold"


def _restriction_reason(sr: SubjectRequest) -> str:
    return f"Restriction of processing (GDPR Art. 18), subject request {sr.pk}"


def _actor_label(ctx: JobContext) -> str:
    return ctx.job.created_by.get_username() if ctx.job.created_by else "system"


def _capabilities(provider: c.Provider, config: Any) -> frozenset[str]:
    return provider.capabilities(deadline=config.request_deadline)


def _not_enforced(caps: frozenset[str]) -> str:
    return f"; {NOT_ENFORCED_NOTE}" if c.DIRECT_WRITES in caps else ""


def _item_freeze_rows(config: Any, item_id: str) -> Any:
    from memadmin.memory.models import Freeze

    return Freeze.objects.filter(level="item", provider=config, item_ref=item_id,
                                 kind=RESTRICTION_KIND, lifted_at__isnull=True)


def _restrict(ctx: JobContext, sr: SubjectRequest, step: SubjectRequestStep,
              provider: c.Provider, scopes: list[c.Scope], fallback: bool) -> str:
    """Freeze (legal hold) every item of the subject the provider lists, recording each; an
    item already on hold is recorded as such and left alone (its lift is someone else's).
    Resumable: items recorded by an earlier attempt are skipped."""
    from memadmin.audit.services import audit_event_create
    from memadmin.memory.models import Freeze

    config = step.provider
    assert config is not None and sr.subject_id is not None
    caps = _capabilities(provider, config)
    if "freeze" not in caps:
        raise c.Unsupported("this provider cannot freeze items")
    if "list" not in caps:
        raise c.Unsupported("this provider cannot list the subject's items to freeze them")
    done = set(SubjectRequestItem.objects.filter(step=step)
               .values_list("partition", "item_id"))
    actor, reason = _actor_label(ctx), _restriction_reason(sr)
    filters = c.ItemFilters(subject=sr.subject_id)
    for scope in scopes:
        cursor = None
        while True:
            try:
                page = provider.list_items(filters, cursor=cursor, limit=c.LIST_MAX_LIMIT,
                                           scope=scope, deadline=config.request_deadline)
            except c.NotFound:
                if not fallback:
                    raise
                break
            for item in page.items:
                if (item.partition, item.id) in done:
                    continue
                already = _item_freeze_rows(config, item.id).exists()
                if not already:
                    provider.freeze(c.FreezeTarget(level="item", item_id=item.id),
                                    kind=RESTRICTION_KIND, reason=reason, actor=actor,
                                    scope=c.Scope.of(item.partition),
                                    deadline=config.request_deadline)
                with transaction.atomic():
                    freeze = _item_freeze_rows(config, item.id).first()
                    if freeze is None:
                        freeze = Freeze.objects.create(
                            workspace_id=sr.workspace_id, level="item", provider=config,
                            item_ref=item.id, kind=RESTRICTION_KIND, reason=reason,
                            created_by=ctx.job.created_by, created_by_label=actor[:200])
                    SubjectRequestItem.objects.create(
                        request=sr, step=step, partition=item.partition, item_id=item.id,
                        tier=item.tier, state="already_frozen" if already else "frozen",
                        from_revision=item.revision)
                    if not already:
                        audit_event_create(
                            workspace=sr.workspace, actor=_job_actor(ctx),
                            action=f"{RESTRICTION_KIND}.place", target_type="item",
                            target_id=item.id[:200],
                            data={"freeze": str(freeze.pk), "subject_request": str(sr.pk),
                                  "reason_chars": len(reason)})
                done.add((item.partition, item.id))
            _keep_lease(ctx, sr)
            cursor = page.next_cursor
            if cursor is None:
                break
    return _not_enforced(caps)


def _lift(ctx: JobContext, sr: SubjectRequest, step: SubjectRequestStep,
          provider: c.Provider, scopes: list[c.Scope], fallback: bool) -> str:
    """Lift the freezes the restriction placed on this provider (only those: an item that was
    on hold before stays on hold). Resumable: what is lifted is marked on the restriction."""
    from memadmin.audit.services import audit_event_create

    config = step.provider
    assert config is not None and sr.lifts_id is not None
    caps = _capabilities(provider, config)
    if "freeze" not in caps:
        raise c.Unsupported("this provider can no longer lift freezes")
    actor = _actor_label(ctx)
    frozen = (SubjectRequestItem.objects.filter(request_id=sr.lifts_id,
                                                step__provider=config, state="frozen")
              .order_by("pk"))
    for row in frozen:
        note = ""
        try:
            provider.lift_freeze(c.FreezeTarget(level="item", item_id=row.item_id),
                                 kind=RESTRICTION_KIND, actor=actor,
                                 scope=c.Scope.of(row.partition),
                                 deadline=config.request_deadline)
        except c.NotFound:
            note = "the item no longer exists"
        with transaction.atomic():
            lifted = _item_freeze_rows(config, row.item_id).update(
                lifted_at=timezone.now(), lifted_by=ctx.job.created_by,
                lifted_by_label=actor[:200])
            SubjectRequestItem.objects.filter(pk=row.pk).update(state="lifted", note=note)
            SubjectRequestItem.objects.update_or_create(
                request=sr, step=step, partition=row.partition, item_id=row.item_id,
                defaults={"tier": row.tier, "state": "lifted", "note": note})
            audit_event_create(
                workspace=sr.workspace, actor=_job_actor(ctx),
                action=f"{RESTRICTION_KIND}.lift", target_type="item",
                target_id=row.item_id[:200],
                data={"lifted": lifted, "subject_request": str(sr.pk),
                      "restriction": str(sr.lifts_id)})
        _keep_lease(ctx, sr)
    return ""


def _rectify(ctx: JobContext, sr: SubjectRequest, step: SubjectRequestStep,
             provider: c.Provider, scopes: list[c.Scope], fallback: bool) -> str:
    """Apply the approved corrections of this provider's items through the editor's path
    (``update_item`` against the revision each was proposed for: a new revision, the old one
    kept where the store keeps history). An item changed since, frozen or gone is not
    overwritten: it is marked ``failed`` with why (propose again, which needs a new
    approval)."""
    from memadmin.audit.services import audit_event_create

    config = step.provider
    assert config is not None
    actor = _actor_label(ctx)
    rows = SubjectRequestItem.objects.filter(step=step, state="proposed").order_by("pk")
    for row in rows:
        assert row.from_revision is not None
        try:
            result = provider.update_item(
                row.item_id, row.content, "replace", expected_revision=row.from_revision,
                operation_id=f"gdpr:{sr.pk}:i{row.pk}:r{sr.run_round}", actor=actor,
                scope=c.Scope.of(row.partition), deadline=config.request_deadline)
        except c.Conflict:
            _item_failed(row, "the item changed after the correction was proposed: propose "
                              "it again against the current text")
            continue
        except (c.Frozen, c.NotFound, c.InvalidRequest, c.TooLarge) as exc:
            _item_failed(row, scrub_text(f"{exc.code}: {exc.message}", sr.subject_id))
            continue
        with transaction.atomic():
            SubjectRequestItem.objects.filter(pk=row.pk).update(
                state="applied", to_revision=result.revision, content="", note="")
            audit_event_create(
                workspace=sr.workspace, actor=_job_actor(ctx), action="memory.edit",
                target_type="item", target_id=row.item_id[:200],
                data={"subject_request": str(sr.pk), "mode": "replace",
                      "from_revision": row.from_revision, "to_revision": result.revision,
                      "bytes": result.bytes, "new_hash": row.new_hash})
        _keep_lease(ctx, sr)
    return ""


def _item_failed(row: SubjectRequestItem, note: str) -> None:
    SubjectRequestItem.objects.filter(pk=row.pk).update(state="failed", note=note[:1000])


CHANGES = {"restriction": _restrict, "lift": _lift, "rectification": _rectify}

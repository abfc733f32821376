"""Background jobs of the memory app."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.db import transaction
from django.utils import timezone

from memadmin.audit.services import Actor, audit_event_create
from memadmin.jobs.runner import JobCancelled, JobContext, LeaseLost, job_handler
from memadmin.memory.models import MemoryItem, OperationRecord
from memadmin.memory.services import BULK_DELETE_BATCH, job_params_erase_subject
from memadmin.providers import wire
from memadmin.providers.registry import builtin_store, namespace_scope, provider_for
from memadmin.workspaces.models import Namespace

RECOUNT_BATCH = 5000


@job_handler("namespace_recount")
def namespace_recount(ctx: JobContext) -> dict[str, Any]:
    """Recount a namespace's items and bytes in batches (walking ids), then set its counter.

    Progress and the running sums are checkpointed after every batch, so a resumed job carries
    on after the last finished batch and never counts one twice. Exact when no agent writes to
    the namespace during the run; writes during it are corrected by the next recount.
    """
    namespace = Namespace.objects.select_related("resource__provider").get(
        pk=ctx.params["namespace"])
    batch_size = int(ctx.params.get("batch_size", RECOUNT_BATCH))
    state = dict(ctx.checkpoint) or {"after": None, "items": 0, "bytes": 0, "batches": {}}
    if ctx.job.progress_total is None:
        ctx.save_progress(done=0, total=MemoryItem.objects.filter(namespace=namespace).count(),
                          checkpoint=state)
    while True:
        rows = MemoryItem.objects.filter(namespace=namespace).order_by("id")
        if state["after"]:
            rows = rows.filter(id__gt=state["after"])
        batch = list(rows.values_list("id", "bytes")[:batch_size])
        if not batch:
            break
        number = sum(len(v) for v in state["batches"].values())
        state = {
            "after": str(batch[-1][0]),
            "items": state["items"] + len(batch),
            "bytes": state["bytes"] + sum(size for _, size in batch),
            # Which batch numbers each attempt ran: the proof that none ran twice.
            "batches": {**state["batches"],
                        str(ctx.attempt): [*state["batches"].get(str(ctx.attempt), []), number]},
        }
        ctx.save_progress(done=state["items"], checkpoint=state)
    with transaction.atomic():
        before = builtin_store(namespace.resource.provider).counter_set(
            namespace.pk, items=state["items"], size=state["bytes"])
    return {"before": before, "after": {"items": state["items"], "bytes": state["bytes"]},
            "batches": state["batches"], "finished_at": timezone.now().isoformat()}


@contextmanager
def _subject_dropped_at_end(ctx: JobContext) -> Iterator[None]:
    """Drop a clear subject filter from the params once the job ends for good: success,
    cancellation, or a failure on its last attempt (a retry still needs it)."""
    try:
        yield
    except LeaseLost:
        raise
    except JobCancelled:
        job_params_erase_subject(ctx.job)
        raise
    except Exception:
        if ctx.attempt >= ctx.job.max_attempts:
            job_params_erase_subject(ctx.job)
        raise
    job_params_erase_subject(ctx.job)


@job_handler("memory_bulk_delete")
def memory_bulk_delete(ctx: JobContext) -> dict[str, Any]:
    """Delete everything matching the filters, 500 items per batch, until a batch removes none.

    Each batch commits on its own (so deleted items leave search and recall as it goes) with
    its checkpoint; its operation id names the batch, so a batch whose checkpoint was lost is
    replayed by the provider rather than counted twice. ``held`` is the last batch's count of
    frozen matches (the provider reports every held match on each call).
    """
    namespace = Namespace.objects.select_related(
        "resource__provider", "resource__workspace").get(pk=ctx.params["namespace"])
    provider = provider_for(namespace.resource.provider)
    deadline = namespace.resource.provider.request_deadline
    state = dict(ctx.checkpoint) or {"batch": 0, "removed": 0, "held": 0}
    with _subject_dropped_at_end(ctx):
        filters = wire.filters_from_wire(ctx.params["filters"])
        while True:
            with transaction.atomic():
                result = provider.delete_items(
                    filters=filters, exclude_ids=ctx.params.get("exclude_ids", []),
                    limit=BULK_DELETE_BATCH,
                    operation_id=f"bulk-delete:{ctx.job.pk}:{state['batch']}",
                    actor=ctx.params.get("actor", "system"), scope=namespace_scope(namespace),
                    deadline=deadline,
                )
                state = {"batch": state["batch"] + 1,
                         "removed": state["removed"] + result.removed, "held": result.held}
                ctx.save_progress(done=state["removed"], checkpoint=state)
            if result.removed == 0:
                break
        with transaction.atomic():
            audit_event_create(
                workspace=namespace.resource.workspace,
                actor=Actor(label=ctx.params.get("actor", "system"), user=ctx.job.created_by),
                action="memory.bulk_delete.result", target_type="namespace",
                target_id=namespace.pk,
                data={"job": str(ctx.job.pk), "removed": state["removed"],
                      "held": state["held"], "batches": state["batch"]},
            )
    return {"removed": state["removed"], "held": state["held"], "batches": state["batch"]}


@job_handler("memory_export")
def memory_export(ctx: JobContext) -> dict[str, Any]:
    from memadmin.memory.exports import run_export

    with _subject_dropped_at_end(ctx):
        return run_export(ctx)


@job_handler("retention_run")
def retention_run(ctx: JobContext) -> dict[str, Any]:
    from memadmin.memory.retention import run_retention

    return run_retention(ctx)


@job_handler("memory_import")
def memory_import(ctx: JobContext) -> dict[str, Any]:
    from memadmin.memory.imports import run_import

    return run_import(ctx)


def expire_operation_records() -> int:
    """Periodic: forget idempotency records past their expiry (registered in apps.py)."""
    deleted, _ = OperationRecord.objects.filter(expires_at__lt=timezone.now()).delete()
    return deleted

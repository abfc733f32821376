"""Background jobs of the memory app."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from memadmin.jobs.runner import JobContext, job_handler
from memadmin.memory.models import MemoryItem, NamespaceCounter
from memadmin.workspaces.models import Namespace

RECOUNT_BATCH = 5000


@job_handler("namespace_recount")
def namespace_recount(ctx: JobContext) -> dict[str, Any]:
    """Recount a namespace's items and bytes in batches (walking ids), then set its counter.

    Progress and the running sums are checkpointed after every batch, so a resumed job carries
    on after the last finished batch and never counts one twice. Exact when no agent writes to
    the namespace during the run; writes during it are corrected by the next recount.
    """
    namespace = Namespace.objects.get(pk=ctx.params["namespace"])
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
        counter, _ = NamespaceCounter.objects.select_for_update().get_or_create(
            namespace=namespace)
        before = {"items": counter.items, "bytes": counter.bytes}
        counter.items, counter.bytes = state["items"], state["bytes"]
        counter.version += 1
        counter.save(update_fields=["items", "bytes", "version"])
    return {"before": before, "after": {"items": state["items"], "bytes": state["bytes"]},
            "batches": state["batches"], "finished_at": timezone.now().isoformat()}

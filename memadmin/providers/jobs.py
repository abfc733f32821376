"""Background jobs of the providers app."""

from __future__ import annotations

from typing import Any

from memadmin.jobs.runner import JobContext, job_handler
from memadmin.providers.alerts import deliver_all
from memadmin.providers.models import HealthTransition


class AlertNotDelivered(Exception):
    """Some targets failed; the job retries them (and only them) with backoff."""


@job_handler("health_alert")
def health_alert(ctx: JobContext) -> dict[str, Any]:
    transition = HealthTransition.objects.select_related("provider__workspace").filter(
        pk=ctx.params["transition"]).first()
    if transition is None:
        return {"skipped": "the transition was expired from the history"}
    served, errors = deliver_all(transition, set(ctx.checkpoint.get("served", [])),
                                 attempt=ctx.attempt)
    ctx.save_progress(done=len(served), checkpoint={"served": sorted(served)})
    if errors:
        raise AlertNotDelivered("; ".join(errors))
    return {"delivered": len(served)}

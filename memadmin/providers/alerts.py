"""Alerts on health transitions: one per transition into ``down`` and one on recovery, delivered
to each enabled target of the workspace by a job (so failures retry with backoff)."""

from __future__ import annotations

import logging
from typing import Any

import httpx
from django.conf import settings
from django.core.mail import send_mail
from django.utils import timezone

from memadmin.audit.services import Actor
from memadmin.lib import outbound
from memadmin.providers.models import HealthTransition
from memadmin.workspaces.models import AlertTarget

logger = logging.getLogger(__name__)
WEBHOOK_TIMEOUT = 5.0


def alert_enqueue(transition: HealthTransition) -> None:
    from memadmin.jobs.services import job_create

    workspace = transition.provider.workspace
    if not AlertTarget.objects.filter(workspace=workspace, enabled=True).exists():
        return
    job_create(actor=Actor.system("health"), kind="health_alert", workspace=workspace,
               params={"transition": transition.pk}, max_attempts=5)


def alert_payload(transition: HealthTransition) -> dict[str, Any]:
    provider = transition.provider
    return {
        "workspace": provider.workspace.slug,
        "provider": provider.slug,
        "provider_name": provider.name,
        "from": transition.from_state,
        "to": transition.to_state,
        "message": transition.message,
        "at": transition.at.isoformat(),
    }


def deliver(target: AlertTarget, payload: dict[str, Any]) -> str | None:
    """Send one alert; returns an error message, or None when it was delivered."""
    try:
        if target.kind == "webhook":
            with outbound.client(timeout=WEBHOOK_TIMEOUT) as client:
                response = client.post(target.target, json=payload)
            if response.status_code >= 300:
                return f"the webhook answered {response.status_code}"
        else:
            subject = (f"[memadmin] {payload['provider_name']} is {payload['to']} "
                       f"({payload['workspace']})")
            body = (f"{payload['provider_name']} went from {payload['from']} to "
                    f"{payload['to']} at {payload['at']}.\n{payload['message']}\n")
            send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [target.target])
    except outbound.OutboundRefused as exc:
        return f"delivery failed: {exc.message}"
    except httpx.HTTPError as exc:
        return f"delivery failed: {type(exc).__name__}"
    except OSError as exc:
        return f"delivery failed: {type(exc).__name__}"
    return None


def deliver_all(transition: HealthTransition, already: set[str]) -> tuple[set[str], list[str]]:
    """Deliver to every enabled target not yet served; returns (served ids, errors)."""
    payload = alert_payload(transition)
    served, errors = set(already), []
    targets = AlertTarget.objects.filter(workspace=transition.provider.workspace, enabled=True)
    for target in targets:
        if str(target.pk) in served:
            continue
        error = deliver(target, payload)
        now = timezone.now()
        if error is None:
            served.add(str(target.pk))
            AlertTarget.objects.filter(pk=target.pk).update(last_sent_at=now, last_error="")
        else:
            errors.append(error)
            AlertTarget.objects.filter(pk=target.pk).update(last_error=error[:500],
                                                            last_error_at=now)
    return served, errors

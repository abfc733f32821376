"""Alerts on health transitions, delivered to each enabled target of the workspace by a job (so
failures retry with backoff, and only the targets that failed are tried again).

What alerts:
- into ``down``, and the recovery from it, for every target;
- into ``degraded``, and the recovery from it, for targets that ask for it (``on_degraded``).

What does not: a transition inside a maintenance window of its provider (or of the whole
workspace); a second outage of the same provider within ``MEMADMIN_ALERT_QUIET_SECONDS`` of the
last one that paged (a flapping provider pages once, not every minute); a recovery whose outage
did not page. Each decision is stored on the transition (``alerted``, ``muted_reason``).

Targets are Apprise URLs (Slack, Teams, Discord, PagerDuty, Opsgenie, ntfy, Telegram, e-mail,
JSON webhooks, …), plain JSON webhooks, or e-mail addresses. Every attempt is one row of the
delivery log (``AlertDelivery``); bodies name the provider and states, never memory content.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable
from typing import Any

import httpx
from django.conf import settings
from django.core.mail import send_mail
from django.db.models import Q
from django.utils import timezone

from memadmin.audit.services import Actor
from memadmin.lib import outbound
from memadmin.providers.models import AlertDelivery, HealthTransition, MaintenanceWindow
from memadmin.workspaces.models import AlertTarget, apprise_plugin

logger = logging.getLogger(__name__)
WEBHOOK_TIMEOUT = 5.0
APPRISE_TIMEOUT = 5.0
OUTAGE_STATES = ("down", "degraded")


def maintenance_covering(provider: Any, at: dt.datetime) -> MaintenanceWindow | None:
    return (MaintenanceWindow.objects
            .filter(Q(provider=provider) | Q(provider__isnull=True, workspace=provider.workspace),
                    starts_at__lte=at, ends_at__gt=at)
            .order_by("ends_at").first())


def _recovers(transition: HealthTransition) -> bool:
    return transition.to_state == "ok" and transition.from_state in OUTAGE_STATES


def _outage_alerts(transition: HealthTransition) -> set[str]:
    """The states that paged during the outage a recovery ends (e.g. {"degraded", "down"})."""
    start = (HealthTransition.objects
             .filter(provider_id=transition.provider_id, at__lte=transition.at,
                     to_state__in=OUTAGE_STATES)
             .exclude(from_state__in=OUTAGE_STATES).exclude(pk=transition.pk)
             .order_by("-at", "-pk").first())
    if start is None:
        return set()
    return set(HealthTransition.objects
               .filter(provider_id=transition.provider_id, at__gte=start.at,
                       at__lte=transition.at, alerted=True, to_state__in=OUTAGE_STATES)
               .exclude(pk=transition.pk).values_list("to_state", flat=True))


def _decide(transition: HealthTransition) -> str:
    """'' when the transition should page, else why it does not."""
    if transition.to_state not in OUTAGE_STATES and not _recovers(transition):
        return "not an alerting transition"
    window = maintenance_covering(transition.provider, transition.at)
    if window is not None:
        return "maintenance"
    if _recovers(transition):
        return "" if _outage_alerts(transition) else "its outage did not page"
    quiet = dt.timedelta(seconds=settings.MEMADMIN_ALERT_QUIET_SECONDS)
    recent = HealthTransition.objects.filter(
        provider_id=transition.provider_id, to_state=transition.to_state, alerted=True,
        at__gt=transition.at - quiet, at__lte=transition.at).exclude(pk=transition.pk)
    return "flapping: paged recently" if recent.exists() else ""


def alert_enqueue_all(transitions: Iterable[HealthTransition]) -> None:
    """Decide for each new transition whether it pages, store why, and start the alert jobs."""
    from memadmin.jobs.services import job_create

    for transition in transitions:
        reason = _decide(transition)
        if reason == "not an alerting transition":
            continue
        workspace = transition.provider.workspace
        if not reason and not _targets(transition).exists():
            reason = "no alert target"
        HealthTransition.objects.filter(pk=transition.pk).update(
            alerted=not reason, muted_reason=reason)
        transition.alerted, transition.muted_reason = not reason, reason
        if not reason:
            job_create(actor=Actor.system("health"), kind="health_alert", workspace=workspace,
                       params={"transition": transition.pk}, max_attempts=5)


def alert_enqueue(transition: HealthTransition) -> None:
    alert_enqueue_all([transition])


def _targets(transition: HealthTransition) -> Any:
    """Every target hears of ``down`` and of the recovery from an outage that reached it;
    ``degraded`` (and a recovery from an outage that never went down) only reaches the targets
    that asked for it."""
    targets = AlertTarget.objects.filter(workspace=transition.provider.workspace, enabled=True)
    if _recovers(transition):
        reached_down = "down" in _outage_alerts(transition)
        return targets if reached_down else targets.filter(on_degraded=True)
    return targets if transition.to_state == "down" else targets.filter(on_degraded=True)


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


def alert_text(payload: dict[str, Any]) -> tuple[str, str]:
    if payload.get("test"):
        return ("[memadmin] test alert",
                f"A test alert from memadmin workspace {payload['workspace']}: this target "
                "receives provider health alerts.")
    verb = "recovered" if payload["to"] == "ok" else f"is {payload['to']}"
    title = f"[memadmin] {payload['provider_name']} {verb} ({payload['workspace']})"
    body = (f"{payload['provider_name']} went from {payload['from']} to {payload['to']} at "
            f"{payload['at']}.")
    if payload.get("message"):
        body += f"\n{payload['message']}"
    return title, body


#: Apprise schemes whose host part is a server the operator names (self-hosted services):
#: their address goes through the outbound policy before Apprise connects. The other schemes
#: talk to their service's fixed public API host (Slack, Teams, PagerDuty, ...).
SELF_HOSTED_SCHEMES = {"json", "xml", "form", "ntfy", "gotify", "mmost", "rocket", "matrix",
                       "apprise", "mailto"}


def _apprise_refusal(url: str, plugin: Any) -> str | None:
    """Why the outbound policy refuses the server of a self-hosted Apprise URL, or None.
    (Apprise connects by itself, so the check runs on the resolved host just before.)"""
    scheme = url.split("://", 1)[0].lower()
    base = scheme[:-1] if scheme.endswith("s") and scheme[:-1] in SELF_HOSTED_SCHEMES else scheme
    host = getattr(plugin, "host", None)
    if base not in SELF_HOSTED_SCHEMES or not host:
        return None
    secure = bool(getattr(plugin, "secure", False)) or scheme.endswith("s")
    port = getattr(plugin, "port", None)
    origin = f"{'https' if secure else 'http'}://{host}{f':{port}' if port else ''}/"
    try:
        outbound.check_url(origin)
    except outbound.OutboundRefused as exc:
        return exc.message
    return None


def _deliver_apprise(url: str, payload: dict[str, Any]) -> str | None:
    import apprise

    plugin = apprise_plugin(url)
    if plugin is None:
        return "Apprise does not recognise this URL"
    refused = _apprise_refusal(url, plugin)
    if refused:
        return f"delivery failed: {refused}"
    # Bounded like every outgoing call: Apprise's own socket timeouts, set per plugin.
    plugin.socket_connect_timeout = APPRISE_TIMEOUT
    plugin.socket_read_timeout = APPRISE_TIMEOUT
    sender = apprise.Apprise()
    sender.add(plugin)
    title, body = alert_text(payload)
    with apprise.LogCapture(level=logging.WARNING) as captured:
        delivered = sender.notify(title=title, body=body)
    if delivered:
        return None
    # Apprise logs why; keep its last line, which names the service and the HTTP status, and
    # never the URL (it can carry tokens).
    lines = [line.strip() for line in captured.getvalue().splitlines() if line.strip()]
    reason = lines[-1] if lines else "the service refused it"
    return f"delivery failed: {reason.replace(url, '[target]')}"[:300]


def deliver(target: AlertTarget, payload: dict[str, Any]) -> str | None:
    """Send one alert; returns an error message, or None when it was delivered."""
    try:
        if target.kind == "apprise":
            return _deliver_apprise(target.target, payload)
        if target.kind == "webhook":
            with outbound.client(timeout=WEBHOOK_TIMEOUT) as client:
                response = client.post(target.target, json=payload)
            if response.status_code >= 300:
                return f"the webhook answered {response.status_code}"
        else:
            subject, body = alert_text(payload)
            send_mail(subject, body, settings.DEFAULT_FROM_EMAIL, [target.target])
    except outbound.OutboundRefused as exc:
        return f"delivery failed: {exc.message}"
    except httpx.HTTPError as exc:
        return f"delivery failed: {type(exc).__name__}"
    except OSError as exc:
        return f"delivery failed: {type(exc).__name__}"
    return None


def _log(target: AlertTarget, transition: HealthTransition | None, error: str | None,
         attempt: int, *, test: bool = False) -> None:
    now = timezone.now()
    AlertDelivery.objects.create(target=target, transition=transition, test=test,
                                 ok=error is None, detail=(error or "delivered")[:300],
                                 attempt=attempt)
    if error is None:
        AlertTarget.objects.filter(pk=target.pk).update(last_sent_at=now, last_error="")
    else:
        AlertTarget.objects.filter(pk=target.pk).update(last_error=error[:500],
                                                        last_error_at=now)


def deliver_all(transition: HealthTransition, already: set[str],
                attempt: int = 1) -> tuple[set[str], list[str]]:
    """Deliver to every enabled target not yet served; returns (served ids, errors)."""
    payload = alert_payload(transition)
    served, errors = set(already), []
    for target in _targets(transition):
        if str(target.pk) in served:
            continue
        error = deliver(target, payload)
        _log(target, transition, error, attempt)
        if error is None:
            served.add(str(target.pk))
        else:
            errors.append(error)
    return served, errors


def deliver_test(target: AlertTarget) -> str | None:
    """"Send test alert": one bounded delivery, logged like any other."""
    error = deliver(target, {"test": True, "workspace": target.workspace.slug,
                             "provider": "", "provider_name": "test", "from": "ok",
                             "to": "ok", "message": "test alert", "at": timezone.now()
                             .isoformat()})
    _log(target, None, error, 1, test=True)
    return error

"""Writes to provider configurations, and the checks a person asks for (each audited). The
credential is never part of an audit event."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from memadmin.audit.services import Actor, audit_event_create
from memadmin.lib.changes import apply_changes
from memadmin.lib.outbound import origin_of
from memadmin.memory.models import Freeze
from memadmin.providers import contract as c
from memadmin.providers import health
from memadmin.providers.alerts import deliver_test
from memadmin.providers.models import (
    DEFAULT_HEALTH_DEADLINE_MS,
    HealthTransition,
    IncidentNote,
    MaintenanceWindow,
    ProviderConfig,
    ProviderHealth,
)
from memadmin.providers.registry import provider_for
from memadmin.workspaces.models import AlertTarget, Workspace

PROVIDER_EDITABLE = ("name", "url", "credential", "health_deadline_ms", "request_deadline_ms",
                     "enabled", "probed", "options")


@transaction.atomic
def provider_config_create(*, actor: Actor, workspace: Workspace, slug: str, name: str,
                           kind: str, **options: Any) -> ProviderConfig:
    options.setdefault("health_deadline_ms", DEFAULT_HEALTH_DEADLINE_MS.get(kind, 1000))
    config = ProviderConfig(workspace=workspace, slug=slug, name=name, kind=kind, **options)
    config.full_clean()
    config.save()
    ProviderHealth.objects.create(provider=config,
                                  state="unknown" if config.probed else "unprobed")
    audit_event_create(workspace=workspace, actor=actor, action="provider.create",
                       target_type="provider", target_id=config.pk,
                       data={"slug": slug, "kind": kind, "url": config.url,
                             "has_credential": bool(config.credential)})
    return config


@transaction.atomic
def provider_config_update(*, actor: Actor, config: ProviderConfig,
                           **changes: Any) -> ProviderConfig:
    """Change a provider config. The credential is bound to the URL's origin (scheme, host,
    port): a new origin without a new credential clears the stored one, so the old credential
    is never presented to another server."""
    data: dict[str, Any] = {}
    old_origin = origin_of(config.url)
    if "url" in changes and origin_of(changes["url"]) != old_origin:
        data["origin"] = {"from": old_origin, "to": origin_of(changes["url"])}
        if "credential" not in changes and config.credential:
            changes = {**changes, "credential": ""}
            data["credential_cleared"] = True
    apply_changes(config, changes, PROVIDER_EDITABLE)
    # The credential's value never enters the audit trail; only that it changed.
    audit_event_create(workspace=config.workspace, actor=actor, action="provider.update",
                       target_type="provider", target_id=config.pk,
                       data={"fields": sorted(changes), **data})
    return config


def provider_connection_test(*, actor: Actor, config: ProviderConfig) -> c.HealthStatus:
    """One bounded health call asked for by an operator ("Test connection"). Its result is a
    check like any poll's: it is stored and moves the provider's state, so the panel agrees with
    what the operator just saw."""
    status = provider_for(config).health(deadline=config.health_deadline_ms / 1000)
    with transaction.atomic():
        if config.enabled:
            health.record(config, status)
        audit_event_create(workspace=config.workspace, actor=actor, action="provider.test",
                           target_type="provider", target_id=config.pk,
                           data={"ok": status.ok, "latency_ms": status.latency_ms})
    return status


def alert_target_test(*, actor: Actor, alert: AlertTarget) -> str | None:
    """"Send test alert": one bounded delivery, logged in the delivery log and audited.
    Returns the error, or None when the target took it."""
    error = deliver_test(alert)
    with transaction.atomic():
        audit_event_create(workspace=alert.workspace, actor=actor, action="alert_target.test",
                           target_type="alert_target", target_id=alert.pk,
                           data={"kind": alert.kind, "ok": error is None})
    return error


@transaction.atomic
def provider_config_delete(*, actor: Actor, config: ProviderConfig) -> None:
    """Delete a provider config. Refused while anything of it is frozen or on legal hold, or
    while resources still use it. Deleting an ``http`` provider never deletes remote data."""
    active = Freeze.objects.filter(lifted_at__isnull=True)
    if (active.filter(provider=config).exists()
            or active.filter(resource__provider=config).exists()
            or active.filter(namespace__resource__provider=config).exists()):
        raise ValidationError("something of this provider is frozen or on legal hold")
    if config.resources.exists():
        raise ValidationError("resources still use this provider; delete them first")
    workspace, pk, slug = config.workspace, config.pk, config.slug
    config.delete()
    audit_event_create(workspace=workspace, actor=actor, action="provider.delete",
                       target_type="provider", target_id=pk, data={"slug": slug})


def provider_check_now(*, actor: Actor, config: ProviderConfig) -> health.PollResult | None:
    """A recorded check asked for by a person (rate-limited: None when refused), audited once
    it is recorded."""
    result = health.check_now(config)
    if result is not None:
        with transaction.atomic():
            audit_event_create(workspace=config.workspace, actor=actor,
                               action="provider.check_now", target_type="provider",
                               target_id=config.pk, data={"state": result.state})
    return result


# -- maintenance windows and incident notes -------------------------------------------------------


@transaction.atomic
def maintenance_schedule(*, actor: Actor, workspace: Workspace, provider: ProviderConfig | None,
                         starts_at: Any, ends_at: Any, reason: str) -> MaintenanceWindow:
    window = MaintenanceWindow(workspace=workspace, provider=provider, starts_at=starts_at,
                               ends_at=ends_at, reason=reason, created_by=actor.user)
    window.full_clean()
    window.save()
    audit_event_create(workspace=workspace, actor=actor, action="maintenance.schedule",
                       target_type="provider" if provider else "workspace",
                       target_id=provider.pk if provider else workspace.pk,
                       data={"window": str(window.pk), "starts_at": starts_at.isoformat(),
                             "ends_at": ends_at.isoformat()})
    return window


@transaction.atomic
def maintenance_end(*, actor: Actor, window: MaintenanceWindow) -> None:
    """End a running window now, or cancel one that has not started."""
    now = timezone.now()
    if window.starts_at >= now:
        pk = window.pk
        window.delete()
        action = "maintenance.cancel"
    else:
        pk = window.pk
        window.ends_at = max(now, window.starts_at + dt.timedelta(seconds=1))
        window.save(update_fields=["ends_at"])
        action = "maintenance.end"
    audit_event_create(workspace=window.workspace, actor=actor, action=action,
                       target_type="workspace", target_id=window.workspace.pk,
                       data={"window": str(pk)})


@transaction.atomic
def incident_note_set(*, actor: Actor, transition: HealthTransition, text: str) -> IncidentNote:
    note, _ = IncidentNote.objects.update_or_create(
        transition=transition, defaults={"text": text, "author": actor.user})
    note.full_clean()
    audit_event_create(workspace=transition.provider.workspace, actor=actor,
                       action="incident.note", target_type="provider",
                       target_id=transition.provider_id,
                       data={"incident": transition.pk, "length": len(text)})
    return note
@transaction.atomic
def governed_namespace_adopt(*, actor: Actor, config: ProviderConfig,
                             store_namespace: tuple[str, ...], slug: str) -> Any:
    """Adopt a namespace a governed store already has (a LangGraph namespace prefix, a Markdown
    folder) as a memadmin namespace of the provider's resource (created, named like the
    provider, when it has none). The mapping goes into the provider's options."""
    from memadmin.workspaces.services import namespace_create, resource_create

    if config.kind not in ("langgraph", "markdown"):
        raise ValidationError("only LangGraph stores and Markdown folders can be adopted from")
    if not store_namespace or not all(isinstance(p, str) and p for p in store_namespace):
        raise ValidationError("the store's namespace is empty")
    resource = config.resources.order_by("slug").first()
    if resource is None:
        resource = resource_create(actor=actor, workspace=config.workspace, provider=config,
                                   slug=config.slug,
                                   description=f"Adopted from {config.name}.")
    options = dict(config.options or {})
    key = "prefixes" if config.kind == "langgraph" else "folders"
    mapping = dict(options.get(key) or {})
    if slug in mapping:
        raise ValidationError(f"namespace {slug} is mapped already")
    mapping[slug] = list(store_namespace) if config.kind == "langgraph" else "/".join(
        store_namespace)
    options[key] = mapping
    namespace = namespace_create(actor=actor, resource=resource, slug=slug,
                                 description="Adopted from the store: "
                                             + ".".join(store_namespace)[:200])
    provider_config_update(actor=actor, config=config, options=options)
    return namespace

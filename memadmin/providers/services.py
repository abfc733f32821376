"""Writes to provider configurations. The credential is never part of an audit event."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from memadmin.audit.services import Actor, audit_event_create
from memadmin.lib.changes import apply_changes
from memadmin.memory.models import Freeze
from memadmin.providers.models import DEFAULT_HEALTH_DEADLINE_MS, ProviderConfig, ProviderHealth
from memadmin.workspaces.models import Workspace

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
    apply_changes(config, changes, PROVIDER_EDITABLE)
    # The credential's value never enters the audit trail; only that it changed.
    audit_event_create(workspace=config.workspace, actor=actor, action="provider.update",
                       target_type="provider", target_id=config.pk,
                       data={"fields": sorted(changes)})
    return config


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

"""Provider kinds -> implementations, imported lazily; the only way faces obtain a provider.

Adding a kind touches ``providers/`` only: write the class, add its dotted path here.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import TYPE_CHECKING

from django.utils.module_loading import import_string

from memadmin.providers.contract import Provider, ProviderSettings, Scope, Unsupported

if TYPE_CHECKING:
    from memadmin.memory.store import LocalProvider
    from memadmin.providers.models import ProviderConfig
    from memadmin.workspaces.models import Namespace, Resource, Workspace

KINDS: dict[str, str] = {
    "local": "memadmin.memory.store.LocalProvider",
    "http": "memadmin.providers.http.HttpProvider",
}


@cache
def provider_class(kind: str) -> type[Provider]:
    path = KINDS.get(kind)
    if path is None:
        raise Unsupported(f"provider kind {kind!r} is not available in this installation")
    cls = import_string(path)
    if not issubclass(cls, Provider):
        raise TypeError(f"{path} is not a Provider")
    return cls


def settings_for(config: ProviderConfig) -> ProviderSettings:
    return ProviderSettings(
        id=str(config.pk), workspace_id=str(config.workspace_id), name=config.name,
        kind=config.kind, url=config.url, credential=config.credential,
        health_deadline=config.health_deadline_ms / 1000,
        request_deadline=config.request_deadline,
    )


def provider_for(config: ProviderConfig) -> Provider:
    return provider_class(config.kind)(settings_for(config))


def builtin_store(config: ProviderConfig) -> LocalProvider:
    """The built-in store of a ``local`` config, for the upkeep only it has (counter recounts,
    rescans): it is the single writer of memory rows and counters, so that work goes through
    it too and moves its version like any other write."""
    if config.kind != "local":
        raise Unsupported(f"provider {config.name!r} is not the built-in store")
    return provider_class("local")(settings_for(config))  # type: ignore[return-value]


def providers_for_workspace(workspace: Workspace) -> list[tuple[ProviderConfig, Provider]]:
    """Every enabled provider of a workspace, with its implementation."""
    from memadmin.providers.models import ProviderConfig

    return [(config, provider_for(config))
            for config in ProviderConfig.objects.filter(workspace=workspace, enabled=True)]


def namespace_scope(namespace: Namespace) -> Scope:
    return Scope.of(namespace.partition_key)


def scope_of(namespaces: Iterable[Namespace]) -> Scope:
    return Scope(tuple(ns.partition_key for ns in namespaces))


def resource_scope(resource: Resource) -> Scope:
    return Scope(tuple(resource.namespaces.values_list("partition_key", flat=True)))

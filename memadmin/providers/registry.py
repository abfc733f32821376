"""Provider kinds -> implementations, imported lazily; the only way faces obtain a provider.

Adding a kind touches ``providers/`` only: write the class, add its dotted path here.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.utils.module_loading import import_string

from memadmin.providers.contract import Provider, ProviderSettings, Scope, Unsupported

if TYPE_CHECKING:
    from memadmin.memory.store import LocalProvider
    from memadmin.providers.models import ProviderConfig
    from memadmin.workspaces.models import Namespace, Resource, Workspace

KINDS: dict[str, str] = {
    "local": "memadmin.memory.store.LocalProvider",
    "http": "memadmin.providers.http.HttpProvider",
    "markdown": "memadmin.providers.markdown.MarkdownProvider",
    "langgraph": "memadmin.providers.langgraph.LangGraphProvider",
    "mem0": "memadmin.providers.mem0.Mem0Provider",
}
#: Kinds whose store library is an optional extra: (module to find, how to install it).
OPTIONAL_LIBRARIES: dict[str, tuple[str, str]] = {
    "langgraph": ("langgraph.store.postgres", "pip install 'memadmin[langgraph]'"),
    "mem0": ("mem0", "pip install 'memadmin[mem0]'"),
}


def install_command(kind: str) -> str | None:
    """How to install the library of ``kind`` when it is missing here, else None."""
    if kind not in OPTIONAL_LIBRARIES:
        return None
    module, command = OPTIONAL_LIBRARIES[kind]
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    return None if found else command


@cache
def provider_class(kind: str) -> type[Provider]:
    path = KINDS.get(kind)
    if path is None:
        raise Unsupported(f"provider kind {kind!r} is not available in this installation")
    command = install_command(kind)
    if command is not None:
        return _not_installed(kind, command)
    try:
        cls = import_string(path)
    except ImportError as exc:
        # The library is there but broken (a missing dependency of it): same answer.
        return _not_installed(kind, OPTIONAL_LIBRARIES.get(kind, ("", str(exc)))[1])
    if not issubclass(cls, Provider):
        raise TypeError(f"{path} is not a Provider")
    return cls


def _not_installed(kind: str, command: str) -> type[Provider]:
    from memadmin.providers.missing import not_installed_class

    return not_installed_class(kind, command)


def stores_dir() -> Path:
    """Where relative Markdown folders live (``MEMADMIN_STORES_DIR``, default ``var/stores``):
    pages name a folder relative to it, never an absolute path."""
    from django.conf import settings

    return Path(settings.MEMADMIN_STORES_DIR)


def _options(config: ProviderConfig) -> dict[str, Any]:
    options = dict(config.options or {}) if isinstance(config.options, dict) else {}
    root = options.get("root")
    if config.kind == "markdown" and isinstance(root, str) and root and \
            not Path(root).is_absolute():
        options["root"] = str(stores_dir() / root)
    return options


def settings_for(config: ProviderConfig) -> ProviderSettings:
    return ProviderSettings(
        id=str(config.pk), workspace_id=str(config.workspace_id), name=config.name,
        kind=config.kind, url=config.url, credential=config.credential,
        health_deadline=config.health_deadline_ms / 1000,
        request_deadline=config.request_deadline,
        options=_options(config),
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

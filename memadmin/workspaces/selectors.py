"""Reads for workspace pages. Templates never query: these build everything they show."""

from __future__ import annotations

import dataclasses
from typing import Any

from django.db.models import Count, IntegerField, OuterRef, Prefetch, QuerySet, Subquery, Sum
from django.db.models.functions import Coalesce

from memadmin.memory.models import NamespaceCounter
from memadmin.providers.models import ProviderConfig
from memadmin.workspaces import access
from memadmin.workspaces.models import Namespace, Resource, Workspace


def _sum_counter(field: str) -> Coalesce:
    totals = (NamespaceCounter.objects
              .filter(namespace__resource__workspace=OuterRef("pk"))
              .order_by().values("namespace__resource__workspace")
              .annotate(total=Sum(field)).values("total"))
    return Coalesce(Subquery(totals, output_field=IntegerField()), 0)


def workspace_list(*, user: Any) -> QuerySet[Workspace]:
    """The user's workspaces with provider, namespace and item totals, in one query."""
    providers = (ProviderConfig.objects.filter(workspace=OuterRef("pk")).order_by()
                 .values("workspace").annotate(n=Count("pk")).values("n"))
    namespaces = (Namespace.objects.filter(resource__workspace=OuterRef("pk")).order_by()
                  .values("resource__workspace").annotate(n=Count("pk")).values("n"))
    return access.visible_workspaces(user).annotate(
        provider_count=Coalesce(Subquery(providers, output_field=IntegerField()), 0),
        namespace_count=Coalesce(Subquery(namespaces, output_field=IntegerField()), 0),
        item_count=_sum_counter("items"),
        byte_count=_sum_counter("bytes"),
    ).order_by("name")


@dataclasses.dataclass
class NamespaceRow:
    namespace: Namespace
    items: int
    bytes: int
    readable: bool

    @property
    def quota_percent(self) -> int | None:
        quota = self.namespace.quota_bytes
        return min(100, int(100 * self.bytes / quota)) if quota else None


@dataclasses.dataclass
class ResourceRow:
    resource: Resource
    namespaces: list[NamespaceRow]

    @property
    def items(self) -> int:
        return sum(n.items for n in self.namespaces)

    @property
    def bytes(self) -> int:
        return sum(n.bytes for n in self.namespaces)


@dataclasses.dataclass
class WorkspaceOverview:
    workspace: Workspace
    providers: list[ProviderConfig]
    resources: list[ResourceRow]

    @property
    def items(self) -> int:
        return sum(r.items for r in self.resources)


def workspace_overview(*, user: Any, workspace: Workspace) -> WorkspaceOverview:
    """Providers (with health), resources and namespaces with counts: a fixed number of queries
    however many namespaces there are."""
    providers = list(ProviderConfig.objects.filter(workspace=workspace)
                     .select_related("health").order_by("name"))
    namespaces = Namespace.objects.select_related("counter").order_by("slug")
    resources = list(Resource.objects.filter(workspace=workspace).select_related("provider")
                     .prefetch_related(Prefetch("namespaces", queryset=namespaces))
                     .order_by("slug"))
    readable = set(access.content_namespaces(user, workspace).values_list("pk", flat=True))
    rows = []
    for resource in resources:
        ns_rows = []
        for ns in resource.namespaces.all():
            counter = getattr(ns, "counter", None)
            ns_rows.append(NamespaceRow(
                namespace=ns, items=counter.items if counter else 0,
                bytes=counter.bytes if counter else 0, readable=ns.pk in readable,
            ))
        rows.append(ResourceRow(resource=resource, namespaces=ns_rows))
    return WorkspaceOverview(workspace=workspace, providers=providers, resources=rows)


def resource_namespaces(*, user: Any, resource: Resource) -> list[NamespaceRow]:
    readable = set(access.content_namespaces(user, resource.workspace)
                   .filter(resource=resource).values_list("pk", flat=True))
    rows = []
    for ns in resource.namespaces.select_related("counter").order_by("slug"):
        counter = getattr(ns, "counter", None)
        rows.append(NamespaceRow(namespace=ns, items=counter.items if counter else 0,
                                 bytes=counter.bytes if counter else 0,
                                 readable=ns.pk in readable))
    return rows


def namespace_row(*, user: Any, namespace: Namespace) -> NamespaceRow:
    counter = NamespaceCounter.objects.filter(namespace=namespace).first()
    return NamespaceRow(namespace=namespace, items=counter.items if counter else 0,
                        bytes=counter.bytes if counter else 0,
                        readable=access.can(user, "view_content",
                                            namespace.resource.workspace, namespace))


def namespace_owner_names(namespace: Namespace) -> list[str]:
    return sorted({user.get_username() for user, ns in
                   access.namespace_owners(namespace.resource.workspace) if ns.pk == namespace.pk})

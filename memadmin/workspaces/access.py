"""Who may see and do what: the one module that talks to django-guardian.

Roles are object permissions (``workspaces.role_<role>``) on a workspace, or ``role_owner`` on a
namespace, stored in guardian's direct foreign-key tables. Views ask this module for an object
and a capability; they get the object, a 404 (the user may not see it) or a 403 (they may see it
but their role lacks the action). Nothing here checks row by row: lists are filtered with joins.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.contrib.auth.models import User as Account
from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import Http404
from guardian.shortcuts import assign_perm, remove_perm

from memadmin.workspaces.models import (
    NAMESPACE_ROLES,
    WORKSPACE_ROLES,
    Namespace,
    NamespaceGroupObjectPermission,
    NamespaceUserObjectPermission,
    Resource,
    Workspace,
    WorkspaceGroupObjectPermission,
    WorkspaceUserObjectPermission,
)

User = Account | AnonymousUser

#: What each capability needs. "owner" here means owning the namespace in question, through a
#: namespace grant or the workspace-wide owner role.
CAPABILITIES: dict[str, frozenset[str]] = {
    "view": frozenset({"viewer", "operator", "owner", "compliance", "admin"}),
    "view_content": frozenset({"viewer", "operator", "compliance", "admin"}),
    "manage_providers": frozenset({"operator", "admin"}),
    "run_health_checks": frozenset({"operator", "admin"}),
    # Memory-event webhooks are integrations, configured like providers and alerts.
    "manage_webhooks": frozenset({"operator", "admin"}),
    "edit_memory": frozenset({"admin"}),
    # Export is an owner's power (the roles table): reading content is not enough.
    "export": frozenset({"admin"}),
    "review_quarantine": frozenset({"compliance", "admin"}),
    "legal_hold": frozenset({"compliance", "admin"}),
    "subject_requests": frozenset({"compliance", "admin"}),
    "view_audit": frozenset({"compliance", "admin"}),
    "manage_members": frozenset({"admin"}),
    "manage_workspace": frozenset({"admin"}),
}
#: Workspace roles that own every namespace of the workspace (an admin has all owner powers).
OWNING_ROLES = frozenset({"owner", "admin"})
#: Capabilities an owner has in the namespaces they own.
OWNER_CAPABILITIES = frozenset({"view", "view_content", "edit_memory", "export"})


def _codename(role: str) -> str:
    return f"role_{role}"


def workspace_roles(user: User, workspace: Workspace) -> frozenset[str]:
    """The user's workspace-wide roles (direct or through groups). Cached on the user object."""
    if not user.is_authenticated or not user.is_active:
        return frozenset()
    cache: dict[Any, frozenset[str]] = user.__dict__.setdefault("_memadmin_roles", {})
    if workspace.pk not in cache:
        direct = WorkspaceUserObjectPermission.objects.filter(
            user=user, content_object=workspace).values_list("permission__codename", flat=True)
        grouped = WorkspaceGroupObjectPermission.objects.filter(
            group__user=user, content_object=workspace
        ).values_list("permission__codename", flat=True)
        codes = set(direct.union(grouped))
        cache[workspace.pk] = frozenset(c.removeprefix("role_") for c in codes)
    return cache[workspace.pk]


def prime_workspace_roles(user: User, workspace_pks: Iterable[Any]) -> None:
    """Fill ``workspace_roles``'s cache for many workspaces in one query (a page that checks a
    capability in each of them then asks nothing more)."""
    if not user.is_authenticated or not user.is_active:
        return
    cache: dict[Any, frozenset[str]] = user.__dict__.setdefault("_memadmin_roles", {})
    wanted = [pk for pk in workspace_pks if pk not in cache]
    if not wanted:
        return
    direct = WorkspaceUserObjectPermission.objects.filter(
        user=user, content_object_id__in=wanted
    ).values_list("content_object_id", "permission__codename")
    grouped = WorkspaceGroupObjectPermission.objects.filter(
        group__user=user, content_object_id__in=wanted
    ).values_list("content_object_id", "permission__codename")
    found: dict[Any, set[str]] = {pk: set() for pk in wanted}
    for workspace_id, code in direct.union(grouped):
        found.setdefault(workspace_id, set()).add(code.removeprefix("role_"))
    for pk, codes in found.items():
        cache[pk] = frozenset(codes)


def _owned_namespace_filter(user: Account) -> Q:
    direct = NamespaceUserObjectPermission.objects.filter(
        user=user, content_object=OuterRef("pk"), permission__codename="role_owner")
    grouped = NamespaceGroupObjectPermission.objects.filter(
        group__user=user, content_object=OuterRef("pk"), permission__codename="role_owner")
    return Q(Exists(direct)) | Q(Exists(grouped))


def owns_namespace(user: User, namespace: Namespace) -> bool:
    if not user.is_authenticated or not user.is_active:
        return False
    if user.is_superuser or OWNING_ROLES & workspace_roles(user, namespace.resource.workspace):
        return True
    return Namespace.objects.filter(_owned_namespace_filter(user), pk=namespace.pk).exists()


def can(user: User, capability: str, workspace: Workspace,
        namespace: Namespace | None = None) -> bool:
    """Whether ``user`` has ``capability`` in the workspace (or in one namespace of it)."""
    if capability not in CAPABILITIES:
        raise ValueError(f"unknown capability {capability!r}")
    if not user.is_authenticated or not user.is_active:
        return False
    if user.is_superuser:
        return True
    roles = workspace_roles(user, workspace)
    if roles & CAPABILITIES[capability]:
        return True
    if capability in OWNER_CAPABILITIES and "owner" in roles:
        return True
    if capability == "view":
        # Owners of some namespaces see the workspace, its lists and every namespace's metadata;
        # content stays limited to the namespaces they own.
        return owned_namespaces(user, workspace).exists()
    if capability in OWNER_CAPABILITIES and namespace is not None:
        return owns_namespace(user, namespace)
    return False


def visible_workspaces(user: User) -> QuerySet[Workspace]:
    """Workspaces the user has any role in (or owns a namespace of)."""
    if not user.is_authenticated or not user.is_active:
        return Workspace.objects.none()
    if user.is_superuser:
        return Workspace.objects.all()
    return member_workspaces(user)


def member_workspaces(user: Account) -> QuerySet[Workspace]:
    """Workspaces where the account holds a role (or owns a namespace), whether or not it is
    active now: what an admin must administer to manage that account."""
    role_codes = [_codename(r) for r in WORKSPACE_ROLES]
    direct = WorkspaceUserObjectPermission.objects.filter(
        user=user, content_object=OuterRef("pk"), permission__codename__in=role_codes)
    grouped = WorkspaceGroupObjectPermission.objects.filter(
        group__user=user, content_object=OuterRef("pk"), permission__codename__in=role_codes)
    owned = Namespace.objects.filter(_owned_namespace_filter(user),
                                     resource__workspace=OuterRef("pk"))
    return Workspace.objects.filter(Q(Exists(direct)) | Q(Exists(grouped)) | Q(Exists(owned)))


def member_workspace_ids(users: Iterable[Account]) -> dict[Any, set[Any]]:
    """``member_workspaces`` for many accounts at once, as {user pk: {workspace pk}}: three
    queries however many accounts (direct roles, roles through groups, namespace ownership)."""
    pks = [user.pk for user in users]
    found: dict[Any, set[Any]] = {pk: set() for pk in pks}
    role_codes = [_codename(r) for r in WORKSPACE_ROLES]
    for user_id, workspace_id in (WorkspaceUserObjectPermission.objects
                                  .filter(user_id__in=pks, permission__codename__in=role_codes)
                                  .values_list("user_id", "content_object_id")):
        found[user_id].add(workspace_id)
    for user_id, workspace_id in (WorkspaceGroupObjectPermission.objects
                                  .filter(group__user__in=pks,
                                          permission__codename__in=role_codes)
                                  .values_list("group__user", "content_object_id")):
        if user_id in found:
            found[user_id].add(workspace_id)
    owned = [*(NamespaceUserObjectPermission.objects
               .filter(user_id__in=pks, permission__codename="role_owner")
               .values_list("user_id", "content_object__resource__workspace_id")),
             *(NamespaceGroupObjectPermission.objects
               .filter(group__user__in=pks, permission__codename="role_owner")
               .values_list("group__user", "content_object__resource__workspace_id"))]
    for user_id, workspace_id in owned:
        if user_id in found:
            found[user_id].add(workspace_id)
    return found


def owned_namespaces(user: User, workspace: Workspace) -> QuerySet[Namespace]:
    """Namespaces of the workspace whose content the user may see as an owner."""
    base = Namespace.objects.filter(resource__workspace=workspace)
    if not user.is_authenticated or not user.is_active:
        return base.none()
    if user.is_superuser or OWNING_ROLES & workspace_roles(user, workspace):
        return base
    return base.filter(_owned_namespace_filter(user))


def exportable_namespaces(user: User, workspace: Workspace) -> QuerySet[Namespace]:
    """Namespaces the user may export: the ones they own (an admin owns every one)."""
    return owned_namespaces(user, workspace)


def owns_every(user: User, workspace: Workspace, namespace_ids: Iterable[Any]) -> bool:
    """Whether the user still owns every one of these namespaces of the workspace (one query;
    an id of another workspace or of a deleted namespace counts as not owned)."""
    wanted = {str(pk) for pk in namespace_ids}
    if not user.is_authenticated or not user.is_active:
        return False
    return owned_namespaces(user, workspace).filter(pk__in=wanted).count() == len(wanted)


def may_export(user: User, workspace: Workspace, namespace_ids: Iterable[Any]) -> bool:
    """Whether the user may still export every one of these namespaces."""
    return owns_every(user, workspace, namespace_ids)


def content_namespaces(user: User, workspace: Workspace) -> QuerySet[Namespace]:
    """Namespaces whose item content the user may read."""
    if can(user, "view_content", workspace):
        return Namespace.objects.filter(resource__workspace=workspace)
    return owned_namespaces(user, workspace)


def _require(user: User, capability: str, workspace: Workspace,
             namespace: Namespace | None = None) -> None:
    if not can(user, "view", workspace, namespace):
        raise Http404("not found")
    if capability != "view" and not can(user, capability, workspace, namespace):
        raise PermissionDenied(f"your role does not allow {capability.replace('_', ' ')}")


def get_workspace(user: User, slug: str, capability: str = "view") -> Workspace:
    """The workspace, or 404 if the user may not see it, or 403 if they lack the capability."""
    workspace = Workspace.objects.filter(slug=slug).first()
    if workspace is None:
        raise Http404("not found")
    _require(user, capability, workspace)
    return workspace


def get_resource(user: User, workspace: Workspace, slug: str) -> Resource:
    resource = (Resource.objects.select_related("provider", "workspace")
                .filter(workspace=workspace, slug=slug).first())
    if resource is None:
        raise Http404("not found")
    _require(user, "view", workspace)
    return resource


def get_namespace(user: User, resource: Resource, slug: str,
                  capability: str = "view") -> Namespace:
    namespace = (Namespace.objects.select_related("resource__provider", "resource__workspace")
                 .filter(resource=resource, slug=slug).first())
    if namespace is None:
        raise Http404("not found")
    _require(user, capability, resource.workspace, namespace)
    return namespace


# -- grants (called by services only, which audit them) -----------------------------------------


def grant(user: Any, role: str, target: Workspace | Namespace) -> None:
    _check_role(role, target)
    assign_perm(f"{target._meta.app_label}.{_codename(role)}", user, target)
    user.__dict__.pop("_memadmin_roles", None)


def revoke(user: Any, role: str, target: Workspace | Namespace) -> None:
    _check_role(role, target)
    remove_perm(f"{target._meta.app_label}.{_codename(role)}", user, target)
    user.__dict__.pop("_memadmin_roles", None)


def _check_role(role: str, target: Workspace | Namespace) -> None:
    allowed: Iterable[str] = WORKSPACE_ROLES if isinstance(target, Workspace) else NAMESPACE_ROLES
    if role not in allowed:
        raise ValueError(f"{role!r} is not a role on a {target._meta.model_name}")


def members(workspace: Workspace) -> list[tuple[Any, list[str]]]:
    """(user, workspace roles) for everyone with a direct workspace role, by username."""
    rows = (WorkspaceUserObjectPermission.objects.filter(content_object=workspace)
            .select_related("user", "permission").order_by("user__username"))
    by_user: dict[Any, list[str]] = {}
    for row in rows:
        by_user.setdefault(row.user, []).append(row.permission.codename.removeprefix("role_"))
    return [(user, sorted(roles, key=WORKSPACE_ROLES.index)) for user, roles in by_user.items()]


def namespace_owners(workspace: Workspace) -> list[tuple[Any, Namespace]]:
    rows = (NamespaceUserObjectPermission.objects
            .filter(content_object__resource__workspace=workspace,
                    permission__codename="role_owner")
            .select_related("user", "content_object__resource").order_by("user__username"))
    return [(row.user, row.content_object) for row in rows]


def capabilities(user: User, workspace: Workspace) -> dict[str, bool]:
    """Every workspace-wide capability of the user, for templates (which never query)."""
    return {name: can(user, name, workspace) for name in CAPABILITIES if name != "view"}


def has_role_anywhere(user: User, roles: Iterable[str]) -> bool:
    """Whether the user holds any of the workspace ``roles`` in some workspace (directly or
    through a group); superusers count as holding every role."""
    if not user.is_authenticated or not user.is_active:
        return False
    if user.is_superuser:
        return True
    codes = [_codename(role) for role in roles]
    return (WorkspaceUserObjectPermission.objects.filter(
                user=user, permission__codename__in=codes).exists()
            or WorkspaceGroupObjectPermission.objects.filter(
                group__user=user, permission__codename__in=codes).exists())

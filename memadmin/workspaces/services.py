"""Writes to workspaces, resources and namespaces. Each is audited in its own transaction."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from memadmin.lib.audit import Actor, audit_event_create
from memadmin.memory.models import NamespaceCounter
from memadmin.providers.models import ProviderConfig
from memadmin.workspaces.models import Namespace, Resource, Workspace, derive_partition_key

WORKSPACE_SETTINGS = ("four_eyes_erasure", "subject_request_due_days", "health_retention_days")
RESOURCE_EDITABLE = ("description", "max_bytes", "item_max_bytes", "tools")
NAMESPACE_EDITABLE = ("description", "quota_bytes")


@transaction.atomic
def workspace_create(*, actor: Actor, slug: str, name: str, **options: Any) -> Workspace:
    workspace = Workspace(slug=slug, name=name, **options)
    workspace.full_clean()
    workspace.save()
    audit_event_create(workspace=workspace, actor=actor, action="workspace.create",
                       target_type="workspace", target_id=workspace.pk,
                       data={"slug": slug})
    return workspace


@transaction.atomic
def workspace_update_settings(*, actor: Actor, workspace: Workspace, **changes: Any) -> Workspace:
    unknown = set(changes) - set(WORKSPACE_SETTINGS)
    if unknown:
        raise ValidationError(f"not workspace settings: {', '.join(sorted(unknown))}")
    before = {field: getattr(workspace, field) for field in changes}
    for field, value in changes.items():
        setattr(workspace, field, value)
    workspace.full_clean()
    workspace.save(update_fields=list(changes))
    audit_event_create(workspace=workspace, actor=actor, action="workspace.settings",
                       target_type="workspace", target_id=workspace.pk,
                       data={"before": before, "after": changes})
    return workspace


@transaction.atomic
def resource_create(*, actor: Actor, workspace: Workspace, provider: ProviderConfig, slug: str,
                    **options: Any) -> Resource:
    if provider.workspace_id != workspace.pk:
        raise ValidationError("the provider belongs to another workspace")
    resource = Resource(workspace=workspace, provider=provider, slug=slug, **options)
    resource.full_clean()
    resource.save()
    audit_event_create(workspace=workspace, actor=actor, action="resource.create",
                       target_type="resource", target_id=resource.pk,
                       data={"slug": slug, "provider": str(provider.pk)})
    return resource


@transaction.atomic
def resource_update(*, actor: Actor, resource: Resource, **changes: Any) -> Resource:
    unknown = set(changes) - set(RESOURCE_EDITABLE)
    if unknown:
        raise ValidationError(f"not editable: {', '.join(sorted(unknown))}")
    for field, value in changes.items():
        setattr(resource, field, value)
    resource.full_clean()
    resource.save(update_fields=list(changes))
    audit_event_create(workspace=resource.workspace, actor=actor, action="resource.update",
                       target_type="resource", target_id=resource.pk,
                       data={"fields": sorted(changes)})
    return resource


@transaction.atomic
def resource_delete(*, actor: Actor, resource: Resource) -> None:
    if resource.namespaces.exists():
        raise ValidationError("delete the resource's namespaces first")
    workspace, pk, slug = resource.workspace, resource.pk, resource.slug
    resource.delete()
    audit_event_create(workspace=workspace, actor=actor, action="resource.delete",
                       target_type="resource", target_id=pk, data={"slug": slug})


@transaction.atomic
def namespace_create(*, actor: Actor, resource: Resource, slug: str,
                     partition_key: str | None = None, **options: Any) -> Namespace:
    """Create a namespace; its partition key is derived once here and stored for good.

    For a remote provider the caller may pass the key the remote store already uses.
    """
    key = partition_key or derive_partition_key(
        workspace_id=resource.workspace_id, environment=settings.MEMADMIN_ENVIRONMENT,
        resource_slug=resource.slug, namespace_slug=slug,
    )
    namespace = Namespace(resource=resource, slug=slug, partition_key=key, **options)
    namespace.full_clean()
    namespace.save()
    NamespaceCounter.objects.create(namespace=namespace)
    audit_event_create(workspace=resource.workspace, actor=actor, action="namespace.create",
                       target_type="namespace", target_id=namespace.pk,
                       data={"slug": slug, "resource": resource.slug, "partition": key})
    return namespace


@transaction.atomic
def namespace_update(*, actor: Actor, namespace: Namespace, **changes: Any) -> Namespace:
    unknown = set(changes) - set(NAMESPACE_EDITABLE)
    if unknown:
        raise ValidationError(f"not editable: {', '.join(sorted(unknown))}")
    for field, value in changes.items():
        setattr(namespace, field, value)
    namespace.full_clean()
    namespace.save(update_fields=list(changes))
    audit_event_create(workspace=namespace.resource.workspace, actor=actor,
                       action="namespace.update", target_type="namespace",
                       target_id=namespace.pk, data={"fields": sorted(changes)})
    return namespace


@transaction.atomic
def namespace_delete(*, actor: Actor, namespace: Namespace) -> None:
    """Delete an empty namespace (the counters say whether it is empty, and the FK agrees)."""
    counter = NamespaceCounter.objects.select_for_update().filter(namespace=namespace).first()
    if (counter is not None and counter.items) or namespace.items.exists():
        raise ValidationError("the namespace still holds memory; delete its items first")
    workspace, pk, slug = namespace.resource.workspace, namespace.pk, namespace.slug
    namespace.delete()
    audit_event_create(workspace=workspace, actor=actor, action="namespace.delete",
                       target_type="namespace", target_id=pk, data={"slug": slug})


@transaction.atomic
def role_grant(*, actor: Actor, workspace: Workspace, user: Any, role: str,
               namespace: Namespace | None = None) -> None:
    """Grant a workspace role, or the owner role on one namespace. Audited; idempotent."""
    from memadmin.lib import access

    if namespace is not None and namespace.resource.workspace_id != workspace.pk:
        raise ValidationError("the namespace belongs to another workspace")
    target: Workspace | Namespace = namespace or workspace
    try:
        access.grant(user, role, target)
    except ValueError as exc:
        raise ValidationError(str(exc)) from None
    audit_event_create(workspace=workspace, actor=actor, action="role.grant",
                       target_type="user", target_id=user.pk,
                       data={"user": user.get_username(), "role": role,
                             "namespace": str(namespace.pk) if namespace else None})


@transaction.atomic
def role_revoke(*, actor: Actor, workspace: Workspace, user: Any, role: str,
                namespace: Namespace | None = None) -> None:
    from memadmin.lib import access

    target: Workspace | Namespace = namespace or workspace
    try:
        access.revoke(user, role, target)
    except ValueError as exc:
        raise ValidationError(str(exc)) from None
    audit_event_create(workspace=workspace, actor=actor, action="role.revoke",
                       target_type="user", target_id=user.pk,
                       data={"user": user.get_username(), "role": role,
                             "namespace": str(namespace.pk) if namespace else None})


@transaction.atomic
def member_set_roles(*, actor: Actor, workspace: Workspace, user: Any,
                     roles: list[str]) -> None:
    """Make the user's workspace roles exactly ``roles`` (an empty list removes the member)."""
    from memadmin.lib import access
    from memadmin.workspaces.models import WORKSPACE_ROLES

    unknown = set(roles) - set(WORKSPACE_ROLES)
    if unknown:
        raise ValidationError(f"unknown roles: {', '.join(sorted(unknown))}")
    current = set(access.workspace_roles(user, workspace))
    for role in sorted(set(roles) - current):
        role_grant(actor=actor, workspace=workspace, user=user, role=role)
    for role in sorted(current - set(roles)):
        role_revoke(actor=actor, workspace=workspace, user=user, role=role)


ADMIN_CREDENTIAL_PREFIX = "mac_"  # noqa: S105 - a display prefix, not a secret


@transaction.atomic
def admin_credential_mint(*, actor: Actor, workspace: Workspace, name: str) -> tuple[Any, str]:
    """Mint a credential for admin operations on this workspace's endpoint; shown once."""
    import secrets

    from memadmin.lib.keys import secret_digest
    from memadmin.workspaces.models import AdminCredential

    secret = ADMIN_CREDENTIAL_PREFIX + secrets.token_urlsafe(32)
    credential = AdminCredential(workspace=workspace, name=name, prefix=secret[:12],
                                 secret_hash=secret_digest(secret), created_by=actor.user)
    credential.full_clean()
    credential.save()
    audit_event_create(workspace=workspace, actor=actor, action="admin_credential.mint",
                       target_type="admin_credential", target_id=credential.pk,
                       data={"prefix": credential.prefix, "name": name})
    return credential, secret


@transaction.atomic
def admin_credential_revoke(*, actor: Actor, credential: Any) -> Any:
    from django.utils import timezone

    if credential.revoked_at is None:
        credential.revoked_at = timezone.now()
        credential.save(update_fields=["revoked_at"])
        audit_event_create(workspace=credential.workspace, actor=actor,
                           action="admin_credential.revoke", target_type="admin_credential",
                           target_id=credential.pk, data={"prefix": credential.prefix})
    return credential


@transaction.atomic
def alert_target_add(*, actor: Actor, workspace: Workspace, kind: str, target: str) -> Any:
    from memadmin.workspaces.models import AlertTarget

    alert = AlertTarget(workspace=workspace, kind=kind, target=target)
    alert.full_clean()
    alert.save()
    audit_event_create(workspace=workspace, actor=actor, action="alert_target.add",
                       target_type="alert_target", target_id=alert.pk, data={"kind": kind})
    return alert


@transaction.atomic
def alert_target_remove(*, actor: Actor, alert: Any) -> None:
    workspace, pk, kind = alert.workspace, alert.pk, alert.kind
    alert.delete()
    audit_event_create(workspace=workspace, actor=actor, action="alert_target.remove",
                       target_type="alert_target", target_id=pk, data={"kind": kind})


METRICS_TOKEN_PREFIX = "mmt_"  # noqa: S105 - a display prefix, not a secret


@transaction.atomic
def metrics_token_mint(*, actor: Actor, workspace: Workspace, name: str) -> tuple[Any, str]:
    import secrets

    from memadmin.lib.keys import secret_digest
    from memadmin.workspaces.models import MetricsToken

    secret = METRICS_TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = MetricsToken(workspace=workspace, name=name, prefix=secret[:12],
                         secret_hash=secret_digest(secret), created_by=actor.user)
    token.full_clean()
    token.save()
    audit_event_create(workspace=workspace, actor=actor, action="metrics_token.mint",
                       target_type="metrics_token", target_id=token.pk,
                       data={"prefix": token.prefix})
    return token, secret


@transaction.atomic
def metrics_token_revoke(*, actor: Actor, token: Any) -> Any:
    from django.utils import timezone

    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        audit_event_create(workspace=token.workspace, actor=actor, action="metrics_token.revoke",
                           target_type="metrics_token", target_id=token.pk,
                           data={"prefix": token.prefix})
    return token

"""Writes to workspaces, resources and namespaces. Each is audited in its own transaction."""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction

from memadmin.audit.services import Actor, audit_event_create
from memadmin.lib.changes import apply_changes
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
    before = apply_changes(workspace, changes, WORKSPACE_SETTINGS, label="not workspace settings")
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
    apply_changes(resource, changes, RESOURCE_EDITABLE)
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
    apply_changes(namespace, changes, NAMESPACE_EDITABLE)
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
    from memadmin.workspaces import access

    if namespace is not None and namespace.resource.workspace_id != workspace.pk:
        raise ValidationError("the namespace belongs to another workspace")
    _role_change(access.grant, "role.grant", actor=actor, workspace=workspace, user=user,
                 role=role, namespace=namespace)


@transaction.atomic
def role_revoke(*, actor: Actor, workspace: Workspace, user: Any, role: str,
                namespace: Namespace | None = None) -> None:
    from memadmin.workspaces import access

    _role_change(access.revoke, "role.revoke", actor=actor, workspace=workspace, user=user,
                 role=role, namespace=namespace)


def _role_change(change: Any, action: str, *, actor: Actor, workspace: Workspace, user: Any,
                 role: str, namespace: Namespace | None) -> None:
    """Grant or revoke (``change``) on the namespace or the workspace, then audit it."""
    target: Workspace | Namespace = namespace or workspace
    try:
        change(user, role, target)
    except ValueError as exc:
        raise ValidationError(str(exc)) from None
    audit_event_create(workspace=workspace, actor=actor, action=action,
                       target_type="user", target_id=user.pk,
                       data={"user": user.get_username(), "role": role,
                             "namespace": str(namespace.pk) if namespace else None})


@transaction.atomic
def member_set_roles(*, actor: Actor, workspace: Workspace, user: Any,
                     roles: list[str]) -> None:
    """Make the user's workspace roles exactly ``roles`` (an empty list removes the member)."""
    from memadmin.workspaces import access
    from memadmin.workspaces.models import WORKSPACE_ROLES

    unknown = set(roles) - set(WORKSPACE_ROLES)
    if unknown:
        raise ValidationError(f"unknown roles: {', '.join(sorted(unknown))}")
    current = set(access.workspace_roles(user, workspace))
    for role in sorted(set(roles) - current):
        role_grant(actor=actor, workspace=workspace, user=user, role=role)
    for role in sorted(current - set(roles)):
        role_revoke(actor=actor, workspace=workspace, user=user, role=role)


@transaction.atomic
def alert_target_add(*, actor: Actor, workspace: Workspace, kind: str, target: str,
                     on_degraded: bool = False) -> Any:
    from memadmin.workspaces.models import AlertTarget

    alert = AlertTarget(workspace=workspace, kind=kind, target=target, on_degraded=on_degraded)
    alert.full_clean()
    alert.save()
    audit_event_create(workspace=workspace, actor=actor, action="alert_target.add",
                       target_type="alert_target", target_id=alert.pk, data={"kind": kind})
    return alert


@transaction.atomic
def workspace_badge_key_rotate(*, actor: Actor, workspace: Workspace,
                               disable: bool = False) -> str | None:
    """A new read-only key for the status badge URLs (the old links stop answering), or none."""
    workspace.badge_key = None if disable else secrets.token_urlsafe(24)
    workspace.save(update_fields=["badge_key"])
    audit_event_create(workspace=workspace, actor=actor,
                       action="badges.disable" if disable else "badges.rotate",
                       target_type="workspace", target_id=workspace.pk, data={})
    return workspace.badge_key


@transaction.atomic
def alert_target_remove(*, actor: Actor, alert: Any) -> None:
    workspace, pk, kind = alert.workspace, alert.pk, alert.kind
    alert.delete()
    audit_event_create(workspace=workspace, actor=actor, action="alert_target.remove",
                       target_type="alert_target", target_id=pk, data={"kind": kind})


# -- secrets shown once (admin credentials, metrics tokens; agent tokens live in memory) ----------

ADMIN_CREDENTIAL_PREFIX = "mac_"  # noqa: S105 - display prefixes, not secrets
METRICS_TOKEN_PREFIX = "mmt_"  # noqa: S105


def hashed_secret_mint(*, actor: Actor, row: Any, prefix: str, action: str,
                       data: dict[str, Any] | None = None) -> str:
    """Give ``row`` (an unsaved HashedSecret) a new random secret, save it and audit it, in the
    caller's transaction. Returns the secret: it is shown once; only its SHA-256 is kept."""
    import secrets

    from memadmin.lib.keys import secret_digest

    secret = prefix + secrets.token_urlsafe(32)
    row.prefix, row.secret_hash, row.created_by = secret[:12], secret_digest(secret), actor.user
    row.full_clean()
    row.save()
    audit_event_create(workspace=row.workspace, actor=actor, action=action,
                       target_type=row._meta.model_name, target_id=row.pk,
                       data={"prefix": row.prefix, **(data or {})})
    return secret


def hashed_secret_revoke(*, actor: Actor, row: Any, action: str) -> Any:
    """Revoke a token or credential (idempotent; audited once)."""
    from django.utils import timezone

    with transaction.atomic():
        if row.revoked_at is None:
            row.revoked_at = timezone.now()
            row.save(update_fields=["revoked_at"])
            audit_event_create(workspace=row.workspace, actor=actor, action=action,
                               target_type=row._meta.model_name, target_id=row.pk,
                               data={"prefix": row.prefix})
    return row


@transaction.atomic
def admin_credential_mint(*, actor: Actor, workspace: Workspace, name: str) -> tuple[Any, str]:
    """Mint a credential for admin operations on this workspace's endpoint; shown once."""
    from memadmin.workspaces.models import AdminCredential

    credential = AdminCredential(workspace=workspace, name=name)
    secret = hashed_secret_mint(actor=actor, row=credential, prefix=ADMIN_CREDENTIAL_PREFIX,
                                action="admin_credential.mint", data={"name": name})
    return credential, secret


def admin_credential_revoke(*, actor: Actor, credential: Any) -> Any:
    return hashed_secret_revoke(actor=actor, row=credential, action="admin_credential.revoke")


@transaction.atomic
def metrics_token_mint(*, actor: Actor, workspace: Workspace, name: str) -> tuple[Any, str]:
    from memadmin.workspaces.models import MetricsToken

    token = MetricsToken(workspace=workspace, name=name)
    secret = hashed_secret_mint(actor=actor, row=token, prefix=METRICS_TOKEN_PREFIX,
                                action="metrics_token.mint")
    return token, secret


def metrics_token_revoke(*, actor: Actor, token: Any) -> Any:
    return hashed_secret_revoke(actor=actor, row=token, action="metrics_token.revoke")

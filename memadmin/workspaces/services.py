"""Writes to workspaces, resources and namespaces. Each is audited in its own transaction."""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, OuterRef

from memadmin.audit.services import Actor, audit_event_create
from memadmin.lib.changes import apply_changes
from memadmin.memory.models import NamespaceCounter
from memadmin.providers.models import ProviderConfig
from memadmin.workspaces.models import (
    DEFAULT_TOKEN_LIFETIME_DAYS,
    Namespace,
    Resource,
    Workspace,
    WorkspaceSettingChange,
    derive_partition_key,
)

WORKSPACE_SETTINGS = ("four_eyes_erasure", "subject_request_due_days", "health_retention_days",
                      "wire_compliance")
RESOURCE_EDITABLE = ("description", "max_bytes", "item_max_bytes", "tools", "pii_policy",
                     "secrets_policy")
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


def _loosens_four_eyes(workspace: Workspace, changes: dict[str, Any]) -> bool:
    return workspace.four_eyes_erasure and changes.get("four_eyes_erasure", True) is False


@transaction.atomic
def workspace_update_settings(*, actor: Actor, workspace: Workspace, **changes: Any) -> Workspace:
    """Apply settings at once; switching four-eyes erasure off is refused here (it needs a
    second admin: ``workspace_setting_change_request`` then ``..._confirm``)."""
    if _loosens_four_eyes(workspace, changes):
        raise ValidationError({"four_eyes_erasure": "Switching four-eyes approval off needs a "
                                                    "second admin's confirmation."})
    before = apply_changes(workspace, changes, WORKSPACE_SETTINGS, label="not workspace settings")
    audit_event_create(workspace=workspace, actor=actor, action="workspace.settings",
                       target_type="workspace", target_id=workspace.pk,
                       data={"before": before, "after": changes})
    return workspace


def workspace_setting_change_request(*, actor: Actor, workspace: Workspace, setting: str,
                                     value: Any) -> WorkspaceSettingChange:
    """Ask for a change another admin must confirm (the setting is unchanged meanwhile). A
    change already pending for the setting is kept, not doubled. Audited."""
    if setting not in WorkspaceSettingChange.SETTINGS:
        raise ValidationError(f"{setting} does not need a second admin")
    with transaction.atomic():
        Workspace.objects.select_for_update().filter(pk=workspace.pk).first()
        pending = WorkspaceSettingChange.objects.filter(workspace=workspace, setting=setting,
                                                        state="pending").first()
        if pending is not None:
            return pending
        change = WorkspaceSettingChange.objects.create(
            workspace=workspace, setting=setting, value=value, requested_by=actor.user,
            requested_by_label=actor.label[:200])
        audit_event_create(workspace=workspace, actor=actor,
                           action="workspace.settings.change_requested",
                           target_type="setting_change", target_id=change.pk,
                           data={"setting": setting, "value": value})
    return change


class SettingChangeError(ValidationError):
    """A confirmation or cancellation that is refused; ``conflict`` when already decided."""

    def __init__(self, message: str, *, conflict: bool = False) -> None:
        super().__init__(message)
        self.message, self.conflict = message, conflict


def _decide(actor: Actor, change: WorkspaceSettingChange) -> WorkspaceSettingChange:
    locked = WorkspaceSettingChange.objects.select_for_update().get(pk=change.pk)
    if locked.state != "pending":
        raise SettingChangeError(f"This change is already {locked.state}.", conflict=True)
    return locked


def workspace_setting_change_confirm(*, actor: Actor,
                                     change: WorkspaceSettingChange) -> WorkspaceSettingChange:
    """Another admin confirms: the setting changes now. The requester cannot confirm their
    own change (the caller has checked that the actor is an admin of the workspace)."""
    from django.utils import timezone

    with transaction.atomic():
        change = _decide(actor, change)
        if actor.user is None or change.requested_by_id == actor.user.pk:
            raise SettingChangeError("Another admin must confirm this change (four eyes).")
        workspace = Workspace.objects.select_for_update().get(pk=change.workspace_id)
        before = apply_changes(workspace, {change.setting: change.value}, WORKSPACE_SETTINGS)
        change.state, change.decided_by, change.decided_at = "confirmed", actor.user, \
            timezone.now()
        change.save(update_fields=["state", "decided_by", "decided_at"])
        audit_event_create(workspace=workspace, actor=actor,
                           action="workspace.settings.change_confirmed",
                           target_type="setting_change", target_id=change.pk,
                           data={"setting": change.setting, "before": before,
                                 "after": {change.setting: change.value},
                                 "requested_by": change.requested_by_label})
    return change


def workspace_setting_change_cancel(*, actor: Actor,
                                    change: WorkspaceSettingChange) -> WorkspaceSettingChange:
    """Any admin (the requester too) withdraws a pending change; the setting stays. Audited."""
    from django.utils import timezone

    with transaction.atomic():
        change = _decide(actor, change)
        change.state, change.decided_by, change.decided_at = "cancelled", actor.user, \
            timezone.now()
        change.save(update_fields=["state", "decided_by", "decided_at"])
        audit_event_create(workspace=change.workspace, actor=actor,
                           action="workspace.settings.change_cancelled",
                           target_type="setting_change", target_id=change.pk,
                           data={"setting": change.setting,
                                 "requested_by": change.requested_by_label})
    return change


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
    tokens_suspend_for_lost_roles(actor=actor, workspace=workspace, user=user)


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


def token_lifetime(value: str) -> int | None:
    """A lifetime form choice ("90", "never") as days, or None for never."""
    return None if value == "never" else int(value)


def hashed_secret_mint(*, actor: Actor, row: Any, prefix: str, action: str,
                       data: dict[str, Any] | None = None,
                       lifetime_days: int | None = DEFAULT_TOKEN_LIFETIME_DAYS) -> str:
    """Give ``row`` (an unsaved HashedSecret) a new random secret, save it and audit it, in the
    caller's transaction. Returns the secret: it is shown once; only its SHA-256 is kept.
    It expires after ``lifetime_days`` (None: never, which callers must ask for)."""
    import datetime as dt
    import secrets

    from django.utils import timezone

    from memadmin.lib.keys import secret_digest

    if lifetime_days is not None and not 1 <= lifetime_days <= 3660:
        raise ValidationError("a token lives 1-3,660 days, or never expires")
    secret = prefix + secrets.token_urlsafe(32)
    row.prefix, row.secret_hash, row.created_by = secret[:12], secret_digest(secret), actor.user
    row.expires_at = (None if lifetime_days is None
                      else timezone.now() + dt.timedelta(days=lifetime_days))
    row.full_clean()
    row.save()
    audit_event_create(workspace=row.workspace, actor=actor, action=action,
                       target_type=row._meta.model_name, target_id=row.pk,
                       data={"prefix": row.prefix, "lifetime_days": lifetime_days,
                             **(data or {})})
    return secret


def _secret_action(row: Any, verb: str) -> str:
    return {"agenttoken": "agent_token", "admincredential": "admin_credential",
            "metricstoken": "metrics_token"}[row._meta.model_name] + "." + verb


def hashed_secret_suspend(*, actor: Actor, row: Any, reason: str) -> None:
    """Suspend a token (its minter lost the role that let them mint it); audited, visible on
    its page, and re-activatable by an admin. In the caller's transaction."""
    from django.utils import timezone

    if row.revoked_at is not None or row.suspended_at is not None:
        return
    row.suspended_at, row.suspended_reason = timezone.now(), reason[:200]
    row.save(update_fields=["suspended_at", "suspended_reason"])
    audit_event_create(workspace=row.workspace, actor=actor,
                       action=_secret_action(row, "suspend"),
                       target_type=row._meta.model_name, target_id=row.pk,
                       data={"prefix": row.prefix, "reason": row.suspended_reason})


@transaction.atomic
def hashed_secret_reactivate(*, actor: Actor, row: Any) -> Any:
    """Lift a suspension (admins). A revoked or expired token stays dead."""
    if row.suspended_at is None or row.revoked_at is not None:
        return row
    row.suspended_at, row.suspended_reason = None, ""
    row.save(update_fields=["suspended_at", "suspended_reason"])
    audit_event_create(workspace=row.workspace, actor=actor,
                       action=_secret_action(row, "reactivate"),
                       target_type=row._meta.model_name, target_id=row.pk,
                       data={"prefix": row.prefix})
    return row


def tokens_suspend_for_lost_roles(*, actor: Actor, workspace: Workspace, user: Any) -> int:
    """Suspend the tokens ``user`` minted in ``workspace`` that they could no longer mint:
    agent tokens reaching a namespace they no longer own, admin credentials and metrics
    tokens once they are no longer an admin. Returns how many were suspended."""
    from memadmin.memory.models import AgentToken
    from memadmin.workspaces import access
    from memadmin.workspaces.models import AdminCredential, MetricsToken

    live = {"workspace": workspace, "created_by": user, "revoked_at__isnull": True,
            "suspended_at__isnull": True}
    suspended = 0
    owned = access.owned_namespaces(user, workspace)
    foreign = AgentToken.namespaces.through.objects.filter(
        agenttoken_id=OuterRef("pk")).exclude(namespace_id__in=owned.values("pk"))
    for token in AgentToken.objects.filter(Exists(foreign), **live):
        hashed_secret_suspend(actor=actor, row=token,
                              reason="its minter no longer owns every namespace it reaches")
        suspended += 1
    if not access.can(user, "manage_workspace", workspace):
        for model in (AdminCredential, MetricsToken):
            for row in model.objects.filter(**live):
                hashed_secret_suspend(actor=actor, row=row,
                                      reason="its minter is no longer a workspace admin")
                suspended += 1
    return suspended


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
def admin_credential_mint(*, actor: Actor, workspace: Workspace, name: str,
                          lifetime_days: int | None = DEFAULT_TOKEN_LIFETIME_DAYS
                          ) -> tuple[Any, str]:
    """Mint a credential for admin operations on this workspace's endpoint; shown once."""
    from memadmin.workspaces.models import AdminCredential

    credential = AdminCredential(workspace=workspace, name=name)
    secret = hashed_secret_mint(actor=actor, row=credential, prefix=ADMIN_CREDENTIAL_PREFIX,
                                action="admin_credential.mint", data={"name": name},
                                lifetime_days=lifetime_days)
    return credential, secret


def admin_credential_revoke(*, actor: Actor, credential: Any) -> Any:
    return hashed_secret_revoke(actor=actor, row=credential, action="admin_credential.revoke")


@transaction.atomic
def metrics_token_mint(*, actor: Actor, workspace: Workspace, name: str,
                       lifetime_days: int | None = DEFAULT_TOKEN_LIFETIME_DAYS
                       ) -> tuple[Any, str]:
    from memadmin.workspaces.models import MetricsToken

    token = MetricsToken(workspace=workspace, name=name)
    secret = hashed_secret_mint(actor=actor, row=token, prefix=METRICS_TOKEN_PREFIX,
                                action="metrics_token.mint", lifetime_days=lifetime_days)
    return token, secret


def metrics_token_revoke(*, actor: Actor, token: Any) -> Any:
    return hashed_secret_revoke(actor=actor, row=token, action="metrics_token.revoke")

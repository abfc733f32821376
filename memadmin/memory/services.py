"""What people do to memory: edit, restore, delete, freeze, mint agent tokens.

Every service talks to the namespace's provider through the contract (so the same code serves the
built-in store and remote providers) and writes its audit event in the same transaction. For the
built-in store the memory change itself is in that transaction too.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from memadmin.audit.services import Actor, audit_event_create
from memadmin.jobs.models import Job
from memadmin.lib.textinput import visible_strip
from memadmin.memory.models import AgentToken, Freeze
from memadmin.providers import contract as c
from memadmin.providers.registry import namespace_scope, provider_for, resource_scope
from memadmin.workspaces.models import DEFAULT_TOKEN_LIFETIME_DAYS, Namespace, Resource, Workspace
from memadmin.workspaces.services import hashed_secret_mint, hashed_secret_revoke

AGENT_TOKEN_PREFIX = "mat_"  # noqa: S105 - a display prefix, not a secret


def _provider(namespace: Namespace) -> c.Provider:
    return provider_for(namespace.resource.provider)


def _deadline(namespace: Namespace) -> float:
    return namespace.resource.provider.request_deadline


def new_operation_id() -> str:
    return f"memadmin:{uuid.uuid4()}"


def memory_item_update(*, actor: Actor, namespace: Namespace, item_id: str, content: str,
                       mode: str, expected_revision: int,
                       expires_at: Any = c.KEEP) -> c.RetainResult:
    """Save an edit made against ``expected_revision``; a stale one raises ``Conflict``.
    ``expires_at``: the item's new expiry (None: never), or KEEP."""
    expiry = {} if expires_at is c.KEEP else {"expires_at": expires_at}
    with transaction.atomic():
        result = _provider(namespace).update_item(
            item_id, content, mode, expected_revision=expected_revision,
            operation_id=new_operation_id(), actor=actor.label,
            scope=namespace_scope(namespace), deadline=_deadline(namespace), **expiry,
        )
        audit_event_create(
            workspace=namespace.resource.workspace, actor=actor, action="memory.edit",
            target_type="item", target_id=item_id,
            data={"namespace": str(namespace.pk), "mode": mode, "from_revision": expected_revision,
                  "to_revision": result.revision, "bytes": result.bytes,
                  **({"expires_at": expires_at.isoformat() if expires_at else None}
                     if expires_at is not c.KEEP else {})},
        )
    return result


def memory_item_restore(*, actor: Actor, namespace: Namespace, item_id: str,
                        revision: int, expected_revision: int) -> c.RetainResult:
    """Make an earlier revision's content current again (as a new revision)."""
    provider, scope = _provider(namespace), namespace_scope(namespace)
    with transaction.atomic():
        detail = provider.get_item(item_id, scope=scope, deadline=_deadline(namespace))
        old = next((r for r in detail.revisions if r.revision == revision), None)
        if old is None:
            raise c.NotFound(f"the item has no revision {revision}")
        result = provider.update_item(
            item_id, old.content, "replace", expected_revision=expected_revision,
            operation_id=new_operation_id(), actor=actor.label, scope=scope,
            deadline=_deadline(namespace),
        )
        audit_event_create(
            workspace=namespace.resource.workspace, actor=actor, action="memory.restore",
            target_type="item", target_id=item_id,
            data={"namespace": str(namespace.pk), "restored_revision": revision,
                  "to_revision": result.revision},
        )
    return result


def memory_items_delete(*, actor: Actor, namespace: Namespace, ids: Sequence[str] | None = None,
                        filters: c.ItemFilters | None = None, exclude_ids: Sequence[str] = (),
                        limit: int | None = None) -> c.DeleteResult:
    """Delete items by id or by filter (minus exclusions); frozen ones are reported as held."""
    with transaction.atomic():
        result = _provider(namespace).delete_items(
            ids=ids, filters=filters, exclude_ids=exclude_ids, limit=limit,
            operation_id=new_operation_id(), actor=actor.label,
            scope=namespace_scope(namespace), deadline=_deadline(namespace),
        )
        audit_event_create(
            workspace=namespace.resource.workspace, actor=actor, action="memory.delete",
            target_type="namespace", target_id=namespace.pk,
            data={"ids": list(ids)[:100] if ids is not None else None,
                  "id_count": len(ids) if ids is not None else None,
                  "filters": filters_for_audit(filters), "excluded": len(exclude_ids),
                  "removed": result.removed, "held": result.held},
        )
    return result


def filters_for_audit(filters: c.ItemFilters | None) -> dict[str, object] | None:
    if filters is None:
        return None
    # The order of a list is not a filter: what a delete or an export covers ignores it.
    data = {k: v for k, v in dataclasses.asdict(filters).items()
            if v is not None and k != "order"}
    # A subject filter is recorded as "present", never as the clear id.
    if "subject" in data:
        data["subject"] = "(set)"
    if "q" in data:
        data["q"] = f"({len(str(data['q']))} characters)"
    return data


@dataclasses.dataclass(frozen=True)
class FreezeSubject:
    """What a person freezes: a resource, a namespace, or one item of a namespace."""

    resource: Resource
    namespace: Namespace | None = None
    item_id: str | None = None

    @property
    def level(self) -> str:
        if self.item_id is not None:
            return "item"
        return "namespace" if self.namespace is not None else "resource"

    def target(self) -> c.FreezeTarget:
        if self.item_id is not None:
            return c.FreezeTarget(level="item", item_id=self.item_id)
        if self.namespace is not None:
            return c.FreezeTarget(level="namespace", partition=self.namespace.partition_key)
        return c.FreezeTarget(level="resource", resource=self.resource.slug)

    def scope(self) -> c.Scope:
        if self.namespace is not None:
            return namespace_scope(self.namespace)
        return resource_scope(self.resource)

    def reaches_provider(self) -> bool:
        """A resource without namespaces has no partition to name to its provider; its Freeze
        row alone covers the namespaces created later."""
        return self.namespace is not None or self.resource.namespaces.exists()

    def row_filter(self) -> dict[str, object]:
        if self.item_id is not None:
            return {"level": "item", "provider": self.resource.provider,
                    "item_ref": self.item_id}
        if self.namespace is not None:
            return {"level": "namespace", "namespace": self.namespace}
        return {"level": "resource", "resource": self.resource}


def _check_freeze_kind(kind: str) -> None:
    if kind not in c.FREEZE_KINDS:
        raise ValidationError("kind must be freeze or legal_hold")


def _active_freeze(subject: FreezeSubject, kind: str) -> Freeze | None:
    return Freeze.objects.filter(**subject.row_filter(), kind=kind,
                                 lifted_at__isnull=True).first()


def memory_freeze_place(*, actor: Actor, subject: FreezeSubject, kind: str,
                        reason: str) -> Freeze:
    """Freeze (owners) or put on legal hold (compliance); the provider is told, so it refuses
    writes from every path.

    The Freeze row is memadmin's record for every provider kind. The built-in store keeps its
    freezes in that very table, so its ``freeze()`` writes the row (its one owner) and this
    service only names the person behind the label; for any other provider (which keeps its
    own), and for a resource with no namespace to name yet, the service records it.
    """
    _check_freeze_kind(kind)
    reason = visible_strip(c.check_text(reason, field="reason", max_bytes=1000))
    if not reason:
        raise ValidationError("a reason is required")
    workspace: Workspace = subject.resource.workspace
    with transaction.atomic():
        existing = _active_freeze(subject, kind)
        if existing is not None:
            return existing
        if subject.reaches_provider():
            provider_for(subject.resource.provider).freeze(
                subject.target(), kind=kind, reason=reason, actor=actor.label,
                scope=subject.scope(), deadline=subject.resource.provider.request_deadline,
            )
        freeze = _active_freeze(subject, kind)
        if freeze is None:
            freeze = Freeze.objects.create(
                workspace=workspace, **subject.row_filter(), kind=kind, reason=reason,
                created_by=actor.user, created_by_label=actor.label,
            )
        elif actor.user is not None:
            # The contract's actor is a label; the account behind it is memadmin's to know.
            Freeze.objects.filter(pk=freeze.pk).update(created_by=actor.user)
            freeze.created_by = actor.user
        audit_event_create(workspace=workspace, actor=actor, action=f"{kind}.place",
                           target_type=subject.level, target_id=_target_id(subject),
                           data={"freeze": str(freeze.pk), "reason_chars": len(reason)})
    return freeze


def memory_freeze_lift(*, actor: Actor, subject: FreezeSubject, kind: str) -> int:
    """Lift the active freeze of ``kind``; returns how many rows were lifted (0 or 1).

    As for placing: the built-in store lifts its own row, any other provider's record is
    lifted here."""
    _check_freeze_kind(kind)
    workspace = subject.resource.workspace
    with transaction.atomic():
        active = list(Freeze.objects.filter(**subject.row_filter(), kind=kind,
                                            lifted_at__isnull=True).values_list("pk", flat=True))
        if subject.reaches_provider():
            provider_for(subject.resource.provider).lift_freeze(
                subject.target(), kind=kind, actor=actor.label, scope=subject.scope(),
                deadline=subject.resource.provider.request_deadline,
            )
        Freeze.objects.filter(pk__in=active, lifted_at__isnull=True).update(
            lifted_at=timezone.now(), lifted_by_label=actor.label)
        if actor.user is not None:
            Freeze.objects.filter(pk__in=active).update(lifted_by=actor.user)
        lifted = len(active)
        audit_event_create(workspace=workspace, actor=actor, action=f"{kind}.lift",
                           target_type=subject.level, target_id=_target_id(subject),
                           data={"lifted": lifted})
    return lifted


def _target_id(subject: FreezeSubject) -> str:
    if subject.item_id is not None:
        return subject.item_id
    return str((subject.namespace or subject.resource).pk)


@transaction.atomic
def agent_token_mint(*, actor: Actor, workspace: Workspace, namespaces: Sequence[Namespace],
                     access: str, name: str,
                     lifetime_days: int | None = DEFAULT_TOKEN_LIFETIME_DAYS
                     ) -> tuple[AgentToken, str]:
    """Mint a token for ``namespaces``; the secret is returned once and only its hash is kept."""
    if not namespaces:
        raise ValidationError("a token needs at least one namespace")
    if any(ns.resource.workspace_id != workspace.pk for ns in namespaces):
        raise ValidationError("every namespace must belong to the workspace")
    token = AgentToken(workspace=workspace, name=name, access=access)
    secret = hashed_secret_mint(actor=actor, row=token, prefix=AGENT_TOKEN_PREFIX,
                                action="agent_token.mint", lifetime_days=lifetime_days,
                                data={"access": access,
                                      "namespaces": [str(ns.pk) for ns in namespaces]})
    token.namespaces.set(namespaces)
    return token, secret


def agent_token_revoke(*, actor: Actor, token: AgentToken) -> AgentToken:
    return hashed_secret_revoke(actor=actor, row=token, action="agent_token.revoke")



# -- filter-wide delete (a job) -----------------------------------------------------------------

BULK_DELETE_BATCH = 500
MAX_EXCLUSIONS = 10_000


def memory_bulk_delete_start(*, actor: Actor, namespace: Namespace, filters: c.ItemFilters,
                             exclude_ids: Sequence[str], count: int | None) -> Job:
    """Start a job deleting everything matching ``filters`` (minus ``exclude_ids``) batch by
    batch. A subject filter is kept in the params only until the job finishes."""
    from memadmin.jobs.services import job_create
    from memadmin.providers import wire

    exclude = list(dict.fromkeys(exclude_ids))[:MAX_EXCLUSIONS]
    params = {"namespace": str(namespace.pk), "filters": wire.filters_to_wire(filters),
              "exclude_ids": exclude, "actor": actor.label}
    with transaction.atomic():
        job = job_create(actor=actor, kind="memory_bulk_delete", params=params,
                         workspace=namespace.resource.workspace, total=count)
        audit_event_create(
            workspace=namespace.resource.workspace, actor=actor,
            action="memory.bulk_delete.start", target_type="namespace", target_id=namespace.pk,
            data={"job": str(job.pk), "filters": filters_for_audit(filters),
                  "excluded": len(exclude), "count": count},
        )
    return job


def job_params_erase_subject(job: Job) -> None:
    """Replace a clear data-subject filter in a job's params once the job no longer needs it."""
    filters = job.params.get("filters")
    if isinstance(filters, dict) and filters.get("subject") not in (None, "(erased)"):
        job.params = {**job.params, "filters": {**filters, "subject": "(erased)"}}
        type(job).objects.filter(pk=job.pk).update(params=job.params)

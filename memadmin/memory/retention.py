"""Retention: policies per resource or namespace (and tier), their preview, and the run.

A policy removes the items not updated for N days (``idle``) or older than N days (``age``),
either deleting them or archiving them to an export file first. The run goes through the
provider contract only (``count``, ``list_items``, ``export``, ``delete_items``), so frozen items
and legal holds are never removed: the provider keeps them and reports them as held, and the run
counts and names them. A provider that cannot answer the retention filters (an older remote
memadmin, an unsupported operation) is reported as unavailable, never guessed at.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import itertools
import json
import zipfile
from collections.abc import Iterator, Sequence
from typing import Any

from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from memadmin.audit.services import Actor, audit_event_create
from memadmin.events import services as events
from memadmin.jobs.models import Job
from memadmin.jobs.runner import JobContext
from memadmin.memory import exports
from memadmin.memory.models import RETENTION_MAX_DAYS, RetentionPolicy
from memadmin.providers import contract as c
from memadmin.providers import wire
from memadmin.providers.models import ProviderConfig
from memadmin.providers.registry import namespace_scope, provider_for, scope_of
from memadmin.workspaces.models import Namespace, Resource

#: How long after one run the next one is due (a new policy's first run too: time to preview).
RUN_EVERY = dt.timedelta(days=1)
#: An archive file stays downloadable this long (an export file: 24 hours).
ARCHIVE_TTL = dt.timedelta(days=30)
BATCH = 500
#: At most this many held items are named in a run's result (all of them are counted).
HELD_NAMED = 100


# -- what a policy matches ----------------------------------------------------------------------


def policy_filters(policy: RetentionPolicy, now: dt.datetime) -> c.ItemFilters:
    """The contract filters of the items ``policy`` removes at ``now``."""
    cutoff = now - dt.timedelta(days=policy.days)
    return c.ItemFilters(
        tier=policy.tier or None,
        updated_before=cutoff if policy.rule == "idle" else None,
        created_before=cutoff if policy.rule == "age" else None,
    )


def policy_namespaces(policy: RetentionPolicy) -> list[Namespace]:
    qs = Namespace.objects.select_related("resource__provider")
    if policy.namespace_id:
        return list(qs.filter(pk=policy.namespace_id))
    return list(qs.filter(resource=policy.resource).order_by("slug"))


def _unavailable_text(error: c.ProviderError) -> str:
    if isinstance(error, c.Unsupported):
        return "this provider does not support it"
    if isinstance(error, c.InvalidRequest):
        return f"this provider cannot filter by age ({error.message})"
    return error.message


# -- selectors ----------------------------------------------------------------------------------


def resource_policies(resource: Resource) -> list[RetentionPolicy]:
    return list(RetentionPolicy.objects.filter(resource=resource)
                .select_related("resource", "last_job").order_by("tier"))


def namespace_policies(namespace: Namespace) -> list[RetentionPolicy]:
    """The policies that apply to a namespace: its own and its resource's."""
    return list(RetentionPolicy.objects
                .filter(Q(namespace=namespace) | Q(resource_id=namespace.resource_id))
                .select_related("resource", "namespace", "last_job")
                .order_by("namespace_id", "tier"))


@dataclasses.dataclass(frozen=True)
class PreviewRow:
    """What a policy would do in one namespace now: remove ``removable``, keep ``held``."""

    namespace: Namespace
    removable: int | None
    held: int | None
    unavailable: str = ""


def retention_preview(policy: RetentionPolicy, now: dt.datetime | None = None
                      ) -> list[PreviewRow]:
    """Per namespace of the policy, how many items it would remove now and how many it must
    keep (frozen or on legal hold). ``None`` when the provider cannot tell."""
    filters = policy_filters(policy, now or timezone.now())
    rows = []
    for ns in policy_namespaces(policy):
        provider = provider_for(ns.resource.provider)
        deadline = ns.resource.provider.request_deadline
        try:
            removable = provider.count(dataclasses.replace(filters, frozen=False),
                                       scope=namespace_scope(ns), deadline=deadline)
            held = provider.count(dataclasses.replace(filters, frozen=True),
                                  scope=namespace_scope(ns), deadline=deadline)
        except c.ProviderError as exc:
            rows.append(PreviewRow(ns, None, None, _unavailable_text(exc)))
            continue
        rows.append(PreviewRow(ns, removable, held))
    return rows


# -- services -----------------------------------------------------------------------------------


def _policy_audit(policy: RetentionPolicy) -> dict[str, Any]:
    return {"tier": policy.tier or None, "action": policy.action, "rule": policy.rule,
            "days": policy.days}


def _target(resource: Resource | None, namespace: Namespace | None) -> tuple[str, Any]:
    return ("namespace", namespace.pk) if namespace is not None else ("resource", resource.pk)  # type: ignore[union-attr]


def retention_policy_set(*, actor: Actor, resource: Resource | None = None,
                         namespace: Namespace | None = None, tier: str = "", action: str,
                         rule: str, days: int) -> RetentionPolicy:
    """Create or replace the policy of (resource or namespace, tier); audited with it."""
    if (resource is None) == (namespace is None):
        raise ValidationError("a retention policy is for one resource or one namespace")
    if not isinstance(days, int) or not 1 <= days <= RETENTION_MAX_DAYS:
        raise ValidationError(f"days must be 1-{RETENTION_MAX_DAYS}")
    workspace = (namespace.resource.workspace if namespace is not None
                 else resource.workspace)  # type: ignore[union-attr]
    with transaction.atomic():
        policy = (RetentionPolicy.objects.select_for_update()
                  .filter(resource=resource, namespace=namespace, tier=tier).first())
        created = policy is None
        if policy is None:
            policy = RetentionPolicy(workspace=workspace, resource=resource, namespace=namespace,
                                     tier=tier, next_run_at=timezone.now() + RUN_EVERY)
        policy.action, policy.rule, policy.days = action, rule, days
        policy.created_by_label = actor.label
        policy.full_clean()
        policy.save()
        kind, target_id = _target(resource, namespace)
        audit_event_create(workspace=workspace, actor=actor, action="retention.policy_set",
                           target_type=kind, target_id=target_id,
                           data={**_policy_audit(policy), "created": created,
                                 "policy": str(policy.pk)})
    return policy


def retention_policy_remove(*, actor: Actor, policy: RetentionPolicy) -> None:
    with transaction.atomic():
        kind, target_id = _target(policy.resource, policy.namespace)
        audit_event_create(workspace=policy.workspace, actor=actor,
                           action="retention.policy_remove", target_type=kind,
                           target_id=target_id,
                           data={**_policy_audit(policy), "policy": str(policy.pk)})
        policy.delete()


def retention_run_start(*, actor: Actor, policy: RetentionPolicy,
                        now: dt.datetime | None = None) -> Job:
    """Start a run of ``policy`` as a job (its cutoff fixed now, so a resumed run removes the
    same set); audited with the policy. The next scheduled run moves a period on."""
    from memadmin.jobs.services import job_create

    now = now or timezone.now()
    namespaces = policy_namespaces(policy)
    kind, target_id = _target(policy.resource, policy.namespace)
    params = {
        "policy": str(policy.pk), "action": policy.action, "summary": policy.summary,
        "namespaces": [str(ns.pk) for ns in namespaces],
        "filters": wire.filters_to_wire(policy_filters(policy, now)),
        # What the export machinery's manifest reads (the archive is an export file).
        "scope": {"kind": kind, "id": str(target_id)}, "format": "zip",
        "exporter": actor.label, "actor": actor.label,
    }
    with transaction.atomic():
        job = job_create(actor=actor, kind="retention_run", params=params,
                         workspace=policy.workspace)
        RetentionPolicy.objects.filter(pk=policy.pk).update(
            last_run_at=now, last_job=job, next_run_at=now + RUN_EVERY)
        audit_event_create(workspace=policy.workspace, actor=actor, action="retention.run",
                           target_type=kind, target_id=target_id,
                           data={**_policy_audit(policy), "policy": str(policy.pk),
                                 "job": str(job.pk), "namespaces": len(namespaces),
                                 "cutoff": wire.iso(now - dt.timedelta(days=policy.days))})
    policy.refresh_from_db()
    return job


def retention_sweep(now: dt.datetime | None = None) -> int:
    """Periodic (registered in apps.py): start a run of every policy that is due, unless its
    previous run is still going. Returns how many runs it started."""
    now = now or timezone.now()
    started = 0
    with transaction.atomic():
        due = list(RetentionPolicy.objects.select_for_update(skip_locked=True, of=("self",))
                   .filter(next_run_at__lte=now)
                   .select_related("resource", "namespace", "workspace", "last_job"))
        for policy in due:
            if policy.last_job is not None and not policy.last_job.finished:
                continue
            retention_run_start(actor=Actor.system("retention"), policy=policy, now=now)
            started += 1
    return started


# -- the run (the ``retention_run`` job) --------------------------------------------------------


def _archive_ids(name: str, part: dict[str, Any], skip: int) -> Iterator[list[str]]:
    """The ids archived in one part of the archive file, in batches, after ``skip`` lines."""
    with default_storage.open(name, "rb") as raw, zipfile.ZipFile(raw) as zf, \
            zf.open(part["file"]) as lines:
        batch: list[str] = []
        for number, line in enumerate(lines):
            if number < skip:
                continue
            batch.append(json.loads(line)["id"])
            if len(batch) == BATCH:
                yield batch
                batch = []
        if batch:
            yield batch


def _held(config: ProviderConfig, namespaces: Sequence[Namespace],
          filters: c.ItemFilters) -> tuple[int, list[dict[str, str]]]:
    """How many matching items a freeze or legal hold keeps, and (some of) which."""
    provider = provider_for(config)
    scope = scope_of(namespaces)
    held_filters = dataclasses.replace(filters, frozen=True)
    page = provider.list_items(held_filters, limit=HELD_NAMED, scope=scope,
                               deadline=config.request_deadline)
    count = provider.count(held_filters, scope=scope, deadline=config.request_deadline)
    slugs = {ns.partition_key: ns.slug for ns in namespaces}
    named = [{"id": item.id, "namespace": slugs.get(item.partition, ""), "source": item.source}
             for item in page.items]
    return (count if count is not None else len(named)), named


def run_retention(ctx: JobContext) -> dict[str, Any]:
    """Apply a policy: for each provider, count what it removes, archive it first when asked
    (the whole file is written before anything is deleted), then delete in batches of 500
    through ``delete_items`` (frozen and held items stay), and record what a hold kept.

    Steps:
    1. Count the removable items per provider group (a group that cannot answer is reported
       unavailable and left alone).
    2. ``archive``: write the export file of the removable items (checkpointed per provider).
    3. Delete: ``archive`` deletes exactly the ids in the file; ``delete`` deletes what matches
       the filters, batch by batch, until a batch removes none. Each batch commits with its
       checkpoint and carries an operation id naming it, so a resumed run never counts twice.
    4. Count and name the held items, audit the result with counts.
    """
    job = ctx.job
    params = job.params
    filters = wire.filters_from_wire(params["filters"])
    removable_filters = dataclasses.replace(filters, frozen=False)
    groups = exports.export_groups(params["namespaces"])
    archive = params["action"] == "archive"
    state: dict[str, Any] = dict(ctx.checkpoint) or {"counted": False}
    # 1. Count.
    if not state["counted"]:
        counts: dict[str, int | None] = {}
        unavailable: dict[str, str] = {}
        for config, namespaces in groups:
            try:
                counts[str(config.pk)] = provider_for(config).count(
                    removable_filters, scope=scope_of(namespaces),
                    deadline=config.request_deadline)
            except c.ProviderError as exc:
                unavailable[str(config.pk)] = _unavailable_text(exc)
        known = list(counts.values())
        total = None if any(n is None for n in known) else sum(n or 0 for n in known)
        state = {"counted": True, "unavailable": unavailable, "removed": {}, "deleted_lines": {},
                 "batch": {}, "done": {}, "parts": {}, "archive": None, "total": total}
        ctx.save_progress(done=0, total=(2 * total if archive and total is not None
                                          else total), checkpoint=state)
    usable = [(config, nss) for config, nss in groups
              if str(config.pk) not in state["unavailable"]]
    # 2. Archive: the file is complete before the first deletion.
    if archive and usable and state["archive"] is None and state.get("total") != 0:
        name, parts = exports.write_export_file(ctx, usable, removable_filters, "zip", state)
        state = {**ctx.checkpoint, "archive": name,
                 "archive_parts": {str(config.pk): part
                                   for (config, _), part in zip(usable, parts, strict=True)}}
        Job.objects.filter(pk=job.pk).update(
            result_file=name, result_expires_at=timezone.now() + ARCHIVE_TTL)
        ctx.save_progress(done=ctx.job.progress_done, checkpoint=state)
    archived = sum(p["items"] for p in (state.get("archive_parts") or {}).values())
    # 3. Delete.
    for config, namespaces in usable:
        key = str(config.pk)
        if state["done"].get(key):
            continue
        provider = provider_for(config)
        scope = scope_of(namespaces)
        batches: Iterator[list[str] | None]
        if archive and state["archive"] is None:
            batches = iter(())  # nothing matched, so nothing was archived or is deleted
        elif archive:
            batches = _archive_ids(state["archive"], state["archive_parts"][key],
                                   state["deleted_lines"].get(key, 0))
        else:
            batches = itertools.repeat(None)  # until a batch removes none
        for ids in batches:
            number = state["batch"].get(key, 0)
            with transaction.atomic(), events.cause("expired"):
                if ids is None:
                    result = provider.delete_items(
                        filters=filters, limit=BATCH,
                        operation_id=f"retention:{job.pk}:{key}:{number}",
                        actor=params.get("actor", "retention"), scope=scope,
                        deadline=config.request_deadline)
                else:
                    result = provider.delete_items(
                        ids=ids, operation_id=f"retention:{job.pk}:{key}:{number}",
                        actor=params.get("actor", "retention"), scope=scope,
                        deadline=config.request_deadline)
                removed = state["removed"].get(key, 0) + result.removed
                state = {**state, "removed": {**state["removed"], key: removed},
                         "batch": {**state["batch"], key: number + 1},
                         "deleted_lines": {**state["deleted_lines"], key:
                                           state["deleted_lines"].get(key, 0) + len(ids or ())}}
                ctx.save_progress(done=archived + sum(state["removed"].values()),
                                  checkpoint=state)
            if ids is None and result.removed == 0:
                break
        state = {**state, "done": {**state["done"], key: True}}
        ctx.save_progress(done=archived + sum(state["removed"].values()), checkpoint=state)
    # 4. Held items, and the audit record.
    held, named = 0, []
    for config, namespaces in usable:
        try:
            count, some = _held(config, namespaces, filters)
        except c.ProviderError as exc:
            state["unavailable"] = {**state["unavailable"],
                                    str(config.pk): f"held items unknown: {exc.message}"}
            continue
        held += count
        named += some
    removed = sum(state["removed"].values())
    done = archived + removed
    ctx.save_progress(done=done, total=done)  # what was done is the whole of it: 100%
    slugs = {str(config.pk): config.slug for config, _ in groups}
    left_alone = [{"provider": slugs.get(pk, pk), "reason": why}
                  for pk, why in state["unavailable"].items()]
    outcome: dict[str, Any] = {"policy": params["policy"], "summary": params.get("summary", ""),
              "action": params["action"], "removed": removed, "held": held,
              "held_items": named[:HELD_NAMED], "archived": archived if archive else None,
              "archive": bool(state.get("archive")), "unavailable": left_alone,
              "finished_at": timezone.now().isoformat()}
    with transaction.atomic():
        audit_event_create(
            workspace=job.workspace,
            actor=Actor(label=params.get("actor", "retention"), user=job.created_by),
            action="retention.run.result", target_type=params["scope"]["kind"],
            target_id=params["scope"]["id"],
            data={"job": str(job.pk), "policy": params["policy"], "action": params["action"],
                  "removed": removed, "held": held, "archived": outcome["archived"],
                  "held_ids": [h["id"] for h in named[:HELD_NAMED]],
                  "unavailable": len(left_alone)})
    return outcome


# -- per-item expiry (``expiresAt`` set by the editor or the agent) -----------------------------

#: How many expired items one namespace gives up per sweep (the next sweep takes the rest).
EXPIRY_BATCHES = 20


def expiry_sweep(now: dt.datetime | None = None) -> dict[str, int]:
    """Periodic (registered in apps.py): delete the built-in store's items whose own expiry
    has passed, namespace by namespace through the provider contract, so frozen and held
    items stay (counted as held). Each batch is audited in its own transaction, with counts.

    Remote providers and the governed stores expire their own items (LangGraph's TTL sweeper),
    so they are not asked here."""
    from memadmin.memory.models import MemoryItem

    now = now or timezone.now()
    removed = held = 0
    namespace_ids = (MemoryItem.objects.filter(expires_at__lt=now)
                     .values_list("namespace_id", flat=True).distinct())
    namespaces = (Namespace.objects.filter(pk__in=list(namespace_ids),
                                           resource__provider__kind="local")
                  .select_related("resource__provider", "resource__workspace"))
    filters = c.ItemFilters(expired_before=now)
    for ns in namespaces:
        config = ns.resource.provider
        provider = provider_for(config)
        for batch in range(EXPIRY_BATCHES):
            with transaction.atomic():
                result = provider.delete_items(
                    filters=filters, limit=BATCH,
                    operation_id=f"expiry:{ns.pk}:{now.isoformat()}:{batch}",
                    actor="retention (expiry)", scope=namespace_scope(ns),
                    deadline=config.request_deadline)
                if result.removed or (batch == 0 and result.held):
                    audit_event_create(
                        workspace=ns.resource.workspace, actor=Actor.system("retention"),
                        action="retention.expiry", target_type="namespace", target_id=ns.pk,
                        data={"removed": result.removed, "held": result.held,
                              "expired_before": now.isoformat()})
            removed += result.removed
            if batch == 0:
                held += result.held
            if result.removed < BATCH:
                break
    return {"removed": removed, "held": held}

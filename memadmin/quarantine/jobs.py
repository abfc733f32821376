"""Background jobs of the quarantine: rescan after a rule change, and remote labels."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.utils import timezone

from memadmin.audit.services import Actor, audit_event_create
from memadmin.jobs.runner import JobContext, job_handler
from memadmin.memory.models import MemoryItem
from memadmin.providers import contract as c
from memadmin.providers.models import GOVERNED_KINDS, ProviderConfig
from memadmin.providers.registry import builtin_store, provider_for, resource_scope
from memadmin.quarantine import screening
from memadmin.quarantine.models import QuarantineEntry
from memadmin.workspaces.models import Namespace, Resource, Workspace

if TYPE_CHECKING:
    from memadmin.memory.store import LocalProvider

RESCAN_BATCH = 500
#: Remote labels fetched per provider and resource (the queue lists them read-only).
REMOTE_LABELS_MAX = 2000


def _rescan_item(store: LocalProvider, item: MemoryItem, entry: QuarantineEntry | None,
                 workspace_id: Any, provider_id: Any) -> str | None:
    """Apply the current rules to one item; returns what changed (or None). A new state goes
    through the store (it moves the namespace's version, so recall's cursor sees it)."""
    previous = item.quarantine_state
    if previous == "released":
        return None  # a reviewer's release stands until the content changes
    verdict = screening.assess(item.content, workspace_id)
    label = c.source_label(item.tier, item.key)
    if previous == "clear":
        if verdict is None:
            return None
        store.quarantine_state_rescan(item, "pending")
        screening.record(item=item, verdict=verdict, previous="clear", provider_id=provider_id,
                         workspace_id=workspace_id, label=label)
        return "flagged"
    # pending: an open entry (pending or kept) holds the earlier verdict.
    if verdict is None:
        if entry is not None and entry.state == "kept":
            return None  # a reviewer chose to keep it quarantined
        store.quarantine_state_rescan(item, "clear")
        screening.record(item=item, verdict=None, previous="pending", provider_id=provider_id,
                         workspace_id=workspace_id, label=label)
        return "cleared"
    if entry is None:
        screening.record(item=item, verdict=verdict, previous="clear", provider_id=provider_id,
                         workspace_id=workspace_id, label=label)
        return "rules_changed"
    changed = list(verdict.rules) != list(entry.rule_ids)
    QuarantineEntry.objects.filter(pk=entry.pk).update(
        rule_ids=list(verdict.rules), spans=[list(s) for s in verdict.spans],
        ruleset_version=verdict.version)
    return "rules_changed" if changed else None


@job_handler("quarantine_rescan")
def quarantine_rescan(ctx: JobContext) -> dict[str, Any]:
    """Rescan every item of the workspace's built-in stores with the current rule set.

    Walks items by id in batches; each batch (its row locks, state changes, entries and the
    checkpoint) commits together, so a resumed job carries on after the last finished batch
    and never counts an item twice.
    """
    workspace = Workspace.objects.get(pk=ctx.params["workspace"])
    namespaces = dict(Namespace.objects.filter(
        resource__workspace=workspace, resource__provider__kind="local",
    ).values_list("id", "resource__provider_id"))
    stores = {config.pk: builtin_store(config) for config in ProviderConfig.objects.filter(
        pk__in=set(namespaces.values()))}
    empty: dict[str, Any] = {"after": None, "scanned": 0, "flagged": 0, "cleared": 0,
                             "rules_changed": 0}
    state = dict(ctx.checkpoint) or empty
    if ctx.job.progress_total is None:
        ctx.save_progress(done=0, total=MemoryItem.objects.filter(
            namespace_id__in=list(namespaces)).count(), checkpoint=state)
    while True:
        with transaction.atomic():
            rows = MemoryItem.objects.filter(namespace_id__in=list(namespaces)).order_by("id")
            if state["after"]:
                rows = rows.filter(id__gt=state["after"])
            batch = list(rows.select_for_update()[:RESCAN_BATCH])
            if not batch:
                break
            pending_ids = [str(i.id) for i in batch if i.quarantine_state == "pending"]
            entries = {e.item_ref: e for e in QuarantineEntry.objects.filter(
                item_ref__in=pending_ids, state__in=QuarantineEntry.OPEN_STATES, remote=False)}
            state = {**state, "after": str(batch[-1].id), "scanned": state["scanned"] + len(batch)}
            for item in batch:
                provider_id = namespaces[item.namespace_id]
                change = _rescan_item(stores[provider_id], item, entries.get(str(item.id)),
                                      workspace.pk, provider_id)
                if change:
                    state[change] += 1
            ctx.save_progress(done=state["scanned"], checkpoint=state)
    result = {key: state[key] for key in ("scanned", "flagged", "cleared", "rules_changed")}
    result["changed"] = state["flagged"] + state["cleared"] + state["rules_changed"]
    from memadmin.quarantine.scanner import RULESET_VERSION

    result["ruleset"] = RULESET_VERSION
    with transaction.atomic():
        audit_event_create(
            workspace=workspace, actor=Actor(label="rescan", user=ctx.job.created_by),
            action="quarantine.rescan.result", target_type="job", target_id=ctx.job.pk,
            data=result,
        )
    return result


def _sync_resource(config: ProviderConfig, resource: Resource) -> int:
    """Upsert the remote labels of one resource; entries no longer reported are superseded."""
    provider = provider_for(config)
    scope = resource_scope(resource)
    if not scope.partitions:
        return 0
    by_partition = {ns.partition_key: ns for ns in resource.namespaces.all()}
    seen: list[str] = []
    cursor = None
    while len(seen) < REMOTE_LABELS_MAX:
        page = provider.list_items(c.ItemFilters(quarantine="pending"), cursor=cursor,
                                   limit=min(c.LIST_MAX_LIMIT, REMOTE_LABELS_MAX - len(seen)),
                                   scope=scope, deadline=config.request_deadline)
        with transaction.atomic():
            for item in page.items:
                seen.append(item.id)
                namespace = by_partition.get(item.partition)
                QuarantineEntry.objects.update_or_create(
                    provider=config, item_ref=item.id, state="pending",
                    defaults={"workspace_id": config.workspace_id, "remote": True,
                              "label": item.source[:300],
                              "namespace": namespace},
                )
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    QuarantineEntry.objects.filter(
        provider=config, remote=True, state="pending",
        namespace__resource=resource).exclude(item_ref__in=seen).update(
        state="superseded", reviewed_at=timezone.now())
    return len(seen)


@job_handler("quarantine_remote_sync")
def quarantine_remote_sync(ctx: JobContext) -> dict[str, Any]:
    """List what each remote provider reports as quarantined (labels only, read-only)."""
    workspace = Workspace.objects.get(pk=ctx.params["workspace"])
    resources = list(Resource.objects.filter(
        workspace=workspace, provider__enabled=True).exclude(
        # Governed stores (markdown, langgraph, mem0) are scanned by memadmin itself.
        provider__kind__in=["local", *GOVERNED_KINDS])
        .select_related("provider").order_by("slug"))
    report: list[dict[str, Any]] = []
    ctx.save_progress(done=0, total=len(resources))
    for number, resource in enumerate(resources, start=1):
        row: dict[str, Any] = {"provider": resource.provider.name, "resource": resource.slug}
        try:
            row["labels"] = _sync_resource(resource.provider, resource)
        except c.ProviderError as exc:
            row["error"] = f"{exc.code}: {exc.message}"[:300]
        report.append(row)
        ctx.save_progress(done=number)
    return {"resources": report}

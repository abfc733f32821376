"""Exports that run as a job: a namespace, a resource, a filter result or a whole workspace, as
one JSON Lines file or a ZIP of one JSONL file per provider plus ``manifest.json``.

Constant memory: items stream from ``provider.export`` into a temporary file per provider
(hashed while written), which is kept in ``default_storage`` once complete; the final file is
assembled from those parts by streaming copies. A resumed job skips the providers whose part is
done; a provider in progress restarts its part. Quarantined (pending) items are skipped: their
content leaves only through the review queue.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil
import tempfile
import zipfile
from collections.abc import Iterator, Sequence
from typing import Any

from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from memadmin.audit.services import Actor, audit_event_create
from memadmin.jobs.models import Job
from memadmin.jobs.runner import JobContext
from memadmin.lib import storage_names
from memadmin.lib.files import storage_replace as _replace
from memadmin.memory.services import filters_for_audit
from memadmin.providers import contract as c
from memadmin.providers import wire
from memadmin.providers.models import ProviderConfig
from memadmin.providers.registry import provider_for, scope_of
from memadmin.workspaces import access
from memadmin.workspaces.models import Namespace, Resource, Workspace

FORMAT_VERSION = 1
FORMATS = ("zip", "jsonl")
EXPORT_TTL = dt.timedelta(hours=24)
#: Jobs whose result file is an export file (a retention run's archive is one too).
DOWNLOADABLE_KINDS = ("memory_export", "retention_run")
#: Progress (and the lease) is saved after every this many items.
PROGRESS_EVERY = 500
COPY_CHUNK = 64 * 1024


# -- who may export what ------------------------------------------------------------------------


def may_export_workspace(user: Any, workspace: Workspace) -> bool:
    """Admins and workspace-wide owners (both hold ``export`` workspace-wide)."""
    return access.can(user, "export", workspace)


def resource_export_namespaces(user: Any, resource: Resource) -> list[Namespace]:
    """The resource's namespaces the user may export: the ones they own (admins: all).

    Reading content is not enough: viewers, operators and compliance staff export nothing.
    """
    return list(access.exportable_namespaces(user, resource.workspace)
                .filter(resource=resource).order_by("slug"))


# -- starting -----------------------------------------------------------------------------------


def memory_export_start(*, actor: Actor, workspace: Workspace, scope: dict[str, str],
                        namespaces: Sequence[Namespace], filters: c.ItemFilters,
                        fmt: str) -> Job:
    """Start an export job over ``namespaces``; audited with the scope, never the subject id."""
    from memadmin.jobs.services import job_create

    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}")
    params = {"scope": scope, "namespaces": [str(ns.pk) for ns in namespaces],
              "filters": wire.filters_to_wire(filters), "format": fmt,
              "exporter": actor.label}
    with transaction.atomic():
        job = job_create(actor=actor, kind="memory_export", params=params, workspace=workspace)
        audit_event_create(workspace=workspace, actor=actor, action="memory.export",
                           target_type=scope["kind"], target_id=scope.get("id", ""),
                           data={"job": str(job.pk), "format": fmt,
                                 "namespaces": len(namespaces),
                                 "filters": filters_for_audit(filters)})
    return job


# -- the job ------------------------------------------------------------------------------------


def export_groups(namespace_ids: Sequence[str]) -> list[tuple[ProviderConfig, list[Namespace]]]:
    rows = (Namespace.objects.filter(pk__in=namespace_ids)
            .select_related("resource__provider").order_by("partition_key"))
    groups: dict[Any, tuple[ProviderConfig, list[Namespace]]] = {}
    for ns in rows:
        config = ns.resource.provider
        groups.setdefault(config.pk, (config, []))[1].append(ns)
    return sorted(groups.values(), key=lambda group: group[0].slug)


def _part_name(job: Job, config: ProviderConfig) -> str:
    return storage_names.checked("export_part", f"exports/{job.pk}/{config.slug}.jsonl")


def _lines(provider: c.Provider, filters: c.ItemFilters, scope: c.Scope,
           deadline: float) -> Iterator[tuple[bytes, int]]:
    """The part's JSON Lines in chunks of (lines, how many), pending items left out: the
    built-in store writes them itself from its rows (``export_lines``), any other provider's
    items are written here, the same bytes either way."""
    own = getattr(provider, "export_lines", None)
    if own is not None:
        yield from own(filters, scope=scope, deadline=deadline)
        return
    chunk: list[bytes] = []
    for item in provider.export(filters, scope=scope, deadline=deadline):
        if item.quarantine == "pending":
            continue
        chunk.append(wire.item_line(item))
        if len(chunk) == PROGRESS_EVERY:
            yield b"".join(chunk), len(chunk)
            chunk = []
    if chunk:
        yield b"".join(chunk), len(chunk)


def _write_part(ctx: JobContext, config: ProviderConfig, namespaces: list[Namespace],
                filters: c.ItemFilters, done_before: int) -> dict[str, Any]:
    """Stream one provider's items into its part file; returns its manifest entry. Progress
    is saved each time another PROGRESS_EVERY items were written."""
    provider = provider_for(config)
    digest, count, size = hashlib.sha256(), 0, 0
    with tempfile.TemporaryFile() as tmp:
        for chunk, lines in _lines(provider, filters, scope_of(namespaces),
                                   config.request_deadline):
            tmp.write(chunk)
            digest.update(chunk)
            saved, count, size = count // PROGRESS_EVERY, count + lines, size + len(chunk)
            if count // PROGRESS_EVERY > saved:
                ctx.save_progress(done=done_before + count)
        tmp.seek(0)
        stored = _replace(_part_name(ctx.job, config), tmp)
    return {"provider": config.slug, "file": f"{config.slug}.jsonl", "part": stored,
            "items": count, "bytes": size, "sha256": digest.hexdigest()}


def _manifest(job: Job, parts: list[dict[str, Any]]) -> dict[str, Any]:
    filters = dict(job.params.get("filters") or {})
    if "subject" in filters:
        filters["subject"] = "(set)"
    return {
        "format_version": FORMAT_VERSION,
        "scope": job.params["scope"],
        "filters": filters,
        "exporter": job.params.get("exporter", ""),
        "exported_at": wire.iso(timezone.now()),
        "job": str(job.pk),
        "providers": [{"provider": p["provider"], "file": p["file"], "items": p["items"],
                       "bytes": p["bytes"], "sha256": p["sha256"]} for p in parts],
        "total_items": sum(p["items"] for p in parts),
    }


def _assemble(job: Job, parts: list[dict[str, Any]], fmt: str) -> str:
    """The final file from the parts, by streaming copies (constant memory)."""
    name = storage_names.checked("export_result",
                                 f"exports/{job.pk}.{'zip' if fmt == 'zip' else 'jsonl'}")
    with tempfile.TemporaryFile() as tmp:
        if fmt == "zip":
            with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
                for part in parts:
                    with default_storage.open(part["part"], "rb") as src, \
                            zf.open(part["file"], "w", force_zip64=True) as dst:
                        shutil.copyfileobj(src, dst, COPY_CHUNK)
                zf.writestr("manifest.json", json.dumps(_manifest(job, parts), indent=2,
                                                        ensure_ascii=False))
        else:
            for part in parts:
                with default_storage.open(part["part"], "rb") as src:
                    shutil.copyfileobj(src, tmp, COPY_CHUNK)
        tmp.seek(0)
        return storage_names.checked("export_result", _replace(name, tmp))


def write_export_file(ctx: JobContext, groups: list[tuple[ProviderConfig, list[Namespace]]],
                      filters: c.ItemFilters, fmt: str, state: dict[str, Any],
                      progress_base: int = 0) -> tuple[str, list[dict[str, Any]]]:
    """Write one part per provider group (checkpointed under ``state["parts"]``, the rest of
    ``state`` kept as it is), then assemble the final file from them and drop the parts.
    Returns the file's storage name and the parts' manifest entries. (Retention's archive
    writes its file with this too.)"""
    state = {**state, "parts": dict(state.get("parts") or {})}
    for config, namespaces in groups:
        if str(config.pk) in state["parts"]:
            continue
        done = progress_base + sum(p["items"] for p in state["parts"].values())
        part = _write_part(ctx, config, namespaces, filters, done)
        state = {**state, "parts": {**state["parts"], str(config.pk): part}}
        ctx.save_progress(done=done + part["items"], checkpoint=state)
    parts = [state["parts"][str(config.pk)] for config, _ in groups]
    name = _assemble(ctx.job, parts, fmt)
    for part in parts:
        default_storage.delete(part["part"])
    return name, parts


def run_export(ctx: JobContext) -> dict[str, Any]:
    """The ``memory_export`` job: one part per provider (checkpointed), then the final file."""
    job = ctx.job
    filters = wire.filters_from_wire(job.params["filters"])
    groups = export_groups(job.params["namespaces"])
    state = dict(ctx.checkpoint) or {"parts": {}}
    if job.progress_total is None and not state["parts"]:
        counts = [provider_for(config).count(filters, scope=scope_of(nss),
                                             deadline=config.request_deadline)
                  for config, nss in groups]
        total = None if any(n is None for n in counts) else sum(n or 0 for n in counts)
        ctx.save_progress(done=0, total=total, checkpoint=state)
    name, parts = write_export_file(ctx, groups, filters, job.params["format"], state)
    expires = timezone.now() + EXPORT_TTL
    Job.objects.filter(pk=job.pk).update(result_file=name, result_expires_at=expires)
    with transaction.atomic():
        audit_event_create(
            workspace=job.workspace, actor=Actor(label=job.params.get("exporter", "system"),
                                                 user=job.created_by),
            action="memory.export.result", target_type="job", target_id=job.pk,
            data={"items": sum(p["items"] for p in parts),
                  "files": {p["file"]: p["sha256"] for p in parts}},
        )
    return {"items": sum(p["items"] for p in parts),
            "providers": {p["provider"]: p["items"] for p in parts},
            "format": job.params["format"], "expires_at": expires.isoformat()}


# -- downloads and expiry -----------------------------------------------------------------------


def export_downloadable(job: Job, user: Any) -> bool:
    """Only the user who started it, while they may still export every namespace in it, a
    workspace admin or a superuser; never after expiry."""
    if job.kind not in DOWNLOADABLE_KINDS or job.result_expires_at is None:
        return False
    if not storage_names.matches("export_result", job.result_file):
        return False
    if job.result_expires_at <= timezone.now() or job.workspace is None:
        return False
    if user.is_superuser or access.can(user, "manage_workspace", job.workspace):
        return True
    # A scheduled retention run's archive: no person started it, so its namespaces' owners.
    starter = job.created_by_id == user.pk or (job.kind == "retention_run"
                                               and job.created_by_id is None)
    return starter and access.may_export(
        user, job.workspace, job.params.get("namespaces") or [])


def expire_export_files(now: dt.datetime | None = None) -> int:
    """Delete export files whose time ran out (and import uploads older than a day)."""
    from memadmin.memory.imports import expire_uploads

    now = now or timezone.now()
    expired = 0
    for job in Job.objects.filter(result_expires_at__lt=now).exclude(result_file=""):
        if default_storage.exists(job.result_file):
            default_storage.delete(job.result_file)
        Job.objects.filter(pk=job.pk).update(result_file="")
        expired += 1
    return expired + expire_uploads(now)


def memory_export_streamed(*, actor: Actor, workspace: Workspace, namespace: Namespace,
                           filters: Any) -> None:
    """Record that a namespace (or a filter result) is being streamed out as JSON Lines."""
    with transaction.atomic():
        audit_event_create(workspace=workspace, actor=actor, action="memory.export",
                           target_type="namespace", target_id=namespace.pk,
                           data={"format": "jsonl", "filters": filters_for_audit(filters)})


def memory_export_downloaded(*, actor: Actor, job: Job) -> None:
    """Record that an export job's file is being downloaded."""
    with transaction.atomic():
        audit_event_create(workspace=job.workspace, actor=actor,
                           action="memory.export_download", target_type="job",
                           target_id=job.pk, data={"file": job.result_file.rsplit("/", 1)[-1]})

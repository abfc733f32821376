"""The output of an access request: one ZIP for the data subject.

    <nn>-<provider>.jsonl   one JSON Lines file per provider (the items, as the wire shapes them)
    manifest.json           request id, generated_at, subject hash + key id, per file: items,
                            bytes, sha256; items withheld because they await quarantine review
    summary.html            a readable summary, every value escaped

The subject has the right to see their own id: it is inside the data files and the summary, never
in a file name. Constant memory: each provider's items stream into a part file in ``STORAGES``
(the cascade step's output, so a resumed job skips finished parts); the ZIP is assembled from the
parts by streaming copies, hashing as it goes. The file expires after seven days (the scheduler's
upkeep deletes it).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import tempfile
import zipfile
from collections.abc import Sequence
from typing import IO, Any

from django.core.exceptions import PermissionDenied
from django.core.files.storage import default_storage
from django.utils import timezone
from django.utils.html import escape

from memadmin.gdpr.models import SubjectRequest, SubjectRequestStep
from memadmin.lib.files import storage_replace
from memadmin.providers import contract as c
from memadmin.providers import wire
from memadmin.workspaces import access

ACCESS_TTL = dt.timedelta(days=7)
FORMAT_VERSION = 1
SUMMARY_CONTENT_CHARS = 2000
LINE_CHUNK = 64 * 1024


def request_dir(sr: SubjectRequest) -> str:
    return f"subject-requests/{sr.pk}"


def part_name(sr: SubjectRequest, step: SubjectRequestStep) -> str:
    return f"{request_dir(sr)}/parts/{step.pk}.jsonl"


def access_name(sr: SubjectRequest) -> str:
    return f"{request_dir(sr)}/access-{sr.pk}.zip"


def write_part(sr: SubjectRequest, step: SubjectRequestStep, items: Any,
               progress: Any = None) -> tuple[int, int]:
    """Stream ``items`` (an iterator of ``contract.Item``) into the step's part file.
    Returns (items written, items withheld because their quarantine review is pending)."""
    written = withheld = 0
    with tempfile.TemporaryFile() as tmp:
        for item in items:
            if item.quarantine == "pending":
                withheld += 1
                continue
            tmp.write(json.dumps(wire.item_to_wire(item), ensure_ascii=False).encode() + b"\n")
            written += 1
            if progress is not None and written % 500 == 0:
                progress()
        tmp.seek(0)
        storage_replace(part_name(sr, step), tmp)
    return written, withheld


def _file_label(index: int, step: SubjectRequestStep) -> str:
    slug = step.provider.slug if step.provider is not None else ""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", slug or step.provider_label).strip("-")[:60]
    return f"{index:02d}-{slug or 'provider'}.jsonl"


_SUMMARY_HEAD = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'">
<title>Your data: access request {request}</title></head><body>
<h1>Your data held in workspace {workspace}</h1>
<p>Access request {request}, generated {generated}. Data subject: <code>{subject}</code>.</p>
"""


def _summary_provider_head(label: str, file: str) -> str:
    return (f"<h2>{escape(label)}</h2><p>File: <code>{escape(file)}</code></p>"
            "<table><tr><th>where</th><th>updated</th><th>content</th></tr>\n")


def _summary_row(data: dict[str, Any]) -> str:
    content = str(data.get("content", ""))
    cut = content[:SUMMARY_CONTENT_CHARS]
    more = "" if len(cut) == len(content) else f" (first {SUMMARY_CONTENT_CHARS} characters)"
    return (f"<tr><td>{escape(data.get('source') or data.get('tier', ''))}</td>"
            f"<td>{escape(data.get('updatedAt', ''))}</td>"
            f"<td><pre>{escape(cut)}</pre>{escape(more)}</td></tr>\n")


def assemble(sr: SubjectRequest, steps: Sequence[SubjectRequestStep],
             withheld: dict[int, int]) -> str:
    """The ZIP from the steps' parts (steps without a part, e.g. unsupported, are listed in the
    manifest with their state). Returns its storage name."""
    generated = timezone.now()
    files: list[dict[str, Any]] = []
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as summary:
        summary.write(_SUMMARY_HEAD.format(
            request=escape(str(sr.pk)), workspace=escape(sr.workspace.name),
            generated=escape(wire.iso(generated)), subject=escape(sr.subject_id or ""),
        ).encode())
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for index, step in enumerate(steps, start=1):
                entry: dict[str, Any] = {"provider": step.provider_label, "state": step.state}
                name = part_name(sr, step)
                if step.state == "done" and default_storage.exists(name):
                    label = _file_label(index, step)
                    digest, count, size = hashlib.sha256(), 0, 0
                    summary.write(_summary_provider_head(step.provider_label, label).encode())
                    with default_storage.open(name, "rb") as src, \
                            zf.open(label, "w", force_zip64=True) as dst:
                        for line in src:
                            dst.write(line)
                            digest.update(line)
                            count += 1
                            size += len(line)
                            summary.write(_summary_row(json.loads(line)).encode())
                    summary.write(b"</table>\n")
                    entry.update({"file": label, "items": count, "bytes": size,
                                  "sha256": digest.hexdigest(),
                                  "withheld_pending_review": withheld.get(step.pk, 0)})
                else:
                    summary.write(f"<h2>{escape(step.provider_label)}</h2><p>Not exported: "
                                  f"{escape(step.state)}. {escape(step.error)}</p>\n".encode())
                    entry["note"] = step.error
                files.append(entry)
            summary.write(b"</body></html>\n")
            manifest = {
                "format_version": FORMAT_VERSION,
                "request": str(sr.pk),
                "workspace": sr.workspace.slug,
                "kind": sr.kind,
                "subject_hash": sr.subject_hash,
                "subject_key_id": sr.subject_key_id,
                "generated_at": wire.iso(generated),
                "providers": files,
                "total_items": sum(f.get("items", 0) for f in files),
            }
            zf.writestr("manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False))
            summary.seek(0)
            with zf.open("summary.html", "w") as dst:
                while chunk := summary.read(LINE_CHUNK):
                    dst.write(chunk)
        out.seek(0)
        stored = storage_replace(access_name(sr), out)
    for step in steps:
        if default_storage.exists(part_name(sr, step)):
            default_storage.delete(part_name(sr, step))
    return stored


def delete_parts(sr: SubjectRequest) -> None:
    """Drop the part files of an access request that will not be assembled (cancelled)."""
    for step in SubjectRequestStep.objects.filter(request=sr):
        if default_storage.exists(part_name(sr, step)):
            default_storage.delete(part_name(sr, step))


def access_file_open(sr: SubjectRequest, user: Any) -> tuple[IO[bytes], str]:
    """(open binary file, download name) of the request's access ZIP, for the download view.
    Compliance (``subject_requests``) only: ``PermissionDenied`` otherwise; ``FileNotFoundError``
    when there is no file or it expired. The view audits the download."""
    if not access.can(user, "subject_requests", sr.workspace):
        raise PermissionDenied("your role does not allow subject requests")
    expires = sr.access_file_expires_at
    if not sr.access_file or expires is None or expires <= timezone.now():
        raise FileNotFoundError("the access file expired or was never made")
    if not default_storage.exists(sr.access_file):
        raise FileNotFoundError("the access file is gone")
    return default_storage.open(sr.access_file, "rb"), f"access-{sr.pk}.zip"


def items_for_subject(provider: c.Provider, subject: str, *, scope: c.Scope,
                      deadline: float) -> Any:
    """The subject's items in one provider (an iterator; raises the contract's errors)."""
    return provider.export(c.ItemFilters(subject=subject), scope=scope, deadline=deadline)

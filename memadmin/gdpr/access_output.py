"""The output of an access request: one ZIP for the data subject.

    <nn>-<system>.jsonl     one JSON Lines file per provider: the subject's data in plain terms
                            (what kind of note, its date or whom it is about, the text, when it
                            was written and last changed, the subject's id)
    manifest.json           our reference, when it was made, per file: items, bytes, sha256;
                            what is not included and why
    summary.html            a plain-language summary, every value escaped

The bundle is for the data subject, not for us: no partition keys, item ids, revisions,
freeze or quarantine flags (a freeze can be a legal hold, which is not theirs to learn this
way), no keyed hashes. The subject has the right to see their own id: it is inside the data
files and the summary, never in a file name. A request that ended ``partial`` gets the bundle
of what was gathered, naming the systems that are missing and why.

Constant memory: each provider's items stream into a part file in ``STORAGES``
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
FORMAT_VERSION = 2  # 2: the subject's view (no internals), partial bundles
#: What each tier is, in words a data subject understands.
TIER_NAMES = {"AGENT": "instructions for the assistant", "CREW": "team notes",
              "PERSONA": "profile", "pins": "pinned note", "daily": "daily note",
              "peers": "note about a person", "lessons": "lesson learned", "facts": "fact"}
#: Why a system's data is not in the bundle, by step state.
MISSING_WHY = {
    "unsupported": "this system cannot export data automatically; we will send it separately",
    "failed": "this system could not be reached; we are retrying and will send it separately",
    "held": "this system's data could not be gathered yet",
    "pending": "this system has not been asked yet",
    "running": "this system was still being asked",
    "retrying": "this system could not be reached yet; we are retrying",
    "resolved": "handled by hand by our staff",
}
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
            tmp.write(json.dumps(subject_record(item), ensure_ascii=False).encode() + b"\n")
            written += 1
            if progress is not None and written % 500 == 0:
                progress()
        tmp.seek(0)
        storage_replace(part_name(sr, step), tmp)
    return written, withheld


def subject_record(item: c.Item) -> dict[str, Any]:
    """One item as the subject is shown it: what it is, its text and dates; nothing of ours."""
    record: dict[str, Any] = {"type": TIER_NAMES.get(item.tier, item.tier)}
    if item.tier == "daily" and item.key:
        record["date"] = item.key
    elif item.tier == "peers" and item.key:
        record["about"] = item.key
    record.update({"content": item.content, "data_subject": item.data_subject_id,
                   "written": wire.iso(item.created_at),
                   "last_changed": wire.iso(item.updated_at)})
    return record


def missing_why(step: SubjectRequestStep) -> str:
    """Why a system's data is not in the bundle, in plain words (never a provider's message)."""
    if step.provider is None and step.state != "resolved":
        return "this system was removed before its data could be gathered"
    return MISSING_WHY.get(step.state, "this system's data could not be gathered")


def _file_label(index: int, step: SubjectRequestStep) -> str:
    slug = step.provider.slug if step.provider is not None else ""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", slug or step.provider_label).strip("-")[:60]
    return f"{index:02d}-{slug or 'provider'}.jsonl"


_SUMMARY_HEAD = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'">
<title>Your data: access request {request}</title></head><body>
<h1>The data {workspace} holds about you</h1>
<p>You asked us which data about you our assistants keep. This is all of it that we could
gather on {generated}, for the identifier <code>{subject}</code>. Our reference for your request
is {request}.</p>
"""


def _summary_provider_head(label: str, file: str) -> str:
    return (f"<h2>{escape(label)}</h2><p>File: <code>{escape(file)}</code></p>"
            "<table><tr><th>what</th><th>last changed</th><th>text</th></tr>\n")


def _summary_row(data: dict[str, Any]) -> str:
    content = str(data.get("content", ""))
    cut = content[:SUMMARY_CONTENT_CHARS]
    more = "" if len(cut) == len(content) else f" (first {SUMMARY_CONTENT_CHARS} characters)"
    what = str(data.get("type", ""))
    detail = data.get("date") or data.get("about")
    if detail:
        what += f" ({detail})"
    return (f"<tr><td>{escape(what)}</td>"
            f"<td>{escape(str(data.get('last_changed', ''))[:10])}</td>"
            f"<td><pre>{escape(cut)}</pre>{escape(more)}</td></tr>\n")


def assemble(sr: SubjectRequest, steps: Sequence[SubjectRequestStep],
             withheld: dict[int, int], *, final: bool = True) -> str:
    """The ZIP from the steps' parts; systems without a part (unsupported, failed, resolved by
    hand, ...) are named with why, in plain words. ``final``: the parts are dropped afterwards
    (a partial request keeps them, so a retry's bundle still has them). Returns its name."""
    generated = timezone.now()
    files: list[dict[str, Any]] = []
    missing: list[dict[str, Any]] = []
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as summary:
        summary.write(_SUMMARY_HEAD.format(
            request=escape(str(sr.pk)), workspace=escape(sr.workspace.name),
            generated=escape(generated.strftime("%-d %B %Y")),
            subject=escape(sr.subject_id or ""),
        ).encode())
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for index, step in enumerate(steps, start=1):
                name = part_name(sr, step)
                if step.state == "done" and default_storage.exists(name):
                    files.append(_copy_part(zf, summary, name, _file_label(index, step), step,
                                            withheld.get(step.pk, 0)))
                elif step.state != "done":
                    why = missing_why(step)
                    missing.append({"system": step.provider_label, "why": why})
            _summary_end(summary, files, missing)
            manifest = {
                "format_version": FORMAT_VERSION,
                "reference": str(sr.pk),
                "organisation": sr.workspace.name,
                "generated_at": wire.iso(generated),
                "complete": not missing,
                "files": files,
                "not_included": missing,
                "total_items": sum(f["items"] for f in files),
            }
            zf.writestr("manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False))
            summary.seek(0)
            with zf.open("summary.html", "w") as dst:
                while chunk := summary.read(LINE_CHUNK):
                    dst.write(chunk)
        out.seek(0)
        stored = storage_replace(access_name(sr), out)
    if final:
        delete_parts(sr)
    return stored


def _copy_part(zf: zipfile.ZipFile, summary: IO[bytes], name: str, label: str,
               step: SubjectRequestStep, under_review: int) -> dict[str, Any]:
    """Copy one part into the ZIP (streaming, hashing) and its rows into the summary."""
    digest, count, size = hashlib.sha256(), 0, 0
    summary.write(_summary_provider_head(step.provider_label, label).encode())
    with default_storage.open(name, "rb") as src, zf.open(label, "w", force_zip64=True) as dst:
        for line in src:
            dst.write(line)
            digest.update(line)
            count += 1
            size += len(line)
            summary.write(_summary_row(json.loads(line)).encode())
    summary.write(b"</table>\n")
    if under_review:
        items = "1 more item from this system is" if under_review == 1 else \
            f"{under_review} more items from this system are"
        summary.write(f"<p>{items} being reviewed and will be sent to you separately.</p>\n"
                      .encode())
    return {"system": step.provider_label, "file": label, "items": count, "bytes": size,
            "sha256": digest.hexdigest(), "under_review": under_review}


def _summary_end(summary: IO[bytes], files: list[dict[str, Any]],
                 missing: list[dict[str, Any]]) -> None:
    total = sum(f["items"] for f in files)
    summary.write(f"<h2>In short</h2><p>{total} item{'s' if total != 1 else ''} from "
                  f"{len(files)} system{'s' if len(files) != 1 else ''}.</p>\n".encode())
    if missing:
        summary.write(b"<h2>Not included yet</h2><ul>\n")
        for entry in missing:
            summary.write(f"<li>{escape(entry['system'])}: {escape(entry['why'])}</li>\n"
                          .encode())
        summary.write(b"</ul>\n")
    summary.write(b"</body></html>\n")


def delete_parts(sr: SubjectRequest) -> None:
    """Drop the part files of an access request (assembled for good, or cancelled)."""
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

"""Importing an export file (JSON Lines, or the export ZIP) into one namespace.

1. The upload is read under a size cap (checked while reading), then parsed line by line: a file
   that is not an export (wrong type, garbage, NUL, invalid UTF-8, over-long lines) is refused
   whole, with the line that broke it, and nothing is stored.
2. A dry run says, per item, what would happen: created, changed (same tier+key, other
   content), unchanged, or refused (frozen target, erased subject, too large, duplicate within
   the file, invalid tier/key). The upload is kept in ``default_storage`` for a day.
3. The confirmation starts the ``memory_import`` job: it retains through the provider with the
   operation id ``import:<job>:<line>``, so a resumed job never writes a line twice.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import io
import json
import re
import uuid
import zipfile
from collections import Counter
from collections.abc import Iterator
from typing import IO, Any

from django.core import signing
from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models import Q

from memadmin.audit.services import Actor, audit_event_create
from memadmin.gdpr.models import Tombstone
from memadmin.jobs.models import Job
from memadmin.jobs.runner import JobContext
from memadmin.lib import storage_names
from memadmin.lib.keys import subject_hashes_all_keys
from memadmin.memory.models import Freeze
from memadmin.providers import contract as c
from memadmin.providers import wire
from memadmin.providers.registry import namespace_scope, provider_for
from memadmin.quarantine import screening
from memadmin.workspaces.models import Namespace

MAX_UPLOAD_BYTES = 50 * 1024 * 1024
#: One exported item is at most 16 KiB of content; escaping and metadata stay well below this.
MAX_LINE_BYTES = 128 * 1024
#: A ZIP may not expand beyond this (zip bombs).
MAX_UNZIPPED_BYTES = 4 * MAX_UPLOAD_BYTES
UPLOAD_TTL = dt.timedelta(hours=24)
UPLOAD_DIR = "imports"
TOKEN_SALT = "memadmin.memory.import"  # noqa: S105 - a signing salt, not a secret
PLAN_ROWS_SHOWN = 1000
REPORT_REFUSALS_KEPT = 200
BATCH = 200
SLUG_KEY = re.compile(r"[A-Za-z0-9_-]{1,128}")
DAILY_KEY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

REASONS = {
    "frozen": "the target is frozen or on legal hold",
    "erased_subject": "its data subject was erased",
    "too_large": "larger than the resource's item cap",
    "duplicate": "the same tier and key appear earlier in the file",
    "invalid": "invalid tier or key",
}


class ImportFileError(Exception):
    """The file is not an export memadmin can read; the message says where and why."""


@dataclasses.dataclass(frozen=True)
class Entry:
    line: int
    tier: str
    key: str
    content: str
    subject: str | None


@dataclasses.dataclass(frozen=True)
class Outcome:
    entry: Entry
    action: str  # created | changed | unchanged | refused
    reason: str = ""
    #: The write is (or in a dry run, would be) held by the prompt-injection scanner.
    quarantined: bool = False
    item_id: str = ""  # the item the write made or changed (a job's outcome only)

    @property
    def reason_text(self) -> str:
        return REASONS.get(self.reason, self.reason)


# -- reading ------------------------------------------------------------------------------------


def _field(data: dict[str, Any], name: str, line: int, *, optional: bool = False) -> Any:
    value = data.get(name)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ImportFileError(f"line {line}: {name} must be a string")
    return value


def _jsonl(stream: IO[bytes], first_line: int) -> Iterator[Entry]:
    line_no = first_line
    while True:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        if len(raw) > MAX_LINE_BYTES:
            raise ImportFileError(f"line {line_no} is longer than {MAX_LINE_BYTES // 1024} KiB")
        if b"\x00" in raw:
            raise ImportFileError(f"line {line_no} contains a NUL byte")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ImportFileError(f"line {line_no} is not valid UTF-8") from None
        if text.strip():
            try:
                data = json.loads(text)
            except ValueError:
                raise ImportFileError(f"line {line_no} is not valid JSON") from None
            if not isinstance(data, dict):
                raise ImportFileError(f"line {line_no} is not a JSON object")
            try:
                wire.check_strings(data, f"line {line_no}")
            except c.InvalidRequest as exc:
                raise ImportFileError(exc.message) from None
            yield Entry(line=line_no, tier=_field(data, "tier", line_no),
                        key=_field(data, "key", line_no),
                        content=_field(data, "content", line_no),
                        subject=_field(data, "dataSubjectId", line_no, optional=True))
        line_no += 1


class _Capped(io.RawIOBase):
    """A read-only stream that refuses to give more than ``limit`` bytes (zip bombs)."""

    def __init__(self, inner: IO[bytes], budget: list[int]) -> None:
        self.inner, self.budget = inner, budget

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.inner.read(len(buffer))
        self.budget[0] -= len(data)
        if self.budget[0] < 0:
            raise ImportFileError("the ZIP expands to more than "
                                  f"{MAX_UNZIPPED_BYTES // (1024 * 1024)} MB")
        buffer[: len(data)] = data
        return len(data)


def read_entries(stream: IO[bytes]) -> Iterator[Entry]:
    """Every item of an export file (JSONL, or the export ZIP's ``*.jsonl`` members in name
    order), numbered by line across the whole file. Raises ImportFileError."""
    stream.seek(0)
    head = stream.read(4)
    stream.seek(0)
    if head == b"PK\x03\x04":
        try:
            archive = zipfile.ZipFile(stream)
            names = sorted(n for n in archive.namelist() if n.endswith(".jsonl"))
        except (zipfile.BadZipFile, OSError, ValueError):
            raise ImportFileError("the file looks like a ZIP but cannot be read") from None
        if not names:
            raise ImportFileError("the ZIP holds no .jsonl file")
        budget, line = [MAX_UNZIPPED_BYTES], 1
        for name in names:
            try:
                with archive.open(name) as member:
                    reader = io.BufferedReader(_Capped(member, budget))
                    for entry in _jsonl(reader, line):
                        line = entry.line + 1
                        yield entry
            except (zipfile.BadZipFile, OSError, EOFError, zipfile.LargeZipFile):
                raise ImportFileError(f"the ZIP member {name} cannot be read") from None
        return
    yield from _jsonl(stream, 1)


def check_file(stream: IO[bytes]) -> int:
    """Read the whole file once; the number of items, or ImportFileError."""
    count = sum(1 for _ in read_entries(stream))
    if count == 0:
        raise ImportFileError("the file holds no items")
    return count


# -- deciding -----------------------------------------------------------------------------------


def _normal_key(tier: str, key: str) -> str | None:
    """The key the store would use, or None when the tier/key pair is invalid."""
    if tier not in c.TIERS:
        return None
    if tier in c.DOCUMENT_TIERS:
        return "" if key == "" else None
    if tier == "daily":
        if not DAILY_KEY.fullmatch(key):
            return None
        try:
            return dt.date.fromisoformat(key).isoformat()
        except ValueError:
            return None
    if tier == "facts" and key == "":
        return ""
    return key if SLUG_KEY.fullmatch(key) else None


class Checker:
    """The refusals that need no look at existing items (shared by dry run and job)."""

    def __init__(self, namespace: Namespace) -> None:
        self.namespace = namespace
        self.limit = namespace.resource.item_max_bytes
        self.seen: set[tuple[str, str]] = set()
        self.erased: dict[str, bool] = {}
        self.frozen = Freeze.objects.filter(
            Q(level="namespace", namespace=namespace)
            | Q(level="resource", resource_id=namespace.resource_id),
            lifted_at__isnull=True).exists()

    def _is_erased(self, subject: str) -> bool:
        if subject not in self.erased:
            workspace_id = self.namespace.resource.workspace_id
            query = Q()
            for kid, digest in subject_hashes_all_keys(workspace_id, subject):
                query |= Q(key_id=kid, subject_hash=digest)
            self.erased[subject] = Tombstone.objects.filter(
                query, workspace_id=workspace_id, lifted_at__isnull=True).exists()
        return self.erased[subject]

    def refusal(self, entry: Entry) -> tuple[str, str | None]:
        """(reason or "", normalised key)."""
        key = _normal_key(entry.tier, entry.key)
        if key is None or (entry.subject is not None and not (
                entry.subject.strip() and len(entry.subject) <= c.MAX_SUBJECT_ID_CHARS)):
            return "invalid", None
        if len(entry.content.encode("utf-8")) > self.limit:
            return "too_large", key
        if key or entry.tier != "facts":
            if (entry.tier, key) in self.seen:
                return "duplicate", key
            self.seen.add((entry.tier, key))
        if entry.subject is not None and self._is_erased(entry.subject):
            return "erased_subject", key
        if self.frozen:
            return "frozen", key
        return "", key


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclasses.dataclass
class Plan:
    counts: Counter[str]
    reasons: Counter[str]
    rows: list[Outcome]
    total: int

    @property
    def reason_items(self) -> list[tuple[str, int]]:
        return sorted(self.reasons.items())

    @property
    def writes(self) -> int:
        return self.counts["created"] + self.counts["changed"]


def import_plan(*, namespace: Namespace, stream: IO[bytes]) -> Plan:
    """The dry run: what the import would do to each item. Writes nothing."""
    config = namespace.resource.provider
    provider = provider_for(config)
    existing: dict[tuple[str, str], tuple[str, str | None, bool]] = {}
    for item in provider.export(c.ItemFilters(), scope=namespace_scope(namespace),
                                deadline=config.request_deadline):
        existing[(item.tier, item.key)] = (_digest(item.content), item.data_subject_id,
                                           item.frozen)
    checker = Checker(namespace)
    # memadmin's scanner screens the writes of every kind but a remote provider's (which
    # screens its own, and says so only after the write).
    scans_here = config.kind != "http"
    plan = Plan(counts=Counter(), reasons=Counter(), rows=[], total=0)
    for entry in read_entries(stream):
        reason, key = checker.refusal(entry)
        if reason:
            outcome = Outcome(entry, "refused", reason)
        else:
            found = existing.get((entry.tier, key or "")) if key or \
                entry.tier != "facts" else None
            if found is None:
                outcome = Outcome(entry, "created")
            elif found[2]:
                outcome = Outcome(entry, "refused", "frozen")
            elif found[0] == _digest(entry.content) and (entry.subject in (None, found[1])):
                outcome = Outcome(entry, "unchanged")
            else:
                outcome = Outcome(entry, "changed")
        if outcome.action in ("created", "changed") and scans_here and \
                screening.assess(entry.content, namespace.resource.workspace_id) is not None:
            outcome = dataclasses.replace(outcome, quarantined=True)
            plan.counts["quarantined"] += 1
        plan.total += 1
        plan.counts[outcome.action] += 1
        if outcome.reason:
            plan.reasons[outcome.reason] += 1
        if len(plan.rows) < PLAN_ROWS_SHOWN:
            plan.rows.append(outcome)
    return plan


# -- the upload ---------------------------------------------------------------------------------


def upload_store(stream: IO[bytes]) -> str:
    """Keep a checked upload for the confirmation (a day at most); returns its storage name."""
    from django.core.files import File

    stream.seek(0)
    name = default_storage.save(f"{UPLOAD_DIR}/{uuid.uuid4()}.upload", File(stream))
    return storage_names.checked("import_upload", name)


@dataclasses.dataclass(frozen=True)
class Upload:
    name: str
    namespace: str
    total: int


def upload_token(*, name: str, namespace: Namespace, user: Any, total: int) -> str:
    """A signed reference to the upload, bound to the user and the namespace."""
    return signing.dumps({"file": name, "ns": str(namespace.pk), "user": user.pk,
                          "total": total}, salt=TOKEN_SALT)


def upload_from_token(token: str, *, user: Any) -> Upload | None:
    """A still valid (a day at most) upload of this user, else None."""
    try:
        data = signing.loads(token, salt=TOKEN_SALT,
                             max_age=int(UPLOAD_TTL.total_seconds()))
    except signing.BadSignature:
        return None
    if not isinstance(data, dict) or data.get("user") != user.pk:
        return None
    name = str(data.get("file", ""))
    if not storage_names.matches("import_upload", name) or not default_storage.exists(name):
        return None
    return Upload(name=name, namespace=str(data.get("ns")), total=int(data.get("total", 0)))


def expire_uploads(now: dt.datetime) -> int:
    try:
        _, files = default_storage.listdir(UPLOAD_DIR)
    except FileNotFoundError:
        return 0
    removed = 0
    for name in files:
        path = f"{UPLOAD_DIR}/{name}"
        if default_storage.get_modified_time(path) < now - UPLOAD_TTL:
            default_storage.delete(path)
            removed += 1
    return removed


def memory_import_start(*, actor: Actor, namespace: Namespace, upload: str,
                        total: int) -> Job:
    from memadmin.jobs.services import job_create

    workspace = namespace.resource.workspace
    with transaction.atomic():
        job = job_create(actor=actor, kind="memory_import", workspace=workspace, total=total,
                         params={"namespace": str(namespace.pk), "upload": upload,
                                 "actor": actor.label})
        audit_event_create(workspace=workspace, actor=actor, action="memory.import.start",
                           target_type="namespace", target_id=namespace.pk,
                           data={"job": str(job.pk), "items": total})
    return job


# -- the job ------------------------------------------------------------------------------------


def _apply(provider: c.Provider, namespace: Namespace, entry: Entry, key: str, job: Job,
           actor: str, deadline: float) -> Outcome:
    scope = namespace_scope(namespace)
    if key or entry.tier != "facts":
        page = provider.list_items(c.ItemFilters(tier=entry.tier, key=key), limit=1,
                                   scope=scope, deadline=deadline)
        current = page.items[0] if page.items else None
        if current is not None and current.content == entry.content and \
                entry.subject in (None, current.data_subject_id):
            return Outcome(entry, "unchanged")
    try:
        result = provider.retain(entry.tier, key, entry.content, "replace",
                                 data_subject_id=entry.subject,
                                 operation_id=f"import:{job.pk}:{entry.line}", actor=actor,
                                 scope=scope, deadline=deadline)
    except (c.Frozen, c.ErasedSubject, c.TooLarge, c.InvalidRequest) as exc:
        reason = {"frozen": "frozen", "erased_subject": "erased_subject",
                  "too_large": "too_large"}.get(exc.code, "invalid")
        return Outcome(entry, "refused", reason)
    return Outcome(entry, "created" if result.revision == 1 else "changed",
                   quarantined=result.quarantined, item_id=result.id)


def run_import(ctx: JobContext) -> dict[str, Any]:
    """Apply an upload line by line. Each batch of lines commits together with its checkpoint;
    the per-line operation id makes a replayed line a no-op on providers outside our
    transaction."""
    job = ctx.job
    namespace = Namespace.objects.select_related(
        "resource__provider", "resource__workspace").get(pk=job.params["namespace"])
    config = namespace.resource.provider
    provider = provider_for(config)
    deadline = config.request_deadline
    actor = job.params.get("actor", "system")
    state = dict(ctx.checkpoint) or {"line": 0, "counts": {}, "reasons": {}, "refusals": []}
    state.setdefault("quarantined", [])
    checker = Checker(namespace)
    pending: list[tuple[Entry, str, str | None]] = []

    def flush(last_line: int) -> None:
        nonlocal state
        counts, reasons = Counter(state["counts"]), Counter(state["reasons"])
        refusals, held = list(state["refusals"]), list(state["quarantined"])
        with transaction.atomic():
            for entry, reason, key in pending:
                outcome = (Outcome(entry, "refused", reason) if reason else
                           _apply(provider, namespace, entry, key or "", job, actor, deadline))
                counts[outcome.action] += 1
                if outcome.reason:
                    reasons[outcome.reason] += 1
                    if len(refusals) < REPORT_REFUSALS_KEPT:
                        refusals.append({"line": entry.line, "tier": entry.tier,
                                         "reason": outcome.reason})
                if outcome.quarantined:
                    counts["quarantined"] += 1
                    if len(held) < REPORT_REFUSALS_KEPT:
                        held.append({"line": entry.line, "tier": entry.tier,
                                     "id": outcome.item_id})
            state = {"line": last_line, "counts": dict(counts), "reasons": dict(reasons),
                     "refusals": refusals, "quarantined": held}
            ctx.save_progress(done=sum(n for k, n in counts.items() if k != "quarantined"),
                              checkpoint=state)
        pending.clear()

    upload = storage_names.checked("import_upload", job.params.get("upload"))
    with default_storage.open(upload, "rb") as stream:
        for entry in read_entries(stream):
            reason, key = checker.refusal(entry)  # also replays the duplicate check
            if entry.line <= state["line"]:
                continue
            pending.append((entry, reason, key))
            if len(pending) >= BATCH:
                flush(entry.line)
        if pending:
            flush(pending[-1][0].line)
    report = {"created": state["counts"].get("created", 0),
              "changed": state["counts"].get("changed", 0),
              "unchanged": state["counts"].get("unchanged", 0),
              "refused": state["counts"].get("refused", 0),
              "reasons": state["reasons"], "refusals": state["refusals"],
              "quarantined_count": state["counts"].get("quarantined", 0),
              "quarantined": state["quarantined"]}
    with transaction.atomic():
        audit_event_create(
            workspace=namespace.resource.workspace, actor=Actor(label=actor,
                                                                user=job.created_by),
            action="memory.import.result", target_type="namespace", target_id=namespace.pk,
            data={"job": str(job.pk), **{k: report[k] for k in
                                         ("created", "changed", "unchanged", "refused")},
                  "reasons": state["reasons"]})
    default_storage.delete(upload)
    return report

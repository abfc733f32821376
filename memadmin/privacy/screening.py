"""Personal data and secrets in the built-in store's writes and recalls, per resource policy.

``screen_write`` is the one function the write path calls (``memory.store``: create and change,
so retain, tools, editor saves, restores and imports all pass through it), inside the writer's
transaction; it needs no query. ``redact_recall_rows`` and ``redacted_for_agent`` are what the
agent-facing reads call. The policies (``Resource.pii_policy`` / ``secrets_policy``):

- personal data: ``record`` (labels only), ``redact_on_recall`` (agents receive ``[email]``,
  ``[card]``... in place of each span in recall and ``read`` answers; staff pages and admin
  reads show the item as written), ``refuse`` (the write answers ``invalid_request`` naming the
  types, never the values);
- secrets: ``redact`` (default: the stored content has ``[api_key]``, ``[private_key]``... in
  place of the span, so a secret is never stored in clear) or ``refuse``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memadmin.lib.keys import subject_hash, subject_hashes_all_keys
from memadmin.privacy.detect import (
    PERSONAL_TYPES,
    SECRET_TYPES,
    TYPE_NAMES,
    Finding,
    detect,
    normal_email,
    normal_phone,
    redact,
)
from memadmin.providers import contract as c

#: The types whose values identify a person well enough to suggest items for a subject request.
MATCHED_TYPES = ("email", "phone")


@dataclass(frozen=True)
class Screened:
    """What to store: the content (secrets redacted) and its labels."""

    content: str
    types: list[str] = field(default_factory=list)
    spans: list[list[Any]] = field(default_factory=list)   # [start, end, type] into content
    keys: list[str] = field(default_factory=list)          # "kid:hmac" of e-mails and phones
    redacted: tuple[str, ...] = ()                          # secret types replaced


def _named(types: Iterable[str]) -> str:
    return ", ".join(f"{TYPE_NAMES[t]} ({t})" for t in sorted(set(types)))


def match_key(workspace_id: Any, kind: str, normal: str) -> str:
    kid, digest = subject_hash(workspace_id, f"pii:{kind}:{normal}")
    return f"{kid}:{digest}"


def subject_match_keys(workspace_id: Any, subject_id: str) -> list[str]:
    """The keys an item holding ``subject_id`` (as an e-mail address or a phone number) was
    labelled with, under every hashing key (so a rotation does not hide older items)."""
    keys: list[str] = []
    candidates = []
    if "@" in subject_id:
        candidates.append(("email", normal_email(subject_id)))
    phone = normal_phone(subject_id)
    if phone:
        candidates.append(("phone", phone))
    for kind, normal in candidates:
        keys += [f"{kid}:{digest}" for kid, digest in
                 subject_hashes_all_keys(workspace_id, f"pii:{kind}:{normal}")]
    return keys


def screen_write(content: str, resource: Any) -> Screened:
    """The content to store for a write to ``resource``, and its labels.

    Raises InvalidRequest (naming the types, never a value) when the resource refuses what was
    found. Secrets are redacted unless the resource refuses them.
    """
    verdict = detect(content)
    if not verdict.findings:
        return Screened(content=content)
    secrets = [f for f in verdict.findings if f.type in SECRET_TYPES]
    personal = [f for f in verdict.findings if f.type in PERSONAL_TYPES]
    if secrets and resource.secrets_policy == "refuse":
        raise c.InvalidRequest(
            f"this resource refuses content holding secrets: {_named(f.type for f in secrets)}",
            {"types": sorted({f.type for f in secrets})})
    if personal and resource.pii_policy == "refuse":
        raise c.InvalidRequest(
            "this resource refuses content holding personal data: "
            f"{_named(f.type for f in personal)}",
            {"types": sorted({f.type for f in personal})})
    stored, spans = _redact_secrets(content, verdict.findings)
    workspace_id = resource.workspace_id
    keys = sorted({match_key(workspace_id, f.type, f.normal) for f in personal
                   if f.type in MATCHED_TYPES and f.normal})
    return Screened(content=stored, types=list(verdict.types), spans=spans, keys=keys,
                    redacted=tuple(sorted({f.type for f in secrets})))


def _redact_secrets(content: str, findings: Sequence[Finding]) -> tuple[str, list[list[Any]]]:
    """``content`` with each secret replaced by ``[type]``, and every finding's span in the
    result (a redacted secret's span covers its placeholder)."""
    parts: list[str] = []
    spans: list[list[Any]] = []
    at = shift = 0
    for f in findings:  # sorted, never overlapping
        if f.type in SECRET_TYPES:
            placeholder = f"[{f.type}]"
            parts += [content[at:f.start], placeholder]
            spans.append([f.start + shift, f.start + shift + len(placeholder), f.type])
            shift += len(placeholder) - (f.end - f.start)
            at = f.end
        else:
            spans.append([f.start + shift, f.end + shift, f.type])
    parts.append(content[at:])
    return "".join(parts), spans


def check_type(value: Any) -> str:
    """``value`` if it names a detected type, else InvalidRequest."""
    if value not in TYPE_NAMES:
        raise c.InvalidRequest(f"unknown personal-data type; one of {', '.join(TYPE_NAMES)}")
    return str(value)


def redacts_on_recall(resource: Any) -> bool:
    return bool(resource.pii_policy == "redact_on_recall")


def redacted_for_agent(content: str, spans: Sequence[Sequence[Any]] | None) -> str:
    """``content`` as an agent of a ``redact_on_recall`` resource receives it. ``spans`` are the
    stored ones; None (an item written before detection ran) detects now."""
    if spans is None:
        return redact(content, detect(content).findings, PERSONAL_TYPES)
    return redact(content, [(int(s[0]), int(s[1]), str(s[2])) for s in spans], PERSONAL_TYPES)


def redact_recall_rows(rows: list[dict[str, Any]], namespaces: Iterable[Any]) -> None:
    """Redact, in place, the content of recall rows (``id``, ``content``) that belong to a
    namespace whose resource redacts on recall: one query for the stored spans, only when
    one of the namespaces does."""
    from memadmin.memory.models import MemoryItem

    redacting = {ns.id for ns in namespaces if redacts_on_recall(ns.resource)}
    if not rows or not redacting:
        return
    stored = {pk: (ns_id, spans) for pk, ns_id, spans in MemoryItem.objects.filter(
        id__in=[row["id"] for row in rows]).values_list("id", "namespace_id", "pii_spans")}
    for row in rows:
        ns_id, spans = stored.get(row["id"], (None, None))
        if ns_id is None or ns_id in redacting:
            row["content"] = redacted_for_agent(row["content"], spans)

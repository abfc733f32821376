"""Reads of the personal-data labels the built-in store keeps on its items."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from memadmin.privacy.detect import TYPE_NAMES
from memadmin.privacy.screening import MATCHED_TYPES, subject_match_keys

#: How many suggested items a subject-request page lists.
SUGGESTIONS_MAX = 50


def _pk(item_id: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(item_id))
    except ValueError:
        return None


def stored_spans(item_id: str) -> list[Any] | None:
    """The stored spans of a built-in item (None: unknown item, or written before detection)."""
    from memadmin.memory.models import MemoryItem

    pk = _pk(item_id)
    if pk is None:
        return None
    return MemoryItem.objects.filter(pk=pk).values_list("pii_spans", flat=True).first()


@dataclass(frozen=True)
class Label:
    type: str
    name: str
    count: int


def item_labels(provider: Any, item_id: str) -> list[Label]:
    """The types found in a built-in item, in plain words, with how often each occurs; empty
    for other providers' items (their stores keep no labels)."""
    from memadmin.memory.models import MemoryItem

    pk = _pk(item_id)
    if provider.kind != "local" or pk is None:
        return []
    spans = MemoryItem.objects.filter(pk=pk, namespace__resource__provider=provider) \
        .values_list("pii_spans", flat=True).first() or []
    counts: dict[str, int] = {}
    for span in spans:
        counts[span[2]] = counts.get(span[2], 0) + 1
    return [Label(t, TYPE_NAMES.get(t, t), n) for t, n in sorted(counts.items())]


@dataclass(frozen=True)
class Suggestion:
    item_id: str
    source: str
    workspace_slug: str
    resource_slug: str
    namespace_slug: str
    types: tuple[str, ...]
    tagged: bool            # already carries a data-subject id (this one or another)


def subject_suggestions(*, workspace: Any, subject_id: str | None) -> list[Suggestion]:
    """Built-in items of ``workspace`` in which the detector found an e-mail address or phone
    number equal to ``subject_id`` (normalised: case of an address, format of a number) and
    that are not tagged with that subject: candidates for a subject request, never applied by
    themselves. Found through the keyed hashes stored with the labels (an index lookup)."""
    from memadmin.memory.models import MemoryItem
    from memadmin.providers.contract import source_label

    if not subject_id:
        return []
    keys = subject_match_keys(workspace.pk, subject_id)
    if not keys:
        return []
    rows = (MemoryItem.objects
            .filter(pii_keys__overlap=keys, namespace__resource__workspace=workspace,
                    namespace__resource__provider__kind="local")
            .exclude(data_subject_id=subject_id)
            .select_related("namespace__resource")
            .order_by("-updated_at", "-id")[:SUGGESTIONS_MAX])
    return [Suggestion(
        item_id=str(row.id), source=source_label(row.tier, row.key),
        workspace_slug=workspace.slug, resource_slug=row.namespace.resource.slug,
        namespace_slug=row.namespace.slug,
        types=tuple(t for t in row.pii_types if t in MATCHED_TYPES),
        tagged=row.data_subject_id is not None) for row in rows]

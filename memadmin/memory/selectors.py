"""Reads for the memory pages, all through the provider contract (so local and remote providers
look the same), plus freeze banners and the workspace-wide search fan-out."""

from __future__ import annotations

import dataclasses
import datetime as dt
import difflib
import re
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

from django.db import connection
from django.db.models import Q, QuerySet

from memadmin.memory.models import Freeze
from memadmin.providers import contract as c
from memadmin.providers.models import ProviderConfig
from memadmin.providers.registry import provider_for
from memadmin.workspaces.models import Namespace, Resource

SEARCH_LIMIT = 20
SEARCH_OVERHEAD = 0.5
#: Counts shown on pages stop here: past it they read "10,000+" (or the planner's "≈ N").
COUNT_CAP = 10_000
#: Counts are always exact up to here; past it the planner's estimate, when it is above the
#: cap, is shown instead of counting on: a term in every item reads 1,001 rows, not 10,001.
EXACT_FLOOR = 1_000

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=16, thread_name_prefix="search")
        return _pool


def deadline_of(config: ProviderConfig) -> float:
    return config.request_deadline  # kept for the views that pass it around


def active_freezes(resource: Resource, namespace: Namespace | None = None,
                   item_id: str | None = None) -> list[Freeze]:
    """Every unlifted freeze or hold on the target or an ancestor (for banners)."""
    where = Q(level="resource", resource=resource)
    if namespace is not None:
        where |= Q(level="namespace", namespace=namespace)
    if item_id is not None:
        where |= Q(level="item", provider_id=resource.provider_id, item_ref=item_id)
    return list(Freeze.objects.filter(where, lifted_at__isnull=True)
                .select_related("created_by").order_by("created_at"))


# -- counts -------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class CappedCount:
    """How many items match, as far as it was worth counting: exact up to a cap; past it
    ``capped`` (``value`` is then the cap) with, when PostgreSQL's planner has one above the
    cap, its ``estimate``. ``value`` None: the provider could not say."""

    value: int | None
    capped: bool = False
    estimate: int | None = None

    @property
    def exact(self) -> int | None:
        return None if self.capped else self.value

    def __str__(self) -> str:
        if self.value is None:
            return "unknown"
        if not self.capped:
            return f"{self.value:,}"
        if self.estimate is not None:
            return f"\u2248 {self.estimate:,}"
        return f"{self.value:,}+"


def capped_count(qs: QuerySet[Any], cap: int = COUNT_CAP, *,
                 estimate: bool = True) -> CappedCount:
    """Count ``qs`` up to ``cap``: ``SELECT count(*) FROM (... LIMIT n + 1)``, which stops after
    n + 1 matches (with the search term visible to the planner, a common term walks rows in
    table order rather than collecting every match). Exact up to ``EXACT_FLOOR``; past it, when
    the planner expects more than ``cap`` its estimate is shown ("≈ N", never below what was
    counted) without reading on to the cap, otherwise the count goes on to ``cap`` + 1, past
    which it reads "10,000+" (``estimate=False``: no EXPLAIN, always counted to the cap)."""
    qs = qs.order_by()
    floor = min(cap, EXACT_FLOOR)
    found = qs[: floor + 1].count()
    if found <= floor:
        return CappedCount(found)
    guess = _planner_rows(qs) if estimate else None
    if guess is not None and guess > cap:
        return CappedCount(floor, capped=True, estimate=guess)
    if floor < cap:
        found = qs[: cap + 1].count()
        if found <= cap:
            return CappedCount(found)
    return CappedCount(cap, capped=True)


def _planner_rows(qs: QuerySet[Any]) -> int | None:
    sql, params = qs.values("pk").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
    if isinstance(plan, str):
        import json

        plan = json.loads(plan)
    rows = plan[0]["Plan"].get("Plan Rows")
    return int(rows) if rows is not None else None


def item_count(config: ProviderConfig, filters: c.ItemFilters, scope: c.Scope, *,
               cap: int | None = None) -> CappedCount:
    """The count a page shows for ``filters``: the built-in store's count capped at ``cap``
    (default COUNT_CAP), another provider's own count (exact, or unknown). Raises the
    provider's errors."""
    cap = cap or COUNT_CAP
    provider = provider_for(config)
    capped = getattr(provider, "count_capped", None)
    if capped is not None:
        result: CappedCount = capped(filters, cap=cap, scope=scope,
                                     deadline=deadline_of(config))
        return result
    return CappedCount(provider.count(filters, scope=scope, deadline=deadline_of(config)))


@dataclasses.dataclass(frozen=True)
class DiffLine:
    kind: str  # "same", "added", "removed", "hunk"
    text: str


#: Quarantine states whose content pages, diffs, fragments and files never carry (the review
#: queue alone shows it).
WITHHELD_STATES = frozenset({"pending"})


def shown_item(item: c.Item) -> c.Item:
    """The item as a page may show it: a quarantined version's content is left out."""
    return dataclasses.replace(item, content="") if item.quarantine in WITHHELD_STATES else item


def shown_items(items: list[c.Item]) -> list[c.Item]:
    return [shown_item(item) for item in items]


def shown_detail(detail: c.ItemDetail) -> tuple[c.ItemDetail, frozenset[int]]:
    """The item and its revisions as a page may show them, and the revision numbers withheld
    (their content left out): every version that was quarantined, and the current one while
    the item is (a remote provider may not say per revision)."""
    item = shown_item(detail.item)
    withheld = frozenset(
        r.revision for r in detail.revisions
        if r.quarantine in WITHHELD_STATES
        or (r.revision == item.revision and item.quarantine in WITHHELD_STATES))
    revisions = [dataclasses.replace(r, content="") if r.revision in withheld else r
                 for r in detail.revisions]
    return c.ItemDetail(item=item, revisions=revisions), withheld


def revision_diff(old: str, new: str) -> list[DiffLine]:
    """A line diff for display (escaped by the template like any content)."""
    lines = []
    for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=3):
        if line.startswith(("---", "+++")):
            continue
        kind = {"@": "hunk", "+": "added", "-": "removed"}.get(line[:1], "same")
        lines.append(DiffLine(kind, line[1:] if kind in ("added", "removed", "same") else line))
    return lines


@dataclasses.dataclass(frozen=True)
class MergeView:
    """The current version beside the editor's text after a conflict: every line of theirs,
    those not in yours marked, and how many of your lines theirs lacks (so nothing of either
    side goes unseen)."""

    lines: list[DiffLine]  # kind "same" or "theirs"
    theirs_only: int
    yours_only: int


def merge_view(yours: str, theirs: str) -> MergeView:
    mine, other = yours.splitlines(), theirs.splitlines()
    lines: list[DiffLine] = []
    yours_only = 0
    matcher = difflib.SequenceMatcher(a=mine, b=other, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            lines.extend(DiffLine("same", line) for line in other[j1:j2])
        else:
            lines.extend(DiffLine("theirs", line) for line in other[j1:j2])
            yours_only += i2 - i1
    return MergeView(lines, sum(1 for line in lines if line.kind == "theirs"), yours_only)


def default_comparison(revisions: list[int]) -> tuple[str, str]:
    """What the diff form compares when nothing was chosen: the newest revision with its
    predecessor (a single revision: with itself)."""
    ordered = sorted(revisions)
    if not ordered:
        return "", ""
    newest = ordered[-1]
    return str(ordered[-2] if len(ordered) > 1 else newest), str(newest)


@dataclasses.dataclass
class ProviderResults:
    config: ProviderConfig
    items: list[c.Item]
    error: str | None = None  # "timed out", "unavailable: ...", "does not support search"
    more: bool = False

    @property
    def failed(self) -> bool:
        return self.error is not None


def _search_one(config: ProviderConfig, scope: c.Scope, query: str) -> c.ItemPage:
    try:
        return provider_for(config).list_items(c.ItemFilters(q=query), limit=SEARCH_LIMIT,
                                               scope=scope, deadline=deadline_of(config))
    finally:
        connection.close()


def search(*, namespaces: list[Namespace], query: str) -> list[ProviderResults]:
    """Full-text search fanned out over the providers of ``namespaces``, each bounded by its
    own deadline; a provider that fails or times out is named as such, not shown as empty."""
    by_provider: dict[Any, list[Namespace]] = {}
    configs: dict[Any, ProviderConfig] = {}
    for ns in namespaces:
        by_provider.setdefault(ns.resource.provider_id, []).append(ns)
        configs[ns.resource.provider_id] = ns.resource.provider
    started = time.monotonic()
    futures: dict[Future[c.ItemPage], ProviderConfig] = {}
    results: list[ProviderResults] = []
    for pk, members in by_provider.items():
        config = configs[pk]
        if not config.enabled:
            results.append(ProviderResults(config, [], "disabled"))
            continue
        scope = c.Scope(tuple(ns.partition_key for ns in members))
        futures[_executor().submit(_search_one, config, scope, query)] = config
    if futures:
        longest = max(deadline_of(config) for config in futures.values())
        wait(futures, timeout=max(0.0, longest + SEARCH_OVERHEAD - (time.monotonic() - started)))
    for future, config in futures.items():
        if not future.done():
            results.append(ProviderResults(config, [], "timed out"))
            continue
        try:
            page = future.result()
        except c.Timeout:
            results.append(ProviderResults(config, [], "timed out"))
        except c.Unsupported:
            results.append(ProviderResults(config, [], "does not support search"))
        except c.ProviderError as exc:
            results.append(ProviderResults(config, [], f"{exc.code}: {exc.message}"))
        else:
            results.append(ProviderResults(config, page.items, None, page.next_cursor is not None))
    return sorted(results, key=lambda r: r.config.name)


def namespace_of(item: c.Item, namespaces: list[Namespace]) -> Namespace | None:
    for ns in namespaces:
        if ns.partition_key == item.partition:
            return ns
    return None


def parse_since(value: str) -> dt.datetime | None:
    try:
        day = dt.date.fromisoformat(value)
    except ValueError:
        return None
    return dt.datetime.combine(day, dt.time.min, tzinfo=dt.UTC)


# -- the item list: its total and the search match in each preview ------------------------------

def matching_total(config: ProviderConfig, filters: c.ItemFilters, scope: c.Scope,
                   namespace_items: int | None = None) -> CappedCount:
    """The total a list shows for its filters: without filters the namespace's counter (exact,
    no scan); with filters ``item_count`` (capped: "10,000+" or the planner's "≈ N"); unknown
    when the provider cannot tell or fails (the list itself reports a failing provider)."""
    if filters.is_empty() and namespace_items is not None:
        return CappedCount(namespace_items)
    try:
        return item_count(config, filters, scope)
    except c.ProviderError:
        return CappedCount(None)


PREVIEW_CHARS = 120
_SUFFIXES = ("ies", "es", "ing", "ed", "s")


def _stem(term: str) -> str:
    """A search term's stem, roughly as full-text search matches it ("memories" finds
    "memory", "running" finds "run")."""
    for suffix in _SUFFIXES:
        if term.endswith(suffix) and len(term) - len(suffix) >= 3:
            return term[: -len(suffix)]
    return term


def highlighted(content: str, query: str | None,
                width: int = PREVIEW_CHARS) -> list[tuple[str, bool]]:
    """The preview of ``content`` as (text, is_match) parts: a window of ``width`` characters
    around the first word the search matched, the words matching it marked. The parts are
    plain text (the template escapes each; nothing here is markup)."""
    terms = sorted({_stem(t.lower()) for t in re.findall(r"\w+", query or "")
                    if t.lower() not in {"or", "and", "not"}}, key=len, reverse=True)
    pattern = (re.compile(r"\b(?:" + "|".join(re.escape(t) for t in terms) + r")\w*",
                          re.IGNORECASE) if terms else None)
    first = pattern.search(content) if pattern else None
    start = max(0, first.start() - width // 4) if first else 0
    window = content[start:start + width]
    prefix = "…" if start > 0 else ""
    suffix = "…" if start + width < len(content) else ""
    if pattern is None:
        return [(prefix + window + suffix, False)] if window else []
    parts: list[tuple[str, bool]] = []
    at = 0
    for match in pattern.finditer(window):
        if match.start() > at:
            parts.append((window[at:match.start()], False))
        parts.append((match.group(), True))
        at = match.end()
    parts.append((window[at:], False))
    if prefix:
        parts.insert(0, (prefix, False))
    if suffix:
        parts.append((suffix, False))
    return [(text, marked) for text, marked in parts if text]

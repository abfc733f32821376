"""Reads for the memory pages, all through the provider contract (so local and remote providers
look the same), plus freeze banners and the workspace-wide search fan-out."""

from __future__ import annotations

import dataclasses
import datetime as dt
import difflib
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
    """Count ``qs`` up to ``cap``: ``SELECT count(*) FROM (... LIMIT cap + 1)``, which stops
    after cap + 1 matches (with the search term visible to the planner, a common term walks a
    few thousand rows rather than collecting every match). Past the cap, the planner's row
    estimate is kept when it is above the cap (``estimate=False``: no EXPLAIN)."""
    qs = qs.order_by()
    found = qs[: cap + 1].count()
    if found <= cap:
        return CappedCount(found)
    guess = _planner_rows(qs) if estimate else None
    return CappedCount(cap, capped=True, estimate=guess if guess and guess > cap else None)


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

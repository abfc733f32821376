"""``benchmarks/bulk_load.py``: COPY a great many synthetic facts into acme / bulk / load with
the namespace's counter kept right and the load audited (benchmarks only; the demo itself is
seeded through the store)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from django.core.management import call_command
from django.db.models import Count, Max, Min, Sum

from memadmin.audit.models import AuditEvent
from memadmin.audit.services import verify_chain
from memadmin.memory.models import MemoryItem, NamespaceCounter
from memadmin.providers import contract as c
from memadmin.providers.registry import namespace_scope, provider_for
from memadmin.workspaces.models import Namespace

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bulk_load.py"


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bulk_load", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module       # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


BULK = _module()


def load(count: str) -> str:
    lines: list[str] = []
    BULK.run(int(count), lines.append)
    return "\n".join(lines)


def bulk_namespace() -> Namespace:
    return Namespace.objects.get(resource__workspace__slug=BULK.BULK_WORKSPACE,
                                 resource__slug=BULK.BULK_RESOURCE, slug=BULK.BULK_NAMESPACE)


def assert_counters_match() -> None:
    real = {row["namespace_id"]: (row["n"], row["b"])
            for row in MemoryItem.objects.values("namespace_id")
            .annotate(n=Count("id"), b=Sum("bytes"))}
    for counter in NamespaceCounter.objects.all():
        assert (counter.items, counter.bytes) == real.get(counter.namespace_id, (0, 0)), \
            counter.namespace.slug


@pytest.fixture(scope="class")
def bulk_seeded(django_db_setup: None, django_db_blocker: Any) -> Iterator[str]:
    """Loaded once, committed (VACUUM needs to run outside a transaction); flushed afterwards."""
    with django_db_blocker.unblock():
        try:
            yield load("2000")
        finally:
            call_command("flush", interactive=False, verbosity=0)


@pytest.mark.django_db
class TestBulkLoadInATransaction:
    def test_it_skips_vacuum_inside_a_transaction(self) -> None:
        output = load("10")

        assert "VACUUM skipped" in output
        assert bulk_namespace().items.count() == 10
        assert_counters_match()


@pytest.mark.django_db
@pytest.mark.usefixtures("bulk_seeded")
class TestBulkLoad:
    def test_it_bulk_loads_the_requested_number_of_items(self, bulk_seeded: str) -> None:
        namespace = bulk_namespace()
        assert namespace.items.count() == 2000
        assert "rows/s" in bulk_seeded and "VACUUM (ANALYZE) took" in bulk_seeded
        assert namespace.items.filter(key="bulk-1").exists()
        assert namespace.items.filter(key="bulk-2000").exists()
        assert set(namespace.items.values_list("tier", "revision", "quarantine_state")
                   .distinct()) == {("facts", 1, "clear")}
        assert 1 <= namespace.items.filter(data_subject_id__isnull=False).count() <= 60
        assert AuditEvent.objects.filter(action="memory.bulk_load",
                                         target_id=str(namespace.pk)).count() == 1
        assert verify_chain(str(namespace.resource.workspace_id)).ok

    def test_it_keeps_counters_equal_to_real_counts_after_a_bulk_load(self) -> None:
        assert_counters_match()

    def test_it_spreads_bulk_items_over_ninety_days_of_varied_text(self) -> None:
        items = bulk_namespace().items
        span = items.aggregate(oldest=Min("updated_at"), newest=Max("updated_at"))
        assert 80 <= (span["newest"] - span["oldest"]).days < 90
        contents = list(items.values_list("content", flat=True))
        assert len(set(contents)) == 2000
        assert all(20 <= len(text.split()) <= 40 for text in contents)
        assert len({word for text in contents for word in text.split()}) > 1000

    def test_it_makes_bulk_items_searchable(self) -> None:
        namespace = bulk_namespace()
        provider = provider_for(namespace.resource.provider)
        page = provider.list_items(c.ItemFilters(q=BULK.BULK_COMMON_WORD), limit=100,
                                   scope=namespace_scope(namespace), deadline=5)
        assert len(page.items) == 100
        assert all(BULK.BULK_COMMON_WORD in item.content for item in page.items)
        matches = provider.count(c.ItemFilters(q=BULK.BULK_COMMON_WORD),
                                 scope=namespace_scope(namespace), deadline=5)
        assert matches is not None and matches > 1000


@pytest.mark.django_db(transaction=True)
class TestBulkLoadAgain:
    def test_it_adds_more_items_on_a_second_bulk_load(self) -> None:
        load("2000")
        namespace = bulk_namespace()
        demo_items = MemoryItem.objects.exclude(namespace=namespace).count()

        output = load("500")

        assert "bulk-2001 .. bulk-2500" in output
        assert namespace.items.count() == 2500
        assert namespace.items.filter(key="bulk-2500").exists()
        assert MemoryItem.objects.exclude(namespace=namespace).count() == demo_items
        assert_counters_match()
        assert AuditEvent.objects.filter(action="memory.bulk_load").count() == 2

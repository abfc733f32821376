"""Counts that stop at a cap: exact below it, "10,000+" past it (or the planner's estimate,
marked "≈"), on the built-in store and on the item list."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from memadmin.memory import selectors
from memadmin.memory.models import MemoryItem
from memadmin.memory.selectors import CappedCount, capped_count
from memadmin.memory.store import LocalProvider
from memadmin.providers import contract as c
from memadmin.providers.models import ProviderConfig
from memadmin.providers.registry import provider_for

pytestmark = pytest.mark.django_db
NS = ["acme", "knowledge", "alice"]


def local(config: ProviderConfig) -> LocalProvider:
    """The built-in provider of ``config`` (``count_capped`` is its own, not the contract's)."""
    provider = provider_for(config)
    assert isinstance(provider, LocalProvider)
    return provider


@pytest.fixture
def put(local_config, namespace):
    provider = local(local_config)
    counter = iter(range(10_000))

    def put(content: str) -> str:
        return provider.retain("facts", "", content, "replace",
                               operation_id=f"put-{next(counter)}",
                               scope=c.Scope.of(namespace.partition_key), deadline=30).id

    return put


@pytest.mark.parametrize(("count", "shown"), [
    (CappedCount(0), "0"),
    (CappedCount(1234), "1,234"),
    (CappedCount(10_000, capped=True), "10,000+"),
    (CappedCount(10_000, capped=True, estimate=980_123), "\u2248 980,123"),
    (CappedCount(None), "unknown"),
])
def test_it_reads_as_a_person_would_write_it(count: CappedCount, shown: str) -> None:
    assert str(count) == shown
    assert count.exact == (None if count.capped else count.value)


class TestCappedCount:
    def test_it_is_exact_up_to_the_cap(self, put, namespace) -> None:
        for n in range(3):
            put(f"walrus {n}")
        qs = MemoryItem.objects.filter(namespace=namespace)

        assert capped_count(qs, cap=3) == CappedCount(3)
        assert capped_count(qs, cap=5) == CappedCount(3)

    def test_it_stops_past_the_cap(self, put, namespace) -> None:
        for n in range(4):
            put(f"walrus {n}")
        qs = MemoryItem.objects.filter(namespace=namespace)

        count = capped_count(qs, cap=3, estimate=False)

        assert count == CappedCount(3, capped=True) and str(count) == "3+"

    def test_past_the_cap_it_keeps_the_planners_estimate_above_it(self, put, namespace,
                                                                  monkeypatch) -> None:
        for n in range(4):
            put(f"walrus {n}")
        qs = MemoryItem.objects.filter(namespace=namespace)
        real = selectors._planner_rows(qs)
        assert isinstance(real, int) and real >= 1  # PostgreSQL's own EXPLAIN answered

        monkeypatch.setattr(selectors, "_planner_rows", lambda qs: 123_456)
        assert str(capped_count(qs, cap=3)) == "\u2248 123,456"
        monkeypatch.setattr(selectors, "_planner_rows", lambda qs: 2)  # below the cap: unused
        assert str(capped_count(qs, cap=3)) == "3+"


class TestTheExactFloor:
    """Up to EXACT_FLOOR a count is always exact; past it, the planner's estimate above the cap
    is shown without counting on to the cap (a common term costs a floor's worth of rows)."""

    @pytest.fixture
    def items(self, put, namespace, monkeypatch):
        monkeypatch.setattr(selectors, "EXACT_FLOOR", 2)

        def items(n: int):
            for i in range(n):
                put(f"walrus {i}")
            return MemoryItem.objects.filter(namespace=namespace)

        return items

    def test_past_the_floor_a_large_estimate_stops_the_count(self, items,
                                                             monkeypatch) -> None:
        qs = items(4)
        monkeypatch.setattr(selectors, "_planner_rows", lambda qs: 123_456)

        with CaptureQueriesContext(connection) as queries:
            count = capped_count(qs, cap=5)

        assert str(count) == "\u2248 123,456" and count.capped and count.exact is None
        limits = [re.findall(r"LIMIT (\d+)", q["sql"]) for q in queries.captured_queries]
        assert limits == [["3"]]  # floor + 1 rows counted, not cap + 1

    def test_past_the_floor_a_modest_estimate_counts_on_to_the_cap(self, items,
                                                                   monkeypatch) -> None:
        qs = items(4)
        monkeypatch.setattr(selectors, "_planner_rows", lambda qs: 3)

        assert capped_count(qs, cap=5) == CappedCount(4)
        assert capped_count(qs, cap=3) == CappedCount(3, capped=True)

    def test_without_an_estimate_it_counts_to_the_cap(self, items, monkeypatch) -> None:
        qs = items(4)
        monkeypatch.setattr(selectors, "_planner_rows", lambda qs: None)

        assert capped_count(qs, cap=5) == CappedCount(4)
        assert capped_count(qs, cap=5, estimate=False) == CappedCount(4)
        assert str(capped_count(qs, cap=3)) == "3+"


class TestTheStore:
    def test_a_search_count_is_capped(self, put, local_config, namespace) -> None:
        for n in range(6):
            put(f"walrus note {n}")
        put("nothing to see")
        provider = local(local_config)
        scope = c.Scope.of(namespace.partition_key)

        few = provider.count_capped(c.ItemFilters(q="walrus"), cap=10, scope=scope, deadline=30)
        many = provider.count_capped(c.ItemFilters(q="walrus"), cap=4, scope=scope, deadline=30)

        assert few == CappedCount(6)
        assert many.capped and many.value == 4
        assert provider.count(c.ItemFilters(q="walrus"), scope=scope, deadline=30) == 6

    def test_without_filters_it_is_the_exact_counter(self, put, local_config,
                                                     namespace) -> None:
        for n in range(5):
            put(f"note {n}")
        provider = local(local_config)

        assert provider.count_capped(c.ItemFilters(), cap=2,
                                     scope=c.Scope.of(namespace.partition_key),
                                     deadline=30) == CappedCount(5)

    @pytest.mark.parametrize("cap", [0, -1, 1_000_001, True, "10"])
    def test_a_bad_cap_is_refused(self, local_config, namespace, cap) -> None:
        with pytest.raises(c.InvalidRequest):
            local(local_config).count_capped(
                c.ItemFilters(q="x"), cap=cap, scope=c.Scope.of(namespace.partition_key),
                deadline=30)


class TestItemList:
    def test_it_shows_how_many_items_match_capped(self, client_for, put,
                                                  monkeypatch) -> None:
        for n in range(3):
            put(f"walrus {n}")
        put("something else")
        url = reverse("memory:items", args=NS)
        nora = client_for("nora")

        exact = nora.get(url + "?q=walrus").content.decode()
        monkeypatch.setattr(selectors, "COUNT_CAP", 2)
        monkeypatch.setattr(selectors, "_planner_rows", lambda qs: None)
        capped = nora.get(url + "?q=walrus").content.decode()
        unfiltered = nora.get(url).content.decode()

        assert "<strong>3</strong> items match these filters" in exact
        assert "<strong>2+</strong> items match these filters" in capped
        # Without filters the namespace's counter is the total: exact, no count query.
        assert "<strong>4</strong> items match." in unfiltered

    def test_a_provider_that_cannot_count_shows_unknown(self, client_for, put,
                                                        monkeypatch) -> None:
        put("walrus")

        def fails(*args, **kwargs):
            raise c.Unavailable("down")

        monkeypatch.setattr(selectors, "item_count", fails)
        page = client_for("nora").get(reverse("memory:items", args=NS) + "?q=walrus")

        assert page.status_code == 200
        assert "<strong>unknown</strong>" in page.content.decode()

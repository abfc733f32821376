"""The item list built for bulk work: sort orders, the key-prefix filter, the total, the search
match highlighted (escaped) in the preview, and the selection's ways to delete."""

from __future__ import annotations

from urllib.parse import parse_qs, urlencode

import pytest
from django.db import connection
from django.urls import reverse

from memadmin.jobs import runner
from memadmin.jobs.models import Job
from memadmin.memory import selectors
from memadmin.memory.models import MemoryItem
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for

pytestmark = pytest.mark.django_db
NS = ["acme", "knowledge", "alice"]


@pytest.fixture
def put(local_config, namespace):
    provider = provider_for(local_config)
    counter = iter(range(10_000))

    def put(content: str, tier: str = "facts", key: str = "") -> str:
        return provider.retain(tier, key, content, "replace",
                               operation_id=f"list-{next(counter)}",
                               scope=c.Scope.of(namespace.partition_key), deadline=5).id

    return put


def items_url(**params: str) -> str:
    return reverse("memory:items", args=NS) + ("?" + urlencode(params) if params else "")


def shown(response) -> list[str]:
    return [item.key or item.content for item, _ in response.context["rows"]]


class TestOrders:
    def test_it_sorts_by_key_across_pages_without_losing_or_repeating_an_item(
            self, client_for, put) -> None:
        keys = [f"peer-{n:03d}" for n in range(70)]
        for key in reversed(keys):
            put(f"about {key}", tier="peers", key=key)
        nora = client_for("nora")
        first = nora.get(items_url(order="key"))
        assert shown(first) == keys[:50]
        cursor = first.context["page"].next_cursor
        second = nora.get(items_url(order="key", cursor=cursor), headers={"HX-Request": "true"})
        assert shown(second) == keys[50:]
        assert second.context["page"].next_cursor is None

    def test_it_sorts_by_size_largest_first(self, client_for, put) -> None:
        for n in (5, 300, 40):
            put("x" * n)
        page = client_for("nora").get(items_url(order="size"))
        assert [item.bytes for item, _ in page.context["rows"]] == [300, 40, 5]

    def test_a_cursor_of_another_order_is_a_clear_400(self, client_for, put) -> None:
        for n in range(51):
            put(f"fact {n}")
        nora = client_for("nora")
        cursor = nora.get(items_url()).context["page"].next_cursor
        assert nora.get(items_url(order="key", cursor=cursor)).status_code == 400
        assert nora.get(items_url(order="sideways")).status_code == 400

    def test_each_order_and_the_key_prefix_are_answered_by_an_index(self, namespace) -> None:
        # The planner picks a sequential scan on a small table; with it switched off, a plan
        # that still scans the table would mean no index can answer the query.
        from memadmin.memory.store import LocalProvider

        provider = LocalProvider.__new__(LocalProvider)
        qs = MemoryItem.objects.filter(namespace=namespace)
        plans = {}
        for order, want in (("key", "memoryitem_key_order"), ("size", "memoryitem_size_order"),
                            ("updated", "memoryitem_keyset")):
            filtered = provider._apply_filters(
                qs, c.ItemFilters(key_prefix="peer-" if order == "key" else None),
                [namespace])
            ordering = {"key": ("key_c", "id"), "size": ("-bytes", "-id"),
                        "updated": ("-updated_at", "-id")}[order]
            if order == "key":
                from django.db.models.functions import Collate

                filtered = filtered.annotate(key_c=Collate("key", "C"))
            sql, params = filtered.order_by(*ordering)[:51].query.sql_with_params()
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL enable_seqscan = off")
                cursor.execute("SET LOCAL enable_sort = off")
                cursor.execute("EXPLAIN " + sql, params)
                plans[order] = "\n".join(row[0] for row in cursor.fetchall())
            assert want in plans[order], plans[order]
        assert "Sort" not in plans["key"].split("->")[0]


class TestKeyPrefix:
    def test_the_key_filter_matches_by_prefix_and_says_so(self, client_for, put) -> None:
        put("may 1", tier="daily", key="2026-05-01")
        put("may 2", tier="daily", key="2026-05-02")
        put("june", tier="daily", key="2026-06-01")
        page = client_for("nora").get(items_url(key="2026-05"))
        assert sorted(shown(page)) == ["2026-05-01", "2026-05-02"]
        html = page.content.decode()
        assert "Key starts with" in html and "the whole key finds one item" in html

    @pytest.mark.parametrize("prefix", ["%", "_", "\\", "peer_"])
    def test_like_wildcards_are_plain_characters(self, client_for, put, prefix) -> None:
        put("a", tier="peers", key="peerx")
        put("b", tier="peers", key="peer_1")
        page = client_for("nora").get(items_url(key=prefix))
        assert shown(page) == (["peer_1"] if prefix == "peer_" else [])


class TestTotalAndHighlight:
    def test_the_total_counts_the_filter_and_caps_large_numbers(self, client_for, put,
                                                               monkeypatch) -> None:
        for n in range(6):
            put(f"billing fact {n}")
        put("hosting fact")
        nora = client_for("nora")
        assert nora.get(items_url()).context["total"].value == 7
        html = nora.get(items_url(q="billing")).content.decode()
        assert "<strong>6</strong> items match these filters" in html
        monkeypatch.setattr(selectors, "COUNT_CAP", 5)
        monkeypatch.setattr(selectors, "_planner_rows", lambda qs: None)
        assert "<strong>5+</strong>" in nora.get(items_url(q="billing")).content.decode()

    def test_the_match_is_marked_and_the_content_stays_escaped(self, client_for, put) -> None:
        put("<b>hostile</b> notes about invoices & <mark>fake</mark> billing")
        html = client_for("nora").get(items_url(q="invoice")).content.decode()
        assert "<mark>invoices</mark>" in html
        assert "&lt;b&gt;hostile&lt;/b&gt;" in html and "<b>hostile" not in html
        assert "&lt;mark&gt;fake&lt;/mark&gt;" in html

    def test_the_preview_window_shows_a_match_far_into_the_content(self) -> None:
        content = "filler " * 100 + "the deployment <region> is eu-west"
        parts = selectors.highlighted(content, "region")
        assert ("region", True) in parts and parts[0] == ("…", False)
        assert "".join(text for text, _ in parts).startswith("…")


class TestSelection:
    def test_delete_selected_with_nothing_selected_keeps_the_filters(self, client_for, put) -> None:
        put("a fact")
        response = client_for("nora").post(reverse("memory:items_delete", args=NS),
                                           {"tier": "facts", "q": "fact", "key": ""})
        assert response.status_code == 302
        path, query = response["Location"].split("?")
        assert path == items_url() and parse_qs(query) == {"q": ["fact"], "tier": ["facts"]}

    def test_an_empty_namespace_shows_no_delete_buttons(self, client_for) -> None:
        html = client_for("nora").get(items_url()).content.decode()
        assert "holds no items yet" in html
        assert "Delete selected" not in html and "matching" not in html.split("<table")[1]

    def test_viewers_get_no_selection(self, client_for, put) -> None:
        put("a fact")
        html = client_for("vic").get(items_url()).content.decode()
        assert "data-select-item" not in html and "Delete selected" not in html

    def test_all_matching_posts_the_filters_and_the_unticked_items_are_kept(
            self, client_for, put) -> None:
        ids = [put(f"billing {n}") for n in range(4)]
        put("hosting")
        confirm = client_for("nora").post(reverse("memory:items_delete", args=NS), {
            "scope": "matching", "q": "billing", "ids": ids[:3], "keep": [ids[3]]})
        assert confirm.status_code == 200
        assert confirm.context["count"] == 4
        html = confirm.content.decode()
        assert ids[3] in confirm.context["form"]["exclude"].value()
        assert 'name="q" value="billing"' in html
        assert MemoryItem.objects.count() == 5  # nothing deleted before the confirmation

    def test_the_confirmed_all_matching_delete_runs_as_a_job_and_keeps_what_was_kept(
            self, client_for, put) -> None:
        ids = [put(f"billing {n}") for n in range(4)]
        put("hosting")
        nora = client_for("nora")
        done = nora.post(reverse("memory:items_delete_matching", args=NS), {
            "q": "billing", "confirm": "yes", "expected": "4", "exclude": ids[3]})
        assert done.status_code == 302 and "/jobs/" in done["Location"]
        job = Job.objects.get(pk=done["Location"].rstrip("/").rsplit("/", 1)[1])
        assert runner.run_job(str(job.pk)) == "succeeded"
        left = sorted(MemoryItem.objects.values_list("content", flat=True))
        assert left == ["billing 3", "hosting"]

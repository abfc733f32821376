"""The editor built for conflicts and freezes: who saved the other revision, a merge view that
marks every line of theirs the editor's text lacks, the revision table refreshed, diffs that
compare a revision with its predecessor, and no Edit on a frozen item."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for

pytestmark = pytest.mark.django_db
NS = ["acme", "knowledge", "alice"]


@pytest.fixture
def item(local_config, namespace):
    provider = provider_for(local_config)
    scope = c.Scope.of(namespace.partition_key)
    item_id = provider.retain("peers", "bob", "line one\nline two\nline three", "replace",
                              operation_id="ed-1", scope=scope, deadline=5).id
    return item_id


def their_save(local_config, namespace, item_id, content, revision=1):
    provider_for(local_config).update_item(
        item_id, content, "replace", expected_revision=revision, operation_id=f"them-{revision}",
        actor="user:olga", scope=c.Scope.of(namespace.partition_key), deadline=5)


def edit(client, item_id, content, revision="1", htmx=False):
    return client.post(reverse("memory:item_edit", args=[*NS, item_id]),
                       {"content": content, "mode": "replace", "expected_revision": revision},
                       headers={"HX-Request": "true"} if htmx else {})


class TestConflict:
    def test_the_header_names_who_saved_the_other_revision_and_when(
            self, client_for, item, local_config, namespace) -> None:
        their_save(local_config, namespace, item, "line one\nTHEIR line\nline three")
        response = edit(client_for("nora"), item, "line one\nline two\nmy line")
        assert response.status_code == 409
        head = response.content.decode().split('id="conflict-head">')[1].split("</strong>")[0]
        assert head.startswith("Revision 2 by user:olga at ")

    def test_the_merge_view_marks_their_lines_and_counts_yours(
            self, client_for, item, local_config, namespace) -> None:
        their_save(local_config, namespace, item,
                   "line one\n<b>THEIR</b> line\nline three\nappended by them")
        response = edit(client_for("nora"), item, "line one\nline two\nline three")
        merge = response.context["merge"]
        assert [(line.kind, line.text) for line in merge.lines] == [
            ("same", "line one"), ("theirs", "<b>THEIR</b> line"), ("same", "line three"),
            ("theirs", "appended by them")]
        assert (merge.theirs_only, merge.yours_only) == (2, 1)
        page = response.content.decode()
        assert "<mark>&lt;b&gt;THEIR&lt;/b&gt; line</mark>" in page
        assert "<mark>appended by them</mark>" in page
        assert "1 line of yours is not in theirs" in page

    def test_htmx_refreshes_the_revision_table_out_of_band(
            self, client_for, item, local_config, namespace) -> None:
        their_save(local_config, namespace, item, "theirs")
        response = edit(client_for("nora"), item, "mine", htmx=True)
        page = response.content.decode()
        assert "<html" not in page
        rows = page.split('<tbody id="revision-rows" hx-swap-oob="true">')[1].split("</tbody>")[0]
        assert "2 (current)" in rows and "user:olga" in rows
        assert 'name="expected" value="2"' in rows  # restores now target the new revision
        assert 'style="' not in page


class TestDiff:
    def test_by_default_it_compares_the_newest_revision_with_its_predecessor(
            self, client_for, item, local_config, namespace) -> None:
        their_save(local_config, namespace, item, "line one\nline 2\nline three")
        their_save(local_config, namespace, item, "line one\nline 2\nline 3", revision=2)
        nora = client_for("nora")
        page = nora.get(reverse("memory:item", args=[*NS, item]))
        assert (page.context["diff_a"], page.context["diff_b"]) == ("2", "3")
        assert '<option value="2" selected>' in page.content.decode()
        only_b = nora.get(reverse("memory:item", args=[*NS, item]), {"b": "2"})
        assert [(d.kind, d.text) for d in only_b.context["diff"] if d.kind != "same"][1:] == [
            ("removed", "line two"), ("added", "line 2")]

    def test_the_diff_has_one_line_per_line(self, client_for, item, local_config,
                                            namespace) -> None:
        their_save(local_config, namespace, item, "line one\nline 2\nline three")
        page = client_for("nora").get(reverse("memory:item", args=[*NS, item]),
                                      {"a": "1", "b": "2"}).content.decode()
        diff = page.split('id="diff">')[1].split("</pre>")[0]
        assert "\n" not in diff  # each line is a block of its own: no blank line between


class TestFrozen:
    def test_a_frozen_item_offers_no_edit_and_says_who_when_and_why(self, client_for,
                                                                    item) -> None:
        nora = client_for("nora")
        nora.post(reverse("memory:item_freeze", args=[*NS, item]),
                  {"kind": "freeze", "reason": "pending the audit"})
        page = nora.get(reverse("memory:item", args=[*NS, item])).content.decode()
        assert reverse("memory:item_edit", args=[*NS, item]) not in page
        sentence = page.split('id="frozen-no-edit">')[1].split("</p>")[0]
        assert "nora froze it on " in sentence and " UTC, because: “pending the audit”." in sentence

    def test_a_save_refused_by_a_freeze_says_so_in_words(self, client_for, item) -> None:
        nora = client_for("nora")
        nora.post(reverse("memory:namespace_freeze", args=NS),
                  {"kind": "freeze", "reason": "quarterly audit"})
        response = edit(nora, item, "changed")
        assert response.status_code == 409
        assert "Nothing was saved: nora froze it on " in response.content.decode()

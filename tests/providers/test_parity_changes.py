"""Provider parity: ``update_item``, ``delete_items`` and ``forget``.

Every case runs against every provider kind, through contract calls only.
"""

from __future__ import annotations

import uuid

import pytest

from memadmin.providers import contract as c
from tests.providers.conftest import DEADLINE, ITEM_MAX_BYTES

ALL = c.ItemFilters()


def count(provider: c.Provider, scope: c.Scope, filters: c.ItemFilters = ALL) -> int | None:
    return provider.count(filters, scope=scope, deadline=DEADLINE)


def item_of(provider: c.Provider, scope: c.Scope, item_id: str) -> c.Item:
    return provider.get_item(item_id, scope=scope, deadline=DEADLINE).item


def gone(provider: c.Provider, scope: c.Scope, item_id: str) -> bool:
    try:
        provider.get_item(item_id, scope=scope, deadline=DEADLINE)
    except c.NotFound:
        return True
    return False


def freeze_item(provider: c.Provider, scope: c.Scope, item_id: str,
                kind: str = "freeze") -> c.FreezeTarget:
    target = c.FreezeTarget(level="item", item_id=item_id)
    provider.freeze(target, kind=kind, reason="review", scope=scope, deadline=DEADLINE)
    return target


def freeze_namespace(provider: c.Provider, scope: c.Scope,
                     kind: str = "freeze") -> c.FreezeTarget:
    target = c.FreezeTarget(level="namespace", partition=scope.partitions[0])
    provider.freeze(target, kind=kind, reason="incident", scope=scope, deadline=DEADLINE)
    return target


class TestUpdateItem:
    @pytest.fixture
    def update(self, provider, scope, op):
        def update(item_id: str, content: str, mode: str = "replace", *, expected: int,
                   into: c.Scope | None = None) -> c.RetainResult:
            return provider.update_item(item_id, content, mode, expected_revision=expected,
                                        operation_id=op(), scope=into or scope,
                                        deadline=DEADLINE)

        return update

    def test_it_changes_an_item_at_the_expected_revision(self, provider, scope, put, update):
        item = put("version one", "peers", "bob")

        result = update(item.id, "version two", expected=1)

        assert result == c.RetainResult(id=item.id, bytes=len(b"version two"), revision=2)
        assert item_of(provider, scope, item.id).content == "version two"
        detail = provider.get_item(item.id, scope=scope, deadline=DEADLINE)
        assert [r.content for r in detail.revisions] == ["version one", "version two"]

    def test_it_appends_with_a_newline(self, provider, scope, put, update):
        item = put("line one", "lessons")

        result = update(item.id, "line two ✓", "append", expected=1)

        assert result.bytes == len("line one\nline two ✓".encode())
        assert item_of(provider, scope, item.id).content == "line one\nline two ✓"

    def test_it_refuses_a_stale_revision_and_leaves_the_item_alone(self, provider, scope, put,
                                                                   update, subtests):
        item = put("version one", "peers", "bob")
        update(item.id, "version two", expected=1)

        for stale in (1, 3, 99):
            with subtests.test(expected=stale), pytest.raises(c.Conflict):
                update(item.id, "lost update", expected=stale)

        current = item_of(provider, scope, item.id)
        assert (current.revision, current.content) == (2, "version two")
        assert len(provider.get_item(item.id, scope=scope, deadline=DEADLINE).revisions) == 2

    def test_it_refuses_a_frozen_item_until_the_freeze_is_lifted(self, provider, scope, put,
                                                                 update):
        item = put("held", "peers", "bob")
        target = freeze_item(provider, scope, item.id)

        with pytest.raises(c.Frozen) as refused:
            update(item.id, "changed", expected=1)
        assert refused.value.details["kind"] == "freeze"
        assert item_of(provider, scope, item.id).content == "held"

        provider.lift_freeze(target, kind="freeze", scope=scope, deadline=DEADLINE)

        assert update(item.id, "changed", expected=1).revision == 2

    def test_it_refuses_an_item_of_a_frozen_namespace(self, provider, scope, put, update):
        item = put("held", "pins")
        freeze_namespace(provider, scope, kind="legal_hold")

        with pytest.raises(c.Frozen):
            update(item.id, "changed", expected=1)

    def test_it_refuses_content_over_the_item_limit(self, provider, scope, put, update):
        item = put("x" * (ITEM_MAX_BYTES - 1), "pins")

        with pytest.raises(c.TooLarge):
            update(item.id, "y" * (ITEM_MAX_BYTES + 1), expected=1)
        with pytest.raises(c.TooLarge):
            update(item.id, "yy", "append", expected=1)
        with pytest.raises(c.TooLarge):
            update(item.id, "é" * (ITEM_MAX_BYTES // 2 + 1), expected=1)

        assert item_of(provider, scope, item.id).revision == 1
        assert update(item.id, "y" * ITEM_MAX_BYTES, expected=1).bytes == ITEM_MAX_BYTES

    def test_it_refuses_malformed_input(self, put, update, subtests):
        item = put("text", "pins")

        for content, mode in [("nul\x00", "replace"), ("\ud800", "replace"), (None, "replace"),
                              ("text", "upsert"), ("text", ""), ("text", None)]:
            with subtests.test(content=content, mode=mode), pytest.raises(c.InvalidRequest):
                update(item.id, content, mode, expected=1)
        for expected in ("1", None, 1.0):
            with subtests.test(expected=expected), pytest.raises(c.InvalidRequest):
                update(item.id, "text", expected=expected)

    def test_it_answers_not_found_outside_the_scope(self, other_scope, put, update, subtests):
        theirs = put("theirs", "pins", into=other_scope)

        for item_id in (theirs.id, str(uuid.uuid4()), "../../etc/passwd"):
            with subtests.test(item_id=item_id), pytest.raises(c.NotFound):
                update(item_id, "changed", expected=1)

    def test_it_replays_the_same_operation(self, provider, scope, put, op):
        if c.IDEMPOTENT_WRITES not in provider.capabilities(deadline=DEADLINE):
            pytest.skip("this provider does not deduplicate writes")
        item = put("one", "pins")
        kwargs = {"expected_revision": 1, "operation_id": op(), "scope": scope,
                  "deadline": DEADLINE}

        first = provider.update_item(item.id, "two", "replace", **kwargs)
        again = provider.update_item(item.id, "two", "replace", **kwargs)
        with pytest.raises(c.IdempotencyMismatch):
            provider.update_item(item.id, "three", "replace", **kwargs)

        assert again == first
        assert item_of(provider, scope, item.id).revision == 2


class TestDeleteItems:
    @pytest.fixture
    def delete(self, provider, scope, op):
        def delete(*, into: c.Scope | None = None, **kwargs) -> c.DeleteResult:
            return provider.delete_items(operation_id=op(), scope=into or scope,
                                         deadline=DEADLINE, **kwargs)

        return delete

    def test_it_deletes_by_ids(self, provider, scope, put, delete):
        a, b, keep = put("a", "facts", "a"), put("b", "facts", "b"), put("c", "facts", "c")

        assert delete(ids=[a.id, b.id]) == c.DeleteResult(removed=2, held=0)

        assert count(provider, scope) == 1
        assert gone(provider, scope, a.id) and gone(provider, scope, b.id)
        assert not gone(provider, scope, keep.id)

    def test_it_removes_nothing_for_unknown_ids(self, provider, scope, other_scope, put,
                                                delete):
        put("mine", "pins")
        theirs = put("theirs", "pins", into=other_scope)

        result = delete(ids=[str(uuid.uuid4()), theirs.id, "../../etc/passwd"])

        assert result == c.DeleteResult(removed=0, held=0)
        assert count(provider, scope) == 1
        assert not gone(provider, other_scope, theirs.id)

    def test_it_deletes_by_filters(self, provider, scope, put, delete):
        put("a", "peers", "a")
        put("b", "peers", "b")
        keep = put("c", "facts", "c")

        assert delete(filters=c.ItemFilters(tier="peers")) == c.DeleteResult(removed=2, held=0)

        assert [i.id for i in provider.list_items(ALL, scope=scope, deadline=DEADLINE).items] \
            == [keep.id]

    def test_it_deletes_everything_only_when_asked_with_an_empty_filter(self, provider, scope,
                                                                        other_scope, put,
                                                                        delete):
        for n in range(4):
            put(f"item {n}", "facts", f"k{n}")
        put("theirs", "pins", into=other_scope)

        assert delete(filters=ALL) == c.DeleteResult(removed=4, held=0)

        assert count(provider, scope) == 0
        assert count(provider, other_scope) == 1

    def test_it_spares_excluded_ids(self, provider, scope, put, delete):
        a, b, keep = put("a", "facts", "a"), put("b", "facts", "b"), put("c", "facts", "c")

        assert delete(filters=ALL, exclude_ids=[keep.id, str(uuid.uuid4())]).removed == 2
        assert delete(ids=[a.id, b.id, keep.id], exclude_ids=[keep.id]).removed == 0

        assert count(provider, scope) == 1
        assert not gone(provider, scope, keep.id)

    def test_it_deletes_in_batches_of_limit(self, provider, scope, put, delete):
        for n in range(10):
            put(f"item {n}", "facts", f"k{n}")

        removed = []
        for _ in range(10):
            result = delete(filters=ALL, limit=3)
            removed.append(result.removed)
            if result.removed == 0:
                break

        assert removed == [3, 3, 3, 1, 0]
        assert count(provider, scope) == 0

    def test_it_holds_frozen_items(self, provider, scope, put, delete):
        held = put("held", "facts", "a")
        free = put("free", "facts", "b")
        freeze_item(provider, scope, held.id)

        assert delete(filters=ALL) == c.DeleteResult(removed=1, held=1)
        assert delete(ids=[held.id]) == c.DeleteResult(removed=0, held=1)

        assert not gone(provider, scope, held.id)
        assert gone(provider, scope, free.id)
        assert count(provider, scope) == 1

    def test_it_holds_every_item_of_a_frozen_namespace(self, provider, scope, put, delete):
        a, b = put("a", "facts", "a"), put("b", "facts", "b")
        freeze_namespace(provider, scope, kind="legal_hold")

        assert delete(ids=[a.id, b.id]) == c.DeleteResult(removed=0, held=2)
        assert count(provider, scope) == 2

    def test_it_needs_exactly_one_of_ids_and_filters(self, provider, scope, put, delete,
                                                     subtests):
        item = put("a", "facts", "a")

        for kwargs in ({}, {"ids": [item.id], "filters": ALL}, {"ids": None, "filters": None}):
            with subtests.test(kwargs=kwargs), pytest.raises(c.InvalidRequest):
                delete(**kwargs)

        assert count(provider, scope) == 1

    def test_it_refuses_filters_that_are_not_item_filters(self, provider, scope, put, delete,
                                                          subtests):
        put("a", "facts", "a")

        for filters in ({"tier": "facts"}, "tier=facts", 5):
            with subtests.test(filters=filters), pytest.raises(c.InvalidRequest):
                delete(filters=filters)

        assert count(provider, scope) == 1

    def test_it_refuses_a_limit_out_of_range(self, provider, scope, put, delete, subtests):
        put("a", "facts", "a")

        for limit in (0, -1):
            with subtests.test(limit=limit), pytest.raises(c.InvalidRequest):
                delete(filters=ALL, limit=limit)

        assert count(provider, scope) == 1

    def test_it_removes_the_revisions_too(self, provider, scope, put, delete):
        first = put("version one", "peers", "bob")
        put("version two", "peers", "bob")

        delete(ids=[first.id])
        again = put("a new bob", "peers", "bob")

        assert again.revision == 1
        detail = provider.get_item(again.id, scope=scope, deadline=DEADLINE)
        assert [r.content for r in detail.revisions] == ["a new bob"]


class TestForget:
    @pytest.fixture
    def forget(self, provider, scope, op):
        def forget(*, into: c.Scope | None = None, **kwargs) -> c.ForgetResult:
            return provider.forget(operation_id=op(), scope=into or scope, deadline=DEADLINE,
                                   **kwargs)

        return forget

    def test_it_forgets_one_item_with_its_revisions(self, provider, scope, put, forget):
        item = put("version one", "peers", "bob")
        put("version two", "peers", "bob")
        keep = put("other", "peers", "carol")

        assert forget(item_id=item.id) == c.ForgetResult(removed=1, held=0)

        assert gone(provider, scope, item.id)
        assert not gone(provider, scope, keep.id)
        assert put("a new bob", "peers", "bob").revision == 1

    def test_it_forgets_a_subject_across_the_scope(self, provider, scope, other_scope,
                                                   resource_scope, put, forget):
        mine = put("about one", "facts", "a", subject="subj-1")
        theirs = put("also about one", "facts", "a", subject="subj-1", into=other_scope)
        keep = put("about two", "facts", "b", subject="subj-2")
        untagged = put("about nobody", "facts", "c")

        assert forget(data_subject_id="subj-1", into=resource_scope) == c.ForgetResult(
            removed=2, held=0)

        assert gone(provider, scope, mine.id) and gone(provider, other_scope, theirs.id)
        assert not gone(provider, scope, keep.id) and not gone(provider, scope, untagged.id)
        assert count(provider, resource_scope, c.ItemFilters(subject="subj-1")) == 0

    def test_it_forgets_a_subject_only_within_the_scope(self, provider, scope, other_scope, put,
                                                        forget):
        put("about one", "facts", "a", subject="subj-1")
        theirs = put("also about one", "facts", "a", subject="subj-1", into=other_scope)

        assert forget(data_subject_id="subj-1").removed == 1

        assert not gone(provider, other_scope, theirs.id)

    def test_it_removes_nothing_when_forgetting_again(self, put, forget):
        item = put("about one", "facts", "a", subject="subj-1")
        forget(item_id=item.id)

        assert forget(item_id=item.id) == c.ForgetResult(removed=0, held=0)
        assert forget(data_subject_id="subj-1") == c.ForgetResult(removed=0, held=0)
        assert forget(item_id=str(uuid.uuid4())) == c.ForgetResult(removed=0, held=0)

    def test_it_needs_exactly_one_selector(self, provider, scope, put, forget, subtests):
        item = put("about one", "facts", "a", subject="subj-1")

        for kwargs in ({}, {"item_id": item.id, "data_subject_id": "subj-1"},
                       {"item_id": None, "data_subject_id": None}, {"data_subject_id": ""},
                       {"data_subject_id": "x" * (c.MAX_SUBJECT_ID_CHARS + 1)}):
            with subtests.test(kwargs=kwargs), pytest.raises(c.InvalidRequest):
                forget(**kwargs)

        assert count(provider, scope) == 1

    def test_it_holds_frozen_items_unless_overridden(self, provider, scope, put, forget):
        held = put("about one, frozen", "facts", "a", subject="subj-1")
        free = put("about one", "facts", "b", subject="subj-1")
        freeze_item(provider, scope, held.id, kind="legal_hold")

        assert forget(data_subject_id="subj-1") == c.ForgetResult(removed=1, held=1)
        assert forget(item_id=held.id) == c.ForgetResult(removed=0, held=1)
        assert not gone(provider, scope, held.id)
        assert gone(provider, scope, free.id)

        assert forget(data_subject_id="subj-1", override_hold=True) == c.ForgetResult(
            removed=1, held=0)
        assert gone(provider, scope, held.id)

    def test_it_holds_the_items_of_a_frozen_namespace(self, provider, scope, put, forget):
        item = put("about one", "facts", "a", subject="subj-1")
        freeze_namespace(provider, scope)

        assert forget(data_subject_id="subj-1") == c.ForgetResult(removed=0, held=1)
        assert forget(item_id=item.id, override_hold=True) == c.ForgetResult(removed=1, held=0)
        assert count(provider, scope) == 0

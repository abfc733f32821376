"""Provider parity: ``freeze``, ``lift_freeze``, ``set_quarantine``, ``health``, ``capabilities``.

Every case runs against every provider kind, through contract calls only.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from memadmin.providers import contract as c
from tests.providers.conftest import DEADLINE


def frozen_kind(put) -> str | None:
    """The kind of freeze that refuses a new ``pins`` write, or None when it goes through."""
    try:
        put("probe", "pins")
    except c.Frozen as refused:
        return str(refused.details["kind"])
    return None


class TestFreeze:
    @pytest.fixture
    def namespace_target(self, scope) -> c.FreezeTarget:
        return c.FreezeTarget(level="namespace", partition=scope.partitions[0])

    def freeze(self, provider, scope, target, kind="freeze", reason="incident 42"):
        provider.freeze(target, kind=kind, reason=reason, actor="owner alice", scope=scope,
                        deadline=DEADLINE)

    def lift(self, provider, scope, target, kind="freeze"):
        provider.lift_freeze(target, kind=kind, actor="owner alice", scope=scope,
                             deadline=DEADLINE)

    def test_it_freezes_and_lifts_a_namespace(self, provider, scope, put, namespace_target):
        self.freeze(provider, scope, namespace_target)
        assert frozen_kind(put) == "freeze"

        self.lift(provider, scope, namespace_target)

        assert frozen_kind(put) is None

    def test_it_is_idempotent_per_target_and_kind(self, provider, scope, put, namespace_target):
        self.freeze(provider, scope, namespace_target)
        self.freeze(provider, scope, namespace_target, reason="said twice")
        assert frozen_kind(put) == "freeze"

        self.lift(provider, scope, namespace_target)
        self.lift(provider, scope, namespace_target)

        assert frozen_kind(put) is None
        self.freeze(provider, scope, namespace_target)
        assert frozen_kind(put) == "freeze"

    def test_it_keeps_a_freeze_and_a_legal_hold_independent(self, provider, scope, put,
                                                            namespace_target):
        self.freeze(provider, scope, namespace_target, kind="freeze")
        self.freeze(provider, scope, namespace_target, kind="legal_hold", reason="litigation")

        self.lift(provider, scope, namespace_target, kind="freeze")
        assert frozen_kind(put) == "legal_hold"

        self.freeze(provider, scope, namespace_target, kind="freeze")
        self.lift(provider, scope, namespace_target, kind="legal_hold")
        assert frozen_kind(put) == "freeze"

        self.lift(provider, scope, namespace_target, kind="freeze")
        assert frozen_kind(put) is None

    def test_it_keeps_an_item_freeze_and_legal_hold_independent(self, provider, scope, put,
                                                                op):
        item = put("held", "peers", "bob")
        target = c.FreezeTarget(level="item", item_id=item.id)
        self.freeze(provider, scope, target, kind="legal_hold", reason="litigation")
        self.freeze(provider, scope, target, kind="freeze")

        def write() -> c.RetainResult:
            return provider.update_item(item.id, "changed", "replace", expected_revision=1,
                                        operation_id=op(), scope=scope, deadline=DEADLINE)

        self.lift(provider, scope, target, kind="freeze")
        with pytest.raises(c.Frozen) as refused:
            write()
        assert refused.value.details["kind"] == "legal_hold"

        self.lift(provider, scope, target, kind="legal_hold")
        assert write().revision == 2

    def test_it_reports_frozen_items_while_frozen(self, provider, scope, put, namespace_target):
        item = put("held", "pins")

        def frozen() -> bool:
            return provider.get_item(item.id, scope=scope, deadline=DEADLINE).item.frozen

        assert frozen() is False
        self.freeze(provider, scope, namespace_target, kind="legal_hold")
        assert frozen() is True
        self.lift(provider, scope, namespace_target, kind="legal_hold")
        assert frozen() is False
        self.freeze(provider, scope, c.FreezeTarget(level="item", item_id=item.id))
        assert frozen() is True

    def test_it_freezes_one_namespace_only(self, provider, scope, other_scope, put,
                                           namespace_target):
        self.freeze(provider, scope, namespace_target)

        assert put("elsewhere", "pins", into=other_scope).revision == 1

    def test_it_freezes_a_whole_resource(self, provider, scope, other_scope, resource_scope,
                                         resource, put):
        target = c.FreezeTarget(level="resource", resource=resource.slug)
        self.freeze(provider, resource_scope, target, kind="legal_hold")

        assert frozen_kind(put) == "legal_hold"
        with pytest.raises(c.Frozen):
            put("elsewhere", "pins", into=other_scope)

        self.lift(provider, resource_scope, target, kind="legal_hold")
        assert frozen_kind(put) is None

    def test_it_lifts_what_is_not_frozen_as_a_no_op(self, provider, scope, put,
                                                    namespace_target):
        self.lift(provider, scope, namespace_target, kind="freeze")
        self.lift(provider, scope, namespace_target, kind="legal_hold")

        assert frozen_kind(put) is None

    def test_it_refuses_an_unknown_kind(self, provider, scope, namespace_target, subtests):
        for kind in ("hold", "FREEZE", "", None):
            with subtests.test(kind=kind):
                with pytest.raises(c.InvalidRequest):
                    self.freeze(provider, scope, namespace_target, kind=kind)
                with pytest.raises(c.InvalidRequest):
                    self.lift(provider, scope, namespace_target, kind=kind)

    def test_it_needs_a_reason(self, provider, scope, put, namespace_target, subtests):
        for reason in ("", "   ", "nul\x00", None):
            with subtests.test(reason=reason), pytest.raises(c.InvalidRequest):
                self.freeze(provider, scope, namespace_target, reason=reason)

        assert frozen_kind(put) is None

    def test_it_refuses_an_unknown_level_or_a_target_without_its_reference(self, subtests):
        targets: list[dict[str, Any]] = [
            {"level": "planet"}, {"level": "namespace"}, {"level": "item"},
            {"level": "resource", "partition": "p"}, {"level": "item", "item_id": ""}]
        for kwargs in targets:
            with subtests.test(kwargs=kwargs), pytest.raises(c.InvalidRequest):
                c.FreezeTarget(**kwargs)

    def test_it_answers_not_found_for_a_target_outside_the_scope(self, provider, scope,
                                                                 other_scope, put, subtests):
        theirs = put("theirs", "pins", into=other_scope)
        targets = [
            c.FreezeTarget(level="namespace", partition=other_scope.partitions[0]),
            c.FreezeTarget(level="namespace", partition="ocmem_v1_" + "0" * 32),
            c.FreezeTarget(level="resource", resource="no-such-resource"),
            c.FreezeTarget(level="item", item_id=theirs.id),
            c.FreezeTarget(level="item", item_id=str(uuid.uuid4())),
            c.FreezeTarget(level="item", item_id="../../etc/passwd"),
        ]
        for target in targets:
            with subtests.test(target=target):
                with pytest.raises(c.NotFound):
                    self.freeze(provider, scope, target)
                with pytest.raises(c.NotFound):
                    self.lift(provider, scope, target)

        assert put("still writable", "pins", into=other_scope).revision == 2


class TestSetQuarantine:
    def test_it_sets_each_state(self, provider, scope, put):
        item = put("suspicious", "facts", "a")

        for state in ("pending", "released", "clear", "pending"):
            provider.set_quarantine(item.id, state, scope=scope, deadline=DEADLINE)

            detail = provider.get_item(item.id, scope=scope, deadline=DEADLINE)
            assert detail.item.quarantine == state
            assert detail.item.content == "suspicious"

    def test_it_is_idempotent(self, provider, scope, put):
        item = put("suspicious", "facts", "a")

        provider.set_quarantine(item.id, "pending", scope=scope, deadline=DEADLINE)
        provider.set_quarantine(item.id, "pending", scope=scope, deadline=DEADLINE)

        assert provider.get_item(item.id, scope=scope, deadline=DEADLINE).item.quarantine == \
            "pending"

    def test_it_refuses_an_invalid_state(self, provider, scope, put, subtests):
        item = put("suspicious", "facts", "a")

        for state in ("purged", "PENDING", "", None, "quarantined"):
            with subtests.test(state=state), pytest.raises(c.InvalidRequest):
                provider.set_quarantine(item.id, state, scope=scope, deadline=DEADLINE)

        assert provider.get_item(item.id, scope=scope, deadline=DEADLINE).item.quarantine == \
            "clear"

    def test_it_answers_not_found_outside_the_scope(self, provider, scope, other_scope, put,
                                                    subtests):
        theirs = put("theirs", "facts", "a", into=other_scope)

        for item_id in (theirs.id, str(uuid.uuid4()), "../../etc/passwd"):
            with subtests.test(item_id=item_id), pytest.raises(c.NotFound):
                provider.set_quarantine(item_id, "pending", scope=scope, deadline=DEADLINE)

        assert provider.get_item(theirs.id, scope=other_scope,
                                 deadline=DEADLINE).item.quarantine == "clear"


class TestHealth:
    def test_it_reports_a_healthy_backend(self, provider):
        status = provider.health(deadline=DEADLINE)

        assert isinstance(status, c.HealthStatus)
        assert status.ok is True
        assert status.latency_ms >= 0
        assert status.checked_at.tzinfo is not None
        assert status.checked_at.utcoffset() is not None

    def test_it_never_raises_even_without_time_left(self, provider):
        status = provider.health(deadline=0)

        assert isinstance(status, c.HealthStatus)
        assert status.ok is False
        assert status.message
        assert status.latency_ms >= 0


class TestCapabilities:
    def test_it_names_only_known_operations(self, provider):
        capabilities = provider.capabilities(deadline=DEADLINE)

        assert capabilities <= c.OPERATIONS | c.FEATURES
        assert "recall" in capabilities

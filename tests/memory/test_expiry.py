"""Per-item expiry: ``expiresAt`` on the wire and in the editor, and the retention duty that
deletes expired items (frozen and held ones stay), audited."""

from __future__ import annotations

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from memadmin.audit.models import AuditEvent
from memadmin.audit.services import Actor
from memadmin.memory.models import MemoryItem
from memadmin.memory.retention import expiry_sweep
from memadmin.memory.services import FreezeSubject, memory_freeze_place
from memadmin.providers import contract as c
from memadmin.providers.registry import provider_for

pytestmark = pytest.mark.django_db
NS = ["acme", "knowledge", "alice"]
SYSTEM = Actor.system("test")
SOON = dt.datetime(2030, 1, 2, 3, 4, tzinfo=dt.UTC)


def test_the_editor_sets_and_clears_the_expiry(client_for, local_config, namespace) -> None:
    scope = c.Scope.of(namespace.partition_key)
    item_id = provider_for(local_config).retain("peers", "bob", "text", "replace",
                                                operation_id="e1", scope=scope, deadline=5).id
    nora = client_for("nora")
    url = reverse("memory:item_edit", args=[*NS, item_id])
    nora.post(url, {"content": "text", "mode": "replace", "expected_revision": "1",
                    "expires_at": "2030-01-02T03:04"})
    assert MemoryItem.objects.get(pk=item_id).expires_at == SOON
    page = nora.get(reverse("memory:item", args=[*NS, item_id])).content.decode()
    assert "2030-01-02 03:04 UTC" in page and "retention duty deletes it" in page
    assert 'value="2030-01-02T03:04"' in nora.get(url).content.decode()
    nora.post(url, {"content": "text", "mode": "replace", "expected_revision": "2",
                    "expires_at": ""})
    assert MemoryItem.objects.get(pk=item_id).expires_at is None
    assert AuditEvent.objects.filter(action="memory.edit", data__expires_at=None).exists()


def test_the_duty_deletes_expired_items_keeps_frozen_ones_and_audits(
        local_config, namespace, resource) -> None:
    provider = provider_for(local_config)
    scope = c.Scope.of(namespace.partition_key)
    past = timezone.now() - dt.timedelta(minutes=1)

    def put(key: str, expires: dt.datetime | None) -> str:
        return provider.retain("peers", key, key, "replace", operation_id=f"x-{key}",
                               expires_at=expires, scope=scope, deadline=5).id

    put("gone", past)
    kept = put("frozen", past)
    put("later", timezone.now() + dt.timedelta(days=1))
    put("never", None)
    memory_freeze_place(actor=SYSTEM, subject=FreezeSubject(resource, namespace, kept),
                        kind="freeze", reason="keep it")
    assert expiry_sweep() == {"removed": 1, "held": 1}
    assert sorted(MemoryItem.objects.values_list("key", flat=True)) == [
        "frozen", "later", "never"]
    event = AuditEvent.objects.get(action="retention.expiry")
    assert (event.data["removed"], event.data["held"]) == (1, 1)
    assert expiry_sweep() == {"removed": 0, "held": 1}  # the frozen one waits for its lift


def test_governed_stores_refuse_an_expiry_they_cannot_keep() -> None:
    from memadmin.providers.governed import _no_expiry

    _no_expiry(c.KEEP)
    with pytest.raises(c.Unsupported):
        _no_expiry(SOON)

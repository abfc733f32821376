"""``expiresAt`` on the wire: retain sets, keeps (absent) and clears (null) an item's expiry;
list answers it; a bad value is a clear invalid_request."""

from __future__ import annotations

import datetime as dt

import pytest

from memadmin.memory.models import MemoryItem

from .conftest import Api

pytestmark = pytest.mark.django_db
SOON = dt.datetime(2030, 1, 2, 3, 4, tzinfo=dt.UTC)


def test_retain_over_the_wire_sets_keeps_and_clears_the_expiry(api: Api) -> None:
    written = api.retain("short-lived", tier="peers", key="tmp", expiresAt="2030-01-02T03:04:00Z")
    item = MemoryItem.objects.get(pk=written["id"])
    assert item.expires_at == SOON
    api.retain("changed, expiry untouched", tier="peers", key="tmp")
    item.refresh_from_db()
    assert item.expires_at == SOON
    listed = api.admin("list", filters={"keyPrefix": "tm"})["items"]
    assert listed[0]["expiresAt"] == "2030-01-02T03:04:00Z"
    api.retain("now permanent", tier="peers", key="tmp", expiresAt=None)
    item.refresh_from_db()
    assert item.expires_at is None


@pytest.mark.parametrize("value", ["tomorrow", "2030-01-02T03:04:00", 5])
def test_a_bad_expiry_is_a_clear_invalid_request_and_writes_nothing(api: Api, value) -> None:
    api.admin("retain", 400, "invalid_request", request_valid=None, tier="peers", key="tmp",
              content="x", mode="replace", expiresAt=value)
    assert not MemoryItem.objects.exists()

"""The ``pii`` filter across the contract: the wire carries it both ways, a store that keeps no
labels says so instead of ignoring it."""

from __future__ import annotations

import pytest

from memadmin.providers import contract as c
from memadmin.providers import governed, wire


def test_the_wire_carries_the_filter_both_ways() -> None:
    filters = c.ItemFilters(tier="facts", pii="card")
    assert wire.filters_to_wire(filters) == {"tier": "facts", "pii": "card"}
    assert wire.filters_from_wire({"tier": "facts", "pii": "card"}) == filters


def test_a_store_without_labels_answers_unsupported() -> None:
    with pytest.raises(c.Unsupported, match="personal-data labels"):
        governed.check_filters(c.ItemFilters(pii="email"))
    assert governed.check_filters(c.ItemFilters(tier="facts")).pii is None


def test_an_unknown_type_is_invalid_request() -> None:
    from memadmin.privacy.screening import check_type

    assert check_type("iban") == "iban"
    with pytest.raises(c.InvalidRequest, match="unknown personal-data type"):
        check_type("shoe_size")

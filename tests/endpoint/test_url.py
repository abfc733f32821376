"""The endpoint's URL is tried first (the hottest path), so no other page may match it."""

from __future__ import annotations

from django.conf import settings
from django.urls import Resolver404, get_resolver, resolve

from memadmin.endpoint import views


def test_it_is_the_first_pattern_and_no_other_pattern_matches_its_path() -> None:
    patterns = get_resolver().url_patterns
    assert getattr(patterns[0], "app_name", None) == "endpoint"
    path = settings.MEMADMIN_ENDPOINT_PATH
    assert resolve(f"/{path}").func is views.endpoint
    for pattern in patterns[1:]:
        try:
            match = pattern.resolve(path)
        except Resolver404:
            match = None
        assert match is None, pattern

"""Top-level URLs: each app's urls.py under its namespace."""

from __future__ import annotations

urlpatterns: list = []

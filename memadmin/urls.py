"""Top-level URLs: each app's urls.py under its namespace."""

from __future__ import annotations

from django.urls import path

urlpatterns: list = []

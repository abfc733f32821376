from __future__ import annotations

from django.apps import AppConfig


class GdprConfig(AppConfig):
    name = "memadmin.gdpr"
    label = "gdpr"

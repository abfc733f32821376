from __future__ import annotations

from django.apps import AppConfig


class QuarantineConfig(AppConfig):
    name = "memadmin.quarantine"
    label = "quarantine"

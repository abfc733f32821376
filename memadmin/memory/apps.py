from __future__ import annotations

from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memadmin.memory"
    label = "memory"

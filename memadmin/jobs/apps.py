from __future__ import annotations

from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "memadmin.jobs"
    label = "jobs"

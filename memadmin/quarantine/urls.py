from __future__ import annotations

from django.urls import path, register_converter

from memadmin.quarantine import views

app_name = "quarantine"


class ContentHashConverter:
    """A sha256 hex digest: allow-list rows are named by the hash they hold, never by row id."""

    regex = "[0-9a-f]{64}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(ContentHashConverter, "sha256")

Q = "w/<slug:slug>/quarantine/"

urlpatterns = [
    path(Q, views.queue, name="queue"),
    path(Q + "decide/", views.decide, name="decide"),
    path(Q + "rescan/", views.job_start, {"job": "rescan"}, name="rescan"),
    path(Q + "remote-sync/", views.job_start, {"job": "remote_sync"}, name="remote_sync"),
    path(Q + "allowed/", views.allowed, name="allowed"),
    path(Q + "allowed/<sha256:content_hash>/remove/", views.allowed_remove, name="allowed_remove"),
]

from __future__ import annotations

from django.urls import path

from memadmin.quarantine import views

app_name = "quarantine"

Q = "w/<slug:slug>/quarantine/"

urlpatterns = [
    path(Q, views.queue, name="queue"),
    path(Q + "decide/", views.decide, name="decide"),
    path(Q + "rescan/", views.job_start, {"job": "rescan"}, name="rescan"),
    path(Q + "remote-sync/", views.job_start, {"job": "remote_sync"}, name="remote_sync"),
    path(Q + "allowed/", views.allowed, name="allowed"),
    path(Q + "allowed/<int:pk>/remove/", views.allowed_remove, name="allowed_remove"),
]

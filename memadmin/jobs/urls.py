from __future__ import annotations

from django.urls import path

from memadmin.jobs import views

app_name = "jobs"

urlpatterns = [
    path("w/<slug:slug>/jobs/", views.job_list, name="list"),
    path("jobs/<uuid:job_id>/", views.job_detail, name="detail"),
    path("jobs/<uuid:job_id>/cancel/", views.job_cancel_view, name="cancel"),
]

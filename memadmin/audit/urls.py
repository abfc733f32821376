from __future__ import annotations

from django.urls import path

from memadmin.audit import views

app_name = "audit"

W = "w/<slug:slug>/audit/"

urlpatterns = [
    path(W, views.audit_list, name="list"),
    path(W + "export.<str:fmt>", views.audit_export, name="export"),
    path(W + "verify/", views.audit_verify, name="verify"),
    path(W + "verify/<uuid:job_id>/", views.audit_verify_result, name="verify_result"),
]

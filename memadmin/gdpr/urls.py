from __future__ import annotations

from django.urls import path

from memadmin.gdpr import views

app_name = "gdpr"

R = "w/<slug:slug>/requests/"
ONE = R + "<uuid:request_id>/"

urlpatterns = [
    path("receipt-keys.json", views.receipt_keys, name="receipt_keys"),
    path(R, views.request_list, name="list"),
    path(R + "new/", views.request_new, name="new"),
    path(ONE, views.request_detail, name="detail"),
    path(ONE + "receipt.json", views.receipt_download, name="receipt"),
    path(ONE + "access.zip", views.access_download, name="access_download"),
    path(ONE + "submit/", views.request_submit, name="submit"),
    path(ONE + "approve/", views.request_approve, name="approve"),
    path(ONE + "deny/", views.request_deny, name="deny"),
    path(ONE + "cancel/", views.request_cancel, name="cancel"),
    path(ONE + "retry/", views.request_retry, name="retry"),
    path(ONE + "override/", views.request_override, name="override"),
    path(ONE + "preview/", views.request_preview, name="preview"),
    path(ONE + "resolve/", views.request_resolve_step, name="resolve_step"),
    path(ONE + "close/", views.request_close, name="close"),
    path(ONE + "extend/", views.request_extend, name="extend"),
    path(ONE + "items/", views.request_items, name="items"),
    path(ONE + "lift/", views.request_lift, name="lift"),
]

from __future__ import annotations

from django.urls import path

from memadmin.memory import retention_views, views

app_name = "memory"

W = "w/<slug:slug>/"
R = W + "r/<str:resource>/"
N = R + "n/<str:namespace>/"
ITEM = N + "items/<str:item_id>/"

urlpatterns = [
    path(W + "tokens/", views.token_list, name="tokens"),
    path(W + "tokens/new/", views.token_mint, name="token_mint"),
    path(W + "tokens/<uuid:token_id>/revoke/", views.token_revoke, name="token_revoke"),
    path(W + "search/", views.search, name="search"),
    path(R + "freeze/", views.freeze, name="resource_freeze"),
    path(R + "lift/", views.lift, name="resource_lift"),
    path(N + "items/", views.item_list, name="items"),
    path(N + "items-delete/", views.items_delete, name="items_delete"),
    path(N + "export.jsonl", views.export_jsonl, name="export"),
    path(N + "recall/", views.recall_preview, name="recall"),
    path(N + "freeze/", views.freeze, name="namespace_freeze"),
    path(N + "lift/", views.lift, name="namespace_lift"),
    path(ITEM, views.item_detail, name="item"),
    path(ITEM + "edit/", views.item_edit, name="item_edit"),
    path(ITEM + "restore/", views.item_restore, name="item_restore"),
    path(ITEM + "freeze/", views.freeze, name="item_freeze"),
    path(ITEM + "lift/", views.lift, name="item_lift"),
]

urlpatterns += [
    path(N + "delete-matching/", views.items_delete_matching, name="items_delete_matching"),
    path(N + "export/", views.export_start, name="export_namespace"),
    path(R + "export/", views.export_start, name="export_resource"),
    path(W + "export/", views.export_start, name="export_workspace"),
    path(W + "exports/<uuid:job_id>/download/", views.export_download, name="export_download"),
    path(W + "import/", views.import_upload, name="import"),
    path(W + "import/start/", views.import_start, name="import_start"),
]

urlpatterns += [
    path(R + "retention/", retention_views.retention_resource, name="retention_resource"),
    path(N + "retention/", retention_views.retention_namespace, name="retention_namespace"),
]

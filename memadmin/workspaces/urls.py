from __future__ import annotations

from django.urls import path

from memadmin.workspaces import views

app_name = "workspaces"

W = "w/<slug:slug>/"
R = W + "r/<str:resource>/"
N = R + "n/<str:namespace>/"

urlpatterns = [
    path("", views.workspace_list, name="list"),
    path(W, views.workspace_home, name="home"),
    path(W + "settings/", views.workspace_settings, name="settings"),
    path(W + "settings/changes/<uuid:change_id>/confirm/", views.setting_change_confirm,
         name="setting_change_confirm"),
    path(W + "settings/changes/<uuid:change_id>/cancel/", views.setting_change_cancel,
         name="setting_change_cancel"),
    path(W + "credentials/new/", views.credential_mint, name="credential_mint"),
    path(W + "credentials/<uuid:credential_id>/revoke/", views.credential_revoke,
         name="credential_revoke"),
    path(W + "alerts/new/", views.alert_add, name="alert_add"),
    path(W + "alerts/<uuid:alert_id>/remove/", views.alert_remove, name="alert_remove"),
    path(W + "alerts/<uuid:alert_id>/test/", views.alert_test, name="alert_test"),
    path(W + "metrics-tokens/new/", views.metrics_token_mint, name="metrics_token_mint"),
    path(W + "secrets/<str:kind>/<uuid:secret_id>/reactivate/", views.secret_reactivate,
         name="secret_reactivate"),
    path(W + "metrics-tokens/<uuid:token_id>/revoke/", views.metrics_token_revoke,
         name="metrics_token_revoke"),
    path(W + "members/", views.members, name="members"),
    path(W + "members/add/", views.member_add, name="member_add"),
    path(W + "members/<str:username>/roles/", views.member_roles, name="member_roles"),
    path(W + "owners/add/", views.owner_add, name="owner_add"),
    path(W + "owners/remove/", views.owner_remove, name="owner_remove"),
    path(W + "resources/new/", views.resource_create, name="resource_create"),
    path(R, views.resource_detail, name="resource"),
    path(R + "edit/", views.resource_edit, name="resource_edit"),
    path(R + "delete/", views.resource_delete, name="resource_delete"),
    path(R + "namespaces/new/", views.namespace_create, name="namespace_create"),
    path(N, views.namespace_detail, name="namespace"),
    path(N + "edit/", views.namespace_edit, name="namespace_edit"),
    path(N + "delete/", views.namespace_delete, name="namespace_delete"),
    path(N + "recount/", views.namespace_recount, name="namespace_recount"),
]

from __future__ import annotations

from django.urls import path

from memadmin.providers import status_views, views

app_name = "providers"

W = "w/<slug:slug>/providers/"

urlpatterns = [
    path(W, views.provider_list, name="list"),
    path(W + "new/", views.provider_create, name="create"),
    path(W + "<str:provider>/edit/", views.provider_edit, name="edit"),
    path(W + "<str:provider>/delete/", views.provider_delete, name="delete"),
    path(W + "<str:provider>/test/", views.provider_test, name="test"),
    path(W + "<str:provider>/check-now/", views.health_check_now, name="check_now"),
    path(W + "<str:provider>/discover/", views.provider_discover, name="discover"),
    path("w/<slug:slug>/health/", views.health_page, name="health"),
    path("w/<slug:slug>/health.json", views.health_json, name="health_json"),
    path("w/<slug:slug>/metrics", views.metrics, name="metrics"),
    path("w/<slug:slug>/health/maintenance/", status_views.maintenance_list, name="maintenance"),
    path("w/<slug:slug>/health/maintenance/new/", status_views.maintenance_add,
         name="maintenance_add"),
    path("w/<slug:slug>/health/maintenance/<uuid:window>/end/", status_views.maintenance_end,
         name="maintenance_end"),
    path("w/<slug:slug>/health/export.csv", status_views.sla_export, name="sla_export"),
    path("w/<slug:slug>/health/badges/rotate/", status_views.badge_key_rotate,
         name="badge_rotate"),
    path("w/<slug:slug>/health/providers/<str:provider>/", status_views.provider_history,
         name="history"),
    path("w/<slug:slug>/health/providers/<str:provider>/note/", status_views.incident_note,
         name="incident_note"),
    path("badge/<str:key>.svg", status_views.badge_svg, name="badge_svg"),
    path("badge/<str:key>.json", status_views.badge_json, name="badge_json"),
    path("badge/<str:key>/<str:provider>.svg", status_views.badge_svg, name="badge_provider_svg"),
    path("badge/<str:key>/<str:provider>.json", status_views.badge_json,
         name="badge_provider_json"),
]

from __future__ import annotations

from django.urls import path

from memadmin.providers import views

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
]

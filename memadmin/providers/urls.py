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
]

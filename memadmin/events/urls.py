from __future__ import annotations

from django.urls import path

from memadmin.events import views

app_name = "events"

W = "w/<slug:slug>/webhooks/"
E = W + "<uuid:endpoint_id>/"

urlpatterns = [
    path(W, views.endpoint_list, name="endpoints"),
    path(W + "new/", views.endpoint_add, name="endpoint_add"),
    path(E, views.endpoint_detail, name="endpoint"),
    path(E + "edit/", views.endpoint_edit, name="endpoint_edit"),
    path(E + "enabled/", views.endpoint_toggle, name="endpoint_toggle"),
    path(E + "test/", views.endpoint_test, name="endpoint_test"),
    path(E + "secret/", views.endpoint_rotate, name="endpoint_rotate"),
    path(E + "remove/", views.endpoint_remove, name="endpoint_remove"),
]

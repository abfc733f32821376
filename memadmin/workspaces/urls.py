from __future__ import annotations

from django.urls import path

from memadmin.workspaces import views

app_name = "workspaces"

urlpatterns = [
    path("", views.workspace_list, name="list"),
    path("w/<slug:slug>/", views.workspace_home, name="home"),
]

"""Grant or revoke a role: ``grant_role acme alice owner --namespace kb/alice``."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memadmin.audit.services import Actor
from memadmin.workspaces.models import NAMESPACE_ROLES, WORKSPACE_ROLES, Namespace, Workspace
from memadmin.workspaces.services import role_grant, role_revoke


class Command(BaseCommand):
    help = "Grant a workspace role, or the owner role on one namespace (audited)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("workspace", help="workspace slug")
        parser.add_argument("username")
        parser.add_argument("role", choices=sorted(set(WORKSPACE_ROLES) | set(NAMESPACE_ROLES)))
        parser.add_argument("--namespace", metavar="RESOURCE/NAMESPACE",
                            help="grant on one namespace instead of the whole workspace")
        parser.add_argument("--revoke", action="store_true", help="take the role back")

    def handle(self, *args: Any, **options: Any) -> None:
        workspace = Workspace.objects.filter(slug=options["workspace"]).first()
        if workspace is None:
            raise CommandError(f"no workspace {options['workspace']!r}")
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"no user {options['username']!r}")
        namespace = None
        if options["namespace"]:
            resource_slug, _, namespace_slug = options["namespace"].partition("/")
            namespace = Namespace.objects.filter(
                resource__workspace=workspace, resource__slug=resource_slug,
                slug=namespace_slug).select_related("resource").first()
            if namespace is None:
                raise CommandError(f"no namespace {options['namespace']!r} in {workspace.slug}")
        change = role_revoke if options["revoke"] else role_grant
        try:
            change(actor=Actor.system("manage.py grant_role"), workspace=workspace, user=user,
                   role=options["role"], namespace=namespace)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        where = f"namespace {options['namespace']}" if namespace else f"workspace {workspace.slug}"
        verb = "revoked from" if options["revoke"] else "granted to"
        self.stdout.write(f"{options['role']} on {where} {verb} {user.get_username()}")

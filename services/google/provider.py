"""The workspace toolset on Google: credentials, one shared client, a backend per enabled service."""

from __future__ import annotations

from types import MappingProxyType

from gateway.catalog import Catalog
from gateway.errors import UserError
from gateway.toolset import ProviderOptions, Toolset

from ..backends import CalendarBackend, MailBackend, PrincipalWorkspace, TasksBackend, WorkspaceSettings
from .calendar import GoogleCalendar
from .client import GoogleClient, authorized_http
from .credentials import GMAIL_FULL, GoogleOptions, load_credentials
from .mail import GoogleMail
from .principals import OAuthClient, PerPrincipalGoogle
from .tasks import GoogleTasks


def provide_google(options: ProviderOptions, *, catalog: Catalog, settings: WorkspaceSettings) -> Toolset:
    """The toolset for `backend = "google"`, configured by `options.extra["google"]`.

    Credentials are loaded now, so a missing token fails at startup; each API is built on first use.

    Raises:
        UserError: bad `[google]` settings or unusable credentials, saying how to fix them.
    """
    google = GoogleOptions.parse(options.extra.get("google"), data_dir=options.data_dir)
    if google.per_principal:
        return per_principal_toolset(options, google, catalog=catalog, settings=settings)
    credentials, after_request = load_credentials(google)
    client = GoogleClient(authorized_http(credentials), after_request=after_request)
    return google_toolset(client, google, catalog=catalog, settings=settings)


def per_principal_toolset(
    options: ProviderOptions, google: GoogleOptions, *, catalog: Catalog, settings: WorkspaceSettings
) -> Toolset:
    """Each caller's own Google account (`[google] per_principal`): no operator's token is loaded,
    and no shared backend is registered, so a call can only ever use its caller's own grant.

    Raises:
        UserError: no vault, or no OAuth client file to refresh the grants with.
    """
    grants = options.extra.get("vault")
    if grants is None:
        raise UserError("[google] per_principal needs the vault: set its keys (docs/security.md, the vault)")
    if google.client_secrets is None:
        raise UserError(
            "[google] per_principal needs client_secrets: the OAuth client each person's grant is for"
        )
    router = PerPrincipalGoogle(google, grants, OAuthClient.from_file(google.client_secrets), settings)
    return _enabled(catalog, google, {WorkspaceSettings: settings, PrincipalWorkspace: router})


def google_toolset(
    client: GoogleClient, google: GoogleOptions, *, catalog: Catalog, settings: WorkspaceSettings
) -> Toolset:
    """The tools of the enabled services, with their Google backends as resources."""
    resources: dict[type, object] = {WorkspaceSettings: settings}
    if "calendar" in google.services:
        resources[CalendarBackend] = GoogleCalendar(
            client, timezone=settings.timezone, send_updates=google.send_updates
        )
    if "gmail" in google.services:
        resources[MailBackend] = GoogleMail(client, allow_delete=GMAIL_FULL in google.scopes)
    if "tasks" in google.services:
        resources[TasksBackend] = GoogleTasks(client)
    return _enabled(catalog, google, resources)


def _enabled(catalog: Catalog, google: GoogleOptions, resources: dict[type, object]) -> Toolset:
    """The tools of the enabled services, with `resources`."""
    if {d.category for d in catalog} <= set(google.services):
        enabled = catalog
    else:
        enabled = Catalog([d for d in catalog if d.category in google.services])
    return Toolset(catalog=enabled, resources=MappingProxyType(resources))

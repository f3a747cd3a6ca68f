"""The workspace toolset on Google: credentials, one shared client, a backend per enabled service."""

from __future__ import annotations

from types import MappingProxyType

from gateway.catalog import Catalog
from gateway.toolset import ProviderOptions, Toolset

from ..backends import CalendarBackend, MailBackend, TasksBackend, WorkspaceSettings
from .calendar import GoogleCalendar
from .client import GoogleClient, authorized_http
from .credentials import GMAIL_FULL, GoogleOptions, authorize, load_credentials
from .mail import GoogleMail
from .tasks import GoogleTasks


def provide_google(options: ProviderOptions, *, catalog: Catalog, settings: WorkspaceSettings) -> Toolset:
    """The toolset for `backend = "google"`, configured by `options.extra["google"]`.

    Credentials are loaded now, so a missing token fails at startup; each API is built on first use.

    Raises:
        UserError: bad `[google]` settings or unusable credentials, saying how to fix them.
    """
    google = GoogleOptions.parse(options.extra.get("google"), data_dir=options.data_dir)
    credentials, after_request = load_credentials(google)
    client = GoogleClient(authorized_http(credentials), after_request=after_request)
    return google_toolset(client, google, catalog=catalog, settings=settings)


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
    if {d.category for d in catalog} <= set(google.services):
        enabled = catalog
    else:
        enabled = Catalog([d for d in catalog if d.category in google.services])
    return Toolset(catalog=enabled, resources=MappingProxyType(resources))


def authorize_command(options: ProviderOptions, *, open_browser: bool = True) -> str:
    """`gateway auth google`: run the installed-app OAuth flow for `options.extra["google"]`.

    Registered under the `metatool_gateway.auth` entry points, so the gateway finds it without
    importing this package by name.
    """
    google = GoogleOptions.parse(options.extra.get("google"), data_dir=options.data_dir)
    if "google-apis" in options.extra.get("catalogs", ()):  # the served APIs' scopes too
        from services.google_apis.provider import CatalogOptions, sign_in_scopes

        catalog = CatalogOptions.parse(options.extra.get("google_apis"))
        google = google.with_scopes(
            sign_in_scopes(catalog, allow_permanent_delete=google.allow_permanent_delete)
        )
    return authorize(google, open_browser=open_browser)

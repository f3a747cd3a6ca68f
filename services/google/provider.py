"""The workspace toolset on Google: credentials, one shared client, a backend per enabled service."""

from __future__ import annotations

from types import MappingProxyType

from gateway.catalog import Catalog
from gateway.toolset import ProviderOptions, Toolset

from ..backends import CalendarBackend, MailBackend, TasksBackend, WorkspaceSettings
from .calendar import GoogleCalendar
from .client import GoogleClient, authorized_http
from .credentials import GMAIL_FULL, GoogleOptions, load_credentials
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

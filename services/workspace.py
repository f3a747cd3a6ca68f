"""The workspace catalog (Calendar, Gmail, Tasks) and its provider, `provide(options) -> Toolset`.

The catalog is built once, at import, from the decorated tool functions; `provide` opens the local
workspace file (backend "local", the default) or connects to Google (backend "google", imported only
then), and hands the backends to the gateway as resources. The gateway finds `provide` through the
`metatool_gateway.catalogs` entry point named "workspace".
"""

from __future__ import annotations

from datetime import UTC, datetime
from types import MappingProxyType

from gateway.catalog import Catalog
from gateway.errors import UserError
from gateway.toolset import ProviderOptions, Toolset

from .backends import CalendarBackend, MailBackend, TasksBackend, WorkspaceSettings
from .dates import zone_of
from .local.calendar import LocalCalendar
from .local.demo import seed_demo
from .local.mail import LocalMail
from .local.store import FILE_NAME, LocalStore
from .local.tasks import LocalTasks
from .tools import calendar, gmail, tasks

CATALOG = Catalog(
    [
        calendar.calendar_list_calendars,
        calendar.calendar_list_events,
        calendar.calendar_get_event,
        calendar.calendar_create_event,
        calendar.calendar_update_event,
        calendar.calendar_delete_event,
        calendar.calendar_find_free_time,
        calendar.calendar_quick_add,
        gmail.gmail_search_messages,
        gmail.gmail_read_message,
        gmail.gmail_send_message,
        gmail.gmail_create_draft,
        gmail.gmail_send_draft,
        gmail.gmail_reply,
        gmail.gmail_mark_read,
        gmail.gmail_modify_labels,
        gmail.gmail_archive,
        gmail.gmail_trash_message,
        gmail.gmail_delete_message,
        gmail.gmail_list_labels,
        tasks.tasks_list_tasklists,
        tasks.tasks_list_tasks,
        tasks.tasks_create_task,
        tasks.tasks_update_task,
        tasks.tasks_complete_task,
        tasks.tasks_delete_task,
        tasks.tasks_clear_completed,
    ]
)
BY_CATEGORY = CATALOG.by_category
BY_ACTION = CATALOG.by_action
BY_NAME = CATALOG.by_name

BACKENDS = ("local", "google")


def _system_clock() -> datetime:
    return datetime.now(UTC)


def provide(options: ProviderOptions) -> Toolset:
    """Open the workspace in `options.data_dir` and return its catalog with the backends as resources.

    A fresh, empty workspace gets the demo data when `options.seed_demo` is set. `options.clock`
    (default: the system clock) dates everything the workspace writes and every "today" the tools read.
    With `options.backend == "google"` the same tools run on Google Calendar, Gmail and Tasks, configured
    by `options.extra["google"]` (docs/google.md); the local file is not touched.

    Raises:
        UserError: an unknown backend or timezone, a workspace file written by a newer version, or
            unusable Google settings or credentials.
    """
    if options.backend not in BACKENDS:
        raise UserError(f"backend {options.backend!r} is not available; use one of: {', '.join(BACKENDS)}")
    zone = zone_of(options.timezone)  # fail now, at startup, on a misspelt timezone
    settings = WorkspaceSettings(timezone=options.timezone, clock=options.clock or _system_clock)
    if options.backend == "google":
        try:
            # Imported here, so the Google libraries load only for the Google backend.
            from .google.provider import provide_google
        except ImportError as exc:
            raise UserError(
                f"the Google backend needs the google extra: pip install 'metatool-gateway[google]' ({exc.name})"
            ) from None
        return provide_google(options, catalog=CATALOG, settings=settings)
    # The store reads the same clock through the settings, so a naive reading means the same everywhere.
    store = LocalStore(options.data_dir / FILE_NAME, clock=settings.now)
    if options.seed_demo:
        seed_demo(store, zone=zone)
    resources: dict[type, object] = {
        CalendarBackend: LocalCalendar(store, timezone=options.timezone),
        MailBackend: LocalMail(store, timezone=options.timezone),
        TasksBackend: LocalTasks(store),
        WorkspaceSettings: settings,
    }
    return Toolset(catalog=CATALOG, resources=MappingProxyType(resources), close=store.close)

"""Shared fixtures: a workspace on a real SQLite file in tmp_path, read through a fixed, movable clock."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, cast
from zoneinfo import ZoneInfo

import pytest

from gateway.context import ToolContext
from gateway.toolset import ProviderOptions, Toolset
from services.backends import CalendarBackend, MailBackend, OutgoingMessage, TasksBackend
from services.local.mail import insert_message
from services.local.store import FILE_NAME, LocalStore
from services.workspace import CATALOG, provide

BERLIN = ZoneInfo("Europe/Berlin")
WEDNESDAY_10AM = datetime(2025, 3, 5, 10, 0, tzinfo=BERLIN)
"""The default 'now' of workspace tests: a Wednesday morning, weeks away from any DST change."""


@dataclass
class Clock:
    """A clock that says what the test tells it to."""

    now: datetime

    def __call__(self) -> datetime:
        return self.now

    def advance(self, delta: timedelta) -> None:
        self.now += delta


@dataclass
class Workspace:
    """A provided toolset plus a context, calling tools the way the gateway does: validate, then handle."""

    toolset: Toolset
    clock: Clock
    data_dir: Path
    ctx: ToolContext = field(init=False)

    def __post_init__(self) -> None:
        self.ctx = ToolContext(resources=self.toolset.resources)

    def call(self, name: str, **arguments: Any) -> Any:
        definition = CATALOG.by_name[name]
        return definition.handler(definition.model.model_validate(arguments), self.ctx)

    @property
    def calendar(self) -> CalendarBackend:
        return cast(CalendarBackend, self.toolset.resources[CalendarBackend])

    @property
    def mail(self) -> MailBackend:
        return cast(MailBackend, self.toolset.resources[MailBackend])

    @property
    def tasks(self) -> TasksBackend:
        return cast(TasksBackend, self.toolset.resources[TasksBackend])

    def deliver(
        self,
        sender: str,
        subject: str,
        body: str = "",
        *,
        to: list[str] | None = None,
        cc: list[str] | None = None,
        hours_ago: float = 1,
    ) -> str:
        """Put an incoming, unread message in the inbox (the tools can only send), through the real file."""
        store = LocalStore(self.data_dir / FILE_NAME, clock=self.clock)
        message = OutgoingMessage(
            to=to if to is not None else [store.owner], cc=cc or [], subject=subject, body=body
        )
        with store.write() as conn:
            return insert_message(
                conn,
                message,
                sender=sender,
                date=self.clock() - timedelta(hours=hours_ago),
                labels=["INBOX", "UNREAD"],
            )


MakeWorkspace = Callable[..., Workspace]


@pytest.fixture
def make_workspace(tmp_path: Path) -> Iterator[MakeWorkspace]:
    opened: list[Workspace] = []

    def make(
        *,
        now: datetime = WEDNESDAY_10AM,
        timezone: str = "Europe/Berlin",
        seed_demo: bool = False,
        data_dir: Path | None = None,
    ) -> Workspace:
        clock = Clock(now)
        directory = data_dir or tmp_path / "data"
        options = ProviderOptions(data_dir=directory, timezone=timezone, seed_demo=seed_demo, clock=clock)
        workspace = Workspace(provide(options), clock, directory)
        opened.append(workspace)
        return workspace

    yield make
    for workspace in opened:
        if workspace.toolset.close is not None:
            workspace.toolset.close()


@pytest.fixture
def workspace(make_workspace: MakeWorkspace) -> Workspace:
    """An empty workspace (no demo data) in Europe/Berlin, at Wednesday 2025-03-05 10:00."""
    return make_workspace()

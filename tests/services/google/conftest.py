"""A scripted Google: the real client, its shipped discovery documents, and `HttpMockSequence` answers.

`Google` queues recorded-shape responses and records every request as method, path, query and body,
so tests assert exactly what went over the wire. Retries never sleep: the backoff delays are recorded.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from email import message_from_bytes
from email.message import Message
from email.policy import default as default_policy
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from googleapiclient.http import HttpMockSequence

from gateway.context import ToolContext
from gateway.toolset import Toolset
from services.backends import WorkspaceSettings
from services.google.client import GoogleClient
from services.google.credentials import GoogleOptions
from services.google.provider import google_toolset
from services.workspace import CATALOG

from ..conftest import WEDNESDAY_10AM, Clock


@dataclass(frozen=True)
class Sent:
    """One request as it went out."""

    method: str
    host: str
    path: str
    query: dict[str, list[str]]
    body: Any
    headers: dict[str, str]

    def q(self, name: str) -> str:
        (value,) = self.query[name]
        return value

    @property
    def mime(self) -> Message:
        """The MIME message in a Gmail `raw` body (or a draft's message)."""
        holder = self.body.get("message", self.body)
        return message_from_bytes(base64.urlsafe_b64decode(holder["raw"]), policy=default_policy)


@dataclass
class Google:
    """Queues answers for, and records requests from, one `GoogleClient`."""

    responses: list[tuple[dict[str, str], str]] = field(default_factory=list)
    sleeps: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.http = HttpMockSequence(self.responses)  # pops from our list, so answers can be queued later
        self.client = GoogleClient(lambda: self.http, sleep=self.sleeps.append, rand=lambda: 1.0)

    def reply(self, body: Any = None, *, status: int = 200, headers: dict[str, str] | None = None) -> Google:
        text = "" if body is None else json.dumps(body)
        self.responses.append(({"status": str(status), **(headers or {})}, text))
        return self

    def empty(self) -> Google:
        """A 204, as Google answers a delete."""
        return self.reply(status=204)

    def fail(self, status: int, reason: str = "", message: str = "", **extra: Any) -> Google:
        errors = [{"reason": reason, "message": message, **extra}] if reason else []
        return self.reply({"error": {"code": status, "message": message, "errors": errors}}, status=status)

    @property
    def sent(self) -> list[Sent]:
        found = []
        for uri, method, body, headers in self.http.request_sequence:
            parts = urlsplit(uri)
            query = {k: v for k, v in parse_qs(parts.query).items() if k != "alt"}
            found.append(
                Sent(method, parts.netloc, parts.path, query, json.loads(body) if body else None, headers)
            )
        return found

    def only(self) -> Sent:
        (request,) = self.sent
        return request

    def pending(self) -> int:
        return len(self.responses)


@dataclass
class GoogleWorkspace:
    """The workspace tools on Google backends, called as the gateway calls them: validate, then handle."""

    google: Google
    toolset: Toolset
    clock: Clock

    def call(self, name: str, **arguments: Any) -> Any:
        definition = self.toolset.catalog.by_name[name]
        ctx = ToolContext(resources=self.toolset.resources)
        return definition.handler(definition.params.model_validate(arguments), ctx)


MakeGoogleWorkspace = Callable[..., GoogleWorkspace]


@pytest.fixture
def google() -> Google:
    return Google()


@pytest.fixture
def make_google_workspace(google: Google) -> MakeGoogleWorkspace:
    def make(*, now: datetime = WEDNESDAY_10AM, **options: Any) -> GoogleWorkspace:
        clock = Clock(now)
        settings = WorkspaceSettings(timezone="Europe/Berlin", clock=clock)
        parsed = GoogleOptions.model_validate(options)
        toolset = google_toolset(google.client, parsed, catalog=CATALOG, settings=settings)
        return GoogleWorkspace(google, toolset, clock)

    return make


@pytest.fixture
def gws(make_google_workspace: MakeGoogleWorkspace) -> GoogleWorkspace:
    """Calendar, Gmail and Tasks on a scripted Google, in Europe/Berlin at Wednesday 2025-03-05 10:00."""
    return make_google_workspace()


def rfc3339_ms(moment: datetime) -> int:
    """Gmail's internalDate: milliseconds since the epoch."""
    return int(moment.timestamp() * 1000)

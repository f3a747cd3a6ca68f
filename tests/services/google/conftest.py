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
from email.message import EmailMessage, Message
from email.policy import default as default_policy
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from googleapiclient.http import HttpMockSequence  # type: ignore[import-untyped]  # ships no stubs

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
    def mime(self) -> EmailMessage:
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

    def batch(self, answers: dict[str, Any]) -> Google:
        """One batch response: a part per request id, a body (200) or (status, body), as Google writes it."""
        parts = []
        for request_id, answer in answers.items():
            status, body = answer if isinstance(answer, tuple) else (200, answer)
            parts.append(
                f"--{_BOUNDARY}\r\nContent-Type: application/http\r\nContent-ID: <response-b + {request_id}>\r\n\r\n"
                f"HTTP/1.1 {status} OK\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{json.dumps(body)}\r\n"
            )
        headers = {"status": "200", "content-type": f"multipart/mixed; boundary={_BOUNDARY}"}
        self.responses.append((headers, "".join(parts) + f"--{_BOUNDARY}--\r\n"))
        return self

    @property
    def sent(self) -> list[Sent]:
        """Every request; a batch request's body is the list of the requests inside it."""
        found = []
        for uri, method, body, headers in self.http.request_sequence:
            parts = urlsplit(uri)
            query = {k: v for k, v in parse_qs(parts.query).items() if k != "alt"}
            kind = headers.get("content-type", "")
            content = (
                _batched(kind, body)
                if kind.startswith("multipart/mixed")
                else json.loads(body)
                if body
                else None
            )
            found.append(Sent(method, parts.netloc, parts.path, query, content, headers))
        return found

    def only(self) -> Sent:
        (request,) = self.sent
        return request

    def pending(self) -> int:
        return len(self.responses)


_BOUNDARY = "batch_answer"


def _batched(content_type: str, body: str) -> list[Sent]:
    """The requests inside a batch request's multipart body."""
    whole = message_from_bytes(f"Content-Type: {content_type}\r\n\r\n{body}".encode())
    inner = []
    parts = whole.get_payload()
    assert isinstance(parts, list), parts  # a multipart body: its parts
    for part in parts:
        assert isinstance(part, Message), part
        text = part.get_payload()
        assert isinstance(text, str), text
        request_line, _, rest = text.partition("\n")
        method, target, _version = request_line.strip().split(" ")
        _headers, _, payload = rest.replace("\r\n", "\n").partition("\n\n")
        parts = urlsplit(target)
        query = {k: v for k, v in parse_qs(parts.query).items() if k != "alt"}
        inner.append(
            Sent(method, "", parts.path, query, json.loads(payload) if payload.strip() else None, {})
        )
    return inner


@dataclass
class GoogleWorkspace:
    """The workspace tools on Google backends, called as the gateway calls them: validate, then handle."""

    google: Google
    toolset: Toolset
    clock: Clock

    def call(self, name: str, **arguments: Any) -> Any:
        definition = self.toolset.catalog.by_name[name]
        ctx = ToolContext(resources=self.toolset.resources)
        return definition.handler(definition.model.model_validate(arguments), ctx)


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

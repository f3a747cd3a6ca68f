"""The one module that imports google-api-python-client, httplib2 and google-auth-httplib2 (all untyped).

Everything else in `services.google` calls `GoogleClient.call` with a dotted method name and keyword
parameters and gets plain JSON back, or a gateway error from `errors.py`.

- Services are built from the discovery documents the package ships (`static_discovery=True`): nothing
  is fetched at run time, and each API is built on its first use only.
- httplib2 is not thread-safe, and handlers run in worker threads: every thread gets its own `Http`
  (wrapped in `AuthorizedHttp`, which adds the bearer token and refreshes it). The built services hold
  an `Http` that refuses to be used, so a request can only go out on its thread's own.
- Retries are ours rather than the client's `num_retries`, which repeats any request on a 5xx, a sent
  email included, and sleeps for real: here a 429 or a rate-limit 403 is always retried, a 5xx or a lost
  connection only for requests that are safe to repeat, with exponential backoff and an injectable sleep.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal

import google_auth_httplib2  # type: ignore[import-untyped]
import httplib2  # type: ignore[import-untyped]
from google.auth.credentials import Credentials
from google.auth.exceptions import RefreshError, TransportError
from googleapiclient.discovery import build  # type: ignore[import-untyped]
from googleapiclient.errors import HttpError  # type: ignore[import-untyped]

from .errors import (
    Call,
    backoff,
    credentials_error,
    http_error,
    is_retryable,
    parse_failure,
    transport_error,
    unavailable,
)

Api = Literal["calendar", "gmail", "tasks"]
VERSIONS: dict[str, str] = {"calendar": "v3", "gmail": "v1", "tasks": "v1"}
ApiRef = Api | tuple[str, str]
"""A workspace API by name, or any API whose discovery document the package ships as (name, version)."""
DEFAULT_RETRIES = 4
DEFAULT_TIMEOUT_SECONDS = 60.0
BATCH_SIZE = 50
"""Parts of one batch request (Google allows 100 and advises at most 50 for Gmail)."""
_SAFE_METHODS = frozenset(("GET", "PUT", "PATCH", "DELETE"))

log = logging.getLogger("services.google")

HttpFactory = Callable[[], Any]
"""Makes the `Http` (or `HttpMockSequence`) one thread sends its requests with."""


class _NoSharedHttp:
    """The `Http` the built services hold: every request must bring its thread's own."""

    def request(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a Google request was sent without its thread's Http")


def authorized_http(
    credentials: Credentials,
    *,
    transport: HttpFactory | None = None,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
) -> HttpFactory:
    """A factory of `AuthorizedHttp` over a fresh `httplib2.Http` (or `transport()`, in tests)."""

    def make() -> Any:
        inner = transport() if transport is not None else httplib2.Http(timeout=timeout)
        return google_auth_httplib2.AuthorizedHttp(credentials, http=inner)

    return make


class GoogleClient:
    """Calls Google APIs through their discovery-built services, one `Http` per thread.

    Args:
        http: makes the `Http` of one thread (`authorized_http(...)`, or a mock in tests).
        retries: retries after the first attempt, for failures `errors.is_retryable` allows.
        sleep: waits between retries (tests pass a recorder, so nothing sleeps).
        rand: the jitter source, a float in [0, 1).
        after_request: called after every successful request (e.g. to save a refreshed token).
        on_refused: called when the credentials cannot be refreshed (a revoked grant); the error it
            returns is raised instead of the operator's `credentials_error`.
    """

    def __init__(
        self,
        http: HttpFactory,
        *,
        retries: int = DEFAULT_RETRIES,
        sleep: Callable[[float], None] = time.sleep,
        rand: Callable[[], float] = random.random,
        after_request: Callable[[], None] | None = None,
        on_refused: Callable[[], Exception | None] | None = None,
    ) -> None:
        self._http_factory = http
        self._on_refused = on_refused
        self._retries = retries
        self._sleep = sleep
        self._rand = rand
        self._after_request = after_request
        self._services: dict[ApiRef, Any] = {}
        self._lock = threading.Lock()
        self._local = threading.local()

    def call(
        self, api: ApiRef, method: str, call: Call, *, idempotent: bool | None = None, **params: Any
    ) -> Any:
        """Run one API method, e.g. `call("calendar", "events.get", c, calendarId=..., eventId=...)`.

        Args:
            api: a workspace API by name, or any shipped API as (name, version), e.g. ("drive", "v3").
            idempotent: whether repeating the request is harmless; default: by HTTP method (POST is not).

        Returns:
            The parsed JSON response ({} for an empty one).

        Raises:
            ToolInputError, ToolFailed: as `errors.http_error` and `errors.transport_error` decide.
        """
        request = self._request(api, method, params)
        safe = request.method in _SAFE_METHODS if idempotent is None else idempotent
        operation = f"{api if isinstance(api, str) else api[0]}.{method}"
        for attempt in range(self._retries + 1):
            try:
                result = request.execute(http=self.thread_http())
            except (HttpError, RefreshError, httplib2.HttpLib2Error, OSError, TransportError) as exc:
                why, retry_after = self._retry_or_raise(exc, attempt, safe, operation, call)
                self._pause(attempt + 1, operation, why, retry_after)
                continue
            if self._after_request is not None:
                self._after_request()
            return result or {}
        raise unavailable(call)  # pragma: no cover - the loop always returns or raises

    def call_each(self, api: ApiRef, method: str, call: Call, params: Sequence[dict[str, Any]]) -> list[Any]:
        """Run one read-only method once per parameter set, `BATCH_SIZE` at a time in a batch request.

        Google answers each part on its own: the parts that hit a rate limit or an outage are sent
        again (in a new batch, after the backoff), and the first part that fails otherwise raises its
        error as `call` would. A single call is sent as it is.

        Returns:
            The parsed JSON responses, in the order of `params`.
        """
        if len(params) <= 1:
            return [self.call(api, method, call, **p) for p in params]
        operation = f"{api if isinstance(api, str) else api[0]}.{method}"
        results: list[Any] = [None] * len(params)
        failed: dict[int, BaseException] = {}

        def done(request_id: str, response: Any, exception: BaseException | None) -> None:
            if exception is None:
                results[int(request_id)] = response or {}
            else:
                failed[int(request_id)] = exception

        todo = list(range(len(params)))
        for attempt in range(self._retries + 1):
            failed.clear()
            for start in range(0, len(todo), BATCH_SIZE):
                batch = self._service(api).new_batch_http_request(callback=done)
                for i in todo[start : start + BATCH_SIZE]:
                    batch.add(self._request(api, method, dict(params[i])), request_id=str(i))
                try:
                    batch.execute(http=self.thread_http())
                except (HttpError, RefreshError, httplib2.HttpLib2Error, OSError, TransportError) as exc:
                    failed.update(dict.fromkeys(todo[start : start + BATCH_SIZE], exc))
            pauses = [self._retry_or_raise(failed[i], attempt, True, operation, call) for i in sorted(failed)]
            if not pauses:
                if self._after_request is not None:
                    self._after_request()
                return results
            waits = [after for _, after in pauses if after is not None]
            self._pause(attempt + 1, operation, pauses[0][0], max(waits) if waits else None)
            todo = sorted(failed)
        raise unavailable(call)  # pragma: no cover - the loop always returns or raises

    def _retry_or_raise(
        self, exc: BaseException, attempt: int, safe: bool, operation: str, call: Call
    ) -> tuple[str, float | None]:
        """Why to send again and when (seconds Google asked for, if any), or the gateway error to raise."""
        if isinstance(exc, HttpError):
            failure = parse_failure(exc.resp.status, exc.content, dict(exc.resp))
            if attempt < self._retries and is_retryable(failure, idempotent=safe):
                return f"HTTP {failure.status}", failure.retry_after
            raise http_error(failure, call, operation=operation, idempotent=safe) from None
        if isinstance(exc, RefreshError):
            log.warning("%s %s: the credentials could not be refreshed", call.service, operation)
            instead = self._on_refused() if self._on_refused is not None else None
            raise (instead or credentials_error(call)) from None
        if safe and attempt < self._retries:
            return type(exc).__name__, None
        raise transport_error(exc, call, operation=operation, may_have_happened=not safe) from None

    def collect(
        self, api: ApiRef, method: str, call: Call, *, items: str, limit: int, page_size: int, **params: Any
    ) -> list[Any]:
        """Follow `nextPageToken` until `limit` items (or the last page) are in."""
        found: list[Any] = []
        token: str | None = None
        while len(found) < limit:
            page_params = dict(params, maxResults=min(page_size, limit - len(found)))
            if token:
                page_params["pageToken"] = token
            page = self.call(api, method, call, **page_params)
            found.extend(page.get(items, []))
            token = page.get("nextPageToken")
            if not token:
                break
        return found[:limit]

    def thread_http(self) -> Any:
        """This thread's `Http`, made on its first request."""
        http = getattr(self._local, "http", None)
        if http is None:
            http = self._local.http = self._http_factory()
        return http

    def _request(self, api: ApiRef, method: str, params: dict[str, Any]) -> Any:
        resource = self._service(api)
        *path, name = method.split(".")
        for part in path:
            resource = getattr(resource, part)()
        return getattr(resource, name)(**params)

    def _service(self, api: ApiRef) -> Any:
        with self._lock:
            service = self._services.get(api)
            if service is None:
                name, version = (api, VERSIONS[api]) if isinstance(api, str) else api
                service = build(name, version, http=_NoSharedHttp(), static_discovery=True)
                self._services[api] = service
            return service

    def _pause(self, attempt: int, operation: str, why: str, retry_after: float | None) -> None:
        delay = backoff(attempt, rand=self._rand(), retry_after=retry_after)
        log.info("%s: %s, retry %d of %d in %.1fs", operation, why, attempt, self._retries, delay)
        self._sleep(delay)

"""`/healthz` and `/readyz` of `gateway serve --transport http`, for a router's and an orchestrator's probes.

- `/healthz`: the process answers (liveness). Nothing is checked but that its loop runs.
- `/readyz`: it can serve a call now (readiness): its catalogs are loaded and its search index is
  built (a server listens only once they are, so that holds from its first answer), and every
  Redis its stores use answers a `PING`. 503 names the store that does not answer.

Both answer before the Host and Origin check: a probe comes by address (a pod's IP, a container's
name), and the answer holds nothing but those words: no tool, no address, no error text. A
`PING` runs in a worker thread, never on the event loop, bounded by the Redis client's own
timeouts, and its answer is kept for `READY_SECONDS`, so probes sent in a burst cost one round-trip.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import anyio
from starlette.types import ASGIApp, Receive, Scope, Send

from ..redis_client import redis_client, redis_failures
from ..settings.loading import Settings

PATHS = frozenset({"/healthz", "/readyz"})
READY_SECONDS = 1.0
"""How long a readiness answer is reused."""


def redis_stores(settings: Settings) -> dict[str, str]:
    """The stores kept in Redis, by their setting's name, with their URLs."""
    stores = {}
    if settings.confirmation.store == "redis":
        stores["confirmation.store"] = settings.confirmation.redis_url
    if settings.limits and settings.limiter.store == "redis":
        stores["limiter.store"] = settings.limiter.redis_url
    if settings.usage.enabled and settings.usage.store == "redis":
        stores["usage.store"] = settings.usage.redis_url
    return stores


class Readiness:
    """Whether the server can take a call: each Redis its stores use answers (checked at most once a second)."""

    def __init__(self, stores: dict[str, str], clock: Callable[[], float] = time.monotonic) -> None:
        self._clients = {name: redis_client(url, setting=name) for name, url in stores.items()}
        self._clock = clock
        self._last: tuple[float, dict[str, str]] | None = None
        self._lock = anyio.Lock()

    async def checks(self) -> dict[str, str]:
        """Each check's state: "ok", or what is wrong (a word, never an error's text)."""
        async with self._lock:
            if self._last is not None and self._clock() - self._last[0] < READY_SECONDS:
                return self._last[1]
            found = {}
            for name, client in self._clients.items():
                found[name] = await anyio.to_thread.run_sync(_ping, client)
            self._last = (self._clock(), found)
            return found


def _ping(client: Any) -> str:
    try:
        return "ok" if client.ping() else "unreachable"
    except redis_failures():
        return "unreachable"


class Health:
    """ASGI middleware answering GET (or HEAD) `/healthz` and `/readyz`; everything else goes to `app`."""

    def __init__(self, app: ASGIApp, readiness: Readiness) -> None:
        self.app = app
        self.readiness = readiness

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path") if scope["type"] == "http" else None
        if path not in PATHS or scope.get("method") not in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        body: dict[str, Any]
        if path == "/healthz":
            status, body = 200, {"status": "alive"}
        else:
            checks = await self.readiness.checks()
            ready = all(state == "ok" for state in checks.values())
            status, body = (
                (200 if ready else 503),
                {"status": "ready" if ready else "not ready", "checks": checks},
            )
        data = json.dumps(body).encode()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(data)).encode()),
            (b"cache-control", b"no-store"),
        ]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else data})

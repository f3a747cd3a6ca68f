"""The operator's side of a served gateway: `/metrics` for them (Prometheus text), and how they approve.

The operator proves it with a bearer token: the admin token (`[console] admin_token_sha256` or
`admin_token_env`), or a `[[serve.tokens]]` token whose principal has the `admin` role. Only
SHA-256 digests are held and compared, in constant time; a token is never logged or echoed.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import shlex
from collections.abc import Mapping

import anyio
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from ..admin import admin_tokens, local_token_path, uses_local_token
from ..settings.loading import Settings, default_data_dir
from ..telemetry import Telemetry
from ..telemetry.setup import INSTALL


def admin_digests(settings: Settings, environ: Mapping[str, str]) -> frozenset[str]:
    """SHA-256 hex digests of every token that makes its bearer the operator (`gateway.admin`)."""
    return frozenset(admin_tokens(settings, environ))


def is_admin(request: Request, digests: frozenset[str]) -> bool:
    """Whether the request carries `Authorization: Bearer <token>` with one of `digests`' tokens."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return False
    digest = hashlib.sha256(token.strip().encode()).hexdigest()
    found = False
    for known in digests:  # every one, so the time taken says nothing of which matched
        found |= hmac.compare_digest(known, digest)
    return found


def metrics_route(telemetry: Telemetry, settings: Settings, environ: Mapping[str, str]) -> Route:
    """`GET /metrics`: the Prometheus text, for the operator (or anyone with `[telemetry] metrics_open`).

    Raises:
        UserError: the admin token is misconfigured (see `admin_digests`).
    """
    open_ = settings.telemetry.metrics_open
    digests = admin_digests(settings, environ)
    hint = (
        f"send the token in {local_token_path(settings)} as a bearer token (no admin token is configured)"
        if uses_local_token(settings, environ)
        else "send the admin token as a bearer token"
    )

    async def metrics(request: Request) -> Response:
        if not open_ and not is_admin(request, digests):
            return PlainTextResponse(
                f"/metrics needs the operator's token: {hint}, or set [telemetry] metrics_open = true\n",
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="metrics"'},
            )
        # The pending-approvals gauge reads the confirmation store: off the event loop.
        found = await anyio.to_thread.run_sync(telemetry.metrics_text, request.headers.get("accept", ""))
        if found is None:
            return PlainTextResponse(f"metrics need the otel extra: {INSTALL}\n", status_code=404)
        body, content_type = found
        return Response(body, media_type=content_type)

    return Route("/metrics", metrics, methods=["GET"])


def sign_in_hint(settings: Settings) -> str:
    """Where the operator finds the token to sign in with, when it is the data directory's own."""
    if not uses_local_token(settings, os.environ):
        return ""
    return f" (sign in with the token in {local_token_path(settings)})"


def approval_hint(settings: Settings) -> str | None:
    """How the host approves a destructive call from another terminal (None: nothing to approve there)."""
    if settings.confirmation.mode != "host" or settings.confirmation.store == "memory":
        return None
    flag = (
        ""
        if settings.data_dir == default_data_dir()
        else f" --data-dir {shlex.quote(str(settings.data_dir))}"
    )
    return (
        f"gateway: destructive calls wait for approval: `gateway pending{flag}` lists them, "
        f"`gateway approve ID{flag}` or `gateway deny ID{flag}` answers (with this server's configuration)"
    )

"""Who is the operator of an HTTP server, and `/metrics` for them (Prometheus text).

The operator proves it with a bearer token: the admin token (`[console] admin_token_sha256` or
`admin_token_env`), or a `[[serve.tokens]]` token whose principal has the `admin` role. Only
SHA-256 digests are held and compared, in constant time; a token is never logged or echoed.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

import anyio
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from ..config import Settings
from ..errors import UserError
from ..telemetry import Telemetry
from ..telemetry.setup import INSTALL

ADMIN_ROLE = "admin"


def admin_digests(settings: Settings, environ: Mapping[str, str]) -> frozenset[str]:
    """SHA-256 hex digests of every token that makes its bearer the operator.

    Raises:
        UserError: both admin token settings are given, or a variable they name is not set.
    """
    console = settings.console
    if console.admin_token_sha256 is not None and console.admin_token_env is not None:
        raise UserError("console: give at most one of admin_token_sha256 and admin_token_env")
    digests = set()
    if console.admin_token_sha256 is not None:
        digests.add(console.admin_token_sha256)
    if console.admin_token_env is not None:
        value = environ.get(console.admin_token_env, "")
        if not value:
            raise UserError(
                f"console.admin_token_env: environment variable {console.admin_token_env} is not set"
            )
        digests.add(hashlib.sha256(value.encode()).hexdigest())
    for entry in settings.serve.tokens:
        roles = settings.principals.get(entry.principal)
        if roles is None or ADMIN_ROLE not in roles.roles:
            continue
        if entry.sha256 is not None:
            digests.add(entry.sha256)
        elif entry.env is not None and environ.get(entry.env):
            digests.add(hashlib.sha256(environ[entry.env].encode()).hexdigest())
    return frozenset(digests)


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

    async def metrics(request: Request) -> Response:
        if not open_ and not is_admin(request, digests):
            hint = (
                "send the admin token as a bearer token"
                if digests
                else "no admin token is configured: set [console] admin_token_env (or admin_token_sha256)"
            )
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

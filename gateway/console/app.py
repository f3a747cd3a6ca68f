"""The console's Starlette application: pages, their few JSON routes, and the security around them.

Every page and route needs an admin: a browser signs in on the login page and carries the session
cookie; an API client sends `Authorization: Bearer TOKEN`. Without either, a page redirects to the
login page and an API route (and any POST) answers 401. A POST from a browser session must carry
the session's CSRF token (a form field, or the `X-CSRF-Token` header), else 403. Every response
carries a Content-Security-Policy that allows scripts from this origin only (no inline script),
and the templates escape every value.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..admin import local_token_path, uses_local_token
from ..engine import Gateway
from ..settings.loading import Settings
from .auth import LOGIN_COOKIE, SESSION_COOKIE, Sessions
from .pages import Pages
from .site import Console

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]


class _SecurityHeaders:
    """Adds the security headers to every response of the wrapped application."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _ in message.get("headers", [])}
                extra = [(k, v) for k, v in _HEADERS if k not in names]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, with_headers)


Handler = Callable[[Request, str], Awaitable[Response]]


def _guard(
    console: Console, handler: Handler, *, api: bool = False, post: bool = False, active: bool = True
) -> Any:
    """`handler` behind the admin check (and the CSRF check for a POST from a browser session).

    An `active` route (a page, a decision) counts as use of a browser session and seals its cookie
    again; the approvals table's short polling does not, so an open tab left alone still goes idle.
    """

    async def endpoint(request: Request) -> Response:
        found = console.admin(request)
        if found is None:
            if api or post:
                return JSONResponse(
                    {
                        "error": "unauthorized",
                        "message": "Sign in on the console, or send an admin bearer token.",
                    },
                    status_code=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
            root = request.scope.get("root_path", "")
            target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            return RedirectResponse(f"{root}/login?next={quote(target)}", status_code=303)
        who, session = found
        if post and session is not None:
            given = request.headers.get("x-csrf-token")
            if given is None and "form" in request.headers.get("content-type", ""):
                given = str((await request.form()).get("csrf", ""))
            if not Sessions.valid(console.sessions.csrf(session), given):
                return JSONResponse(
                    {
                        "error": "csrf",
                        "message": "The form's CSRF token is missing or wrong: reload the page.",
                    },
                    status_code=403,
                )
        response = await handler(request, who)
        if active and session is not None:
            cookie = console.sessions.refresh(session)
            _cookie(response, request, SESSION_COOKIE, cookie, console.sessions.max_age(session))
        return response

    return endpoint


def _safe_next(root: str, target: str | None) -> str:
    """Where to go after signing in: a path of this console only."""
    if target and target.startswith(f"{root}/") and not target.startswith("//") and "\\" not in target:
        return target
    return f"{root}/approvals"


def console_app(
    gw: Gateway,
    settings: Settings,
    *,
    environ: Mapping[str, str] | None = None,
    clock: Callable[[], float] = time.time,
) -> ASGIApp:
    """The console for `gw`, to mount at `/console` (its templates build links from the mount path).

    Args:
        gw: the gateway whose calls the console shows and decides.
        settings: the `[console]` section and what the pages show.
        environ: where admin token variables are read (default: the process's environment).
        clock: the time sessions are measured by (injected by tests).

    Raises:
        UserError: an admin token names an environment variable that is not set.
    """
    environ = os.environ if environ is None else environ
    console = Console(gw, settings, environ, clock)
    pages = Pages(console)
    # Where the generated token is, for the login page, when no operator token is configured.
    token_file = str(local_token_path(settings)) if uses_local_token(settings, environ) else ""

    async def login_form(request: Request) -> Response:
        nonce = secrets.token_hex(16)
        response = console.render(
            request,
            "login.html",
            login_csrf=console.sessions.login_csrf(nonce),
            next=request.query_params.get("next", ""),
            configured=bool(console.tokens),
            token_file=token_file,
            failed=request.query_params.get("failed") == "1",
        )
        _cookie(response, request, LOGIN_COOKIE, nonce, 600)
        return response

    async def login(request: Request) -> Response:
        root = request.scope.get("root_path", "")
        form = await request.form()
        nonce = request.cookies.get(LOGIN_COOKIE, "")
        if not nonce or not Sessions.valid(console.sessions.login_csrf(nonce), str(form.get("csrf", ""))):
            return JSONResponse(
                {"error": "csrf", "message": "The sign-in form expired: reload the login page."},
                status_code=403,
            )
        who = console.tokens.who(str(form.get("token", "")))
        target = _safe_next(root, str(form.get("next", "")))
        if who is None:
            return RedirectResponse(
                f"{root}/login?{urlencode({'failed': '1', 'next': target})}", status_code=303
            )
        response = RedirectResponse(target, status_code=303)
        cookie = console.sessions.issue(who)
        _cookie(response, request, SESSION_COOKIE, cookie, int(console.sessions.idle_seconds))
        response.delete_cookie(LOGIN_COOKIE, path=f"{root}/")
        return response

    async def logout(request: Request, who: str) -> Response:
        root = request.scope.get("root_path", "")
        session = console.sessions.read(request.cookies.get(SESSION_COOKIE))
        if session is not None:
            console.sessions.revoke(session)
        response = RedirectResponse(f"{root}/login", status_code=303)
        response.delete_cookie(SESSION_COOKIE, path=f"{root}/")
        return response

    async def home(request: Request) -> Response:
        return RedirectResponse(f"{request.scope.get('root_path', '')}/approvals", status_code=303)

    def page(handler: Handler) -> Any:
        return _guard(console, handler)

    def poll(handler: Handler) -> Any:
        return _guard(console, handler, active=False)

    def api(handler: Handler) -> Any:
        return _guard(console, handler, api=True)

    def post(handler: Handler) -> Any:
        return _guard(console, handler, post=True)

    routes = [
        Route("/", home),
        Route("/login", login_form, methods=["GET"]),
        Route("/login", login, methods=["POST"]),
        Route("/logout", _guard(console, logout, post=True, active=False), methods=["POST"]),
        Route("/approvals", page(pages.approvals)),
        Route("/approvals/rows", poll(pages.approval_rows)),
        Route("/approvals/rules/{rule_id}/revoke", post(pages.revoke), methods=["POST"]),
        Route("/approvals/{pending_id}/{verb:str}", post(pages.decide), methods=["POST"]),
        Route("/activity", page(pages.activity)),
        Route("/activity/export.jsonl", page(pages.export)),
        Route("/activity/{offset:int}", page(pages.activity_row)),
        Route("/discovery", page(pages.discovery)),
        Route("/findability", page(pages.findability)),
        Route("/catalog", page(pages.catalog)),
        Route("/connections", page(pages.connections)),
        Route("/connections/disconnect", post(pages.disconnect), methods=["POST"]),
        Route("/catalog/tools/{name}", page(pages.tool)),
        Route("/catalog/servers/{server}/accept", post(pages.accept), methods=["POST"]),
        Route("/api/pending", api(pages.api_pending)),
        Route("/api/rules", api(pages.api_rules)),
        Route("/api/rules/{rule_id}/revoke", post(pages.revoke), methods=["POST"]),
        Route("/api/pending/{pending_id}/{verb:str}", post(pages.decide), methods=["POST"]),
        Route("/api/activity", api(pages.api_activity)),
        Mount("/static", StaticFiles(directory=Path(__file__).parent / "static"), name="static"),
    ]

    async def not_found(request: Request, exc: Exception) -> Response:
        # A page of the console, not the bare "Not Found" text, for a mistyped or stale address.
        what = "There is no console page at this address."
        return console.render(request, "missing.html", 404, page="", what=what)

    return _SecurityHeaders(Starlette(routes=routes, exception_handlers={404: not_found}))


def _cookie(response: Response, request: Request, name: str, value: str, max_age: int) -> None:
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path=f"{request.scope.get('root_path', '')}/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )

"""What every console page shares: the gateway, who may sign in, the sessions, and the templates."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse

from ..engine import Gateway
from ..rendering import shown
from ..settings.loading import Settings
from .auth import SESSION_COOKIE, AdminTokens, Session, Sessions, session_key


def _shown(value: Any) -> Any:
    """Every value a template prints, its control and bidi characters made visible."""
    if isinstance(value, Markup):  # already HTML: keep it so (escaping it again would garble it)
        return Markup(shown(value, lines=True))
    return shown(value, lines=True) if isinstance(value, str) else value


OUTCOME_WORDS = {
    "unknown": "unknown tool",
    "denied": "hidden by the policy",
    "invalid": "invalid parameters",
    "pending_confirmation": "held for approval",
    "approved": "approval redeemed",
    "declined": "declined",
    "refused": "refused",
    "executed": "ran",
    "failed": "failed",
    "approved_by_host": "approved",
    "denied_by_host": "denied",
    "limited": "over a rate limit",
    "cancelled": "cancelled",
    "attempt": "started",
    "interrupted": "interrupted",
    "rule_added": "standing approval made",
    "rule_revoked": "standing approval revoked",
    "disconnected": "account disconnected",
}
"""Each audit outcome as the activity pages say it (the filter and the export keep the codes)."""
CHANNEL_WORDS = {
    "console": "at the console",
    "terminal": "at the terminal",
    "host": "by the host program",
    "elicitation": "in the client (MCP elicitation)",
    "model": "by the model (confirmation mode model)",
    "plan": "as a write of an approved plan",
    "rule": "by a standing approval",
}


def outcome_words(status: str, decided_by: Any = None) -> str:
    """An activity row's outcome in words, with who decided: "approved at the terminal by root"."""
    words = OUTCOME_WORDS.get(status, status)
    if isinstance(decided_by, Mapping):
        channel = str(decided_by.get("channel", ""))
        words += f" {CHANNEL_WORDS.get(channel, channel)}"
        if decided_by.get("rule"):
            words += f" {decided_by['rule']}"
        if decided_by.get("operator"):
            words += f" {'made ' if channel == 'rule' else ''}by {decided_by['operator']}"
    elif decided_by:
        words += f" by {decided_by}"
    return words


class Console:
    """Who is asking, and the checks every route makes before a page does its work."""

    def __init__(
        self,
        gw: Gateway,
        settings: Settings,
        environ: Mapping[str, str],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.gw = gw
        self.settings = settings
        self.tokens = AdminTokens.from_settings(settings, environ)
        self.sessions = Sessions(
            session_key(settings, self.tokens),
            clock=clock,
            idle_seconds=settings.console.session_idle_minutes * 60,
            lifetime_seconds=settings.console.session_hours * 3600,
        )
        self.env = Environment(
            loader=PackageLoader("gateway.console", "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            # Escaping HTML leaves a bidi override (U+202E) or a control character as it is.
            finalize=_shown,
        )
        self.env.filters["when"] = self.when
        self.env.filters["outcome"] = outcome_words
        self.zone = ZoneInfo(settings.timezone)

    def when(self, moment: Any) -> str:
        """A time in the configured zone, which it names (`2026-12-02 09:14:03 CET`)."""
        if not isinstance(moment, (int, float)):
            return ""
        return datetime.fromtimestamp(moment, self.zone).strftime("%Y-%m-%d %H:%M:%S %Z")

    def admin(self, request: Request) -> tuple[str, Session | None] | None:
        """(who, their browser session or None for a bearer token), or None: no admin asks."""
        header = request.headers.get("authorization", "")
        if header[:7].lower() == "bearer ":
            who = self.tokens.who(header[7:].strip())
            return (who, None) if who is not None else None
        session = self.sessions.read(request.cookies.get(SESSION_COOKIE))
        if session is None or not self.tokens:
            return None
        return session.who, session

    def render(self, request: Request, template: str, status: int = 200, **values: Any) -> HTMLResponse:
        found = self.admin(request)
        session = found[1] if found else None
        page = self.env.get_template(template).render(
            root=request.scope.get("root_path", ""),
            zone=self.zone.key,  # the zone every time on the page is in
            who=found[0] if found else None,
            csrf=self.sessions.csrf(session) if session else "",
            **values,
        )
        return HTMLResponse(page, status_code=status)

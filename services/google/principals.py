"""Each person's own Google account behind one gateway: their calls carry their own grant, never the
operator's nor another's (`[google] per_principal`, docs/google.md).

A principal's grant (service `google`: access and refresh token, scopes, the account) is read from
the vault (`gateway.vault`) at each call, so a disconnection holds at once; the client built on it
(its discovery-built services) is kept per principal while the grant's refresh token is the same. An
access token the client refreshes is sealed back into the vault for that principal. A principal with
no grant gets `not_connected`, and nothing is sent to Google; a grant Google refuses to refresh
(revoked, expired) is forgotten and its owner told to connect again, never retried.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from google.oauth2 import credentials as user_credentials

from gateway.errors import ToolFailed, UserError
from gateway.vault.grants import Grant

from ..backends import CalendarBackend, MailBackend, TasksBackend, WorkspaceSettings
from .calendar import GoogleCalendar
from .client import GoogleClient, HttpFactory, authorized_http
from .credentials import GMAIL_FULL, GoogleOptions, signed_in
from .mail import GoogleMail
from .tasks import GoogleTasks

SERVICE = "google"
"""The vault's name for a principal's Google grant."""


class Grants(Protocol):
    """Where each principal's grant is kept (the vault)."""

    def get(self, principal: str, service: str) -> Grant | None: ...

    def put(self, grant: Grant) -> None: ...

    def delete(self, principal: str, service: str) -> bool: ...


@dataclasses.dataclass(frozen=True)
class OAuthClient:
    """The operator's OAuth client, which every principal's grant was given to (it refreshes them)."""

    client_id: str
    client_secret: str
    token_uri: str = "https://oauth2.googleapis.com/token"

    @staticmethod
    def from_file(path: Path) -> OAuthClient:
        """The client of a Google `client_secrets.json` (an "installed" or "web" client).

        Raises:
            UserError: no such file, or not a client secrets file.
        """
        try:
            data = json.loads(path.expanduser().read_text(encoding="utf-8"))
            client = data.get("installed") or data.get("web")
            return OAuthClient(
                client["client_id"], client["client_secret"], client.get("token_uri") or OAuthClient.token_uri
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            raise UserError(f"[google] client_secrets {path} is not a Google OAuth client file") from None


@dataclasses.dataclass
class _Own:
    refresh_token: str | None
    credentials: Any
    client: GoogleClient
    calendar: GoogleCalendar
    mail: GoogleMail
    tasks: GoogleTasks


def connect(
    options: GoogleOptions, grants: Grants, principal: str, *, open_browser: bool = True, run_flow: Any = None
) -> str:
    """`gateway connect google`: the installed-app OAuth flow for `principal`'s own account, its grant
    sealed in the vault (never the token file); what to tell them."""
    creds = signed_in(options, open_browser=open_browser, run_flow=run_flow)
    expires = creds.expiry.replace(tzinfo=UTC).timestamp() if getattr(creds, "expiry", None) else None
    grants.put(
        Grant(
            principal,
            SERVICE,
            account=getattr(creds, "account", None) or None,
            scopes=tuple(getattr(creds, "granted_scopes", None) or options.scopes),
            expires_at=expires,
            access_token=creds.token,
            refresh_token=creds.refresh_token,
        )
    )
    return f"connected Google for {principal}: its calls now use your own account (kept sealed in the vault)"


class PerPrincipalGoogle:
    """The Google backends of each principal, on its own grant (a `PrincipalWorkspace`)."""

    def __init__(
        self,
        google: GoogleOptions,
        grants: Grants,
        client: OAuthClient,
        settings: WorkspaceSettings,
        *,
        transport: HttpFactory | None = None,
    ) -> None:
        self.google = google
        self.grants = grants
        self.oauth = client
        self.settings = settings
        self._transport = transport
        self._own: dict[str, _Own] = {}
        self._lock = threading.Lock()

    def calendar(self, principal: str) -> CalendarBackend:
        return self._of(principal).calendar

    def mail(self, principal: str) -> MailBackend:
        return self._of(principal).mail

    def tasks(self, principal: str) -> TasksBackend:
        return self._of(principal).tasks

    def _of(self, principal: str) -> _Own:
        try:
            grant = self.grants.get(principal, SERVICE)
        except UserError as exc:  # the vault's keys do not open it: the operator's to fix
            raise ToolFailed(
                "unavailable", f"the gateway cannot open your Google grant; tell the operator ({exc})"
            ) from None
        if grant is None or not (grant.access_token or grant.refresh_token):
            with self._lock:
                self._own.pop(principal, None)  # disconnected: nothing of theirs is kept
            raise ToolFailed(
                "not_connected",
                f"{principal} has not connected a Google account: the user has to connect their own "
                "first (gateway connect google); nothing was sent",
            )
        with self._lock:
            own = self._own.get(principal)
            if own is None or own.refresh_token != grant.refresh_token:
                own = self._build(principal, grant)
                self._own[principal] = own
            elif grant.access_token and own.credentials.token != grant.access_token:
                own.credentials.token = grant.access_token  # refreshed by another replica
            return own

    def _build(self, principal: str, grant: Grant) -> _Own:
        expiry = (
            datetime.fromtimestamp(grant.expires_at, UTC).replace(tzinfo=None) if grant.expires_at else None
        )
        creds = user_credentials.Credentials(  # type: ignore[no-untyped-call]
            token=grant.access_token,
            refresh_token=grant.refresh_token,
            token_uri=self.oauth.token_uri,
            client_id=self.oauth.client_id,
            client_secret=self.oauth.client_secret,
            scopes=list(grant.scopes) or None,
            expiry=expiry,
        )
        saved = {"token": creds.token}

        def keep_refreshed() -> None:  # after each request: a refreshed token goes back to its owner
            if creds.token and creds.token != saved["token"]:
                saved["token"] = creds.token
                expires = creds.expiry.replace(tzinfo=UTC).timestamp() if creds.expiry else None
                self.grants.put(dataclasses.replace(grant, access_token=creds.token, expires_at=expires))

        def refused() -> Exception:  # revoked, or its refresh token expired: never retried, its owner told
            self.grants.delete(principal, SERVICE)
            with self._lock:
                self._own.pop(principal, None)
            return ToolFailed(
                "not_connected",
                f"Google refused the grant of {principal} (revoked, or expired): the user has to connect "
                "their account again (gateway connect google)",
            )

        client = GoogleClient(
            authorized_http(creds, transport=self._transport),
            after_request=keep_refreshed,
            on_refused=refused,
        )
        return _Own(
            grant.refresh_token,
            creds,
            client,
            GoogleCalendar(client, timezone=self.settings.timezone, send_updates=self.google.send_updates),
            GoogleMail(client, allow_delete=GMAIL_FULL in self.google.scopes),
            GoogleTasks(client),
        )

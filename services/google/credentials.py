"""Google credentials, the three ways people authenticate, with the fewest scopes the enabled tools need.

- `oauth` (default): the installed-app flow, run once by `gateway auth google`, stores a refreshable
  token file readable only by its owner (0600, written atomically); every later run loads it, the
  access token is refreshed when it expires and the refreshed token is saved back.
- `adc`: application default credentials (`GOOGLE_APPLICATION_CREDENTIALS`, `gcloud auth
  application-default login`, or the metadata server).
- `service_account`: a key file with domain-wide delegation, acting as `subject` (a Workspace user).

Nothing here logs, prints or returns a token or a client secret; errors name files, never contents.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import google.auth
import google.auth.exceptions
from google.auth.credentials import Credentials
from google.oauth2 import credentials as user_credentials
from google.oauth2 import service_account
from pydantic import BaseModel, ConfigDict, ValidationError

from gateway.errors import UserError

Mode = Literal["oauth", "adc", "service_account"]
Service = Literal["calendar", "gmail", "tasks"]
SendUpdates = Literal["all", "externalOnly", "none"]

CALENDAR_EVENTS = "https://www.googleapis.com/auth/calendar.events"
CALENDAR_LIST = "https://www.googleapis.com/auth/calendar.calendarlist.readonly"
GMAIL_MODIFY = "https://www.googleapis.com/auth/gmail.modify"
GMAIL_FULL = "https://mail.google.com/"
TASKS = "https://www.googleapis.com/auth/tasks"
TOKEN_FILE_NAME = "google-token.json"
_OWNER_ONLY = 0o600


class GoogleOptions(BaseModel):
    """The `[google]` configuration section, as the provider receives it in `ProviderOptions.extra`."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    credentials: Mode = "oauth"
    client_secrets: Path | None = None
    token_file: Path | None = None
    service_account_file: Path | None = None
    subject: str | None = None
    services: tuple[Service, ...] = ("calendar", "gmail", "tasks")
    allow_permanent_delete: bool = False
    send_updates: SendUpdates = "all"
    extra_scopes: tuple[str, ...] = ()
    """Scopes asked for beyond the services' own: what the google-apis catalog's methods need."""
    per_principal: bool = False
    """Each caller's own account, from the vault (`principals.py`); the token file is not used."""

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None, *, data_dir: Path) -> GoogleOptions:
        """Validate the section; the token file defaults to `<data_dir>/google-token.json`.

        Raises:
            UserError: an unknown key or a bad value.
        """
        try:
            options = cls.model_validate({k: v for k, v in (raw or {}).items() if v is not None})
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                for e in exc.errors(include_url=False, include_input=False)
            )
            raise UserError(f"[google] configuration: {problems}") from None
        if options.token_file is None:
            options = options.model_copy(update={"token_file": data_dir / TOKEN_FILE_NAME})
        return options

    @property
    def token_path(self) -> Path:
        assert self.token_file is not None, "parse() fills in the default"
        return self.token_file.expanduser()

    def with_scopes(self, scopes: Sequence[str]) -> GoogleOptions:
        """These options, also asking for `scopes` (the google-apis catalog's, say)."""
        added = [s for s in scopes if s not in self.extra_scopes]
        return self.model_copy(update={"extra_scopes": (*self.extra_scopes, *added)}) if added else self

    @property
    def scopes(self) -> list[str]:
        scopes = scopes_for(self.services, allow_permanent_delete=self.allow_permanent_delete)
        return scopes + [s for s in dict.fromkeys(self.extra_scopes) if s not in scopes]


def scopes_for(services: Sequence[str], *, allow_permanent_delete: bool = False) -> list[str]:
    """The fewest OAuth scopes the tools of `services` need.

    Calendar: events (read and write) and the calendar list (read). Gmail: `gmail.modify` (read, send,
    draft, label, trash); only permanent deletion needs full access (`https://mail.google.com/`), which
    replaces it when the operator allows deletion. Tasks: tasks.
    """
    scopes: list[str] = []
    if "calendar" in services:
        scopes += [CALENDAR_EVENTS, CALENDAR_LIST]
    if "gmail" in services:
        scopes.append(GMAIL_FULL if allow_permanent_delete else GMAIL_MODIFY)
    if "tasks" in services:
        scopes.append(TASKS)
    return scopes


class TokenFile:
    """The stored OAuth token: read, checked, and saved again after a refresh."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._saved: str | None = None

    def load(self, scopes: Sequence[str]) -> user_credentials.Credentials:
        """The stored credentials, if they are refreshable and were granted every scope needed.

        Raises:
            UserError: no file, a file others can read, a broken file, or missing scopes.
        """
        again = "run `gateway auth google`"
        if not self.path.is_file():
            raise UserError(f"no Google token at {self.path}; {again} first")
        if os.name == "posix" and self.path.stat().st_mode & 0o077:
            raise UserError(f"the Google token {self.path} is readable by others; chmod 600 it or {again}")
        try:
            info = json.loads(self.path.read_text(encoding="utf-8"))
            creds: user_credentials.Credentials = (
                user_credentials.Credentials.from_authorized_user_info(info)  # type: ignore[no-untyped-call]
            )
        except (ValueError, OSError):
            raise UserError(f"the Google token {self.path} cannot be read; {again}") from None
        if not creds.refresh_token:
            raise UserError(f"the Google token {self.path} cannot be refreshed; {again}")
        missing = [s for s in scopes if s not in (creds.granted_scopes or creds.scopes or ())]
        if missing:
            raise UserError(
                f"the Google token lacks access the enabled tools need ({', '.join(missing)}); {again}"
            )
        self._saved = creds.token
        return creds

    def save(self, creds: user_credentials.Credentials) -> None:
        """Write the token readable only by its owner, atomically (a reader never sees half a file)."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, _OWNER_ONLY)
        try:
            if hasattr(os, "fchmod"):
                os.fchmod(fd, _OWNER_ONLY)  # an old temporary file keeps its mode otherwise
            text: str = creds.to_json()  # type: ignore[no-untyped-call]
            os.write(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, self.path)
        self._saved = creds.token

    def save_if_refreshed(self, creds: user_credentials.Credentials) -> None:
        """Save after a request if the access token changed (it was refreshed on the way)."""
        if creds.token and creds.token != self._saved:
            self.save(creds)


def load_credentials(options: GoogleOptions) -> tuple[Credentials, Callable[[], None] | None]:
    """Credentials for the configured mode, and what to call after each request (save a refresh).

    Nothing here goes to the network, except ADC's probe of the metadata server when nothing else is
    configured; tokens are fetched or refreshed on the first request.

    Raises:
        UserError: what is missing or wrong, and how to fix it.
    """
    scopes = options.scopes
    if options.credentials == "oauth":
        store = TokenFile(options.token_path)
        creds = store.load(scopes)
        return creds, lambda: store.save_if_refreshed(creds)
    if options.credentials == "adc":
        try:
            found, _project = google.auth.default(scopes=scopes)
        except google.auth.exceptions.DefaultCredentialsError:
            raise UserError(
                "no application default credentials; run `gateway auth google` with credentials = 'oauth', "
                "set GOOGLE_APPLICATION_CREDENTIALS, or `gcloud auth application-default login --scopes="
                + ",".join(scopes)
                + "`"
            ) from None
        return found, None
    if options.service_account_file is None or not options.subject:
        raise UserError(
            "credentials = 'service_account' needs service_account_file (a key with domain-wide delegation) "
            "and subject (the user's email address) in [google]"
        )
    try:
        delegated: service_account.Credentials = service_account.Credentials.from_service_account_file(  # type: ignore[no-untyped-call]
            str(options.service_account_file.expanduser()), scopes=scopes, subject=options.subject
        )
    except (ValueError, OSError, KeyError):
        raise UserError(f"the service account key {options.service_account_file} cannot be read") from None
    return delegated, None


RunFlow = Callable[[Any, bool], Any]
"""(InstalledAppFlow, open_browser) -> credentials; the default runs a loopback server for the redirect."""


def authorize(options: GoogleOptions, *, open_browser: bool = True, run_flow: RunFlow | None = None) -> str:
    """Run the installed-app OAuth flow and store the token; returns what to tell the operator.

    Raises:
        UserError: not in oauth mode, no client secrets file, or no refresh token came back.
    """
    creds = signed_in(options, open_browser=open_browser, run_flow=run_flow)
    store = TokenFile(options.token_path)
    store.save(creds)
    return (
        f"Connected Google ({', '.join(options.services) or 'no curated services'}); the token is in "
        f'{options.token_path}, readable only by you. Use it with backend = "google" (--backend google or '
        "GATEWAY_BACKEND=google).\nScopes granted:\n" + "\n".join(f"  {s}" for s in options.scopes)
    )


def signed_in(options: GoogleOptions, *, open_browser: bool = True, run_flow: RunFlow | None = None) -> Any:
    """The credentials of the installed-app OAuth flow, checked: a refresh token, every scope asked for.

    Raises:
        UserError: not in oauth mode, no client secrets file, or no refresh token came back.
    """
    if options.credentials != "oauth":
        raise UserError(
            f"credentials = {options.credentials!r} needs no sign-in here; `gateway auth google` is for 'oauth'"
        )
    if options.client_secrets is None or not options.client_secrets.expanduser().is_file():
        raise UserError(
            "set client_secrets in [google] (or GATEWAY_GOOGLE_CLIENT_SECRETS) to the OAuth client file of a "
            "'Desktop app' client from the Google Cloud console"
        )
    from google_auth_oauthlib.flow import InstalledAppFlow  # type: ignore[import-untyped]

    try:
        flow = InstalledAppFlow.from_client_secrets_file(
            str(options.client_secrets.expanduser()), scopes=options.scopes
        )
    except ValueError:
        raise UserError(f"{options.client_secrets} is not an installed-app OAuth client file") from None
    creds = (run_flow or _run_local_server)(flow, open_browser)
    if not getattr(creds, "refresh_token", None):
        raise UserError(
            "Google sent no refresh token; remove the app's access in your Google account's security "
            "settings and run `gateway auth google` again"
        )
    granted = getattr(creds, "granted_scopes", None) or options.scopes
    refused = [s for s in options.scopes if s not in granted]
    if refused:  # Google's consent screen lets the user untick each permission
        raise UserError(
            f"access was not granted for {', '.join(refused)}; run `gateway auth google` again and allow "
            "everything asked for, or serve less ([google] services, [google_apis] apis or scopes)"
        )
    return creds


def _run_local_server(flow: Any, open_browser: bool) -> Any:
    # offline + consent: Google returns a refresh token every time, not only on the first consent.
    return flow.run_local_server(
        host="localhost",
        port=0,
        open_browser=open_browser,
        access_type="offline",
        prompt="consent",
        authorization_prompt_message="Open this address in a browser to connect the gateway to Google:\n{url}\n",
    )

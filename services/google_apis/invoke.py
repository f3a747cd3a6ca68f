"""Calling a catalog method: validated params become Google's arguments, sent by the Google backend's client.

The client (`services.google.client.GoogleClient`) is the one that imports google-api-python-client: it
builds each API from its shipped document on first use (`static_discovery=True`), gives every thread its
own `Http`, retries what is safe to retry and maps Google's errors (`services.google.errors`). Nothing
here connects before the first call: listing, searching and reading schemas need no credentials.

Scopes: a method's discovery entry lists the OAuth scopes any one of which authorises it. When the
granted scopes are known (a stored OAuth token, a service account), a method none of whose scopes was
granted is refused before anything is sent, naming the scope the operator can add
(`[google] extra_scopes`, then `gateway auth google`). Application default credentials carry whatever
gcloud or the metadata server gave them, so Google decides.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from gateway.errors import ToolFailed, UserError
from services.google.errors import Call

from .methods import MEDIA_DOWNLOAD_ONLY, Method
from .scopes import is_read_only_scope

log = logging.getLogger("services.google_apis")
_RESERVED = frozenset(("body",))
_PLACEHOLDER = re.compile(r"\{\+?([^}]+)\}")
_MAX_TEXT_RESULT = 50_000


def python_argument(key: str) -> str:
    """The name googleapiclient gives a parameter (its `key2param`): 'max-results' -> 'max_results'."""
    name = "".join(c if c.isalnum() else "_" for c in key)
    return name if key[:1].isalpha() else f"x{name}"


def python_attribute(key: str) -> str:
    """The name googleapiclient gives a resource or method (its `fix_method_name`): 'import' -> 'import_'."""
    import keyword

    name = key.replace("$", "_").replace("-", "_")
    return f"{name}_" if keyword.iskeyword(name) or name in _RESERVED else name


@dataclass(frozen=True)
class Connection:
    """A Google client and the OAuth scopes its credentials carry (None: not known here)."""

    client: Any
    """A `GoogleClient`, or anything with its `call`."""
    scopes: frozenset[str] | None


Connect = Callable[[], Connection]


def google_connection(google: Mapping[str, Any] | None, data_dir: Path) -> Connection:
    """Credentials from the `[google]` section, and a client on them (the backend's own code does both).

    Raises:
        UserError: the section or the credentials are unusable (no token yet, say).
    """
    from services.google.client import GoogleClient, authorized_http
    from services.google.credentials import GoogleOptions, load_credentials

    options = GoogleOptions.parse(google, data_dir=data_dir)
    credentials, after_request = load_credentials(options)
    scopes: frozenset[str] | None = None
    if options.credentials == "oauth":
        scopes = frozenset(getattr(credentials, "scopes", None) or options.scopes)
    elif options.credentials == "service_account":
        scopes = frozenset(options.scopes)
    return Connection(GoogleClient(authorized_http(credentials), after_request=after_request), scopes)


class Session:
    """Runs methods on one connection, made on the first call (thread-safe)."""

    def __init__(self, connect: Connect) -> None:
        self._connect = connect
        self._connection: Connection | None = None
        self._lock = threading.Lock()

    def connection(self) -> Connection:
        with self._lock:
            if self._connection is None:
                try:
                    self._connection = self._connect()
                except UserError as exc:  # the operator's to fix: logged in full, told in short
                    log.warning("google-apis: no usable Google credentials: %s", exc)
                    raise ToolFailed(
                        "permission_denied",
                        "the gateway has no usable Google credentials; the operator has to connect an account "
                        "(gateway auth google)",
                    ) from None
            return self._connection

    def call(self, method: Method, params: BaseModel) -> Any:
        """Send one method call and return Google's answer as JSON data.

        Raises:
            ToolFailed, ToolInputError: as the Google backend maps the failure, or before sending when the
                method cannot be called here (file content, a scope that was not granted).
        """
        if method.media == MEDIA_DOWNLOAD_ONLY:
            raise ToolFailed(
                "invalid",
                f"{method.name} answers with file content, which the gateway does not download; "
                "use a method that returns the item's metadata instead",
            )
        connection = self.connection()
        if connection.scopes is not None and method.scopes and connection.scopes.isdisjoint(method.scopes):
            raise ToolFailed(
                "permission_denied",
                f"the gateway's Google account has no access to {method.api.title} for this call; the operator "
                f"has to grant a scope such as {suggested_scope(method)} ([google_apis] apis and scopes, or "
                "[google] extra_scopes) and sign in again (gateway auth google --catalog google-apis)",
            )
        arguments: dict[str, Any] = params.model_dump(mode="json", exclude_none=True)
        call = Call(
            service=method.api.title,
            item=_item(method, arguments),
            fields={key: key for key in arguments if key != "body"},
        )
        kwargs = {key if key == "body" else python_argument(key): value for key, value in arguments.items()}
        attribute = ".".join(python_attribute(part) for part in method.path)
        result = connection.client.call((method.api.name, method.api.version), attribute, call, **kwargs)
        return _output(result)


def suggested_scope(method: Method) -> str:
    """The scope to name when none was granted (any one of a method's scopes authorises it): for a
    read the broadest read-only one, else the broadest one of the API itself (cloud-platform last)."""
    readonly = [s for s in method.scopes if is_read_only_scope(s)]
    pool = readonly if method.read_only and readonly else list(method.scopes)
    return min(pool, key=lambda s: (s.endswith("/cloud-platform"), len(s), s))


def _item(method: Method, arguments: Mapping[str, Any]) -> str:
    """What a 404 is about, in the method's own words: 'the events item (calendarId 'primary', ...)'."""
    resource = method.path[-2] if len(method.path) > 1 else method.api.name
    named = [f"{key} {arguments[key]!r}" for key in _PLACEHOLDER.findall(method.url) if key in arguments]
    return f"the {resource} item" + (f" ({', '.join(named)})" if named else "")


def _output(result: Any) -> Any:
    """Google's answer as JSON data: a method without a JSON response gives bytes."""
    if not isinstance(result, bytes):
        return result
    if not result:
        return {}
    try:
        return json.loads(result)
    except ValueError:
        pass
    try:
        decoded = result.decode("utf-8")
    except UnicodeDecodeError:
        return {"content_bytes": len(result), "note": "binary content is not returned"}
    return {"content": decoded[:_MAX_TEXT_RESULT], "truncated": len(decoded) > _MAX_TEXT_RESULT}

"""Sending one operation's request with httpx, and its answer made a result or a gateway error.

- A total deadline per request, from connecting to the last byte (`deadline`); a timeout is
  `timeout`, a connection failure `unavailable`.
- 429 and 503 are retried for GET, HEAD and OPTIONS only (a write may have happened), after the
  server's `Retry-After` (seconds or a date; at most `MAX_RETRY_WAIT`), else a short backoff.
- Requests go only to the origins the operator configured (`origins`): an operation's own server
  elsewhere is ignored. Redirects are followed for GET and HEAD within the same origin only
  (credentials never travel to another host); any other redirect is returned as it is.
- The answer is read up to the entry's size cap: a larger JSON answer is refused (`invalid`: ask
  for less), larger text is cut. JSON answers are returned as data, text as text, binary content by
  its size only.
- HTTP errors map onto the gateway's codes (404 not_found, 409 conflict, 401/403 permission_denied,
  400/422 invalid, 429 rate_limited with the server's Retry-After, 5xx unavailable, 408/504 timeout) with the server's own message, cleaned, cut
  and scrubbed of secrets. No URL is ever put in a message (a query API key would be in it).
"""

from __future__ import annotations

import email.utils
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

import httpx2

from ..errors import FailureCode, RateLimited, ToolFailed
from ..rendering import cut
from . import deadline, text
from .auth import Credentials
from .operations import SAFE_METHODS, Operation
from .origins import Origins, origin
from .request import Parts

MAX_RETRY_WAIT = 30.0
"""A Retry-After longer than this is not waited for: the call fails as unavailable, saying when."""
MAX_SAID_WAIT = 86_400.0
"""A Retry-After past a day is read as a day: it comes from outside, and the model is told it."""
MAX_REDIRECTS = 5
_TEXT_TYPES = ("text/", "application/xml", "application/javascript", "application/x-yaml")
_STATUS: dict[int, FailureCode] = {
    400: "invalid",
    401: "permission_denied",
    403: "permission_denied",
    404: "not_found",
    405: "invalid",
    408: "timeout",
    409: "conflict",
    410: "not_found",
    412: "conflict",
    413: "invalid",
    415: "invalid",
    422: "invalid",
    429: "rate_limited",
    501: "invalid",
    504: "timeout",
}


@dataclass(frozen=True)
class Target:
    """Where and how one entry's requests go."""

    entry: str
    title: str
    base_url: str | None
    timeout: float
    retries: int
    max_response_bytes: int
    allowed_servers: tuple[str, ...] = ()
    """Servers besides the base URL's origin that requests (with credentials) may go to."""


class Client:
    """Sends requests for one entry; one connection pool shared by the worker threads."""

    def __init__(
        self,
        target: Target,
        credentials: Credentials,
        *,
        transport: httpx2.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.target = target
        self.credentials = credentials
        self.origins = Origins(target.base_url, target.allowed_servers)
        self._transport = transport
        self._sleep = sleep
        self._http: httpx2.Client | None = None
        self._lock = threading.Lock()

    def http(self) -> httpx2.Client:
        with self._lock:
            if self._http is None:
                self._http = httpx2.Client(
                    timeout=self.target.timeout,
                    follow_redirects=False,
                    transport=self._transport or deadline.transport(),
                    headers={"User-Agent": "metatool-gateway"},
                    trust_env=False,
                )
            return self._http

    def close(self) -> None:
        with self._lock:
            if self._http is not None:
                self._http.close()
                self._http = None

    def token_request(self, url: str, form: dict[str, str], basic: tuple[str, str]) -> Any:
        """POST an OAuth 2 token request; the answer's JSON."""
        try:
            with deadline.within(self.target.timeout):
                response = self.http().post(
                    url, data=form, auth=basic, headers={"Accept": "application/json"}
                )
        except httpx2.HTTPError as exc:
            raise ToolFailed(
                "unavailable",
                f"could not reach the token endpoint of {self.target.entry} ({type(exc).__name__})",
            ) from None
        if response.status_code != 200:
            raise ToolFailed(
                "permission_denied",
                f"the token endpoint of {self.target.entry} answered {response.status_code}; the operator has to "
                "check the client credentials",
            )
        try:
            return response.json()
        except ValueError:
            return None

    def base(self, op: Operation) -> str:
        """The operation's own server when it is on an allowed origin, else the entry's base URL."""
        base = self.target.base_url
        if op.server:
            own = urljoin(f"{base.rstrip('/')}/", op.server) if base else op.server
            if self.origins.admits(own):
                base = own
        if not base or not self.origins.admits(base):
            raise ToolFailed(
                "unavailable",
                f"the gateway has no base URL for {self.target.entry}; the operator has to set base_url",
            )
        return base.rstrip("/")

    def send(self, op: Operation, parts: Parts, principal: str | None = None) -> Any:
        """Send the request, with `principal`'s own credentials where the entry takes each caller's,
        and return the answer as data.

        Raises:
            ToolFailed: every failure, mapped (see the module's docstring).
        """
        if "{" in parts.path:
            raise ToolFailed(
                "invalid",
                f"the API description of {self.target.entry} leaves a path parameter of this operation undescribed",
            )
        url = self.base(op) + parts.path
        if not self.origins.admits(url):  # a crafted path: 'http://api.test' + '@elsewhere.test/'
            raise ToolFailed(
                "invalid",
                f"the API description of {self.target.entry} puts this operation outside the API's server",
            )
        refreshed = False
        attempt = 0
        while True:
            headers = {"Accept": "application/json, */*;q=0.5", **parts.headers}
            query, cookies = list(parts.query), dict(parts.cookies)
            self.credentials.apply(headers, query, cookies, principal)
            status, response_headers, body, truncated = self._exchange(
                op, url=url, parts=parts, headers=headers, query=query, cookies=cookies
            )
            if status == 401 and self.credentials.refreshable and not refreshed:
                self.credentials.invalidate()
                refreshed = True
                continue
            if status in (429, 503) and op.method in SAFE_METHODS and attempt < self.target.retries:
                wait = retry_after(response_headers.get("retry-after"), attempt)
                if wait <= MAX_RETRY_WAIT:
                    attempt += 1
                    self._sleep(wait)
                    continue
            return self._result(op, status, response_headers, body, truncated)

    def _exchange(
        self,
        op: Operation,
        *,
        url: str,
        parts: Parts,
        headers: dict[str, str],
        query: Sequence[tuple[str, str]],
        cookies: dict[str, str],
    ) -> tuple[int, Mapping[str, str], bytes, bool]:
        kwargs: dict[str, Any] = {}
        if parts.has_body:
            if parts.form_body is not None:
                kwargs["content"] = str(httpx2.QueryParams(list[tuple[str, Any]](parts.form_body))).encode()
            elif parts.text_body is not None:
                kwargs["content"] = parts.text_body.encode()
            else:
                kwargs["content"] = json.dumps(parts.json_body, ensure_ascii=False).encode()
            headers["Content-Type"] = parts.content_type or "application/json"
        if cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
        try:
            with deadline.within(self.target.timeout):
                return self._follow(op, url, query, headers, kwargs)
        except httpx2.TimeoutException:
            raise ToolFailed(
                "timeout", f"{self.target.title} did not answer within {self.target.timeout:g} seconds"
            ) from None
        except httpx2.HTTPError as exc:
            raise ToolFailed(
                "unavailable", f"could not reach {self.target.title} ({type(exc).__name__})"
            ) from None

    def _follow(
        self,
        op: Operation,
        url: str,
        query: Sequence[tuple[str, str]],
        headers: dict[str, str],
        kwargs: dict[str, Any],
    ) -> tuple[int, Mapping[str, str], bytes, bool]:
        """The exchange, with redirects followed within the origin."""
        here = origin(url)
        for _ in range(MAX_REDIRECTS + 1):
            with self.http().stream(
                op.method, url, params=list[tuple[str, Any]](query), headers=headers, **kwargs
            ) as response:
                location = response.headers.get("location")
                if (
                    response.status_code in (301, 302, 303, 307, 308)
                    and op.method in ("GET", "HEAD")
                    and location
                ):
                    following = urljoin(url, location)
                    if origin(following) == here:  # credentials never follow to another origin
                        url, query = following, []
                        continue
                body, truncated = self._read(response)
                return response.status_code, response.headers, body, truncated
        raise ToolFailed("unavailable", f"{self.target.title} redirected too many times")

    def _read(self, response: httpx2.Response) -> tuple[bytes, bool]:
        cap = self.target.max_response_bytes
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size > cap:
                return b"".join(chunks)[:cap], True
        return b"".join(chunks), False

    def _result(
        self, op: Operation, status: int, headers: Mapping[str, str], body: bytes, truncated: bool
    ) -> Any:
        scrub = self.credentials.scrub
        if status >= 400 or (300 <= status < 400 and status != 304 and op.method not in ("GET", "HEAD")):
            if status < 400:
                return {"status": status, "location": scrub(text.strip_unsafe(headers.get("location", "")))}
            message = scrub(self._message(status, headers, body))
            if status == 429:  # the API's own limit: the model is told when to try again, if it said
                said = headers.get("retry-after")
                raise RateLimited(message, retry_after=retry_after(said, 0) if said else None)
            raise ToolFailed(_code(status), message)
        if 300 <= status < 400:
            return {"status": status, "location": scrub(text.strip_unsafe(headers.get("location", "")))}
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        if not body:
            return {"status": status}
        if content_type.endswith("json") or content_type.endswith("+json") or not content_type:
            if truncated:
                raise ToolFailed(
                    "invalid",
                    f"the answer is larger than {self.target.max_response_bytes:,} bytes; ask for less "
                    "(a filter, a smaller page size, fewer fields)",
                )
            try:
                return scrub(json.loads(body))
            except ValueError:
                if content_type.endswith("json"):
                    raise ToolFailed("internal", f"{self.target.title} answered with broken JSON") from None
        if content_type.startswith(_TEXT_TYPES) or not content_type:
            try:
                decoded = body.decode("utf-8")
            except UnicodeDecodeError:
                decoded = None
            if decoded is not None:
                out: dict[str, Any] = {"status": status, "content_type": content_type or "unknown"}
                out["text"] = scrub(decoded)
                if truncated:
                    out["truncated"] = True
                return out
        return {
            "status": status,
            "content_type": content_type or "unknown",
            "content_bytes": len(body),
            "note": "binary content is not returned",
        }

    def _message(self, status: int, headers: Mapping[str, str], body: bytes) -> str:
        reason = httpx2.codes.get_reason_phrase(status)
        said = _server_message(body)
        out = f"{self.target.title} answered {status} {reason}".strip()
        if said:
            out += f": {said}"
        if status == 401:
            out += f". The gateway's credentials for {self.target.entry} were refused; the operator has to check them"
        if status in {429, 503}:
            wait = (headers.get("retry-after") or "").strip()
            if wait.isascii() and wait.isdigit():
                out += f". Try again in {int(retry_after(wait, 0))} seconds"
        return out


def _code(status: int) -> FailureCode:
    if status in _STATUS:
        return _STATUS[status]
    return "unavailable" if status >= 500 else "invalid"


def _server_message(body: bytes) -> str:
    """The server's own words: a JSON error's message, else the text's first words; cleaned and cut."""
    if not body:
        return ""
    try:
        data: Any = json.loads(body[:65536])
    except ValueError:
        return cut(text.clean(body[:4096].decode("utf-8", "replace")), text.MAX_MESSAGE)
    said = ""
    for _ in range(3):  # {"error": {"message": ...}}
        if isinstance(data, dict):
            for key in (
                "message",
                "error_description",
                "detail",
                "error",
                "title",
                "errorMessages",
                "errors",
            ):
                if data.get(key):
                    data = data[key]
                    break
            else:
                break
        if isinstance(data, list) and data:
            data = data[0]
        if isinstance(data, str):
            said = data
            break
    return cut(text.clean(said), text.MAX_MESSAGE)


def retry_after(raw: str | None, attempt: int) -> float:
    """Seconds to wait: the header's (seconds or an HTTP date), else 1, 2, 4... seconds."""
    if raw:
        raw = raw.strip()
        if raw.isascii() and raw.isdigit():  # not "²" or other digits float() cannot read
            return min(float(raw), MAX_SAID_WAIT)  # 400 nines are infinity as a float
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError, OverflowError):
            when = None
        if when is not None:
            return min(max(0.0, when.timestamp() - time.time()), MAX_SAID_WAIT)
    return float(2**attempt)

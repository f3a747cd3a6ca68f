"""What Google's failures become: the one place `HttpError` and transport failures are mapped.

`client.py` (the only module that imports the untyped client) hands this module the status, body and
headers of an `HttpError`, or the transport exception, and raises what comes back. The three audiences:

- 400: the model can fix its arguments -> `ToolInputError` naming the tool field (Google's own parameter
  name, when it gives one, is translated through `Call.fields`).
- 404/410, 409/412: the call failed, adapt, do not retry -> `NotFound`, `Conflict`.
- 401 and 403 for credentials or scopes: the operator has to act -> `permission_denied` with a fixed text
  that names `gateway auth google`; a 403 about the item itself (not your calendar) -> `permission_denied`.
- 429, 403 rate limits, 5xx and transport failures: retried with exponential backoff (`is_retryable`,
  `backoff`), then `rate_limited` (with Google's Retry-After, if it sent one) or `unavailable` ("try later").

Details (status, reason, Google's message) go to the `services.google` log, never a header or a body
field that could hold a credential; the model gets short, fixed texts.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from gateway.errors import Conflict, NotFound, RateLimited, ToolFailed, ToolInputError

log = logging.getLogger("services.google")

RATE_LIMIT_REASONS = frozenset(("rateLimitExceeded", "userRateLimitExceeded", "RESOURCE_EXHAUSTED"))
CREDENTIAL_REASONS = frozenset(
    (
        "authError",
        "unauthorized",
        "UNAUTHENTICATED",
        "insufficientPermissions",
        "ACCESS_TOKEN_SCOPE_INSUFFICIENT",
        "accessNotConfigured",
        "SERVICE_DISABLED",
        "dailyLimitExceededUnreg",
        "domainPolicy",
    )
)
BASE_DELAY_SECONDS = 1.0
MAX_DELAY_SECONDS = 32.0
_MAX_MESSAGE = 200
_SECRET_PATTERN = re.compile(r"ya29\.[\w.-]+|1//[\w.-]+|GOCSPX-[\w-]+|Bearer\s+\S+", re.I)


@dataclass(frozen=True)
class Call:
    """What a request was for, so a failure can be told in the tool's own words.

    Attributes:
        service: the product name the model knows ("Google Calendar").
        item: what a 404 means, e.g. "event 'abc' in calendar 'primary'".
        fields: Google parameter or body field -> tool field, for naming the field of a 400.
        field: the tool field a 400 is about when Google does not say.
    """

    service: str
    item: str = "the item"
    fields: Mapping[str, str] = field(default_factory=dict)
    field: str | None = None


@dataclass(frozen=True)
class Failure:
    """The parts of an `HttpError` that matter."""

    status: int
    reason: str = ""
    message: str = ""
    location: str | None = None
    retry_after: float | None = None


def parse_failure(status: int, content: bytes | str | None, headers: Mapping[str, str]) -> Failure:
    """Read Google's JSON error body (both the v1 `errors[]` and the newer `status` shapes)."""
    reason, message, location = "", "", None
    try:
        raw = content.decode("utf-8", "replace") if isinstance(content, bytes) else (content or "")
        body = json.loads(raw) if raw else {}
        error = body.get("error", {}) if isinstance(body, dict) else {}
        if isinstance(error, dict):
            message = str(error.get("message", ""))
            reason = str(error.get("status", ""))
            details = error.get("errors") or []
            if details and isinstance(details[0], dict):
                reason = str(details[0].get("reason", reason))
                location = details[0].get("location")
        elif isinstance(error, str):  # OAuth token endpoint shape: {"error": "invalid_grant"}
            reason = error
    except (ValueError, AttributeError, TypeError):
        pass
    retry_after = None
    value = {k.lower(): v for k, v in headers.items()}.get("retry-after")
    if value is not None and str(value).strip().isascii() and str(value).strip().isdigit():
        retry_after = float(value)
    return Failure(status, reason, _clean(message), location, retry_after)


def is_retryable(failure: Failure, *, idempotent: bool) -> bool:
    """429 and rate-limit 403s were refused before anything happened, so they are always retried;
    a 5xx may have happened half-way, so only requests that are safe to repeat are."""
    if failure.status == 429 or (failure.status == 403 and failure.reason in RATE_LIMIT_REASONS):
        return True
    return failure.status >= 500 and idempotent


def backoff(attempt: int, *, rand: float, retry_after: float | None = None) -> float:
    """Seconds to wait before retry number `attempt` (1, 2, ...): 1, 2, 4, ... up to 32, jittered
    to between half and all of that, and never less than the server's Retry-After."""
    delay = min(MAX_DELAY_SECONDS, BASE_DELAY_SECONDS * 2.0 ** (attempt - 1)) * (0.5 + rand / 2)
    return max(delay, min(retry_after or 0.0, MAX_DELAY_SECONDS))


def http_error(
    failure: Failure, call: Call, *, operation: str, idempotent: bool = True
) -> ToolInputError | ToolFailed:
    """The gateway error for a final (not retried, or retried out) HTTP failure.

    A 5xx on a request that is not safe to repeat may have been carried out, and the model is told so.
    """
    log.warning(
        "%s %s failed: HTTP %s %s: %s",
        call.service,
        operation,
        failure.status,
        failure.reason or "-",
        failure.message or "-",
    )
    status = failure.status
    if status == 400:
        tool_field = call.fields.get(failure.location or "", call.field)
        detail = failure.message or "the request was refused as invalid"
        if tool_field is None:
            return ToolFailed("invalid", f"{call.service} refused the request: {detail}")
        return ToolInputError(f"{call.service} refused this value: {detail}", field=tool_field)
    if status in (404, 410):
        return NotFound(f"{call.item} was not found")
    if status in (409, 412):
        return Conflict(f"{call.item} conflicts with its current state; read it again and adapt")
    if status == 401 or (status == 403 and failure.reason in CREDENTIAL_REASONS):
        return credentials_error(call)
    if (status == 403 and failure.reason in RATE_LIMIT_REASONS) or status == 429:
        # Google's own limit, past every retry: the model is told when to try again, if Google said.
        message = f"{call.service} is limiting how often this may be called; try again later"
        return RateLimited(message, retry_after=failure.retry_after)
    if status == 403:
        return ToolFailed("permission_denied", f"{call.service} does not allow this on {call.item}")
    if status >= 500:
        return unavailable(call) if idempotent else _unknown_outcome(call)
    return ToolFailed("invalid", f"{call.service} refused the request (HTTP {status})")


def transport_error(exc: BaseException, call: Call, *, operation: str, may_have_happened: bool) -> ToolFailed:
    """A request that got no answer: the network, DNS, TLS or a timeout."""
    log.warning("%s %s failed without an answer: %s", call.service, operation, type(exc).__name__)
    return _unknown_outcome(call) if may_have_happened else unavailable(call)


def unavailable(call: Call) -> ToolFailed:
    """Out of retries: quota, rate limit or an outage."""
    return ToolFailed("unavailable", f"{call.service} is busy or unavailable right now; try again later")


def _unknown_outcome(call: Call) -> ToolFailed:
    return ToolFailed(
        "unavailable",
        f"{call.service} failed part-way, so it is unknown whether this was done; check before trying again",
    )


def credentials_error(call: Call) -> ToolFailed:
    """Refused credentials or a missing scope: only the operator can fix it."""
    return ToolFailed(
        "permission_denied",
        f"the gateway's access to {call.service} was refused; the operator has to reconnect the account "
        "(gateway auth google) or grant the missing access",
    )


def _clean(message: str) -> str:
    """Google's message, cut short, with anything that looks like a credential removed."""
    text = _SECRET_PATTERN.sub("[redacted]", " ".join(message.split()))
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."

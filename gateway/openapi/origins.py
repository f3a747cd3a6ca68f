"""Where one entry's requests, and so its credentials, may go: the origins the operator configured.

An origin is a URL's scheme, host and port. Requests go to the API's own origin (the operator's
`base_url`, else the description's first server) and to the servers the operator lists in
`allowed_servers`. A `servers` entry of an operation or a path item anywhere else is ignored (the
request goes to the base URL), and a request whose final URL is elsewhere (a crafted path) is not
sent: a description cannot send the token, an API key or an approved DELETE to a host of its choice.
URLs are parsed by httpx, the parser that sends them.
"""

from __future__ import annotations

from collections.abc import Iterable

import httpx2

Origin = tuple[str, str, int]


def origin(url: str | None) -> Origin | None:
    """(scheme, host, port) of an http(s) URL with a host; None for anything else."""
    if not url:
        return None
    try:
        parsed = httpx2.URL(url)
    except (httpx2.InvalidURL, TypeError, ValueError):
        return None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        return None
    return parsed.scheme, parsed.host.lower(), parsed.port or (443 if parsed.scheme == "https" else 80)


def shown(found: Origin | None) -> str:
    """An origin as the operator writes it: `https://api.example.com:8443`."""
    if found is None:
        return "an unusable URL"
    scheme, host, port = found
    default = 443 if scheme == "https" else 80
    return f"{scheme}://{host}" + ("" if port == default else f":{port}")


class Origins:
    """The origins one entry may send requests to."""

    def __init__(self, base_url: str | None, allowed_servers: Iterable[str] = ()) -> None:
        self.api = origin(base_url)
        listed = {origin(url) for url in allowed_servers}
        self.allowed = frozenset(o for o in (self.api, *listed) if o is not None)

    def admits(self, url: str | None) -> bool:
        return origin(url) in self.allowed

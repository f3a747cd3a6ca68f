"""A total deadline on each HTTP exchange, from connecting to the answer's last byte.

httpx's timeouts bound each network operation, not the exchange: a server that sends one byte a
second never trips a 30-second read timeout, and the worker thread reads on for as long as the server
likes (while the model has long been told the call timed out). The transport made here clamps every
connect, read and write to the time left before the deadline of the exchange running in the calling
thread (`within`), and fails it as a timeout once that time is spent; httpcore then closes the
connection. Sync httpx does its network work in the calling thread, so a thread-local deadline
follows each exchange even on pooled connections.
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import httpcore2
import httpx2

_local = threading.local()


@contextmanager
def within(seconds: float) -> Iterator[None]:
    """Network work in this thread inside the block ends at most `seconds` from now."""
    previous = getattr(_local, "at", None)
    _local.at = time.monotonic() + seconds
    try:
        yield
    finally:
        _local.at = previous


def _left(timeout: float | None, expired: type[Exception]) -> float | None:
    at: float | None = getattr(_local, "at", None)
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise expired("the exchange's deadline has passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore2.NetworkStream):
    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.NetworkStream:
        left = _left(timeout, httpcore2.ConnectTimeout)
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, left))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore2.NetworkBackend):
    def __init__(self) -> None:
        self._inner = httpcore2.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        left = _left(timeout, httpcore2.ConnectTimeout)
        return _Stream(self._inner.connect_tcp(host, port, left, local_address, socket_options))

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.NetworkStream:
        left = _left(timeout, httpcore2.ConnectTimeout)
        return _Stream(self._inner.connect_unix_socket(path, left, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def transport() -> httpx2.HTTPTransport:
    """httpx's transport (no proxies from the environment), its pool on the deadline's backend."""
    made = httpx2.HTTPTransport(trust_env=False)
    limits = httpx2.Limits()
    # httpx takes no network backend; its pool is replaced before any connection is made.
    made._pool = httpcore2.ConnectionPool(
        ssl_context=httpx2.create_ssl_context(trust_env=False),
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=_Backend(),
    )
    return made

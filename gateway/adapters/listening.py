"""The listening socket of `gateway serve --transport http` and `gateway console`.

A port another process holds is the operator's to fix (another gateway, another console): it is said
in one line, with what to do, instead of the socket's traceback.
"""

from __future__ import annotations

import errno
import socket

from ..errors import UserError


def listening_socket(host: str, port: int, *, setting: str, reuse_port: bool = False) -> socket.socket:
    """A socket bound to `host`:`port` and listening; `port` 0 picks a free one.

    Args:
        host: the address to bind (an IPv6 address contains a colon).
        port: the port.
        setting: the setting that names the port, for the message (e.g. "[serve] port").
        reuse_port: share the port with the other sockets bound to it with `SO_REUSEPORT` (a
            worker of `gateway serve --workers`).

    Raises:
        UserError: the address is in use, or cannot be bound here.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, reuse_port=reuse_port)
    except OSError as exc:
        raise bind_error(exc, host, port, setting=setting) from None


def reserved_port(host: str, port: int, *, setting: str) -> socket.socket:
    """A socket bound to `host`:`port` with `SO_REUSEPORT` that never listens: the port, held for
    the workers of `gateway serve --workers` (each binds it too, and listens); `port` 0 picks one.

    Raises:
        UserError: the address is in use, or cannot be bound here.
    """
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise bind_error(exc, host, port, setting=setting) from None
    return sock


def bind_error(exc: OSError, host: str, port: int, *, setting: str) -> UserError:
    """What to tell the operator when `host`:`port` cannot be bound."""
    where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    if exc.errno == errno.EADDRINUSE:
        return UserError(
            f"{where} is already in use (another gateway serve or console?): stop it, or pass "
            f"--port with another port ({setting}; 0 picks a free one)"
        )
    return UserError(f"cannot listen on {where}: {exc.strerror or exc}")

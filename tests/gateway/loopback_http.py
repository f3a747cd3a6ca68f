"""An ASGI application served by a real uvicorn on a loopback port, in a thread, for one test.

The socket is bound and listening before uvicorn starts, so a client may connect at once: the
connection waits in the backlog until the server accepts it (no polling, no sleeping).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn


@contextmanager
def loopback(app: Any) -> Iterator[str]:
    """Serve `app` on 127.0.0.1 for the duration of the block; yields its base URL."""
    sock = socket.create_server(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join()
        sock.close()

"""The one place the gateway connects to Redis (the `redis` extra), with the same bounds for every store.

The confirmation store, learning from use and the rate limiter each keep their state in Redis when
replicas share it. A Redis that stops answering (a paused container, a full network buffer, a host
that froze) must cost the calls that need it a clear error within seconds, never hang them, and never
stall the calls that do not need it: every client made here gives up connecting after
`CONNECT_TIMEOUT_SECONDS`, gives up on an answer after `SOCKET_TIMEOUT_SECONDS`, and is not retried
behind the caller's back (each store says what a failure means for its calls).
"""

from __future__ import annotations

from typing import Any

from .errors import UserError

CONNECT_TIMEOUT_SECONDS = 2.0
"""How long a new connection to Redis may take before the operation fails."""
SOCKET_TIMEOUT_SECONDS = 2.0
"""How long Redis may take to answer one command (or a pipeline, or a script) before it fails."""


def redis_failures() -> tuple[type[BaseException], ...]:
    """The errors that mean Redis did not answer (call once a client is made: `redis` is installed)."""
    import redis

    return (redis.RedisError, OSError)


def redis_client(url: str, *, setting: str) -> Any:
    """A client of the Redis at `url`, strings decoded, bounded as the module says.

    Raises:
        UserError: the `redis` package is not installed (naming `setting`, the key that asked for it).
    """
    try:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry
    except ImportError:
        raise UserError(
            f"{setting} = 'redis' needs the redis client: pip install 'metatool-gateway[redis]'"
        ) from None
    return redis.Redis.from_url(
        url,
        decode_responses=True,
        socket_connect_timeout=CONNECT_TIMEOUT_SECONDS,
        socket_timeout=SOCKET_TIMEOUT_SECONDS,
        retry=Retry(NoBackoff(), 0),
    )

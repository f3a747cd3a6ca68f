"""`/healthz` and `/readyz` of a real `gateway serve --transport http`, with a real redis-server."""

from __future__ import annotations

import time
from pathlib import Path

import httpx2
import redis

from gateway.adapters.health import READY_SECONDS

from .mcp_server_support import SECRET, http_server, redis_server, write_config


def _get(url: str, path: str, **headers: str) -> httpx2.Response:
    base = url.rsplit("/", 1)[0]
    return httpx2.get(base + path, headers=headers, timeout=10)


def test_a_probe_by_address_is_answered_and_nothing_else_passes_the_host_check(tmp_path: Path) -> None:
    with http_server(write_config(tmp_path)) as server:
        alive = _get(server.url, "/healthz", host="10.1.2.3:8765")  # as a kubelet sends it
        assert (alive.status_code, alive.json()) == (200, {"status": "alive"})
        ready = _get(server.url, "/readyz", host="10.1.2.3:8765")
        assert (ready.status_code, ready.json()) == (200, {"status": "ready", "checks": {}})
        assert ready.headers["cache-control"] == "no-store"
        # The exemption is those two paths, read only: the MCP endpoint and a POST still need the Host.
        assert _get(server.url, "/mcp", host="10.1.2.3:8765").status_code == 421
        base = server.url.rsplit("/", 1)[0]
        posted = httpx2.post(base + "/readyz", headers={"host": "10.1.2.3:8765"}, timeout=10)
        assert posted.status_code == 421
        assert _get(server.url, "/healthz/x", host="10.1.2.3:8765").status_code == 421


def test_readiness_names_the_redis_store_that_stops_answering_and_never_its_address(tmp_path: Path) -> None:
    with redis_server(tmp_path / "redis") as url:
        extra = (
            f"[confirmation]\nstore = 'redis'\nredis_url = '{url}'\nsecret = '{SECRET}'\n"
            f"[usage]\nstore = 'redis'\nredis_url = '{url}'\n"
        )
        with http_server(write_config(tmp_path / "gw", extra)) as server:
            ready = _get(server.url, "/readyz")
            checks = {"confirmation.store": "ok", "usage.store": "ok"}
            assert (ready.status_code, ready.json()) == (200, {"status": "ready", "checks": checks})
            redis.Redis.from_url(url).shutdown(nosave=True)  # Redis stops answering
            time.sleep(READY_SECONDS)  # past the answer kept for a burst of probes
            gone = _get(server.url, "/readyz")
            assert gone.status_code == 503
            unreachable = {"confirmation.store": "unreachable", "usage.store": "unreachable"}
            assert gone.json() == {"status": "not ready", "checks": unreachable}
            assert url not in gone.text and "127.0.0.1" not in gone.text
            assert _get(server.url, "/healthz").status_code == 200  # alive, not ready

"""A Redis that stops answering (SIGSTOP on a real redis-server): the calls that need it fail within the
client's timeouts with a clear error; the calls that do not need it go on meanwhile."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import redis

from gateway import Catalog, Gateway, MemoryAuditLog, ToolResult, run_sync
from gateway.gate.confirmation import ConfirmationGate
from gateway.gate.stores import RedisConfirmationStore, close_store
from gateway.limits import Limit, Limiter

from ..adapters.mcp_server_support import redis_server
from ..sample_tools import ALL_TOOLS

HANG_GUARD_SECONDS = 60.0
"""Far past the client's timeouts: reached only when a call hangs (the code before the fix)."""


def test_a_stalled_redis_refuses_the_calls_that_need_it_and_stalls_no_other(tmp_path: Path) -> None:
    with redis_server(tmp_path / "redis") as url:
        pid = int(redis.Redis.from_url(url).info("server")["process_id"])
        store = RedisConfirmationStore(url)
        audit = MemoryAuditLog()
        gw = Gateway(Catalog(ALL_TOOLS), gate=ConfirmationGate(store=store), audit=audit)
        try:
            held = run_sync(gw.invoke("notes_delete", {"note_id": "n1"}))
            assert held.status == "confirmation_required"  # the store answers: the call is held

            os.kill(pid, signal.SIGSTOP)
            try:
                finished: list[str] = []

                async def scenario() -> ToolResult:
                    async def destructive() -> ToolResult:
                        result = await gw.invoke("notes_delete", {"note_id": "n2"})
                        finished.append("destructive")
                        return result

                    waiting = asyncio.create_task(destructive())
                    for n in range(5):  # read-only: the gate's store is not asked
                        found = await gw.invoke("notes_search", {"title": f"t{n}"})
                        assert found.ok, found
                        finished.append(f"search {n}")
                    return await asyncio.wait_for(waiting, HANG_GUARD_SECONDS)

                refused = run_sync(scenario())
            finally:
                os.kill(pid, signal.SIGCONT)

            assert refused.error is not None and refused.error.code == "confirmation_unavailable"
            assert "store is not answering: nothing was run" in refused.error.message
            # The searches did not wait for the stalled store: every one ended before the refusal.
            assert finished == [*(f"search {n}" for n in range(5)), "destructive"]
            last = audit.records[-1]
            assert (last.tool, last.outcome, last.error_code) == (
                "notes_delete",
                "refused",
                "confirmation_unavailable",
            )

            again = run_sync(gw.invoke("notes_delete", {"note_id": "n3"}))
            assert again.status == "confirmation_required"  # answering again: held as before
        finally:
            close_store(store)


def test_a_limited_call_goes_on_when_the_sweep_of_held_calls_cannot_read_the_store(tmp_path: Path) -> None:
    """Before a limited call is counted, the held calls that expired are declined (their quota given
    back). That sweep reads the confirmation store: stalled, it holds up no other call; gone, it
    costs the sweep, never the call (found by the deployment's fault test: an `internal` error)."""
    with redis_server(tmp_path / "redis") as url:
        client = redis.Redis.from_url(url)
        pid = int(client.info("server")["process_id"])
        store = RedisConfirmationStore(url)
        limits = Limiter([Limit("searches", quota=100, tools=("notes_search",))])
        gw = Gateway(Catalog(ALL_TOOLS), gate=ConfirmationGate(store=store), limits=limits)
        try:
            os.kill(pid, signal.SIGSTOP)
            try:
                finished: list[str] = []

                async def scenario() -> ToolResult:
                    async def limited() -> ToolResult:
                        result = await gw.invoke("notes_search", {"title": "counted"})
                        finished.append("limited")
                        return result

                    waiting = asyncio.create_task(limited())
                    await asyncio.sleep(0)  # it starts its sweep, which waits on the stalled store
                    for n in range(3):  # not limited: neither the sweep nor the store is asked
                        created = await gw.invoke("notes_create", {"title": f"t{n}"})
                        assert created.ok, created
                        finished.append(f"create {n}")
                    return await asyncio.wait_for(waiting, HANG_GUARD_SECONDS)

                stalled = run_sync(scenario())
            finally:
                os.kill(pid, signal.SIGCONT)
            assert stalled.ok, stalled  # the sweep gave up within the client's timeout; the call ran
            assert finished == ["create 0", "create 1", "create 2", "limited"]

            client.shutdown(nosave=True)  # gone: every read of the store is refused at once
            gw.gate._swept = float("-inf")  # the next limited call sweeps again
            gone = run_sync(gw.invoke("notes_search", {"title": "counted again"}))
            assert gone.ok, gone
        finally:
            close_store(store)

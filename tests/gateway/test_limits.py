"""Rate limits and quotas: checked in the chokepoint after policy and validation, before the gate.

Calls go through `Gateway.invoke` and `Gateway.call` as a host or a model would make them; time is
an injected clock, never a sleep. The Redis backend runs against a real redis-server.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gateway import Catalog, Gateway, MemoryAuditLog, Policy, Principal, Rule, ToolContext, render, run_sync
from gateway.errors import ConfigError
from gateway.gate.confirmation import ConfirmationGate, ConfirmationStore, MemoryConfirmationStore
from gateway.gate.stores import RedisConfirmationStore, SqliteConfirmationStore
from gateway.limits import Limit, Limiter, MemoryBackend, RedisBackend, source_of
from gateway.runtime import open_gateway
from gateway.settings.loading import load_settings

from .adapters.mcp_server_support import redis_server
from .sample_tools import ALL_TOOLS, Calls

ALICE = ToolContext(principal=Principal("alice", frozenset({"assistant"})))
BOB = ToolContext(principal=Principal("bob"))
SEARCH = {"title": "milk"}


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def gateway(*limits: Limit, clock: Clock | None = None, **options: Any) -> Gateway:
    return Gateway(Catalog(ALL_TOOLS), limits=Limiter(limits, clock=clock or Clock()), **options)


def search(gw: Gateway, ctx: ToolContext = ALICE, tool: str = "notes_search") -> Any:
    return run_sync(gw.invoke(tool, SEARCH if tool == "notes_search" else {"title": "x"}, context=ctx))


def test_a_bucket_admits_its_burst_then_refuses_naming_the_limit_and_the_wait(calls: Calls) -> None:
    audit = MemoryAuditLog()
    gw = gateway(Limit("searches", rate=0.5, burst=2, tools=("notes_search",)), audit=audit)
    assert search(gw).ok and search(gw).ok
    refused = search(gw)
    assert refused.status == "error" and refused.error is not None
    assert refused.error.code == "rate_limited" and refused.error.retry_after_seconds == 2
    assert "'searches'" in refused.error.message
    assert calls.names() == ["notes_search", "notes_search"]  # the refused call never ran
    last = audit.records[-1]
    assert (last.outcome, last.error_code, last.principal) == ("limited", "rate_limited", "alice")


def test_the_model_reads_rate_limited_with_the_seconds_to_wait() -> None:
    gw = gateway(Limit("searches", quota=1, window_seconds=3600))
    call = {"tool_name": "notes_search", "parameters": SEARCH}
    assert run_sync(gw.call("invoke_tool", call, ALICE)).ok
    error = json.loads(render(run_sync(gw.call("invoke_tool", call, ALICE))))["error"]
    assert (
        error["code"] == "rate_limited" and error["retry_after_seconds"] == 800
    )  # 1e6 s is 2,800 s into its hour


def test_each_principal_has_its_own_budget_unless_the_limit_is_shared() -> None:
    own = gateway(Limit("each", quota=1))
    assert search(own, ALICE).ok and not search(own, ALICE).ok
    assert search(own, BOB).ok
    shared = gateway(Limit("everyone", quota=1, per="all"))
    assert search(shared, ALICE).ok and not search(shared, BOB).ok


def test_a_bucket_refills_with_time_and_a_quota_at_its_next_window() -> None:
    clock = Clock(1_000_000.0)
    gw = gateway(Limit("bucket", rate=0.5, burst=1, tools=("notes_search",)), clock=clock)
    assert search(gw).ok and not search(gw).ok
    clock.now += 1.5
    refused = search(gw)
    assert refused.error is not None and refused.error.retry_after_seconds == 1  # 0.5 s left, rounded up
    clock.now += 0.5
    assert search(gw).ok
    day = gateway(Limit("daily", quota=2, window_seconds=86400), clock=clock)
    assert search(day).ok and search(day).ok and not search(day).ok
    clock.now = (clock.now // 86400 + 1) * 86400  # midnight UTC
    assert search(day).ok


def test_a_limit_counts_only_the_tools_categories_principals_and_roles_it_names() -> None:
    gw = gateway(
        Limit("assistants", quota=1, tools=("notes_s*",), roles=("assistant",)),
        Limit("bob-creates", quota=1, categories=("notes",), principals=("bob",), tools=("notes_create",)),
    )
    assert search(gw, ALICE).ok and not search(gw, ALICE).ok
    assert search(gw, BOB).ok and search(gw, BOB).ok  # bob holds no assistant role
    assert search(gw, ALICE, "notes_create").ok and search(gw, ALICE, "notes_create").ok
    assert search(gw, BOB, "notes_create").ok and not search(gw, BOB, "notes_create").ok


def test_a_call_refused_by_one_limit_takes_nothing_from_the_others() -> None:
    gw = gateway(Limit("wide", quota=2), Limit("narrow", quota=1, tools=("notes_search",)))
    assert search(gw).ok
    refused = search(gw)
    assert refused.error is not None and "'narrow'" in refused.error.message
    assert search(gw, tool="notes_create").ok  # "wide" still had its second call
    assert not search(gw, tool="notes_create").ok


def test_hidden_tools_and_invalid_arguments_are_answered_before_any_limit_counts() -> None:
    limiter = Limiter([Limit("one", quota=1)], clock=Clock())
    gw = Gateway(Catalog(ALL_TOOLS), policy=Policy((Rule("deny", names=("notes_create",)),)), limits=limiter)
    hidden = search(gw, tool="notes_create")
    assert hidden.error is not None and hidden.error.code == "unknown_tool"
    bad = run_sync(gw.invoke("notes_search", {"title": 3}, context=ALICE))
    assert bad.error is not None and bad.error.code == "invalid_arguments"
    assert search(gw).ok  # the budget was still whole


def test_a_tool_fronted_or_from_an_openapi_entry_is_selected_by_its_source() -> None:
    from dataclasses import replace

    base = Catalog(ALL_TOOLS).get("notes_search")
    assert base is not None
    fronted = replace(base, name="files_find", metadata={"server": "files"})
    api = replace(base, name="shop_search", metadata={"openapi": "shop", "operation_id": "search"})
    assert [source_of(d) for d in (base, fronted, api)] == ["builtin", "mcp:files", "openapi:shop"]
    gw = Gateway(Catalog([fronted, api]), limits=Limiter([Limit("shop", quota=1, sources=("openapi:*",))]))
    for _ in range(2):
        assert run_sync(gw.invoke("files_find", SEARCH, context=ALICE)).ok
    assert run_sync(gw.invoke("shop_search", SEARCH, context=ALICE)).ok
    assert not run_sync(gw.invoke("shop_search", SEARCH, context=ALICE)).ok


def _hammer(limiters: list[Limiter], threads: int, each: int) -> int:
    """Calls taken from many threads at once, spread over the limiters (replicas); how many passed."""
    base = Catalog(ALL_TOOLS).get("notes_search")
    assert base is not None
    admitted: list[int] = []
    start = threading.Barrier(threads)

    def work(i: int) -> None:
        limiter = limiters[i % len(limiters)]
        start.wait()
        admitted.append(sum(limiter.take(base, Principal(f"p{i % 3}")) is None for _ in range(each)))

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return sum(admitted)


def test_many_threads_in_memory_admit_exactly_the_allowance() -> None:
    limiter = Limiter([Limit("shared", quota=37, per="all"), Limit("bucket", rate=1e-9, burst=50, per="all")])
    assert _hammer([limiter], threads=12, each=20) == 37


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_server(tmp_path_factory.mktemp("redis")) as url:
        yield url


def test_two_replicas_sharing_redis_admit_exactly_the_allowance_under_concurrency(redis_url: str) -> None:
    limits = [Limit("quota", quota=53, per="all"), Limit("bucket", rate=1e-9, burst=60, per="all")]
    replicas = [Limiter(limits, RedisBackend(redis_url, prefix=f"t1:{id(limits)}")) for _ in range(2)]
    try:
        assert _hammer(replicas, threads=16, each=10) == 53
        states = {s.limit.name: s.left for s in replicas[1].states([Principal("p0")])}
        assert states == {"quota": 0, "bucket": 7}
    finally:
        for r in replicas:
            r.close()


def test_redis_refills_a_bucket_by_the_gateways_clock(redis_url: str) -> None:
    clock = Clock()
    limiter = Limiter([Limit("slow", rate=0.25, burst=1)], RedisBackend(redis_url, prefix="t2"), clock=clock)
    gw = Gateway(Catalog(ALL_TOOLS), limits=limiter)
    try:
        assert search(gw).ok
        refused = search(gw)
        assert refused.error is not None and refused.error.retry_after_seconds == 4
        clock.now += 4
        assert search(gw).ok
    finally:
        limiter.close()


@pytest.mark.parametrize("on_error", ["open", "closed"])
def test_an_unreachable_redis_fails_as_configured_and_says_so_once(
    on_error: Any, caplog: pytest.LogCaptureFixture, calls: Calls
) -> None:
    from .adapters.mcp_server_support import _free_port

    backend = RedisBackend(f"redis://127.0.0.1:{_free_port()}/0")
    gw = Gateway(Catalog(ALL_TOOLS), limits=Limiter([Limit("any", quota=1)], backend, on_error=on_error))
    with caplog.at_level(logging.WARNING, logger="gateway"):
        results = [search(gw) for _ in range(3)]
    said = [r.getMessage() for r in caplog.records if "rate limits" in r.getMessage()]
    assert len(said) == 1 and "cannot be reached" in said[0]
    if on_error == "open":
        assert all(r.ok for r in results) and len(calls) == 3
    else:
        assert [r.error.code if r.error else None for r in results] == ["rate_limited"] * 3 and calls == []


def test_limits_in_the_configuration_reach_the_served_gateway(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        f'data_dir = "{tmp_path / "data"}"\nseed_demo = false\n'
        '[[limits]]\nname = "creates"\ntools = ["calendar_create_*"]\nquota = 1\nwindow = "hour"\n'
    )
    settings = load_settings(config, environ={})
    with open_gateway(settings) as gw:
        assert isinstance(gw.limits.backend, MemoryBackend)
        assert [limit.window_seconds for limit in gw.limits.limits] == [3600.0]
        ctx = ToolContext(principal=Principal("local"))
        made = run_sync(
            gw.invoke("calendar_create_event", {"title": "a", "start": "tomorrow 9am"}, context=ctx)
        )
        again = run_sync(
            gw.invoke("calendar_create_event", {"title": "b", "start": "tomorrow 9am"}, context=ctx)
        )
        assert made.ok and again.error is not None and again.error.code == "rate_limited"


@pytest.mark.parametrize(
    ("entry", "says"),
    [
        ('name = "x"\nrate = 1\nquota = 5', "exactly one of rate"),
        ('name = "x"', "exactly one of rate"),
        ('name = "x"\nquota = 5\nburst = 2', "set rate too"),
        ('name = "x y"\nquota = 5', "name"),
    ],
)
def test_a_bad_limit_is_a_configuration_error_that_says_why(tmp_path: Path, entry: str, says: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"[[limits]]\n{entry}\n")
    with pytest.raises(ConfigError, match=says):
        load_settings(config, environ={})


def test_two_limits_of_one_name_are_refused(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[[limits]]\nname = "x"\nquota = 1\n[[limits]]\nname = "x"\nrate = 1\n')
    with pytest.raises(ConfigError, match="unique: x"):
        load_settings(config, environ={})


def test_gateway_limits_prints_what_a_replica_sharing_redis_has_left(
    tmp_path: Path, redis_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from gateway.cli import main

    config = tmp_path / "config.toml"
    config.write_text(
        f'data_dir = "{tmp_path / "data"}"\nseed_demo = false\nprincipal = "alice"\n'
        f'[limiter]\nstore = "redis"\nredis_url = "{redis_url}"\n'
        '[[limits]]\nname = "searches"\ntools = ["calendar_list_*"]\nrate = 0.001\nburst = 3\n'
        '[[limits]]\nname = "all-calls"\nquota = 100\nwindow = "day"\nper = "all"\n'
    )
    settings = load_settings(config, environ={})
    with open_gateway(settings) as gw:
        ctx = ToolContext(principal=Principal("alice"))
        for _ in range(2):
            assert run_sync(gw.invoke("calendar_list_events", {}, context=ctx)).ok
    assert main(["limits", "--config", str(config), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["limit"], r["principal"], r["left"]) for r in rows] == [
        ("searches", "alice", 1),
        ("all-calls", "*", 98),
    ]
    assert main(["limits", "--config", str(config)]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[1].split() == ["searches", "0.001/s,", "burst", "3", "alice", "1", "now"]
    assert table[2].split() == ["all-calls", "100", "per", "day", "*", "98", "now"]


def test_gateway_limits_lists_principals_the_configuration_does_not_name_once_redis_counts_them(
    tmp_path: Path, redis_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from gateway.cli import main

    config = tmp_path / "config.toml"
    config.write_text(
        f'data_dir = "{tmp_path / "data"}"\nseed_demo = false\nprincipal = "alice"\n'
        f'[limiter]\nstore = "redis"\nredis_url = "{redis_url}"\n'
        '[[limits]]\nname = "lookups"\ntools = ["calendar_list_*"]\nrate = 0.001\nburst = 3\n'
        '[[limits]]\nname = "staff-lookups"\ntools = ["calendar_list_*"]\nquota = 9\nroles = ["staff"]\n'
    )
    settings = load_settings(config, environ={})
    with open_gateway(settings) as gw:  # callers known only by their tokens (an OAuth subject, say)
        for who, roles, calls in (("zed:oauth", {"staff"}, 2), ("bob", set(), 1)):
            ctx = ToolContext(principal=Principal(who, roles=frozenset(roles)))
            for _ in range(calls):
                assert run_sync(gw.invoke("calendar_list_events", {}, context=ctx)).ok
    assert main(["limits", "--config", str(config), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["limit"], r["principal"], r["left"]) for r in rows] == [
        ("lookups", "alice", 3),  # named by the configuration, no call yet
        ("lookups", "bob", 2),
        ("lookups", "zed:oauth", 1),
        ("staff-lookups", "zed:oauth", 7),  # its role came with its token: the count shows it applied
    ]


def test_two_gateway_processes_sharing_redis_run_exactly_the_shared_allowance(redis_url: str) -> None:
    import os
    import subprocess
    import sys

    from .limits_replica import SHARED

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    command = [sys.executable, "-m", "tests.gateway.limits_replica", redis_url, "t3", "8", "6"]
    replicas = [
        subprocess.Popen(command, cwd=root, env=env, stdout=subprocess.PIPE, text=True) for _ in range(2)
    ]
    ran = [int(p.communicate(timeout=120)[0]) for p in replicas]
    assert all(p.returncode == 0 for p in replicas)
    assert sum(ran) == SHARED[0].capacity == 61  # 96 calls tried, no lost update admits a 62nd


def test_memory_forgets_budgets_back_at_full_so_many_principals_do_not_grow_it() -> None:
    clock = Clock()
    backend = MemoryBackend(prune_at=10)
    limiter = Limiter([Limit("searches", rate=1, burst=1)], backend, clock=clock)
    base = Catalog(ALL_TOOLS).get("notes_search")
    assert base is not None
    for i in range(10):
        assert limiter.take(base, Principal(f"p{i}")) is None
    clock.now += 5  # every bucket is full again
    assert limiter.take(base, Principal("late")) is None
    assert limiter.take(base, Principal("late")) is not None  # its own budget is kept
    assert [s.left for s in limiter.states([Principal("p0"), Principal("late")])] == [1, 0]
    assert len(backend._state) == 1


def test_a_bucket_too_slow_to_refill_in_a_lifetime_still_works_in_redis(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    limiter = Limiter([Limit("glacial", rate=1e-17, burst=2)], RedisBackend(redis_url, prefix="t4"))
    gw = Gateway(Catalog(ALL_TOOLS), limits=limiter)
    try:
        with caplog.at_level(logging.WARNING, logger="gateway"):
            assert [search(gw).ok for _ in range(3)] == [True, True, False]
        assert [r.getMessage() for r in caplog.records] == []  # the script never failed half-way
    finally:
        limiter.close()


def test_an_outage_met_by_many_calls_at_once_is_said_once(caplog: pytest.LogCaptureFixture) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from .adapters.mcp_server_support import _free_port

    limiter = Limiter([Limit("any", quota=1)], RedisBackend(f"redis://127.0.0.1:{_free_port()}/0"))
    base = Catalog(ALL_TOOLS).get("notes_search")
    assert base is not None
    with caplog.at_level(logging.WARNING, logger="gateway"), ThreadPoolExecutor(8) as pool:
        taken = list(pool.map(lambda i: limiter.take(base, Principal(f"p{i}")), range(32)))
    assert taken == [None] * 32  # open: admitted unchecked
    assert sum("cannot be reached" in r.getMessage() for r in caplog.records) == 1


def test_gateway_limits_says_when_there_is_nothing_to_show(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from gateway.cli import main

    config = tmp_path / "config.toml"
    config.write_text(f'data_dir = "{tmp_path}"\n')
    assert main(["limits", "--config", str(config)]) == 0
    assert "no limits are configured" in capsys.readouterr().out
    config.write_text(f'data_dir = "{tmp_path}"\n[[limits]]\nname = "q"\nquota = 5\n')
    assert main(["limits", "--config", str(config)]) == 0
    out, err = capsys.readouterr()
    assert "each process counts its own calls" in err and out.splitlines()[1].split()[-2:] == ["5", "now"]


def test_a_destructive_call_takes_one_unit_though_it_is_invoked_again_with_its_confirmation(
    calls: Calls,
) -> None:
    gw = gateway(Limit("deletes", quota=1, tools=("notes_delete",)))
    held = run_sync(gw.invoke("notes_delete", {"note_id": "n1"}, context=ALICE))
    assert held.status == "confirmation_required" and held.pending is not None
    assert gw.approve(held.pending.pending_id) is not None
    done = run_sync(
        gw.invoke("notes_delete", {"note_id": "n1"}, confirmation=held.pending.pending_id, context=ALICE)
    )
    assert done.ok and calls.names() == ["notes_delete"]
    again = run_sync(gw.invoke("notes_delete", {"note_id": "n2"}, context=ALICE))
    assert again.error is not None and again.error.code == "rate_limited"


def _held(gw: Gateway, note: str) -> Any:
    return run_sync(gw.invoke("notes_delete", {"note_id": note}, context=ALICE))


@pytest.mark.parametrize("store", ["memory", "sqlite", "redis"])
def test_a_held_call_that_never_runs_gives_its_quota_back_once_declined_or_expired(
    calls: Calls, store: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A quota counts a destructive call when it is held for approval; if the person declines it, or
    it expires unanswered, it never ran and the quota has it back (once, whoever notices)."""
    clock = Clock(time.time())  # Redis expires a record by its own clock: the test's starts now
    stores: dict[str, Callable[[], ConfirmationStore]] = {
        "memory": MemoryConfirmationStore,
        "sqlite": lambda: SqliteConfirmationStore(tmp_path / "c.db", clock=clock),
    }
    if store == "redis":
        url = request.getfixturevalue("redis_url")
        stores["redis"] = lambda: RedisConfirmationStore(url, clock=clock, prefix=f"t{tmp_path.name}")
    gate = ConfirmationGate(store=stores[store](), ttl_seconds=60, clock=clock)
    backend = (
        RedisBackend(request.getfixturevalue("redis_url"), prefix=f"l{tmp_path.name}")
        if store == "redis"
        else None
    )
    gw = Gateway(
        Catalog(ALL_TOOLS),
        gate=gate,
        limits=Limiter([Limit("deletes", quota=1, tools=("notes_delete",))], backend, clock=clock),
    )
    first = _held(gw, "n1")
    assert first.pending is not None and _held(gw, "n2").error.code == "rate_limited"
    assert gw.deny(first.pending.pending_id)
    assert not gw.deny(first.pending.pending_id)  # given back once, not twice
    second = _held(gw, "n2")
    assert second.pending is not None and _held(gw, "n3").error.code == "rate_limited"
    clock.now += 61  # nobody answered: it expired
    third = _held(gw, "n3")  # the expired one is found before this one is counted
    assert third.pending is not None
    assert _held(gw, "n4").error.code == "rate_limited"
    assert gw.approve(third.pending.pending_id) is not None
    done = run_sync(
        gw.invoke("notes_delete", {"note_id": "n3"}, confirmation=third.pending.pending_id, context=ALICE)
    )
    assert done.ok and calls.names() == ["notes_delete"]
    clock.now += 61
    assert _held(gw, "n5").error.code == "rate_limited"  # it ran: counted for good


def test_a_confirmation_sent_with_a_read_only_call_does_not_spare_it_its_limit() -> None:
    gw = gateway(Limit("one", quota=1))
    for expected in (True, False):
        sent = run_sync(gw.invoke("notes_search", SEARCH, confirmation="made-up", context=ALICE))
        assert sent.ok is expected

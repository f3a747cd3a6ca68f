"""A fault test of a real deployment on loopback: replicas behind HAProxy on one Redis, a replica
killed and Redis restarted under load, and a check afterwards that nothing was lost.

    python -m benchmarks.deployment [--replicas 3] [--clients 50] [--seconds 30]

What runs (docs/deployment.md says how to run the same on machines): a `redis-server` with an
append-only file synced at every write (what a restart must not lose), `--replicas` `gateway serve
--transport http` processes with sessions, each with its own data directory and audit log, every
store in that Redis (pending confirmations, rate limits, learning), and Debian's HAProxy in front,
with `deploy/haproxy.cfg` (its bind and server lines put on loopback): routing by `Mcp-Session-Id`
learnt from replies and probing each replica's `/readyz`.

`--clients` clients open sessions through the router and call `deploy_echo` back to back, each call
with a mark of its own. A client whose call fails (its replica gone: a reset connection, a 404 for
its session, a 502/503 from the router) counts the error by kind, opens a new session and goes on.
Meanwhile, at fixed fractions of `--seconds`: one replica is killed (SIGKILL) and started again on
its port and data; Redis is stopped and started again on its file. Around them:

- approvals: destructive calls asked for before the faults, approved by a host before and after,
  each redeemed through the router after both faults;
- a program (code mode) paused on the replica that gets killed, whose approval comes after;
- a quota (`[[limits]]`, `on_error = "closed"`) spent through the router across the faults;
- learning: a search and a call on each replica directly (the killed one once it is back).

Afterwards it checks: every call a client saw answered has its line in some replica's audit log;
each approved call ran exactly once and a second redemption was refused; the program paused on the
killed replica was refused as ended and never ran; the quota of N never ran more than N times, and
fewer only by calls whose client saw no answer (a call counted, then lost with its replica, keeps
its slot: nothing can tell it did not run); a pair from every replica is in the shared store;
every client was answered again after the last fault. It prints calls/s,
errors by kind and each check, and exits 1 when a check fails. Loopback only, bounded in time
(`--seconds` at most 120, each wait bounded) and count (`--clients` at most 200). Needs
`redis-server` and `haproxy` (Debian's packages).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .mcp_wire import SESSION_HEADER, Request, Script, capture, failure, read_response, with_id

MAX_SECONDS = 120.0
MAX_CLIENTS = 200
START_SECONDS = 60.0
CALL_SECONDS = 10.0  # a call unanswered this long counts as failed (the client opens a new session)
QUOTA = 20
APPROVALS = 6
LEASE_SECONDS = 3.0  # how long a killed replica's paused programs count as running (the least allowed)
CATALOG = "benchmarks.deployment_catalog:provide"
MARK = "MARK-PLACEHOLDER"
REPOSITORY = Path(__file__).resolve().parents[1]


@dataclass
class Process:
    """A server process of the deployment: started, awaited by a line it prints, stopped."""

    name: str
    command: list[str]
    ready: str  # what it prints once it listens
    log: Path
    env: dict[str, str] = field(default_factory=dict)
    proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        seen = self.log.stat().st_size if self.log.exists() else 0  # a restart appends to the log
        out = self.log.open("ab")
        self.proc = subprocess.Popen(
            self.command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=self.env or None
        )
        out.close()
        end = time.monotonic() + START_SECONDS
        while self.ready not in self.log.read_bytes()[seen:].decode(errors="replace"):
            if self.proc.poll() is not None or time.monotonic() > end:
                raise SystemExit(
                    f"{self.name} did not start:\n{self.log.read_text(errors='replace')[-2000:]}"
                )
            time.sleep(0.05)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def binary(name: str) -> str:
    for found in (shutil.which(name), f"/usr/sbin/{name}", f"/usr/bin/{name}"):
        if found and os.access(found, os.X_OK):
            return found
    raise SystemExit(
        f"{name} is needed: apt-get install {'redis-server' if name == 'redis-server' else name}"
    )


def redis(root: Path, port: int) -> Process:
    """Redis with an append-only file synced at every write: a restart loses nothing acknowledged."""
    (root / "redis").mkdir(exist_ok=True)
    command = [
        binary("redis-server"),
        "--bind",
        "127.0.0.1",
        "--port",
        str(port),
        "--dir",
        str(root / "redis"),
    ]
    command += ["--appendonly", "yes", "--appendfsync", "always", "--save", ""]
    return Process("redis", command, "Ready to accept connections", root / "redis.log")


def replica_config(root: Path, index: int | str, redis_url: str, secret: str) -> Path:
    data = root / f"replica-{index}"
    data.mkdir(mode=0o700)
    config = data / "config.toml"
    config.write_text(
        f'catalogs = ["{CATALOG}"]\ndata_dir = "{data}"\n\n'
        "[serve]\nsessions = true\n\n"
        f"[confirmation]\nstore = 'redis'\nredis_url = '{redis_url}'\nsecret = '{secret}'\n"
        f"lease_seconds = {LEASE_SECONDS}\n\n"
        f"[usage]\nstore = 'redis'\nredis_url = '{redis_url}'\n\n"
        f"[limiter]\nstore = 'redis'\nredis_url = '{redis_url}'\non_error = 'closed'\n\n"
        f"[[limits]]\nname = 'counted'\ntools = ['deploy_counted']\nper = 'all'\nquota = {QUOTA}\n"
        "window = 'day'\n\n"
        "[code]\nenabled = true\n"
    )
    return config


def replica(root: Path, index: int, config: Path, port: int) -> Process:
    command = [sys.executable, "-m", "gateway.cli", "serve", "--config", str(config)]
    command += ["--transport", "http", "--host", "127.0.0.1", "--port", str(port)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("GATEWAY_")}
    return Process(f"replica {index}", command, "serving MCP on", root / f"replica-{index}.log", env)


def haproxy_config(root: Path, port: int, replicas: list[int]) -> Path:
    """deploy/haproxy.cfg, the router operators run, on loopback: its bind and server lines replaced."""
    shipped = (REPOSITORY / "deploy" / "haproxy.cfg").read_text().splitlines()
    kept = [line for line in shipped if not line.strip().startswith("server ")]
    if "    bind :8765" not in kept:
        raise SystemExit("deploy/haproxy.cfg has no `bind :8765` line to put on loopback")
    kept[kept.index("    bind :8765")] = f"    bind 127.0.0.1:{port}"
    kept += [f"    server r{i} 127.0.0.1:{p} check inter 500ms fall 2 rise 2" for i, p in enumerate(replicas)]
    path = root / "haproxy.cfg"
    path.write_text("\n".join(kept) + "\n")
    return path


def wait_ready(url: str) -> None:
    """Until the router answers /readyz from a replica (each replica up, as HAProxy sees it)."""
    import httpx2

    end = time.monotonic() + START_SECONDS
    while True:
        with contextlib.suppress(httpx2.HTTPError):
            if httpx2.get(url, timeout=2).status_code == 200:
                return
        if time.monotonic() > end:
            raise SystemExit(f"no replica became ready behind the router at {url}")
        time.sleep(0.1)


class HandshakeFailed(Exception):
    """A new session was refused (no replica ready behind the router, say)."""


@dataclass
class Client:
    """One agent's connection: a session through the router, calls with marks, a new session on failure."""

    url: str
    script: Script
    index: int
    answered: list[str] = field(default_factory=list)  # the marks of the calls answered
    errors: Counter[str] = field(default_factory=Counter)
    last_answer: float = 0.0
    times: list[float] = field(default_factory=list)  # when each call was answered (monotonic)
    finished: float = 0.0
    _io: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
    _session: bytes | None = None
    _seq: int = 0

    async def run(self, deadline: float) -> None:
        try:
            await self._run(deadline)
        finally:
            self.finished = time.monotonic()

    async def _run(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            try:
                if self._io is None:
                    await self._open()
                await self._call()
            except HandshakeFailed as exc:
                self.errors[str(exc)] += 1
                await self._reset()
                await asyncio.sleep(0.05)
            except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError) as exc:
                self.errors[type(exc).__name__] += 1
                await self._reset()
                await asyncio.sleep(0.05)

    async def _open(self) -> None:
        target = urlsplit(self.url)
        self._io = await asyncio.open_connection(target.hostname, target.port)
        self._session = None
        for request in self.script.setup:
            response = await self._send(request, request.body)
            if response.status >= 400:
                raise HandshakeFailed(f"a new session refused: HTTP {response.status}")
            self._session = response.headers.get(SESSION_HEADER, self._session)

    async def _call(self) -> None:
        self._seq += 1
        mark = f"c{self.index:03d}-{self._seq:07d}"
        body = with_id(self.script.call.body, self._seq).replace(MARK.encode(), mark.encode())
        response = await self._send(self.script.call, body)
        problem = failure(response)
        if problem is None:
            self.answered.append(mark)
            self.last_answer = time.monotonic()
            self.times.append(self.last_answer)
            return
        self.errors[f"HTTP {response.status}" if response.status != 200 else "an error result"] += 1
        await self._reset()  # its session may be gone with its replica: a new one
        await asyncio.sleep(0.05)

    async def _send(self, request: Request, body: bytes) -> Any:
        assert self._io is not None
        reader, writer = self._io
        writer.write(request.encode(body=body, session=self._session))
        await writer.drain()
        return await asyncio.wait_for(read_response(reader), CALL_SECONDS)

    async def _reset(self) -> None:
        if self._io is not None:
            self._io[1].close()
            with contextlib.suppress(OSError):
                await self._io[1].wait_closed()
        self._io, self._session = None, None


def text_of(result: Any) -> Any:
    return json.loads(result.content[0].text)


async def sdk_call(url: str, arguments: dict[str, Any], tool: str = "invoke_tool") -> Any:
    """One call by the real SDK client, in a session of its own; the JSON the model reads."""
    from mcp import Client as SdkClient

    async with SdkClient(url, mode="legacy") as client:
        return text_of(await client.call_tool(tool, arguments))


async def learn_on(url: str, words: str) -> None:
    """A search and the call that follows it in one session: a pair for learning from use."""
    from mcp import Client as SdkClient

    async with SdkClient(url, mode="legacy") as client:
        await client.call_tool("discover_tools", {"query": words})
        await client.call_tool("invoke_tool", {"tool_name": "deploy_echo", "parameters": {"mark": "learn"}})


def audit_lines(root: Path, replicas: int) -> list[dict[str, Any]]:
    lines = []
    for i in range(replicas):
        path = root / f"replica-{i}" / "audit.jsonl"
        if path.exists():
            lines += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return lines


@dataclass
class Deployment:
    """The processes of one run, and where to reach them."""

    root: Path
    replicas: int
    secret: str = field(default_factory=lambda: secrets.token_hex(32))
    store: Process | None = None
    redis_port: int = 0
    servers: list[Process] = field(default_factory=list)
    ports: list[int] = field(default_factory=list)
    router: Process | None = None
    router_port: int = 0
    host_config: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.router_port}/mcp"

    def direct(self, index: int) -> str:
        return f"http://127.0.0.1:{self.ports[index]}/mcp"

    def start(self) -> None:
        self.redis_port = free_port()
        self.store = redis(self.root, self.redis_port)
        self.store.start()
        redis_url = f"redis://127.0.0.1:{self.redis_port}/0"
        self.host_config = replica_config(self.root, "host", redis_url, self.secret)
        self.ports = [free_port() for _ in range(self.replicas)]
        for i, replica_port in enumerate(self.ports):
            config = replica_config(self.root, i, redis_url, self.secret)
            self.servers.append(replica(self.root, i, config, replica_port))
            self.servers[-1].start()
        self.router_port = free_port()
        config = haproxy_config(self.root, self.router_port, self.ports)
        self.router = Process(
            "haproxy", [binary("haproxy"), "-f", str(config), "-db"], "", self.root / "haproxy.log"
        )
        self.router.start()
        wait_ready(f"http://127.0.0.1:{self.router_port}/readyz")

    def stop(self) -> None:
        for process in [self.router, *self.servers]:
            if process is not None:
                process.stop()

    def redis_commands(self) -> int:
        """The commands Redis processed since it last started (its own count)."""
        import redis as redis_package

        client = redis_package.Redis(host="127.0.0.1", port=self.redis_port)
        try:
            return int(client.info("stats")["total_commands_processed"])
        finally:
            client.close()

    def stop_store(self) -> None:
        if self.store is not None:
            self.store.stop()


@dataclass
class Outcomes:
    """What the side scenarios saw, for the checks."""

    pending: dict[str, str] = field(default_factory=dict)  # mark -> pending id
    paused: str = ""  # the pending id of the program paused on the killed replica
    paused_refusal: str = ""
    redeemed: dict[str, Any] = field(default_factory=dict)  # mark -> the first redemption's answer
    again: dict[str, Any] = field(default_factory=dict)  # mark -> the second one's
    quota: Counter[str] = field(default_factory=Counter)
    faults: dict[str, float] = field(default_factory=dict)  # what happened when (monotonic)
    started: float = 0.0  # when the load started (monotonic)


async def faults(deployment: Deployment, seconds: float, start: float, seen: Outcomes) -> None:
    """The victim killed and started again, then Redis stopped and started again, at fixed times."""
    victim = deployment.servers[-1]

    async def at(fraction: float) -> None:
        await asyncio.sleep(max(0.0, start + fraction * seconds - time.monotonic()))

    await at(0.25)
    victim.kill()
    seen.faults["replica killed"] = time.monotonic()
    await at(0.40)
    await asyncio.to_thread(victim.start)
    seen.faults["replica back"] = time.monotonic()
    await learn_on(deployment.direct(len(deployment.servers) - 1), "probe words for the restarted replica")
    await at(0.55)
    assert deployment.store is not None
    await asyncio.to_thread(deployment.store.stop)
    seen.faults["redis stopped"] = time.monotonic()
    await asyncio.sleep(1.0)
    await asyncio.to_thread(deployment.store.start)
    seen.faults["redis back"] = time.monotonic()


async def spend_quota(url: str, seconds: float, start: float, seen: Outcomes) -> None:
    """Twice the quota's calls, spread over the run (across both faults)."""
    attempts = 2 * QUOTA
    for k in range(attempts):
        await asyncio.sleep(max(0.0, start + k * seconds / attempts - time.monotonic()))
        try:
            answer = await sdk_call(url, {"tool_name": "deploy_counted", "parameters": {"mark": f"q{k}"}})
            seen.quota["ran" if "error" not in answer else answer["error"]["code"]] += 1
        except Exception as exc:  # a fault: the call may not have reached a replica
            seen.quota[type(exc).__name__] += 1


async def scenario(
    deployment: Deployment, clients: int, seconds: float
) -> tuple[list[Client], Outcomes, float]:
    """Load, faults and the side scenarios; the clients, what the side scenarios saw, the run's length."""
    from gateway.gate.confirmation import ApprovalRefused
    from gateway.runtime import open_gateway
    from gateway.settings.loading import load_settings

    seen = Outcomes()
    victim = len(deployment.servers) - 1
    with open_gateway(load_settings(deployment.host_config)) as host:
        for i in range(APPROVALS):  # asked through the router before the faults
            mark = f"a{i}"
            answer = await sdk_call(
                deployment.url, {"tool_name": "deploy_delete", "parameters": {"mark": mark}}
            )
            seen.pending[mark] = answer["pending_id"]
        for mark in list(seen.pending)[: APPROVALS // 2]:
            host.approve(seen.pending[mark])  # half before the faults, half after
        program = {"code": 'call("deploy_delete", mark="p0")'}
        seen.paused = (await sdk_call(deployment.direct(victim), program, tool="run_code"))["pending_id"]
        for i in range(victim):
            await learn_on(deployment.direct(i), f"probe words for replica {i}")

        script = await capture(
            deployment.url, "legacy", {"tool_name": "deploy_echo", "parameters": {"mark": MARK}}
        )
        agents = [Client(deployment.url, script, i) for i in range(clients)]
        start = seen.started = time.monotonic()
        deadline = start + seconds
        await asyncio.gather(
            *(agent.run(deadline) for agent in agents),
            faults(deployment, seconds, start, seen),
            spend_quota(deployment.url, seconds, start, seen),
        )
        elapsed = max(agent.finished for agent in agents) - start  # the load's own time
        # Redis may be back only just: the replicas are ready again once the router has seen it.
        await asyncio.to_thread(wait_ready, deployment.url.replace("/mcp", "/readyz"))

        for mark in list(seen.pending)[APPROVALS // 2 :]:
            host.approve(seen.pending[mark])
        try:
            host.approve(seen.paused)
            seen.paused_refusal = "approved"
        except ApprovalRefused as exc:
            seen.paused_refusal = str(exc)
        for mark, pending_id in seen.pending.items():
            call = {"tool_name": "deploy_delete", "parameters": {"mark": mark}, "confirmation": pending_id}
            seen.redeemed[mark] = await sdk_call(deployment.url, call)
            seen.again[mark] = await sdk_call(deployment.url, call)
    return agents, seen, elapsed


def learned(deployment: Deployment) -> set[str]:
    """The queries in the shared learning store (read once every replica has stopped and flushed)."""
    from gateway.runtime import open_gateway
    from gateway.settings.loading import load_settings

    with open_gateway(load_settings(deployment.host_config)) as host:
        assert host.usage is not None  # [usage] is on in every config here
        return {row["query"] for row in host.usage.export()}


def checks(
    deployment: Deployment, agents: list[Client], seen: Outcomes, queries: set[str]
) -> list[tuple[str, bool, str]]:
    """Each check: its name, whether it holds, what was seen."""
    lines = audit_lines(deployment.root, deployment.replicas)
    executed = [line for line in lines if line["outcome"] == "executed"]
    echoed = {line["params"]["mark"] for line in executed if line["tool"] == "deploy_echo"}
    answered = [mark for agent in agents for mark in agent.answered]
    missing = [mark for mark in answered if mark not in echoed]
    deleted = Counter(line["params"]["mark"] for line in executed if line["tool"] == "deploy_delete")
    counted = sum(1 for line in executed if line["tool"] == "deploy_counted")
    # A call lost to a fault (its client saw no answer) may have spent its slot before it ran.
    lost = sum(n for answer, n in seen.quota.items() if answer not in ("ran", "rate_limited"))
    ran_once = all(seen.redeemed[m] == {"deleted": m} for m in seen.pending)
    refused_again = all(
        seen.again[m].get("error", {}).get("code") == "confirmation_used" for m in seen.pending
    )
    back = seen.faults.get("redis back", float("inf"))
    idle = [agent.index for agent in agents if agent.last_answer < back]
    wanted = {f"probe words for replica {i}" for i in range(deployment.replicas - 1)}
    wanted.add("probe words for the restarted replica")
    return [
        (
            "every answered call is in an audit log",
            not missing,
            f"{len(answered):,} answered, {len(echoed):,} audited, {len(missing)} missing",
        ),
        (
            "each approved call ran once, a second redemption refused",
            ran_once and refused_again and all(deleted[m] == 1 for m in seen.pending),
            f"ran: {dict(sorted((m, deleted[m]) for m in seen.pending))}",
        ),
        (
            "the program paused on the killed replica was refused as ended and never ran",
            seen.paused_refusal != "approved" and deleted["p0"] == 0,
            seen.paused_refusal[:120],
        ),
        (
            f"the quota of {QUOTA} never ran more, and less only by calls lost to a fault",
            QUOTA - lost <= counted <= QUOTA,
            f"ran {counted}; answers {dict(seen.quota)}",
        ),
        (
            "a learning pair of every replica is in the shared store",
            wanted <= queries,
            f"{len(wanted & queries)} of {len(wanted)}",
        ),
        ("every client was answered after the last fault", not idle, f"{len(idle)} clients were not"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--replicas", type=int, default=3, help="gateway replicas (2 to 5)")
    parser.add_argument(
        "--clients", type=int, default=50, help=f"clients with sessions (at most {MAX_CLIENTS})"
    )
    parser.add_argument(
        "--seconds", type=float, default=30.0, help=f"the load's length (at most {MAX_SECONDS:g})"
    )
    parser.add_argument(
        "--keep", type=Path, help="run in this new directory and keep it (the logs, audit logs)"
    )
    args = parser.parse_args()
    # The SDK client warns when its session's replica is gone as it ends: expected here.
    logging.getLogger("mcp.client.streamable_http").setLevel(logging.ERROR)
    replicas = max(2, min(args.replicas, 5))
    clients = max(1, min(args.clients, MAX_CLIENTS))
    seconds = max(8.0, min(args.seconds, MAX_SECONDS))
    if args.keep is not None:
        args.keep.mkdir(parents=True)  # a new one: nothing of an earlier run is read as this one's
    with contextlib.nullcontext(str(args.keep)) if args.keep else tempfile.TemporaryDirectory() as tmp:
        deployment = Deployment(Path(tmp), replicas)
        try:
            print(f"starting Redis, {replicas} replicas and HAProxy on loopback...", flush=True)
            deployment.start()
            agents, seen, elapsed = asyncio.run(scenario(deployment, clients, seconds))
            commands = deployment.redis_commands()
            deployment.stop()  # every replica flushes its learning and audit log as it stops
            queries = learned(deployment)
            results = checks(deployment, agents, seen, queries)
        finally:
            deployment.stop()
            deployment.stop_store()
    calls = sum(len(agent.answered) for agent in agents)
    errors = sum((agent.errors for agent in agents), Counter())
    print(f"{clients} clients with sessions through HAProxy, {replicas} replicas, one Redis, {elapsed:.1f} s")
    print(f"calls answered: {calls:,} ({calls / elapsed:,.0f}/s); failed: {sum(errors.values()):,}")
    for kind, count in errors.most_common():
        print(f"  {kind}: {count:,}")
    back = seen.faults.get("redis back", 0.0)
    since = sum(1 for agent in agents for t in agent.times if t >= back)
    print(
        f"Redis: {commands:,} commands since its restart for {since:,} calls answered since "
        f"({commands / max(since, 1):.2f} a call; the probes' PINGs and the side scenarios included)"
    )
    print(
        "faults: " + ", ".join(f"{name} at {when - seen.started:.1f} s" for name, when in seen.faults.items())
    )
    ok = True
    for name, holds, detail in results:
        ok = ok and holds
        print(f"{'ok  ' if holds else 'FAIL'} {name}: {detail}")
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()

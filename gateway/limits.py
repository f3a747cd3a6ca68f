"""Rate limits and quotas on invocations: which limits a call counts against, and whether it may run.

A limit is a token bucket (`rate` calls a second, up to `burst` at once) or a quota (`quota` calls a
fixed window: a minute, an hour, a UTC day), over the calls it selects by tool-name glob, category,
source, principal and role; each principal has its own budget, or all share one (`per`).

A call takes one unit from every limit it matches, or from none: the check and the taking are one
step (under a lock in memory; one Lua script in Redis, so replicas sharing a Redis never admit more
than a limit allows). The clock is the gateway's, passed to Redis, so tests can move it.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Any, ClassVar, Literal, NamedTuple, Protocol

from .context import Principal
from .definition import ToolDefinition
from .redis_client import redis_client, redis_failures
from .refusal import CallRefused
from .rendering import rate_limited

log = logging.getLogger("gateway")

FAIL_CLOSED_RETRY_SECONDS = 30.0
"""When the limits' store cannot be reached and `on_error = "closed"`: the wait the model is told."""

LISTED_KEYS = 10_000  # `gateway limits` lists the principals of at most this many counters in the store

Kind = Literal["bucket", "quota"]


@dataclass(frozen=True)
class Limit:
    """One limit: what it counts (every selector given must match; empty: any) and how much passes."""

    name: str
    rate: float | None = None  # bucket: calls per second
    burst: int | None = None  # bucket: its size (default: the rate, at least 1)
    quota: int | None = None  # quota: calls per window
    window_seconds: float = 86400.0
    tools: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    principals: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()
    per: Literal["principal", "all"] = "principal"

    @property
    def kind(self) -> Kind:
        """A token bucket when it has a rate, else a quota."""
        return "bucket" if self.rate is not None else "quota"

    @property
    def capacity(self) -> int:
        """The most calls that can pass at once: the bucket's size, or the quota."""
        if self.rate is not None:
            return self.burst or max(1, math.floor(self.rate))
        return self.quota or 0

    @property
    def allowance(self) -> str:
        """What passes, in words: '0.5/s, burst 2' or '100 per day'."""
        if self.rate is not None:
            return f"{self.rate:g}/s, burst {self.capacity}"
        named = {60.0: "minute", 3600.0: "hour", 86400.0: "day"}
        return f"{self.capacity} per {named.get(self.window_seconds, f'{self.window_seconds:g} s')}"

    def applies(self, d: ToolDefinition, principal: Principal) -> bool:
        """Whether a call of `d` by `principal` counts against this limit."""

        def matches(value: str, globs: tuple[str, ...]) -> bool:
            return not globs or any(fnmatchcase(value, g) for g in globs)

        return (
            matches(d.name, self.tools)
            and matches(d.category, self.categories)
            and matches(source_of(d), self.sources)
            and matches(principal.id, self.principals)
            and (not self.roles or not principal.roles.isdisjoint(self.roles))
        )

    def counter(self, principal: Principal) -> Counter:
        """The budget a call of `principal` takes from: its own, or everyone's (`per`)."""
        # The kind is in the key: a limit reconfigured from a bucket to a quota starts afresh.
        key = f"{self.kind}:{self.name}:{principal.id if self.per == 'principal' else '*'}"
        if self.rate is not None:
            return Bucket(key, self.rate, float(self.capacity))
        return Quota(key, float(self.capacity), self.window_seconds)


def source_of(d: ToolDefinition) -> str:
    """Where a tool comes from, as `sources` names it: openapi:NAME, mcp:SERVER, google-apis or builtin."""
    if "server" in d.metadata:
        return f"mcp:{d.metadata['server']}"
    if "openapi" in d.metadata:
        return f"openapi:{d.metadata['openapi']}"
    if "method_id" in d.metadata:
        return "google-apis"
    return "builtin"


class Counted(NamedTuple):
    """A budget's state in the store: a bucket's tokens as of `since`, or the calls a quota's window
    that began at `since` has used."""

    amount: float
    since: float


class Step(NamedTuple):
    """A budget at one moment, and what it would be once one more call is taken."""

    left: float  # calls that may pass now (fractional for a bucket)
    wait: float  # seconds until one more call may pass
    after: Counted  # the state once this call is taken


@dataclass(frozen=True)
class Bucket:
    """A token bucket in the store: `rate` tokens a second, up to `size`; a call takes one."""

    key: str
    rate: float
    size: float
    kind: ClassVar[Kind] = "bucket"

    def step(self, state: Counted | None, now: float) -> Step:
        """The bucket at `now`, refilled since it was last counted."""
        tokens = (
            self.size
            if state is None
            else min(self.size, state.amount + max(0.0, now - state.since) * self.rate)
        )
        return Step(tokens, max(0.0, (1 - tokens) / self.rate), Counted(tokens - 1, now))

    def given(self, state: Counted | None, at: float, now: float) -> Counted | None:
        """The token of the call taken at `at` back, up to the size (None: nothing to give back)."""
        if state is None:
            return None
        return Counted(min(self.size, self.step(state, now).left + 1), now)

    @property
    def row(self) -> Row:
        """This counter as a held call keeps it (`Row`)."""
        return (self.key, self.kind, self.rate, self.size)


@dataclass(frozen=True)
class Quota:
    """A quota in the store: `calls` a fixed window of `window_seconds` (aligned to the epoch)."""

    key: str
    calls: float
    window_seconds: float
    kind: ClassVar[Kind] = "quota"

    def step(self, state: Counted | None, now: float) -> Step:
        """The quota at `now`: a new window starts with every call left."""
        start = math.floor(now / self.window_seconds) * self.window_seconds
        used = state.amount if state is not None and state.since == start else 0.0
        return Step(self.calls - used, start + self.window_seconds - now, Counted(used + 1, start))

    def given(self, state: Counted | None, at: float, now: float) -> Counted | None:
        """The call taken at `at` back, within the window it was counted in (a new one starts full)."""
        start = math.floor(at / self.window_seconds) * self.window_seconds
        if state is None or state.since != start or state.amount < 1:
            return None
        return Counted(state.amount - 1, start)

    @property
    def row(self) -> Row:
        """This counter as a held call keeps it (`Row`)."""
        return (self.key, self.kind, self.calls, self.window_seconds)


Counter = Bucket | Quota

Row = tuple[str, str, float, float]
"""A counter as a held call keeps it (key, kind, then rate and size, or calls and window): JSON in a
shared store, read by any replica (`ConfirmationGate`), and the arguments of the Lua scripts."""


def from_row(row: Row) -> Counter:
    """The counter a held call kept as a `Row`."""
    key, kind, a, b = row
    return Bucket(key, a, b) if kind == "bucket" else Quota(key, a, b)


class Unreachable(Exception):
    """The limits' store did not answer (Redis down): the limiter fails open or closed."""


class Backend(Protocol):
    """Where counts live. `take` checks and takes every counter as one step."""

    def take(self, counters: Sequence[Counter], now: float) -> tuple[int, float]:
        """(-1, 0): every counter had a call left and gave it; else (the index refusing, seconds to wait)."""
        ...

    def peek(self, counters: Sequence[Counter], now: float) -> list[tuple[float, float]]:
        """Each counter's calls left and seconds until one more, taking nothing."""
        ...

    def give(self, counters: Sequence[Counter], at: float, now: float) -> None:
        """Give back the call `take` counted at `at` (`given`), as one step."""
        ...

    def counted(self) -> list[str]:
        """The keys of the counters it holds counts for (`LISTED_KEYS` at most)."""

    def close(self) -> None:
        """Release its connections."""


class MemoryBackend:
    """Counts in this process, under one lock; budgets back at full are dropped now and then."""

    def __init__(self, *, prune_at: int = 4096) -> None:
        self._lock = threading.Lock()
        self._state: dict[str, tuple[Counter, Counted]] = {}
        self._prune_at = prune_at

    def take(self, counters: Sequence[Counter], now: float) -> tuple[int, float]:
        with self._lock:
            steps = [c.step(self._read(c), now) for c in counters]
            refused, wait = _worst(steps)
            if refused < 0:
                for c, taken in zip(counters, steps, strict=True):
                    self._state[c.key] = (c, taken.after)
                if len(self._state) > self._prune_at:  # one entry per principal and limit: keep it bounded
                    self._prune(now)
            return refused, wait

    def peek(self, counters: Sequence[Counter], now: float) -> list[tuple[float, float]]:
        with self._lock:
            return [(at.left, at.wait) for at in (c.step(self._read(c), now) for c in counters)]

    def give(self, counters: Sequence[Counter], at: float, now: float) -> None:
        with self._lock:
            for c in counters:
                state = c.given(self._read(c), at, now)
                if state is not None:
                    self._state[c.key] = (c, state)

    def counted(self) -> list[str]:
        with self._lock:
            return list(self._state)[:LISTED_KEYS]

    def _read(self, c: Counter) -> Counted | None:
        found = self._state.get(c.key)
        return found[1] if found is not None else None

    def _prune(self, now: float) -> None:
        full = [
            k for k, (c, state) in self._state.items() if c.step(state, now).left >= c.step(None, now).left
        ]
        for key in full:
            del self._state[key]
        self._prune_at = max(self._prune_at, 2 * len(self._state))

    def close(self) -> None:
        return None


def _worst(steps: Sequence[Step]) -> tuple[int, float]:
    """The budget that refuses (-1: none), the one to wait longest for, and that wait."""
    refused, wait = -1, 0.0
    for i, at in enumerate(steps):
        if at.left < 1 and (refused < 0 or at.wait > wait):
            refused, wait = i, at.wait
    return refused, wait


# KEYS: a hash per counter (x: amount, y: since). ARGV[1]: now; then per counter its row's kind, a, b
# (a bucket's rate and size, a quota's calls and window). Mirrors `Bucket.step` and `Quota.step`.
# Returns {index refusing (1-based; 0: none), seconds to wait}; takes from all or none.
_TAKE = """
local now = tonumber(ARGV[1])
local new = {}
local refused, wait = 0, 0
for i, key in ipairs(KEYS) do
  local kind, a, b = ARGV[3 * i - 1], tonumber(ARGV[3 * i]), tonumber(ARGV[3 * i + 1])
  local s = redis.call('HMGET', key, 'x', 'y')
  local x, y = tonumber(s[1]), tonumber(s[2])
  local left, untl
  if kind == 'bucket' then
    left = b
    if x and y then left = math.min(b, x + math.max(0, now - y) * a) end
    untl = math.max(0, (1 - left) / a)
    new[i] = {left - 1, now, math.ceil(b / a) + 1}
  else
    local start = math.floor(now / b) * b
    local used = 0
    if x and y == start then used = x end
    left, untl = a - used, start + b - now
    new[i] = {used + 1, start, math.ceil(start + b - now) + 1}
  end
  if left < 1 and (refused == 0 or untl > wait) then refused, wait = i, untl end
end
if refused > 0 then return {refused, string.format('%.17g', wait)} end
for i, key in ipairs(KEYS) do
  redis.call('HSET', key, 'x', string.format('%.17g', new[i][1]), 'y', string.format('%.17g', new[i][2]))
  redis.call('EXPIRE', key, math.min(new[i][3], 315360000))  -- ten years at most: Redis refuses more
end
return {0, '0'}
"""


# KEYS: a hash per counter. ARGV[1]: when the call was counted, ARGV[2]: now; then per counter: kind,
# a, b. Mirrors `given`: a quota's call back within its window, a bucket's token back up to its size.
_GIVE = """
local at, now = tonumber(ARGV[1]), tonumber(ARGV[2])
for i, key in ipairs(KEYS) do
  local kind, a, b = ARGV[3 * i], tonumber(ARGV[3 * i + 1]), tonumber(ARGV[3 * i + 2])
  local s = redis.call('HMGET', key, 'x', 'y')
  local x, y = tonumber(s[1]), tonumber(s[2])
  if x and y then
    if kind == 'bucket' then
      local tokens = math.min(b, math.min(b, x + math.max(0, now - y) * a) + 1)
      redis.call('HSET', key, 'x', string.format('%.17g', tokens), 'y', string.format('%.17g', now))
    elseif y == math.floor(at / b) * b and x >= 1 then
      redis.call('HSET', key, 'x', string.format('%.17g', x - 1))
    end
  end
end
return 0
"""


class RedisBackend:
    """Counts in Redis, shared by replicas (the `redis` extra): one hash per counter, expired by Redis."""

    def __init__(self, url: str, *, prefix: str = "gateway:limit") -> None:
        self._redis: Any = redis_client(url, setting="limiter.store")
        self._errors = redis_failures()
        self._prefix = prefix
        self._take: Any = self._redis.register_script(_TAKE)
        self._give: Any = self._redis.register_script(_GIVE)

    def take(self, counters: Sequence[Counter], now: float) -> tuple[int, float]:
        args: list[object] = [repr(now)]
        for c in counters:
            _, kind, a, b = c.row
            args += [kind, repr(a), repr(b)]
        try:
            index, wait = self._take(keys=[f"{self._prefix}:{c.key}" for c in counters], args=args)
        except self._errors as exc:
            raise Unreachable(str(exc)) from None
        return int(index) - 1, float(wait)

    def peek(self, counters: Sequence[Counter], now: float) -> list[tuple[float, float]]:
        try:
            pipe = self._redis.pipeline(transaction=False)
            for c in counters:
                pipe.hmget(f"{self._prefix}:{c.key}", ["x", "y"])
            rows: list[list[str | None]] = pipe.execute() if counters else []
        except self._errors as exc:
            raise Unreachable(str(exc)) from None
        out = []
        for c, (x, y) in zip(counters, rows, strict=True):
            read = Counted(float(x), float(y)) if x is not None and y is not None else None
            at = c.step(read, now)
            out.append((at.left, at.wait))
        return out

    def give(self, counters: Sequence[Counter], at: float, now: float) -> None:
        args: list[object] = [repr(at), repr(now)]
        for c in counters:
            _, kind, a, b = c.row
            args += [kind, repr(a), repr(b)]
        try:
            self._give(keys=[f"{self._prefix}:{c.key}" for c in counters], args=args)
        except self._errors as exc:
            raise Unreachable(str(exc)) from None

    def counted(self) -> list[str]:
        try:
            keys = self._redis.scan_iter(match=f"{self._prefix}:*", count=1000)
            return [k.removeprefix(f"{self._prefix}:") for k in itertools.islice(keys, LISTED_KEYS)]
        except self._errors as exc:
            raise Unreachable(str(exc)) from None

    def close(self) -> None:
        self._redis.close()


@dataclass(frozen=True)
class Taken:
    """What `Limiter.admit` counted a call against (each counter's `Row`), and when."""

    rows: tuple[Row, ...] = ()
    at: float = 0.0


NOTHING_TAKEN = Taken()


@dataclass(frozen=True)
class LimitState:
    """One limit's budget for one subject (a principal, or `*` when shared), as `gateway limits` prints it."""

    limit: Limit
    subject: str
    left: int
    retry_after: float  # seconds until one more call passes (0: one passes now)


class Limiter:
    """Checks each invocation against the configured limits (none: every call passes).

    Args:
        limits: the limits, in configuration order.
        backend: where counts live (default: this process's memory).
        on_error: when the backend cannot be reached, admit every call ("open") or refuse it ("closed").
        clock: seconds since the epoch.
    """

    def __init__(
        self,
        limits: Sequence[Limit] = (),
        backend: Backend | None = None,
        *,
        on_error: Literal["open", "closed"] = "open",
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.limits = tuple(limits)
        self.backend: Backend = backend or MemoryBackend()
        self.on_error = on_error
        self.clock = clock
        self._threaded = not isinstance(self.backend, MemoryBackend)  # a network round trip
        self.reclaim: Callable[[], Awaitable[None]] = _nothing_to_reclaim
        """Called before a call is counted: the Gateway declines the held calls that expired
        unanswered, whose calls are then given back (`ConfirmationGate.sweep`)."""
        self._down = False
        self._said = threading.Lock()  # calls in worker threads: an outage is said once, not once each

    async def admit(self, d: ToolDefinition, principal: Principal, *, redeeming: bool = False) -> Taken:
        """Take one call of `d` by `principal` from every limit it counts against; what was taken.

        `redeeming`: the call carries a confirmation. A destructive call's was taken when its
        confirmation was issued, so it is not taken twice; a bogus one is refused by the gate. A
        held call that never runs gives its call back (`give_back`); those that expired unanswered
        are found first (`reclaim`), so a quota they held is free again before it is counted.

        Raises:
            CallRefused: a limit has no call left (`rate_limited`: which, and when to retry).
        """
        matched = [limit for limit in self.limits if limit.applies(d, principal)]
        if not matched or (redeeming and d.is_destructive):
            return NOTHING_TAKEN
        await self.reclaim()
        now = self.clock()
        if self._threaded:
            refusal = await asyncio.to_thread(self._take, matched, principal, now)
        else:
            refusal = self._take(matched, principal, now)
        if refusal is not None:
            raise CallRefused(rate_limited(refusal[0].name, refusal[1]), "limited")
        counters = [limit.counter(principal) for limit in matched]
        return Taken(tuple(c.row for c in counters), now)

    def give_back(self, counted: Sequence[Row], at: float) -> None:
        """Give back the call a held destructive call counted at `at` (`Taken`): it never ran."""
        counters = [from_row(row) for row in counted]
        try:
            self.backend.give(counters, at, self.clock())
        except Unreachable as exc:
            self._unreachable(exc)

    def take(self, d: ToolDefinition, principal: Principal) -> tuple[Limit, float] | None:
        """None: the call may run (and was counted); else the limit refusing it and seconds to wait."""
        matched = [limit for limit in self.limits if limit.applies(d, principal)]
        return self._take(matched, principal, self.clock()) if matched else None

    def _take(self, matched: Sequence[Limit], principal: Principal, now: float) -> tuple[Limit, float] | None:
        try:
            index, wait = self.backend.take([limit.counter(principal) for limit in matched], now)
        except Unreachable as exc:
            self._unreachable(exc)
            return None if self.on_error == "open" else (matched[0], FAIL_CLOSED_RETRY_SECONDS)
        if self._down:
            with self._said:
                if self._down:
                    self._down = False
                    log.warning("rate limits: the store answers again; limits apply")
        return None if index < 0 else (matched[index], wait)

    def _unreachable(self, exc: Unreachable) -> None:
        with self._said:
            if self._down:  # said once per outage, not once per call
                return
            self._down = True
            effect = "admitted unchecked" if self.on_error == "open" else "refused"
            log.warning(
                "rate limits: the store cannot be reached (%s); calls are %s until it answers", exc, effect
            )

    def states(self, principals: Sequence[Principal]) -> list[LimitState]:
        """Each limit's budget for each of `principals` it applies to (once, for a shared limit), and
        for each other principal the store holds a count of (an OAuth token's subject, say).

        Raises:
            Unreachable: the store did not answer.
        """
        counted: dict[str, set[str]] = {}
        for key in self.backend.counted():  # kind:limit:principal, as Limit.counter spells it
            kind, _, rest = key.partition(":")
            name, _, subject = rest.partition(":")
            counted.setdefault(f"{kind}:{name}", set()).add(subject)
        pairs: list[tuple[Limit, Principal]] = []
        for limit in self.limits:
            applies = [p for p in principals if _may_apply(limit, p)]
            if limit.per == "principal":  # then those with counts, whatever roles their tokens gave them
                others = counted.get(f"{limit.kind}:{limit.name}", set()) - {p.id for p in applies}
                applies += [Principal(subject) for subject in sorted(others)]
            pairs += [(limit, p) for p in (applies[:1] if limit.per == "all" else applies)]
        found = self.backend.peek([limit.counter(p) for limit, p in pairs], self.clock())
        return [
            LimitState(limit, p.id if limit.per == "principal" else "*", max(0, math.floor(left)), until)
            for (limit, p), (left, until) in zip(pairs, found, strict=True)
        ]

    def close(self) -> None:
        """Release the backend's connections."""
        self.backend.close()


async def _nothing_to_reclaim() -> None:
    """A limiter's `reclaim` until a gateway gives it its gate's sweep: nothing is held."""


def _may_apply(limit: Limit, principal: Principal) -> bool:
    ids = not limit.principals or any(fnmatchcase(principal.id, g) for g in limit.principals)
    return ids and (not limit.roles or not principal.roles.isdisjoint(limit.roles))

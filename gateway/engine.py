"""The gateway: one chokepoint where every call is resolved, validated, checked, confirmed, run and audited.

    @tool(category="notes", action="create")               # define: a typed, documented function
    def notes_create(title: str) -> str: ...
    gw = Gateway(Catalog([notes_create]))                   # register: indexed by category and action
    await gw.call("discover_tools", {"query": "add a note"})  # serve the three meta-tools in process,
    server = mcp_server.build_server(gw, Settings())        # or over MCP (gateway.adapters.mcp_server)

resolve (policy) -> parse -> validate -> permission -> limits -> confirm -> run -> result
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import math
import os
import time
from collections.abc import Awaitable, Collection, Mapping, Sequence
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticSerializationError

from . import discovery
from .arguments import Unusable, read_arguments, validate_arguments
from .audit import Auditor, AuditSink, Outcome, Redactor, redact_secrets
from .catalog import Catalog
from .context import ErrorInfo, PendingConfirmation, Principal, Problem, ToolContext, ToolResult
from .definition import ToolDefinition
from .errors import ToolFailed, ToolInputError, UnknownTool, UserError
from .gate.confirmation import (
    HOST,
    ConfirmationGate,
    DecidedBy,
    NeedsConfirmation,
    Proceed,
    Refused,
    describe_call,
)
from .gate.plans import Plans
from .gate.rules import Constraint, Rule, audit_rule, make_rule
from .indexes import Indexes
from .limits import Limiter
from .meta_tools import build_meta_catalog
from .named_toolsets import session_of
from .names import closest_names
from .policy import Policy
from .refusal import CallRefused as _CallError
from .rendering import (
    error_info,
    invalid_arguments,
    problems_from_validation,
    safe_text,
    to_jsonable,
    too_large,
    unknown_meta_tool,
)
from .search import SearchIndex
from .telemetry import Observation, Telemetry
from .usage import NO_SESSION, Usage
from .usage.companions import NAMED_UNDER

log = logging.getLogger("gateway")
T = TypeVar("T")

DEFAULT_TIMEOUT_SECONDS = 60.0
MAX_PARAMETER_BYTES = 100_000


def _elapsed_ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000


def run_sync(awaitable: Awaitable[T]) -> T:
    """Run a gateway coroutine from synchronous code (no event loop running)."""

    async def wrap() -> T:
        return await awaitable

    return asyncio.run(wrap())


class Gateway:
    """Serves a catalog to a model through the three meta-tools, and to hosts directly.

    Args:
        catalog: the tools to serve.
        resources: objects handlers `require` from their context (backends, clients).
        policy: allow/deny rules; a denied tool is invisible.
        gate: the confirmation gate for destructive tools.
        audit: where invocation records go (None: nowhere).
        redact: applied to parameters before they are audited.
        default_timeout: seconds a handler may run when its definition sets none.
        search_cache_dir: where the search index of a large catalog is cached (None: the user's
            cache directory; False: never cached). See `SearchIndex.load_or_build`.
        usage: learning from use: what sessions searched for and then ran (None: no learning).
        telemetry: where each call is reported, for traces and metrics (None: nowhere).
        dense: rank with the sentence encoder's layer too (None: when the `dense` extra is
            installed; see `SearchIndex`).
        limits: rate limits and quotas on invocations (None: none; see `Limiter`).
    """

    def __init__(
        self,
        catalog: Catalog,
        *,
        resources: Mapping[type, object] | None = None,
        policy: Policy | None = None,
        gate: ConfirmationGate | None = None,
        audit: AuditSink | None = None,
        redact: Redactor = redact_secrets,
        default_timeout: float = DEFAULT_TIMEOUT_SECONDS,
        max_parameter_bytes: int = MAX_PARAMETER_BYTES,
        search_cache_dir: str | os.PathLike[str] | Literal[False] | None = None,
        usage: Usage | None = None,
        telemetry: Telemetry | None = None,
        dense: bool | None = False,
        limits: Limiter | None = None,
    ) -> None:
        self.catalog = catalog
        self.resources: Mapping[type, object] = dict(resources or {})
        self.policy = policy or Policy()
        self.gate = gate or ConfirmationGate()
        self.auditor = Auditor(audit, redact)
        self.default_timeout = default_timeout
        self.max_parameter_bytes = max_parameter_bytes
        self.search_cache_dir = search_cache_dir
        self.indexes = Indexes(search_cache_dir, dense)
        self.usage = usage
        self.telemetry = telemetry or Telemetry()
        self.limits = limits or Limiter()
        # A held destructive call that never runs (declined, expired) gives back what it counted.
        self.gate.unused = lambda record: self.limits.give_back(record.counted, record.counted_at)
        self.limits.reclaim = self.gate.sweep
        self.meta = build_meta_catalog(self)
        self._visible: dict[tuple[int, Principal], tuple[ToolDefinition, ...]] = {}

    # -- what a principal may see -------------------------------------------------

    def visible(self, principal: Principal) -> tuple[ToolDefinition, ...]:
        """The tools `principal` may see and use, sorted by name."""
        key = (self.catalog.version, principal)
        found = self._visible.get(key)
        if found is None:
            # Bounded by clearing when full, as the search caches are: a key here lives as long as a
            # catalog version, and an LRU (cachetools') would run Python bookkeeping on every call's hit.
            if len(self._visible) > 256:
                self._visible.clear()
            found = tuple(d for d in self.catalog if self.policy.allows(d, principal))
            self._visible[key] = found
        return found

    def lookup(self, name: str, principal: Principal) -> ToolDefinition | None:
        """The tool called `name` if it exists and `principal` may use it."""
        d = self.catalog.get(name)
        if d is None or not self.policy.allows(d, principal):
            return None
        return d

    def index(self, principal: Principal | None = None) -> SearchIndex:
        """The search index over the tools `principal` may see (None: the whole catalog)."""
        whole = self.indexes.whole(self.catalog, self.catalog.version)
        if principal is None or len(visible := self.visible(principal)) == len(self.catalog):
            return whole
        return self.indexes.narrower(visible)

    def unknown_tool(self, name: str, principal: Principal) -> UnknownTool:
        """The error for a tool `principal` cannot see, with the closest names it can see."""
        names = [d.name for d in self.visible(principal)]
        return UnknownTool(safe_text(name, 80), closest_names(name[:200], names))

    def prompt_fragments(self, principal: Principal) -> list[str]:
        """System-prompt fragments contributed by the tools `principal` may use."""
        return [d.prompt for d in self.visible(principal) if d.prompt]

    # -- discovery -------------------------------------------------------------------

    def overview(self, principal: Principal) -> discovery.Overview:
        """Categories and actions with their tool counts: the answer to an empty discover_tools."""
        return discovery.overview(self.visible(principal))

    def discover(
        self,
        principal: Principal,
        *,
        query: str | None = None,
        categories: Collection[str] | None = None,
        actions: Collection[str] | None = None,
        limit: int = 10,
        cursor: str | None = None,
        session: str = NO_SESSION,
    ) -> discovery.Page | discovery.Overview:
        """Find tools: filter by category and action, rank by query. No arguments: an overview.

        With learning from use (`usage`), earlier traffic's evidence joins the ranking, and the
        search is remembered for `session` (a successful call that follows it teaches the gateway).
        """
        visible = self.visible(principal)
        usage = self.usage
        votes: discovery.Votes | None = None
        if usage is not None:

            def votes(
                text: str, cats: Collection[str] | None, acts: Collection[str] | None, depth: int
            ) -> Mapping[str, float]:
                who = principal.id
                return usage.votes(visible, text, principal=who, categories=cats, actions=acts, limit=depth)

        out = discovery.discover(
            visible,
            self.index(principal),
            query=query,
            categories=categories,
            actions=actions,
            limit=limit,
            cursor=cursor,
            votes=votes,
        )
        if usage is not None and "tools" in out:
            shown = [t["name"] for t in out["tools"]]
            if query and query.strip():
                usage.searched(
                    principal.id, session_of(principal, session), query.strip(), shown, out["total"]
                )
            discovery.with_companions(out, self._companions(shown[:NAMED_UNDER], principal))
        return out

    def _companions(self, tools: Sequence[str], principal: Principal) -> dict[str, list[str]]:
        """The tools usually needed with each of `tools`, among those `principal` sees."""
        if self.usage is None:
            return {}
        return self.usage.companions(tools, principal.id, lambda name: self.lookup(name, principal))

    def schema(
        self, principal: Principal, tool_name: str, *, with_companions: bool = False
    ) -> discovery.SchemaAnswer:
        """Everything needed to call one tool: description, JSON schema, flags, an example; with
        `with_companions`, the same for each tool usually needed with it."""
        d = self.lookup(tool_name, principal)
        if d is None:
            raise self.unknown_tool(tool_name, principal)
        answer = discovery.schema_answer(d)
        if with_companions:
            names = self._companions([d.name], principal).get(d.name, [])
            found = [c for name in names if (c := self.lookup(name, principal)) is not None]
            answer["companions"] = [discovery.schema_answer(c) for c in found]
        return answer

    # -- the chokepoint --------------------------------------------------------------

    async def call(self, tool_name: str, arguments: Any, context: ToolContext | None = None) -> ToolResult:
        """Run a model's call of a meta-tool (discover_tools, get_tool_schema, invoke_tool)."""
        ctx = self._context(context)
        known = isinstance(tool_name, str) and tool_name in self.meta.by_name
        with self.telemetry.observe("meta", tool_name if known else "?", ctx) as seen:
            result = await self._call(tool_name, arguments, ctx)
            seen.outcome = result.status if known else "unknown"
            seen.error_code = result.error.code if result.error else None
        return result

    async def _call(self, tool_name: str, arguments: Any, ctx: ToolContext) -> ToolResult:
        start = time.perf_counter()
        d = self.meta.get(tool_name) if isinstance(tool_name, str) else None
        try:
            if d is None:
                raise _CallError(unknown_meta_tool(str(tool_name), sorted(self.meta.by_name)), "unknown")
            params = self._validate(d, self._parse(arguments, d), meta=True)
            output = await self._run(d, params, ctx)
        except _CallError as exc:
            return ToolResult(
                d.name if d else "?", ctx.call_id, "error", error=exc.info, duration_ms=_elapsed_ms(start)
            )
        if isinstance(output, ToolResult):
            return output
        return ToolResult(d.name, ctx.call_id, "ok", output=output, duration_ms=_elapsed_ms(start))

    async def invoke(
        self,
        tool_name: str,
        parameters: Any = None,
        *,
        confirmation: str | None = None,
        context: ToolContext | None = None,
    ) -> ToolResult:
        """Invoke a catalog tool through validation, policy, confirmation and audit."""
        ctx = self._context(context)
        with self.telemetry.observe("invoke", safe_text(tool_name, 80), ctx) as seen:
            return await self._invoke(tool_name, parameters, confirmation, ctx, seen)

    async def _invoke(
        self, tool_name: str, parameters: Any, confirmation: str | None, ctx: ToolContext, seen: Observation
    ) -> ToolResult:
        start = time.perf_counter()
        name = safe_text(tool_name, 80)
        audited: Mapping[str, Any] | None = None

        def audit(outcome: Outcome, code: str | None = None, by: DecidedBy | None = None) -> None:
            seen.outcome, seen.error_code = outcome, code
            self.auditor.log(
                principal=ctx.principal.id,
                session=ctx.session_id,
                call_id=ctx.call_id,
                tool=name,
                outcome=outcome,
                duration_ms=_elapsed_ms(start),
                error_code=code,
                params=audited,
                agent=ctx.principal.agent,
                toolsets=ctx.principal.toolsets,
                decided_by=by.as_json() if by is not None else None,
            )

        try:
            d = self.catalog.get(tool_name)
            if d is None or not self.policy.allows(d, ctx.principal):
                outcome: Outcome = "unknown" if d is None else "denied"
                raise _CallError(error_info(self.unknown_tool(tool_name, ctx.principal)), outcome)
            raw = self._parse(parameters, d)
            params = self._validate(d, raw)
            canonical = params.model_dump(mode="json")
            audited = canonical
            if d.permission is not None and (reason := d.permission(params, ctx)):
                raise _CallError(error_info(ToolFailed("permission_denied", reason)), "denied")
            taken = await self.limits.admit(
                d, ctx.principal, redeeming=confirmation is not None
            )  # rate_limited
            described = functools.partial(describe_call, d, params, ctx)  # what the approver reads
            decision = await self.gate.check(
                d,
                canonical,
                ctx.principal,
                confirmation,
                session=ctx.session_id,
                describe=described,
                counted=taken.rows,  # given back if the call is held and never runs
                counted_at=taken.at,
                plan=ctx.plan,  # a program drawing a plan, or running one a person approved
            )
            if isinstance(decision, NeedsConfirmation):
                audit("pending_confirmation")
                return self._pending(d, ctx, decision.pending, start)
            if isinstance(decision, Refused):
                info = ErrorInfo(decision.code, decision.message, decision.next_step)
                raise _CallError(info, decision.outcome, decision.decided_by)
            if isinstance(decision, Proceed) and decision.approved:
                audit("approved", by=decision.decided_by)
            if not d.read_only:  # on disk before the tool runs: its effect is never unrecorded
                audit("attempt")
            output = await self._run(d, params, ctx)
        except _CallError as exc:
            audit(exc.outcome, exc.info.code, exc.decided_by)
            return ToolResult(name, ctx.call_id, "error", error=exc.info, duration_ms=_elapsed_ms(start))
        except asyncio.CancelledError:  # the client cancelled the call (or the server is stopping)
            audit("cancelled")
            raise
        audit("executed")
        if self.usage is not None:
            await self.usage.invoked_off_loop(
                session_of(ctx.principal, ctx.session_id), ctx.principal.id, d.name
            )
        return ToolResult(
            d.name, ctx.call_id, "ok", output=to_jsonable(output), duration_ms=_elapsed_ms(start)
        )

    def approve(
        self, pending_id: str, *, decided_by: DecidedBy = HOST, only: Collection[int] | None = None
    ) -> PendingConfirmation | None:
        """Host side: approve a pending destructive call, or a program's plan (never reachable by the model).

        `decided_by` says who decided (the channel and the operator); the decision is audited. For a
        plan (`gateway.gate.plans`), `only` names the writes approved (1 for the program's first;
        None: all), and the others are declined, each with its own audit line naming the plan.
        None when the call or plan is unknown, expired or already decided.

        Raises:
            ApprovalRefused: approvals from that channel are not allowed (`[confirmation] approvers`), the
                credential deciding made the call, or its paused program ended with its process.
            UserError: `only` for a single call, or naming no write of the plan.
        """
        plans = Plans(self.gate, self.auditor)  # a plan's decisions are audited there, write by write
        if plans.record(pending_id) is not None:
            decided = plans.approve(pending_id, decided_by=decided_by, only=only)
            return decided.plan if decided is not None else None
        if only is not None:
            raise UserError(f"{pending_id} is one call, not a plan: approve it whole, or deny it")
        plans.refuse_a_write(pending_id)
        approved = self.gate.approve(pending_id, decided_by=decided_by)
        if approved is not None:
            self.auditor.decided(approved, "approved_by_host", decided_by.as_json())
        return approved

    def deny(self, pending_id: str, *, decided_by: DecidedBy = HOST) -> bool:
        """Host side: decline a pending destructive call, or a plan and all its writes (from any
        channel); the decision is audited."""
        plans = Plans(self.gate, self.auditor)
        if plans.record(pending_id) is not None:
            return plans.deny(pending_id, decided_by=decided_by) is not None
        plans.refuse_a_write(pending_id)
        record = self.gate.store.get(pending_id)
        denied = self.gate.deny(pending_id)
        if denied and record is not None:
            self.auditor.decided(record.pending, "denied_by_host", decided_by.as_json())
        return denied

    def add_rule(
        self,
        tool: str,
        *,
        principal: str,
        expires_at: float,
        constraints: Sequence[Constraint] = (),
        session: str | None = None,
        agent: str | None = None,
        decided_by: DecidedBy = HOST,
    ) -> Rule:
        """Host side: make a standing approval (`gateway.gate.rules`); audited (`rule_added`).

        Raises:
            ApprovalRefused: `decided_by`'s channel may not approve here.
            UserError: the tool is unknown, not destructive or always confirmed, a constraint names
                no parameter of it, the expiry is past, or the credential making it is its principal.
        """
        self.gate.may_approve(None, decided_by)
        rule = make_rule(
            self.catalog.get(tool),
            tool,
            principal=principal,
            expires_at=expires_at,
            now=self.gate.now(),
            constraints=constraints,
            session=session,
            agent=agent,
            created_by=decided_by.as_json(),
            credential=decided_by.credential,
            always_confirm=self.gate.always_confirm,
        )
        self.gate.add_rule(rule)
        audit_rule(self.auditor, rule, "rule_added", decided_by.as_json())
        return rule

    def revoke_rule(self, rule_id: str, *, decided_by: DecidedBy = HOST) -> Rule | None:
        """Host side: end a standing approval at once (any channel may); audited (`rule_revoked`)."""
        rule = self.gate.revoke_rule(rule_id)
        if rule is not None:
            audit_rule(self.auditor, rule, "rule_revoked", decided_by.as_json())
        return rule

    # -- pieces ------------------------------------------------------------------------

    def _context(self, context: ToolContext | None) -> ToolContext:
        ctx = context or ToolContext()
        if self.resources and not ctx.resources:
            ctx = dataclasses.replace(ctx, resources=self.resources)
        return ctx

    def _pending(
        self, d: ToolDefinition, ctx: ToolContext, pending: PendingConfirmation, start: float
    ) -> ToolResult:
        return ToolResult(
            d.name, ctx.call_id, "confirmation_required", pending=pending, duration_ms=_elapsed_ms(start)
        )

    def _parse(self, raw: Any, d: ToolDefinition) -> dict[str, Any]:
        """Arguments as a dict: accepts a mapping, a JSON string, or nothing."""
        try:
            return read_arguments(raw, self.max_parameter_bytes)
        except Unusable as exc:
            if exc.too_large is not None:
                raise _CallError(too_large(d, exc.too_large, self.max_parameter_bytes), "invalid") from None
            raise _CallError(invalid_arguments(d, (exc.problem,)), "invalid") from None

    def _validate(self, d: ToolDefinition, raw: dict[str, Any], *, meta: bool = False) -> BaseModel:
        try:
            return validate_arguments(d.model, raw)
        except ValidationError as exc:
            problems = problems_from_validation(exc, list(d.model.model_fields))
        except PydanticSerializationError:  # only a host can pass objects; a model sends JSON
            problems = (Problem("parameters", "Must be JSON data (objects, arrays, strings, numbers)"),)
        raise _CallError(invalid_arguments(d, problems, meta=meta), "invalid") from None

    async def _run(self, d: ToolDefinition, params: BaseModel, ctx: ToolContext) -> Any:
        # math.inf opts out (invoke_tool: the call it wraps has its own limit).
        timeout = d.timeout or self.default_timeout
        limit = None if timeout == math.inf else timeout
        args = (params, ctx) if d.takes_context else (params,)
        try:
            running = d.handler(*args) if d.is_async else asyncio.to_thread(d.handler, *args)
            if limit is None:
                return await running
            # In this task, not a task of its own (as `wait_for` makes): one task a call is enough.
            async with asyncio.timeout(limit):
                return await running
        except _CallError:
            raise
        except ToolInputError as exc:
            raise _CallError(error_info(exc, d, meta=d.name in self.meta), "invalid") from None
        except ToolFailed as exc:
            raise _CallError(error_info(exc), "failed") from None
        except TimeoutError:
            failure = ToolFailed("timeout", f"{d.name} did not finish within {timeout:g} seconds.")
            raise _CallError(error_info(failure), "failed") from None
        except Exception:
            log.exception("tool %s raised", d.name)
            failure = ToolFailed("internal", f"{d.name} failed unexpectedly.")
            raise _CallError(error_info(failure), "failed") from None

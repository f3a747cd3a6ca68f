"""Running a turn's tool calls through the gateway: routing, concurrency, confirmation.

Every call ends in a `ToolResult` made by the gateway (or, for arguments that are not
JSON, by `parse_arguments`, before anything runs). Routes:

- meta: discover_tools / get_tool_schema / invoke_tool, through `Gateway.call`;
- direct: a catalog tool called by name (native deferred loading), through `Gateway.invoke`;
- local: the host's own tools and the client-side search tool, through `Gateway.invoke` of a
  session gateway that shares the main gateway's gate, resources and audit log.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal

from ..context import ErrorInfo, ToolContext, ToolResult
from ..definition import ToolDefinition
from ..engine import Gateway
from ..gate.confirmation import Approver, decider_of
from ..rendering import render, safe_text
from .calls import Outcome, ToolCall, drop_strict_nulls, parse_arguments
from .content import blocks_of
from .events import (
    ConfirmationAnswered,
    ConfirmationRequested,
    Event,
    ToolCallFinished,
    ToolCallStarted,
)

Route = Literal["meta", "direct", "local", "search"]


class Dispatcher:
    """Runs tool calls for one agent session."""

    def __init__(
        self,
        gateway: Gateway,
        local: Gateway,
        *,
        context: ToolContext,
        native: bool,
        search_name: str | None,
        approver: Approver | None,
        emit: Callable[[Event], None],
        strict_schemas: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        self.gateway = gateway
        self.local = local
        self.context = context
        self.native = native
        self.search_name = search_name
        self.approver = approver
        self.emit = emit
        self.strict_schemas = dict(strict_schemas or {})

    async def run(self, calls: Sequence[ToolCall]) -> list[Outcome]:
        """Outcomes in call order. Concurrent only when every call is read-only and concurrency-safe."""
        parsed = [(call, self._arguments(call)) for call in calls]
        if len(parsed) > 1 and all(self._parallel_safe(call, args) for call, args in parsed):
            return list(await asyncio.gather(*(self._one(call, args) for call, args in parsed)))
        return [await self._one(call, args) for call, args in parsed]

    # -- routing ---------------------------------------------------------------------

    def _route(self, call: ToolCall) -> Route:
        if call.kind == "tool_search" or (self.search_name is not None and call.name == self.search_name):
            return "search"
        if call.name in self.local.catalog:
            return "local"
        if self.native:
            return "direct"
        return "meta"

    def _arguments(self, call: ToolCall) -> dict[str, Any] | ErrorInfo:
        args = parse_arguments(call)
        schema = self.strict_schemas.get(call.name)
        if schema is not None and not isinstance(args, ErrorInfo):
            args = drop_strict_nulls(schema, args)
        return args

    def _definition(self, call: ToolCall, args: dict[str, Any]) -> ToolDefinition | None:
        """The tool that would actually run for this call, if it exists and may be used."""
        principal = self.context.principal
        route = self._route(call)
        if route in ("local", "search"):
            return self.local.catalog.get((self.search_name or "") if route == "search" else call.name)
        if route == "direct":
            return self.gateway.lookup(call.name, principal)
        if call.name == "invoke_tool":
            target = args.get("tool_name")
            return self.gateway.lookup(target, principal) if isinstance(target, str) else None
        return self.gateway.meta.get(call.name)

    def _parallel_safe(self, call: ToolCall, args: dict[str, Any] | ErrorInfo) -> bool:
        if isinstance(args, ErrorInfo):
            return True  # nothing will run
        d = self._definition(call, args)
        return d is not None and d.read_only and d.concurrency_safe

    # -- one call --------------------------------------------------------------------

    async def _one(self, call: ToolCall, args: dict[str, Any] | ErrorInfo) -> Outcome:
        self.emit(ToolCallStarted(call))
        ctx = dataclasses.replace(self.context, call_id=call.id[:64] or self.context.call_id)
        if isinstance(args, ErrorInfo):
            result = ToolResult(call.name, ctx.call_id, "error", error=args)
            self._audit_unread(call, args, ctx)
            route: Route | None = None
        else:
            route = self._route(call)
            result = await self._send(route, call, args, ctx, None)
            asked: set[str] = set()  # a program (run_code) may pause again, on its next call
            while (
                result.status == "confirmation_required"
                and result.pending is not None
                and result.pending.pending_id not in asked
            ):
                asked.add(result.pending.pending_id)
                result = await self._confirm(route, call, args, ctx, result)
            if route != "meta":
                result = _direct_next_steps(result, call.name)
        outcome = Outcome(
            call,
            result,
            render(result),
            blocks=blocks_of(result.output) if result.ok else (),
            loaded=self._loaded(result) if route == "search" else (),
        )
        self.emit(ToolCallFinished(outcome))
        return outcome

    def _audit_unread(self, call: ToolCall, error: ErrorInfo, ctx: ToolContext) -> None:
        """A call whose arguments could not be read never reaches the gateway; the log still shows it."""
        self.gateway.auditor.log(
            principal=ctx.principal.id,
            session=ctx.session_id,
            call_id=ctx.call_id,
            tool=safe_text(call.name, 80),
            outcome="invalid",
            error_code=error.code,
            agent=ctx.principal.agent,
            toolsets=ctx.principal.toolsets,
        )

    def _send(
        self, route: Route, call: ToolCall, args: dict[str, Any], ctx: ToolContext, confirmation: str | None
    ) -> Awaitable[ToolResult]:
        if route == "search":
            return self.local.invoke(self.search_name or "", args, context=ctx)
        if route == "local":
            return self.local.invoke(call.name, args, confirmation=confirmation, context=ctx)
        if route == "direct":
            return self.gateway.invoke(call.name, args, confirmation=confirmation, context=ctx)
        if confirmation is not None:
            args = {**args, "confirmation": confirmation}
        return self.gateway.call(call.name, args, ctx)

    async def _confirm(
        self, route: Route, call: ToolCall, args: dict[str, Any], ctx: ToolContext, result: ToolResult
    ) -> ToolResult:
        """Ask the host's approver, record the answer with the gate, and run the call again with it.

        Without an approver, a meta-tool call returns the pending result (the host may approve
        it later with `Gateway.approve`, and the model repeats the call with the id); a direct
        call cannot carry an id, so it is declined.
        """
        pending = result.pending
        if pending is None:
            return result
        self.emit(ConfirmationRequested(call, pending))
        decider = decider_of(self.approver)  # its `decided_by`, else the host
        if self.approver is None or not self.gateway.gate.allows(decider.channel):
            if route == "meta":
                return result  # waits for a channel that may approve (`[confirmation] approvers`)
            approved = False
        else:
            answer = self.approver(pending)
            if inspect.isawaitable(answer):
                answer = await answer
            approved = answer is True
        if approved:
            self.gateway.approve(pending.pending_id, decided_by=decider)
        else:
            self.gateway.deny(pending.pending_id, decided_by=decider)
        self.emit(ConfirmationAnswered(call, pending, approved))
        return await self._send(route, call, args, ctx, pending.pending_id)

    def _loaded(self, result: ToolResult) -> tuple[ToolDefinition, ...]:
        if not result.ok or not isinstance(result.output, dict):
            return ()
        names = result.output.get("tools", [])
        found = (self.gateway.catalog.get(n) for n in names if isinstance(n, str))
        return tuple(d for d in found if d is not None)


def _direct_next_steps(result: ToolResult, name: str) -> ToolResult:
    """Next steps for a tool the model calls by name: there is no invoke_tool or discover_tools to point at."""
    error = result.error
    if error is None:
        return result
    if error.code == "invalid_arguments":
        step = f"Fix the listed problems and call {safe_text(name, 80)} again."
    elif error.code == "unknown_tool":
        step = "Search for the tool you need with tool search; never guess a tool name."
    else:
        return result
    return dataclasses.replace(result, error=dataclasses.replace(error, next_step=step))

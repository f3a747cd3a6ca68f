"""The agent loop: send the conversation with the tools, run every call through the gateway, repeat.

One async core (`Agent.run`); `Agent.run_sync` drives it from synchronous code. The loop is
vendor-neutral: an adapter's `Provider` speaks to the SDK.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..catalog import Catalog, Registrable
from ..context import ErrorInfo, ToolContext, ToolResult
from ..definition import ToolDefinition
from ..engine import Gateway, run_sync
from ..errors import UserError
from ..gate.confirmation import Approver
from ..meta_tools import META_TOOL_NAMES
from ..rendering import render
from .calls import ModelTurn, Outcome, ToolCall
from .dispatch import Dispatcher
from .events import DEFAULT_TRANSCRIPT_CHARS, Event, Observer, RoundCapReached, TextDelta, Transcript
from .native import SEARCH_TOOL_NAME, search_tool
from .provider import Provider, Request, ToolPlan

DEFAULT_MAX_ROUNDS = 8

WRAP_UP_NOTE = (
    "You have used every tool round this request allows. Do not call any more tools: answer the user "
    "now with what you have, and say what is left undone."
)

_NOT_RUN = ErrorInfo(
    "round_cap",
    "This call was not run: the tool rounds for this request are used up.",
    "Answer the user without calling tools.",
)


@dataclass(frozen=True)
class RunResult:
    """How one user message ended.

    Attributes:
        text: the model's final answer.
        stop: "answer" when the model answered on its own, "round_cap" when the cap forced it.
        rounds: model turns that called tools.
        outcomes: every tool call of this run, in order.
    """

    text: str
    stop: Literal["answer", "round_cap"]
    rounds: int
    outcomes: tuple[Outcome, ...]


class Agent:
    """A conversation between one model (through a `Provider`) and one gateway.

    Args:
        gateway: serves the catalog; every call goes through it.
        provider: the SDK adapter, e.g. `gateway.adapters.anthropic.AnthropicMessages(client, model=...)`.
        system: the system prompt; the prompt fragments of the available tools are appended
            unless `tool_prompts` is False.
        tools: the host's own tools (definitions or `@tool` functions), always loaded, run
            through the same validation, confirmation and audit path.
        approver: the host's answer to a destructive call (a terminal prompt, a button).
            Returns True to run it. Without one, a meta-tool call gets the pending id (approve
            it with `Gateway.approve`) and a direct call is declined.
        on_event: called with each `Event` as it happens.
        max_rounds: model turns that may call tools per user message; then one last call
            asks the model to answer without tools.
        deferred: native deferred loading (the provider's tool search) instead of the meta-tools.
        pinned: with `deferred`, catalog tools that stay loaded from the start.
        context: the base context of every call (principal, session id, resources).
    """

    def __init__(
        self,
        gateway: Gateway,
        provider: Provider,
        *,
        system: str | None = None,
        tools: Iterable[Registrable] = (),
        approver: Approver | None = None,
        on_event: Observer | None = None,
        max_rounds: int = DEFAULT_MAX_ROUNDS,
        deferred: bool = False,
        pinned: Sequence[str] = (),
        context: ToolContext | None = None,
        tool_prompts: bool = True,
        transcript_chars: int = DEFAULT_TRANSCRIPT_CHARS,
    ) -> None:
        if max_rounds < 1:
            raise UserError("max_rounds must be at least 1")
        if deferred and not provider.supports_deferred:
            raise UserError(f"{type(provider).__name__} has no native deferred loading; use the meta-tools")
        if pinned and not deferred:
            raise UserError("pinned tools only apply with deferred=True")
        self.gateway = gateway
        self.provider = provider
        self.context = context or ToolContext(session_id=f"agent-{uuid.uuid4().hex[:12]}")
        self.max_rounds = max_rounds
        self.on_event = on_event
        self.history: list[Any] = []
        self.transcript = Transcript(transcript_chars)
        extras = tuple(Catalog(tools))
        self.plan = self._plan(extras, deferred, pinned)
        local_tools = [*extras, *([self.plan.search] if self.plan.search else [])]
        local = Gateway(
            Catalog(local_tools),
            resources=gateway.resources,
            gate=gateway.gate,
            audit=gateway.auditor.sink,
            redact=gateway.auditor.redact,
            default_timeout=gateway.default_timeout,
            max_parameter_bytes=gateway.max_parameter_bytes,
        )
        strict = provider.strict
        sent = (*self.plan.loaded, *self.plan.deferred, *local_tools)
        self.dispatcher = Dispatcher(
            gateway,
            local,
            context=self.context,
            native=deferred,
            search_name=SEARCH_TOOL_NAME if self.plan.search else None,
            approver=approver,
            emit=self._emit,
            strict_schemas={d.name: d.json_schema for d in sent} if strict else None,
        )
        fragments = gateway.prompt_fragments(self.context.principal) if tool_prompts else []
        if tool_prompts:
            fragments += [d.prompt for d in extras if d.prompt]
        self.system = "\n\n".join(p for p in [system or "", *fragments] if p) or None

    def _plan(self, extras: tuple[ToolDefinition, ...], deferred: bool, pinned: Sequence[str]) -> ToolPlan:
        reserved = set(META_TOOL_NAMES) | {d.name for d in self.gateway.meta} | {SEARCH_TOOL_NAME}
        if deferred:
            reserved |= {d.name for d in self.gateway.catalog}
        clashes = sorted(d.name for d in extras if d.name in reserved)
        if clashes:
            raise UserError(f"the session's own tools clash with gateway tools: {', '.join(clashes)}")
        if not deferred:
            return ToolPlan(loaded=(*self.gateway.meta, *extras))
        if self.provider.client_search and SEARCH_TOOL_NAME in self.gateway.catalog:
            raise UserError(f"a catalog tool is named {SEARCH_TOOL_NAME}, the name of the tool search tool")
        principal = self.context.principal
        unknown = [n for n in pinned if self.gateway.lookup(n, principal) is None]
        if unknown:
            raise UserError(f"pinned tools not in the catalog (or not visible): {', '.join(unknown)}")
        pinned_defs = tuple(d for d in self.gateway.visible(principal) if d.name in pinned)
        rest = tuple(d for d in self.gateway.visible(principal) if d.name not in pinned)
        search = (
            search_tool(self.gateway, frozenset(d.name for d in rest))
            if self.provider.client_search
            else None
        )
        return ToolPlan(loaded=(*pinned_defs, *extras), deferred=rest, search=search)

    def _emit(self, event: Event) -> None:
        if self.on_event is not None:
            self.on_event(event)

    # -- the loop --------------------------------------------------------------------

    def run_sync(self, message: str) -> RunResult:
        """`run` from synchronous code (no event loop running); use a sync SDK client."""
        return run_sync(self.run(message))

    async def run(self, message: str) -> RunResult:
        """Send a user message and run the conversation until the model answers in text."""
        self.provider.add_user(self.history, message)
        self.transcript.add("user", message)
        outcomes: list[Outcome] = []
        rounds = 0
        while True:
            turn = await self._complete(allow_tools=True)
            if not turn.calls:
                if turn.stop_reason == "pause_turn" and rounds < self.max_rounds:
                    rounds += 1  # a server-side tool paused the turn: send it back to continue
                    continue
                return RunResult(turn.text, "answer", rounds, tuple(outcomes))
            rounds += 1
            done = await self.dispatcher.run(turn.calls)
            outcomes.extend(done)
            self._record(done)
            if rounds < self.max_rounds:
                self.provider.add_outcomes(self.history, done, None)
                continue
            self._emit(RoundCapReached(rounds))
            self.provider.add_outcomes(self.history, done, WRAP_UP_NOTE)
            self.transcript.add("note", WRAP_UP_NOTE)
            final = await self._complete(allow_tools=False)
            if final.calls:
                # The model called tools anyway: answer each, unrun, so the history stays valid.
                refused = [self._not_run(call) for call in final.calls]
                self.provider.add_outcomes(self.history, refused, None)
                self._record(refused)
            return RunResult(final.text, "round_cap", rounds, tuple(outcomes))

    async def _complete(self, *, allow_tools: bool) -> ModelTurn:
        def on_text(text: str) -> None:
            self._emit(TextDelta(text))

        request = Request(self.history, self.system, self.plan, allow_tools=allow_tools, on_text=on_text)
        turn = await self.provider.complete(request)
        self.provider.add_turn(self.history, turn)
        if turn.text:
            self.transcript.add("assistant", turn.text)
        for call in turn.calls:
            raw = call.arguments
            args = (
                raw if isinstance(raw, str) else json.dumps(dict(raw or {}), ensure_ascii=False, default=str)
            )
            self.transcript.add("tool_call", args or "{}", name=call.name, call_id=call.id)
        return turn

    def _record(self, outcomes: Sequence[Outcome]) -> None:
        for o in outcomes:
            self.transcript.add("tool_result", o.text, name=o.call.name, call_id=o.call.id)

    def _not_run(self, call: ToolCall) -> Outcome:
        result = ToolResult(call.name, call.id, "error", error=_NOT_RUN)
        return Outcome(call, result, render(result))

"""The Anthropic Messages API: tool definitions, tool calls and results, native tool search, the agent provider.

The `anthropic` package is imported lazily (only `client_from_env` needs it); everything else
works on the SDK's objects by duck typing and on plain dicts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from ..agent.calls import ModelTurn, Outcome, ToolCall
from ..agent.content import ImageBlock, TextBlock
from ..agent.provider import Request, TextSink, ToolPlan, call_sdk
from ..arguments import Unusable, load_json
from ..definition import ToolDefinition
from ..errors import UserError

if TYPE_CHECKING:
    from anthropic import Anthropic, AsyncAnthropic

SearchMode = Literal["client", "bm25", "regex"]
"""client: the gateway's own search answers a custom search tool; bm25/regex: Anthropic's servers search."""

_CACHE = {"type": "ephemeral"}


# -- definitions ---------------------------------------------------------------------


CODE_EXECUTION = "code_execution_20250825"
"""Anthropic's code execution tool, whose programs may call tools offered to it (`allowed_callers`)."""


def tool_param(
    d: ToolDefinition, *, defer_loading: bool = False, cache: bool = False, programmatic: bool = False
) -> dict[str, Any]:
    """One tool as an Anthropic `ToolParam` (`name`, `description`, `input_schema`).

    `programmatic`: the model may also call it from code it runs in Anthropic's code execution tool
    (programmatic tool calling); each such call still reaches the host as a `tool_use`.
    """
    out: dict[str, Any] = {"name": d.name, "description": d.description, "input_schema": d.json_schema}
    if programmatic:
        out["allowed_callers"] = ["direct", CODE_EXECUTION]
    if defer_loading:
        out["defer_loading"] = True
    if cache:
        out["cache_control"] = dict(_CACHE)
    return out


def tools(definitions: Iterable[ToolDefinition]) -> list[dict[str, Any]]:
    return [tool_param(d) for d in definitions]


def server_search_tool(search: Literal["bm25", "regex"]) -> dict[str, Any]:
    """Anthropic's server-side tool search tool."""
    return {"type": f"tool_search_tool_{search}_20251119", "name": f"tool_search_tool_{search}"}


def request_tools(
    plan: ToolPlan, *, search: SearchMode = "client", cache: bool = True, programmatic: bool = False
) -> list[dict[str, Any]]:
    """The `tools` of a request for a tool plan.

    With deferred tools, the search tool comes first and is never deferred, so at least one
    tool is always loaded. The cache marker goes on the last loaded tool: deferred tools
    must not carry one.
    """
    out: list[dict[str, Any]] = [{"type": CODE_EXECUTION, "name": "code_execution"}] if programmatic else []
    if plan.search is not None:
        out.append(tool_param(plan.search))
    elif plan.deferred:
        if search == "client":
            raise UserError("client-side tool search needs the search tool in the plan")
        out.append(server_search_tool(search))
    out.extend(tool_param(d, programmatic=programmatic) for d in plan.loaded)
    if cache and out:
        out[-1] = {**out[-1], "cache_control": dict(_CACHE)}
    out.extend(tool_param(d, defer_loading=True, programmatic=programmatic) for d in plan.deferred)
    return out


# -- results -------------------------------------------------------------------------


def result_content(outcome: Outcome) -> str | list[dict[str, Any]]:
    """A result's `tool_result` content: text, content blocks, or `tool_reference`s from a search."""
    if outcome.loaded:
        return [{"type": "tool_reference", "tool_name": d.name} for d in outcome.loaded]
    if not outcome.blocks:
        return outcome.text
    blocks: list[dict[str, Any]] = []
    for b in outcome.blocks:
        if isinstance(b, TextBlock):
            blocks.append({"type": "text", "text": b.text})
        elif isinstance(b, ImageBlock):
            source = {"type": "base64", "media_type": b.media_type, "data": b.data}
            blocks.append({"type": "image", "source": source})
    return blocks


def tool_result(outcome: Outcome) -> dict[str, Any]:
    """One outcome as a `tool_result` block; `is_error` only when the call failed."""
    out: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": outcome.call.id,
        "content": result_content(outcome),
    }
    if outcome.is_error:
        out["is_error"] = True
    return out


# -- responses -----------------------------------------------------------------------


def _as_dict(model: Any) -> dict[str, Any]:
    data: dict[str, Any] = model.to_dict(mode="json", exclude_none=True)
    return data


def turn_from_blocks(
    blocks: Sequence[dict[str, Any]], stop_reason: str | None, raw_inputs: Mapping[int, str]
) -> ModelTurn:
    """A turn from content blocks; `raw_inputs` holds streamed tool inputs that are not valid JSON."""
    text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    calls = tuple(
        ToolCall(b["id"], b["name"], raw_inputs.get(i, b.get("input")))
        for i, b in enumerate(blocks)
        if b.get("type") == "tool_use"
    )
    message = {"role": "assistant", "content": list(blocks)}
    return ModelTurn(text, calls, stop_reason, message)


def _container(message: Any) -> str | None:
    found = getattr(message, "container", None)
    return getattr(found, "id", None)


def parse_message(message: Any) -> ModelTurn:
    """A turn from a (non-streamed) SDK `Message`."""
    return turn_from_blocks([_as_dict(b) for b in message.content], message.stop_reason, {})


class MessageAccumulator:
    """Builds a turn from raw stream events, keeping a tool input that is not valid JSON as text.

    (The SDK's own stream helper raises on such input; here it becomes a call the model is
    asked to re-emit.)
    """

    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.inputs: dict[int, str] = {}
        self.malformed: dict[int, str] = {}
        self.stop_reason: str | None = None
        self.container: str | None = None  # the code execution container, when one ran

    def feed(self, event: Any, on_text: TextSink | None) -> None:
        kind = event.type
        if kind in ("message_start", "message_delta"):
            self.container = (
                _container(event.message if kind == "message_start" else event.delta) or self.container
            )
        if kind == "content_block_start":
            block = _as_dict(event.content_block)
            self.blocks[event.index] = block
            if block.get("type") in ("tool_use", "server_tool_use"):
                self.inputs[event.index] = ""
        elif kind == "content_block_delta":
            self._delta(self.blocks[event.index], event.index, event.delta, on_text)
        elif kind == "content_block_stop" and event.index in self.inputs:
            raw = self.inputs.pop(event.index)
            block = self.blocks[event.index]
            try:
                parsed = load_json(raw) if raw.strip() else block.get("input") or {}
            except (json.JSONDecodeError, Unusable):  # the loop re-reads the text and tells the model
                parsed = None
            if isinstance(parsed, dict):
                block["input"] = parsed
            else:
                block["input"] = {}
                self.malformed[event.index] = raw
        elif kind == "message_delta":
            self.stop_reason = event.delta.stop_reason

    def _delta(self, block: dict[str, Any], index: int, delta: Any, on_text: TextSink | None) -> None:
        kind = delta.type
        if kind == "text_delta":
            block["text"] = block.get("text", "") + delta.text
            if on_text is not None:
                on_text(delta.text)
        elif kind == "input_json_delta":
            self.inputs[index] = self.inputs.get(index, "") + delta.partial_json
        elif kind == "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta.thinking
        elif kind == "signature_delta":
            block["signature"] = delta.signature
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(_as_dict(delta.citation))

    def turn(self) -> ModelTurn:
        ordered = [self.blocks[i] for i in sorted(self.blocks)]
        positions = {i: n for n, i in enumerate(sorted(self.blocks))}
        return turn_from_blocks(
            ordered, self.stop_reason, {positions[i]: raw for i, raw in self.malformed.items()}
        )


# -- the agent provider --------------------------------------------------------------


class AnthropicMessages:
    """Drives `client.messages.create` (sync `Anthropic` or `AsyncAnthropic`) for `gateway.agent.Agent`.

    Args:
        client: an SDK client; the caller owns and closes it.
        model: the model name.
        max_tokens: the answer budget per model call.
        stream: stream responses (text is reported as it arrives).
        tool_search: with `Agent(deferred=True)`: "client" (the gateway's search answers a custom
            search tool with `tool_reference` blocks), "bm25" or "regex" (Anthropic's servers search).
        cache: put a prompt-cache marker on the last loaded tool.
        programmatic: offer the gateway's tools to Anthropic's code execution tool too (programmatic
            tool calling, `allowed_callers`): the model's code calls them, and each call reaches this
            loop as a `tool_use` and goes through the gateway like any other. The conversation's
            container is sent back with each later request.
        options: more `messages.create` arguments (temperature, thinking, metadata, ...).
    """

    supports_deferred = True
    strict = False

    def __init__(
        self,
        client: Anthropic | AsyncAnthropic,
        *,
        model: str,
        max_tokens: int = 4096,
        stream: bool = True,
        tool_search: SearchMode = "client",
        cache: bool = True,
        programmatic: bool = False,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        self.client: Any = client
        self.model = model
        self.max_tokens = max_tokens
        self.stream = stream
        self.tool_search: SearchMode = tool_search
        self.cache = cache
        self.options = dict(options or {})
        self.programmatic = programmatic
        self.container: str | None = None
        self._tools: tuple[ToolPlan, list[dict[str, Any]]] | None = None

    @property
    def client_search(self) -> bool:
        return self.tool_search == "client"

    def request_tools(self, plan: ToolPlan) -> list[dict[str, Any]]:
        if self._tools is None or self._tools[0] is not plan:
            tools = request_tools(
                plan, search=self.tool_search, cache=self.cache, programmatic=self.programmatic
            )
            self._tools = (plan, tools)
        return self._tools[1]

    def add_user(self, history: list[Any], text: str) -> None:
        history.append({"role": "user", "content": text})

    async def complete(self, request: Request) -> ModelTurn:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": request.history,
            "tools": self.request_tools(request.plan),
        }
        if request.system:
            kwargs["system"] = request.system
        if not request.allow_tools:
            kwargs["tool_choice"] = {"type": "none"}
        if self.container is not None:  # the code the model runs there is waiting for its calls
            kwargs["container"] = self.container
        kwargs.update(self.options)
        if not self.stream:
            message = await call_sdk(
                self.client.messages.create, kwargs, stream=False, feed=_no_feed, on_text=None
            )
            self.container = _container(message) or self.container
            return parse_message(message)
        acc = MessageAccumulator()
        kwargs["stream"] = True
        await call_sdk(
            self.client.messages.create, kwargs, stream=True, feed=acc.feed, on_text=request.on_text
        )
        self.container = acc.container or self.container
        return acc.turn()

    def add_turn(self, history: list[Any], turn: ModelTurn) -> None:
        history.append(turn.message)

    def add_outcomes(self, history: list[Any], outcomes: Sequence[Outcome], note: str | None) -> None:
        content: list[dict[str, Any]] = [tool_result(o) for o in outcomes]
        if note:
            content.append({"type": "text", "text": note})
        history.append({"role": "user", "content": content})


def _no_feed(event: Any, on_text: TextSink | None) -> None:
    raise AssertionError("not streaming")


def client_from_env(*, base_url: str | None = None, use_async: bool = False) -> Anthropic | AsyncAnthropic:
    """An SDK client; the key comes from ANTHROPIC_API_KEY (and the base URL from ANTHROPIC_BASE_URL).

    Raises:
        UserError: the SDK is not installed, or no key (nor auth token) is set.
    """
    try:
        import anthropic
    except ImportError as exc:
        raise UserError(
            "the anthropic package is not installed: pip install 'metatool-gateway[anthropic]'"
        ) from exc
    client = (
        anthropic.AsyncAnthropic(base_url=base_url) if use_async else anthropic.Anthropic(base_url=base_url)
    )
    if client.api_key is None and client.auth_token is None:
        # The SDK would only find out at the first request; say so before anyone types a message.
        raise UserError(
            "no Anthropic API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), "
            "or choose another provider with --provider"
        )
    return client

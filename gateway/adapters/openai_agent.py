"""Agent providers for the OpenAI Chat Completions and Responses APIs.

The `openai` package is imported lazily (only `client_from_env` needs it); the providers work
on the SDK's objects by duck typing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from ..agent.calls import ModelTurn, Outcome, ToolCall
from ..agent.provider import ProviderError, Request, TextSink, ToolPlan, call_sdk
from ..errors import UserError
from .openai import (
    chat_tool_messages,
    chat_tools,
    function_call_output,
    namespace_description,
    responses_request_tools,
    tool_search_output,
)

if TYPE_CHECKING:
    from openai import AsyncOpenAI, OpenAI

Search = Literal["client", "server"]


def _as_dict(model: Any) -> dict[str, Any]:
    data: dict[str, Any] = model.to_dict(mode="json", exclude_none=True)
    return data


class _Base:
    strict: bool

    def __init__(
        self,
        client: OpenAI | AsyncOpenAI,
        *,
        model: str,
        stream: bool = True,
        strict: bool = False,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        self.client: Any = client
        self.model = model
        self.stream = stream
        self.strict = strict
        self.options = dict(options or {})

    def add_user(self, history: list[Any], text: str) -> None:
        history.append({"role": "user", "content": text})

    async def _send(
        self,
        create: Any,
        kwargs: dict[str, Any],
        request: Request,
        parse: Any,
        acc: ChatAccumulator | ResponsesAccumulator,
    ) -> ModelTurn:
        """One request through either API: no tools on the wrap-up turn, host options, streamed or not."""
        if not request.allow_tools:
            kwargs["tool_choice"] = "none"
        kwargs.update(self.options)
        if not self.stream:
            turn: ModelTurn = parse(await call_sdk(create, kwargs, stream=False, feed=_no_feed, on_text=None))
            return turn
        kwargs["stream"] = True
        await call_sdk(create, kwargs, stream=True, feed=acc.feed, on_text=request.on_text)
        return acc.turn()


# -- Chat Completions ------------------------------------------------------------------


class ChatAccumulator:
    """Builds a turn from streamed chunks; tool call arguments stay raw text until the loop parses them."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, dict[str, str]] = {}
        self.finish: str | None = None

    def feed(self, chunk: Any, on_text: TextSink | None) -> None:
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            delta = choice.delta
            if delta.content:
                self.text.append(delta.content)
                if on_text is not None:
                    on_text(delta.content)
            for tc in delta.tool_calls or ():
                slot = self.calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
                if tc.id:
                    slot["id"] = tc.id
                if tc.function is not None:
                    slot["name"] += tc.function.name or ""
                    slot["arguments"] += tc.function.arguments or ""
            if choice.finish_reason:
                self.finish = choice.finish_reason

    def turn(self) -> ModelTurn:
        calls = [self.calls[i] for i in sorted(self.calls)]
        return _chat_turn("".join(self.text), calls, self.finish)


def _chat_turn(text: str, calls: Sequence[Mapping[str, str]], finish: str | None) -> ModelTurn:
    message: dict[str, Any] = {"role": "assistant"}
    if text or not calls:
        message["content"] = text
    if calls:
        message["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in calls
        ]
    parsed = tuple(ToolCall(c["id"], c["name"], c["arguments"]) for c in calls)
    return ModelTurn(text, parsed, finish, message)


def parse_completion(completion: Any) -> ModelTurn:
    """A turn from a (non-streamed) `ChatCompletion`."""
    choice = completion.choices[0]
    calls = [
        {"id": tc.id, "name": tc.function.name, "arguments": tc.function.arguments}
        for tc in choice.message.tool_calls or ()
        if tc.type == "function"
    ]
    return _chat_turn(choice.message.content or "", calls, choice.finish_reason)


class OpenAIChat(_Base):
    """Drives `client.chat.completions.create` (sync `OpenAI` or `AsyncOpenAI`) for `gateway.agent.Agent`.

    Chat Completions has no tool search: use it with the meta-tools. `strict=True` sends the
    tools in strict mode (see `gateway.adapters.openai`).
    """

    supports_deferred = False
    client_search = False

    async def complete(self, request: Request) -> ModelTurn:
        messages = list(request.history)
        if request.system:
            messages.insert(0, {"role": "system", "content": request.system})
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "tools": chat_tools(request.plan.loaded, strict=self.strict),
        }
        return await self._send(
            self.client.chat.completions.create, kwargs, request, parse_completion, ChatAccumulator()
        )

    def add_turn(self, history: list[Any], turn: ModelTurn) -> None:
        history.append(turn.message)

    def add_outcomes(self, history: list[Any], outcomes: Sequence[Outcome], note: str | None) -> None:
        history.extend(chat_tool_messages(outcomes))
        if note:
            history.append({"role": "user", "content": note})


# -- Responses -----------------------------------------------------------------------


def parse_response(response: Any) -> ModelTurn:
    """A turn from a `Response`: its text, function calls and client tool searches."""
    text: list[str] = []
    calls: list[ToolCall] = []
    for item in response.output:
        if item.type == "message":
            text.extend(part.text for part in item.content if part.type == "output_text")
        elif item.type == "function_call":
            calls.append(ToolCall(item.call_id, item.name, item.arguments, namespace=item.namespace))
        elif item.type == "tool_search_call" and item.execution == "client":
            calls.append(ToolCall(item.call_id or item.id, "tool_search", item.arguments, kind="tool_search"))
    items = [_as_dict(item) for item in response.output]
    return ModelTurn("".join(text), tuple(calls), response.status, items)


class ResponsesAccumulator:
    """Reports text deltas and keeps the final response of a streamed Responses call."""

    def __init__(self) -> None:
        self.response: Any = None

    def feed(self, event: Any, on_text: TextSink | None) -> None:
        if event.type == "response.output_text.delta":
            if on_text is not None:
                on_text(event.delta)
        elif event.type in ("response.completed", "response.incomplete"):
            self.response = event.response
        elif event.type in ("response.failed", "error"):
            raise ProviderError(f"the model call failed: {getattr(event, 'message', None) or event.type}")

    def turn(self) -> ModelTurn:
        if self.response is None:
            raise ProviderError("the response stream ended before the response was complete")
        return parse_response(self.response)


class OpenAIResponses(_Base):
    """Drives `client.responses.create` (sync `OpenAI` or `AsyncOpenAI`) for `gateway.agent.Agent`.

    Args:
        tool_search: with `Agent(deferred=True)`: "client" (the gateway's search answers
            `tool_search_call`s with `tool_search_output`) or "server" (OpenAI's hosted search).
            Deferred tools are declared in one namespace per category either way.
        namespace_descriptions: per-category namespace descriptions, instead of the generated ones.
    """

    supports_deferred = True

    def __init__(
        self,
        client: OpenAI | AsyncOpenAI,
        *,
        model: str,
        stream: bool = True,
        strict: bool = False,
        tool_search: Search = "client",
        namespace_descriptions: Mapping[str, str] | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(client, model=model, stream=stream, strict=strict, options=options)
        self.tool_search: Search = tool_search
        self.namespace_descriptions = dict(namespace_descriptions or {})
        self._tools: tuple[ToolPlan, list[dict[str, Any]], dict[str, str]] | None = None

    @property
    def client_search(self) -> bool:
        return self.tool_search == "client"

    def _prepared(self, plan: ToolPlan) -> tuple[list[dict[str, Any]], dict[str, str]]:
        if self._tools is None or self._tools[0] is not plan:
            by_category: dict[str, list[Any]] = {}
            for d in plan.deferred:
                by_category.setdefault(d.category, []).append(d)
            descriptions = {c: namespace_description(c, defs) for c, defs in by_category.items()}
            descriptions.update(self.namespace_descriptions)
            tools = responses_request_tools(plan, strict=self.strict, descriptions=descriptions)
            self._tools = (plan, tools, descriptions)
        return self._tools[1], self._tools[2]

    async def complete(self, request: Request) -> ModelTurn:
        tools, _ = self._prepared(request.plan)
        kwargs: dict[str, Any] = {"model": self.model, "input": request.history, "tools": tools}
        if request.system:
            kwargs["instructions"] = request.system
        return await self._send(
            self.client.responses.create, kwargs, request, parse_response, ResponsesAccumulator()
        )

    def add_turn(self, history: list[Any], turn: ModelTurn) -> None:
        history.extend(turn.message)

    def add_outcomes(self, history: list[Any], outcomes: Sequence[Outcome], note: str | None) -> None:
        descriptions = self._tools[2] if self._tools else {}
        for o in outcomes:
            if o.call.kind == "tool_search":
                history.append(tool_search_output(o, strict=self.strict, descriptions=descriptions))
            else:
                history.append(function_call_output(o))
        if note:
            history.append({"role": "user", "content": note})


def _no_feed(event: Any, on_text: TextSink | None) -> None:
    raise AssertionError("not streaming")


def client_from_env(*, base_url: str | None = None, use_async: bool = False) -> OpenAI | AsyncOpenAI:
    """An SDK client; the key comes from OPENAI_API_KEY (and the base URL from OPENAI_BASE_URL)."""
    try:
        import openai
    except ImportError as exc:
        raise UserError(
            "the openai package is not installed: pip install 'metatool-gateway[openai]'"
        ) from exc
    if use_async:
        return openai.AsyncOpenAI(base_url=base_url)
    return openai.OpenAI(base_url=base_url)

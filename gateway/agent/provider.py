"""The contract between the vendor-neutral loop and an SDK adapter, and how either kind of SDK client is driven.

An adapter (in `gateway.adapters`) implements `Provider`: it turns the neutral tool plan
into the SDK's tool list, sends the conversation, parses the response into a `ModelTurn`,
and appends turns and outcomes to the history in the SDK's own message shape.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..definition import ToolDefinition
from ..errors import GatewayError
from .calls import ModelTurn, Outcome

TextSink = Callable[[str], None]


class ProviderError(GatewayError):
    """The model API reported a failure, or its stream ended before the response was complete."""


@dataclass(frozen=True)
class ToolPlan:
    """Which tools the model is given, and how.

    Attributes:
        loaded: sent in full every turn (the meta-tools, pinned tools, the host's own tools).
        deferred: native deferred loading only: declared, loaded on demand by tool search.
        search: the client-side search tool, when the gateway answers tool searches itself.
    """

    loaded: tuple[ToolDefinition, ...]
    deferred: tuple[ToolDefinition, ...] = ()
    search: ToolDefinition | None = None

    @property
    def native(self) -> bool:
        return bool(self.deferred) or self.search is not None


@dataclass(frozen=True)
class Request:
    """One model call: the conversation so far, the system prompt, the tools, and whether tools may be used."""

    history: Sequence[Any]
    system: str | None
    plan: ToolPlan
    allow_tools: bool = True
    on_text: TextSink | None = None


class Provider(Protocol):
    """One SDK API (Anthropic Messages, OpenAI Chat Completions, OpenAI Responses)."""

    @property
    def supports_deferred(self) -> bool:
        """Whether the API has native deferred loading (tool search)."""
        ...

    @property
    def strict(self) -> bool:
        """Whether tools are sent in OpenAI strict mode (the loop then drops the nulls it forces)."""
        ...

    @property
    def client_search(self) -> bool:
        """In deferred mode, whether the gateway answers the tool searches (False: the provider's servers do)."""
        ...

    def add_user(self, history: list[Any], text: str) -> None: ...

    async def complete(self, request: Request) -> ModelTurn: ...

    def add_turn(self, history: list[Any], turn: ModelTurn) -> None: ...

    def add_outcomes(self, history: list[Any], outcomes: Sequence[Outcome], note: str | None) -> None:
        """Append the results of a turn's calls (in call order) and, if given, a note to the model."""
        ...


def is_async_callable(fn: Callable[..., Any]) -> bool:
    """True for an async SDK client's methods, which the SDKs wrap in plain decorators."""
    return inspect.iscoroutinefunction(inspect.unwrap(fn))


async def call_sdk(
    create: Callable[..., Any],
    kwargs: dict[str, Any],
    *,
    stream: bool,
    feed: Callable[[Any, TextSink | None], None],
    on_text: TextSink | None,
) -> Any:
    """Call an SDK method, sync or async; with `stream`, hand every event to `feed` and return None.

    A sync client runs in a worker thread so the loop stays async (one async core); text
    deltas are passed back to the event loop's thread, in order, before this returns.
    """
    if is_async_callable(create):
        response = await create(**kwargs)
        if not stream:
            return response
        async with response:
            async for event in response:
                feed(event, on_text)
        return None

    relay = None if on_text is None else _relay(asyncio.get_running_loop(), on_text)

    def blocking() -> Any:
        response = create(**kwargs)
        if not stream:
            return response
        with response:
            for event in response:
                feed(event, relay)
        return None

    return await asyncio.to_thread(blocking)


def _relay(loop: asyncio.AbstractEventLoop, sink: TextSink) -> TextSink:
    def relay(text: str) -> None:
        loop.call_soon_threadsafe(sink, text)

    return relay

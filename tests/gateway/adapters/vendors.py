"""The three SDK APIs behind one small test interface, so each conversation runs on every one of them.

Each vendor scripts a model turn for the replay server, builds the real SDK client and the
gateway's provider, and reads back the tool results a request carried.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anthropic
import openai

from gateway import Gateway
from gateway.adapters.anthropic import AnthropicMessages
from gateway.adapters.openai_agent import OpenAIChat, OpenAIResponses
from gateway.agent import Agent, Event, Provider, RunResult

from .replay import JSON, Call, Replay, Reply, anthropic_turn, chat_turn, responses_turn

Sent = tuple[str, Any]
"""(call id, the result content the model got)."""


@dataclass(frozen=True)
class Vendor:
    name: str
    turn: Callable[..., Reply]

    def client(self, replay: Replay, *, use_async: bool) -> Any:
        raise NotImplementedError

    def provider(self, client: Any, **options: Any) -> Provider:
        raise NotImplementedError

    def results(self, body: JSON) -> list[Sent]:
        """The tool results at the end of a request, in order."""
        raise NotImplementedError

    def last_text(self, body: JSON) -> str:
        """The last plain text message the host added (a user message or a note)."""
        raise NotImplementedError


class _Anthropic(Vendor):
    def client(self, replay: Replay, *, use_async: bool) -> Any:
        cls = anthropic.AsyncAnthropic if use_async else anthropic.Anthropic
        return cls(base_url=replay.url, api_key="test-key", max_retries=0)

    def provider(self, client: Any, **options: Any) -> Provider:
        return AnthropicMessages(client, model="claude-test", **options)

    def results(self, body: JSON) -> list[Sent]:
        last = body["messages"][-1]["content"]
        return (
            [(b["tool_use_id"], b["content"]) for b in last if b["type"] == "tool_result"]
            if isinstance(last, list)
            else []
        )

    def last_text(self, body: JSON) -> str:
        content = body["messages"][-1]["content"]
        return content if isinstance(content, str) else content[-1]["text"]


class _Chat(Vendor):
    def client(self, replay: Replay, *, use_async: bool) -> Any:
        cls = openai.AsyncOpenAI if use_async else openai.OpenAI
        return cls(base_url=f"{replay.url}/v1", api_key="test-key", max_retries=0)

    def provider(self, client: Any, **options: Any) -> Provider:
        return OpenAIChat(client, model="gpt-test", **options)

    def results(self, body: JSON) -> list[Sent]:
        out: list[Sent] = []
        for m in reversed(body["messages"]):
            if m["role"] == "assistant":
                break
            if m["role"] == "tool":
                out.insert(0, (m["tool_call_id"], m["content"]))
        return out

    def last_text(self, body: JSON) -> str:
        text: str = body["messages"][-1]["content"]
        return text


class _Responses(_Chat):
    def provider(self, client: Any, **options: Any) -> Provider:
        return OpenAIResponses(client, model="gpt-test", **options)

    def results(self, body: JSON) -> list[Sent]:
        out: list[Sent] = []
        for item in reversed(body["input"]):
            if item.get("type") in ("function_call", "tool_search_call"):
                break
            if item.get("type") == "function_call_output":
                out.insert(0, (item["call_id"], item["output"]))
        return out

    def last_text(self, body: JSON) -> str:
        text: str = body["input"][-1]["content"]
        return text


ANTHROPIC = _Anthropic("anthropic", anthropic_turn)
CHAT = _Chat("openai-chat", chat_turn)
RESPONSES = _Responses("openai-responses", responses_turn)
VENDORS = [ANTHROPIC, CHAT, RESPONSES]


def converse(
    vendor: Vendor,
    replay: Replay,
    gw: Gateway,
    messages: Sequence[str],
    *,
    use_async: bool = False,
    provider_options: dict[str, Any] | None = None,
    **agent_options: Any,
) -> tuple[list[RunResult], list[Event], Agent]:
    """Run user messages through an Agent on the vendor's real client: sync client + run_sync, or async + run."""
    events: list[Event] = []
    agent_options.setdefault("on_event", events.append)

    if not use_async:
        with vendor.client(replay, use_async=False) as client:
            agent = Agent(gw, vendor.provider(client, **(provider_options or {})), **agent_options)
            return [agent.run_sync(m) for m in messages], events, agent

    async def main() -> tuple[list[RunResult], Agent]:
        async with vendor.client(replay, use_async=True) as client:
            agent = Agent(gw, vendor.provider(client, **(provider_options or {})), **agent_options)
            return [await agent.run(m) for m in messages], agent

    results, agent = asyncio.run(main())
    return results, events, agent


def call(call_id: str, name: str, arguments: JSON | str) -> Call:
    """A scripted tool call; a str is sent as is (it may be malformed JSON)."""
    return (call_id, name, arguments if isinstance(arguments, str) else json.dumps(arguments))

"""Agents on the gateway: the vendor-neutral agent loop.

Owns the loop (`loop`: rounds, the wrap-up note, the confirmation hand-off), the model's turns and
tool calls (`calls`), message content (`content`), dispatch of tool calls to the gateway
(`dispatch`), the events an observer sees (`events`), the provider protocol an SDK adapter
implements (`provider`) and native deferred loading (`native`). It may import the core and nothing
else of the gateway: the SDK adapters (`gateway.adapters`) implement its `Provider`, and the
terminal chat that picks one lives with the command line (`gateway.cli.chat`).
"""

from .calls import ModelTurn, Outcome, ToolCall
from .content import Image, content
from .events import (
    ConfirmationAnswered,
    ConfirmationRequested,
    Event,
    RoundCapReached,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    Transcript,
    TranscriptEntry,
)
from .loop import DEFAULT_MAX_ROUNDS, WRAP_UP_NOTE, Agent, RunResult
from .native import SEARCH_TOOL_NAME
from .provider import Provider, ProviderError, Request, ToolPlan

__all__ = [
    "DEFAULT_MAX_ROUNDS",
    "SEARCH_TOOL_NAME",
    "WRAP_UP_NOTE",
    "Agent",
    "ConfirmationAnswered",
    "ConfirmationRequested",
    "Event",
    "Image",
    "ModelTurn",
    "Outcome",
    "Provider",
    "ProviderError",
    "Request",
    "RoundCapReached",
    "RunResult",
    "TextDelta",
    "ToolCall",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolPlan",
    "Transcript",
    "TranscriptEntry",
    "content",
]

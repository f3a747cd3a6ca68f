"""Agents on the gateway: a vendor-neutral loop; the SDK adapters live in `gateway.adapters`."""

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

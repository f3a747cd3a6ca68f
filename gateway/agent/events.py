"""What an agent run reports as it goes: events for observers, and a transcript for the record."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ..context import PendingConfirmation
from .calls import Outcome, ToolCall

log = logging.getLogger("gateway.agent")

DEFAULT_TRANSCRIPT_CHARS = 2000


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the model's answer, as it streams in."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    call: ToolCall


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class ConfirmationRequested:
    """A destructive call waits for the host's approver (or, without one, for `Gateway.approve`)."""

    call: ToolCall
    pending: PendingConfirmation


@dataclass(frozen=True, slots=True)
class ConfirmationAnswered:
    call: ToolCall
    pending: PendingConfirmation
    approved: bool


@dataclass(frozen=True, slots=True)
class RoundCapReached:
    """The run used its tool rounds; one last call asks the model to answer without tools."""

    rounds: int


Event = (
    TextDelta
    | ToolCallStarted
    | ToolCallFinished
    | ConfirmationRequested
    | ConfirmationAnswered
    | RoundCapReached
)
Observer = Callable[[Event], None]

EntryKind = Literal["user", "assistant", "tool_call", "tool_result", "note"]


@dataclass(frozen=True, slots=True)
class TranscriptEntry:
    kind: EntryKind
    text: str
    name: str = ""
    call_id: str = ""


def truncate(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more chars]"


class Transcript:
    """The conversation as readable entries, long payloads truncated; also logged to `gateway.agent`."""

    def __init__(self, max_chars: int = DEFAULT_TRANSCRIPT_CHARS) -> None:
        self.max_chars = max_chars
        self.entries: list[TranscriptEntry] = []

    def add(self, kind: EntryKind, text: str, *, name: str = "", call_id: str = "") -> None:
        entry = TranscriptEntry(kind, truncate(text, self.max_chars), name, call_id)
        self.entries.append(entry)
        log.debug("%s %s%s", kind, f"{name} " if name else "", entry.text)

    def render(self) -> str:
        """The entries as plain text lines, for logs and terminals."""
        lines = []
        for e in self.entries:
            label = f"{e.kind} {e.name}".strip()
            lines.append(f"[{label}] {e.text}")
        return "\n".join(lines)

"""The vendor-neutral shapes the loop works with: a model's tool calls, its turn, and each call's outcome.

Adapters parse an SDK's response into a `ModelTurn` and map each `Outcome` back to the SDK's
result shape; nothing here knows a vendor.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..arguments import Unusable, check_shape, load_json
from ..context import ErrorInfo, ToolResult
from ..definition import ToolDefinition
from ..rendering import safe_text
from .content import Block

CallKind = Literal["function", "tool_search"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call as the model emitted it.

    `arguments` is kept raw: JSON text (OpenAI, or a streamed Anthropic input), an already
    parsed object, or None. Parsing happens once, in `parse_arguments`.
    """

    id: str
    name: str
    arguments: str | Mapping[str, Any] | None
    kind: CallKind = "function"
    namespace: str | None = None


@dataclass(frozen=True, slots=True)
class ModelTurn:
    """What one model response said and asked for.

    `message` is the SDK-shaped assistant message (or output items) the adapter appends to
    the history; the loop never looks inside it.
    """

    text: str
    calls: tuple[ToolCall, ...]
    stop_reason: str | None
    message: Any


@dataclass(frozen=True, slots=True)
class Outcome:
    """One call's result, ready for an adapter to send back.

    Attributes:
        text: what the model reads (the rendered result).
        blocks: content blocks when the tool answered with `content(...)`.
        loaded: tools a search call made available (native deferred loading).
    """

    call: ToolCall
    result: ToolResult
    text: str
    blocks: tuple[Block, ...] = ()
    loaded: tuple[ToolDefinition, ...] = field(default=())

    @property
    def is_error(self) -> bool:
        return self.result.status == "error"


def malformed_arguments(name: str, exc: json.JSONDecodeError) -> ErrorInfo:
    """The model-facing error for a call whose arguments are not valid JSON."""
    tool = safe_text(name, 80)
    return ErrorInfo(
        "invalid_json",
        f"The arguments of this {tool} call are not valid JSON: {exc.msg} at line {exc.lineno} "
        f"column {exc.colno}. Nothing was run.",
        f"Call {tool} again with its complete arguments as one JSON object.",
    )


def unusable_arguments(name: str, exc: Unusable) -> ErrorInfo:
    """The model-facing error for arguments nested too deep or holding too long a number."""
    tool = safe_text(name, 80)
    return ErrorInfo(
        "invalid_arguments",
        f"The arguments of this {tool} call cannot be used. Nothing was run.",
        f"Fix the listed problems and call {tool} again.",
        (exc.problem,),
    )


def parse_arguments(call: ToolCall) -> dict[str, Any] | ErrorInfo:
    """A call's arguments as an object, or the error the model gets instead of any handler running."""
    raw = call.arguments
    if raw is None:
        return {}
    try:
        if isinstance(raw, str):
            if not raw.strip():
                return {}
            raw = load_json(raw)
        else:
            check_shape(raw)
    except json.JSONDecodeError as exc:
        return malformed_arguments(call.name, exc)
    except Unusable as exc:
        return unusable_arguments(call.name, exc)
    if not isinstance(raw, Mapping):
        tool = safe_text(call.name, 80)
        return ErrorInfo(
            "invalid_json",
            f"The arguments of this {tool} call must be a JSON object, got {type(raw).__name__}. "
            "Nothing was run.",
            f"Call {tool} again with its arguments as one JSON object.",
        )
    return dict(raw)


def drop_strict_nulls(schema: Mapping[str, Any], value: Any) -> Any:
    """Undo OpenAI strict mode's "every field required": drop nulls the original schema did not ask for.

    Strict mode makes optional fields required-but-nullable, so the model sends `null` for
    what it means to omit; the tool's own model wants the field absent.
    """
    defs = schema.get("$defs", {})

    def walk(node: Mapping[str, Any], item: Any) -> Any:
        if "$ref" in node:
            node = defs.get(str(node["$ref"]).rsplit("/", 1)[-1], {})
        props = node.get("properties")
        if not isinstance(item, dict) or not isinstance(props, Mapping):
            return item
        required = set(node.get("required", ()))
        out: dict[str, Any] = {}
        for key, sub in item.items():
            if sub is None and key in props and key not in required:
                continue
            out[key] = walk(props[key], sub) if key in props else sub
        return out

    return walk(schema, value)

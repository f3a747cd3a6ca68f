"""Tool definitions, calls and results in the OpenAI Chat Completions and Responses shapes.

Tools are sent non-strict by default: strict mode requires every property to be required and
forbids open objects, and invoke_tool's `parameters` is an open object by design. With
`strict=True` the schema is rewritten for strict mode instead: optional fields become
nullable, and an open object becomes a JSON string (which invoke_tool accepts as well).

The agent providers for both APIs are in `gateway.adapters.openai_agent`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..agent.calls import Outcome
from ..agent.content import ImageBlock, TextBlock
from ..agent.provider import ToolPlan
from ..definition import ToolDefinition

# Keywords strict mode rejects or ignores; the gateway validates them itself, so dropping them is safe.
_STRICT_DROP = frozenset(
    [
        "default",
        "minLength",
        "maxLength",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
        "pattern",
        "format",
    ]
)
_AS_JSON_STRING = "Encode it as a JSON string."


# -- definitions ---------------------------------------------------------------------


def _open_object(node: Mapping[str, Any]) -> bool:
    return node.get("type") == "object" and not node.get("properties")


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    kind = node.get("type")
    if isinstance(kind, str) and "$ref" not in node:
        out = {**node, "type": [kind, "null"]}
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
        return out
    if "anyOf" in node:
        return {**node, "anyOf": [*node["anyOf"], {"type": "null"}]}
    return {"anyOf": [node, {"type": "null"}]}


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` rewritten for OpenAI strict mode (see the module docstring)."""

    def walk(node: Mapping[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in node.items() if k not in _STRICT_DROP}
        if _open_object(out):
            desc = f"{out['description']} {_AS_JSON_STRING}" if out.get("description") else _AS_JSON_STRING
            return {"type": "string", "description": desc}
        if "anyOf" in out:
            variants: list[dict[str, Any]] = []
            for v in out["anyOf"]:
                w = {k: x for k, x in walk(v).items() if k != "description"}
                if w not in variants:
                    variants.append(w)
            if len(variants) == 1:
                del out["anyOf"]
                out = {**variants[0], **out}
                if any(_open_object(v) for v in node["anyOf"]) and out.get("description"):
                    out["description"] = f"{out['description']} {_AS_JSON_STRING}"
            else:
                out["anyOf"] = variants
        if out.get("type") == "object":
            props = out.get("properties", {})
            required = set(out.get("required", ()))
            out["properties"] = {
                name: walk(sub) if name in required else _nullable(walk(sub)) for name, sub in props.items()
            }
            out["required"] = list(props)
            out["additionalProperties"] = False
        if isinstance(out.get("items"), Mapping):
            out["items"] = walk(out["items"])
        if isinstance(out.get("$defs"), Mapping):
            out["$defs"] = {k: walk(v) for k, v in out["$defs"].items()}
        return out

    return walk(schema)


def _parameters(d: ToolDefinition, strict: bool) -> dict[str, Any]:
    return strict_schema(d.json_schema) if strict else d.json_schema


def chat_tool(d: ToolDefinition, *, strict: bool = False) -> dict[str, Any]:
    """One tool as a Chat Completions `ChatCompletionToolParam`."""
    return {
        "type": "function",
        "function": {
            "name": d.name,
            "description": d.description,
            "parameters": _parameters(d, strict),
            "strict": strict,
        },
    }


def responses_tool(d: ToolDefinition, *, strict: bool = False, defer_loading: bool = False) -> dict[str, Any]:
    """One tool as a Responses API `FunctionToolParam`."""
    out: dict[str, Any] = {
        "type": "function",
        "name": d.name,
        "description": d.description,
        "parameters": _parameters(d, strict),
        "strict": strict,
    }
    if defer_loading:
        out["defer_loading"] = True
    return out


def chat_tools(definitions: Iterable[ToolDefinition], *, strict: bool = False) -> list[dict[str, Any]]:
    return [chat_tool(d, strict=strict) for d in definitions]


def responses_tools(definitions: Iterable[ToolDefinition], *, strict: bool = False) -> list[dict[str, Any]]:
    return [responses_tool(d, strict=strict) for d in definitions]


# -- native deferred loading (Responses) -----------------------------------------------


def namespace_description(category: str, definitions: Sequence[ToolDefinition]) -> str:
    actions = ", ".join(sorted({d.action for d in definitions}))
    return f"Tools for {category}: {len(definitions)} ({actions})."


def namespaces(
    definitions: Iterable[ToolDefinition],
    *,
    strict: bool = False,
    descriptions: Mapping[str, str] | None = None,
) -> list[dict[str, Any]]:
    """One `namespace` per category, its functions deferred (loaded by tool search)."""
    by_category: dict[str, list[ToolDefinition]] = {}
    for d in definitions:
        by_category.setdefault(d.category, []).append(d)
    return [
        {
            "type": "namespace",
            "name": category,
            "description": (descriptions or {}).get(category) or namespace_description(category, defs),
            "tools": [responses_tool(d, strict=strict, defer_loading=True) for d in defs],
        }
        for category, defs in sorted(by_category.items())
    ]


def tool_search_tool(search: ToolDefinition | None) -> dict[str, Any]:
    """The `tool_search` tool: executed by the client (the gateway's search) or, without one, by OpenAI."""
    if search is None:
        return {"type": "tool_search"}
    return {
        "type": "tool_search",
        "execution": "client",
        "description": search.description,
        "parameters": search.json_schema,
    }


def responses_request_tools(
    plan: ToolPlan, *, strict: bool = False, descriptions: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """The `tools` of a Responses request: tool_search first (never deferred), then loaded tools, then namespaces."""
    out: list[dict[str, Any]] = []
    if plan.native:
        out.append(tool_search_tool(plan.search))
    out.extend(responses_tool(d, strict=strict) for d in plan.loaded)
    out.extend(namespaces(plan.deferred, strict=strict, descriptions=descriptions))
    return out


# -- results -------------------------------------------------------------------------


def _text_of(outcome: Outcome) -> str:
    if not outcome.blocks:
        return outcome.text
    parts = [b.text if isinstance(b, TextBlock) else "[image: in the next message]" for b in outcome.blocks]
    return "\n".join(parts)


def chat_tool_messages(outcomes: Sequence[Outcome]) -> list[dict[str, Any]]:
    """`tool` messages in call order; images, which tool messages cannot carry, follow in one user message."""
    out: list[dict[str, Any]] = [
        {"role": "tool", "tool_call_id": o.call.id, "content": _text_of(o)} for o in outcomes
    ]
    images: list[dict[str, Any]] = []
    for o in outcomes:
        shown = [b for b in o.blocks if isinstance(b, ImageBlock)]
        if shown:
            images.append({"type": "text", "text": f"Images from tool call {o.call.id}:"})
            images.extend({"type": "image_url", "image_url": {"url": b.data_url}} for b in shown)
    if images:
        out.append({"role": "user", "content": images})
    return out


def function_call_output(outcome: Outcome) -> dict[str, Any]:
    """A Responses `function_call_output` item: text, or input_text/input_image parts."""
    output: str | list[dict[str, Any]] = outcome.text
    if outcome.blocks:
        output = [
            {"type": "input_text", "text": b.text}
            if isinstance(b, TextBlock)
            else {"type": "input_image", "image_url": b.data_url}
            for b in outcome.blocks
        ]
    return {"type": "function_call_output", "call_id": outcome.call.id, "output": output}


def tool_search_output(
    outcome: Outcome, *, strict: bool = False, descriptions: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """A client `tool_search_output` item loading the tools a search found, in their namespaces."""
    return {
        "type": "tool_search_output",
        "execution": "client",
        "call_id": outcome.call.id,
        "status": "completed",
        "tools": namespaces(outcome.loaded, strict=strict, descriptions=descriptions),
    }
